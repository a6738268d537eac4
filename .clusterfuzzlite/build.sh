#!/bin/bash -eu
# ClusterFuzzLite build: the same steps as OSS-Fuzz's (fuzz/build.sh), kept in one place.
exec "$SRC/skillguard/fuzz/build.sh"
