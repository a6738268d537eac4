#!/bin/bash -eu
# OSS-Fuzz build script: installs skillguard and packages each fuzz target with its
# seed corpus (<target>_seed_corpus.zip: the SKILL.md and policy seeds) and dictionary
# (<target>.dict).
pip3 install .
for fuzzer in $(find "$SRC/skillguard/fuzz" -name '*_fuzzer.py'); do
  name=$(basename -s .py "$fuzzer")
  compile_python_fuzzer "$fuzzer"
  (cd "$SRC/skillguard/fuzz/corpus" && zip -q -r "$OUT/${name}_seed_corpus.zip" parse_skill policy)
  cp "$SRC/skillguard/fuzz/parse_skill_fuzzer.dict" "$OUT/${name}.dict"
done
