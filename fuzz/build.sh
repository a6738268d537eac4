#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script (run by .clusterfuzzlite/build.sh inside the
# base-builder-python image, which provides compile_python_fuzzer, $SRC and $OUT).
# Installs skillguard, then packages each fuzz target with what the runner picks up by
# name next to it in $OUT: <target>_seed_corpus.zip, <target>.dict and <target>.options
# (libFuzzer flags, the same ones tox -e fuzz passes). tests/test_fuzz_build.py keeps
# this table, the targets in fuzz/, their corpora and tox -e fuzz in step.
cd "$SRC/skillguard"
pip3 install .

# build TARGET DICTIONARY SEED_CORPUS_FOLDER...  (folders under fuzz/corpus/)
build() {
  local name=$1 dict=$2
  shift 2
  # PyInstaller bundles only what it sees imported; skillguard imports its modules
  # lazily, and each target imports all of them by name to instrument them.
  compile_python_fuzzer "fuzz/$name.py" --collect-submodules=skillguard
  # The folders stay folders in the zip: seeds of different corpora share file names.
  (cd fuzz/corpus && zip -q -r "$OUT/${name}_seed_corpus.zip" "$@")
  cp "fuzz/$dict" "$OUT/$name.dict"
  cp "fuzz/$name.options" "$OUT/$name.options"
}

build parse_skill_fuzzer parse_skill_fuzzer.dict parse_skill
build check_skill_fuzzer parse_skill_fuzzer.dict parse_skill
build differential_fuzzer parse_skill_fuzzer.dict parse_skill policy
build parse_agent_fuzzer parse_skill_fuzzer.dict parse_agent parse_skill
build strict_json_fuzzer strict_json_fuzzer.dict strict_json
