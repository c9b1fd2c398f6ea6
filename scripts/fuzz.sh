#!/usr/bin/env bash
# Fuzzes one parser with libFuzzer (README "Fuzzing"): scripts/fuzz.sh TARGET SECONDS
#   TARGET: safetensors | binarized | fairseq_index | dictionary | bpe_codes | checkpoint_json | torch_file
# Builds fuzz/fuzz_TARGET with Debian's clang (-fsanitize=fuzzer,address) in build-fuzz/ (a
# separate build, never part of the normal one), then runs it for SECONDS starting from the
# inputs kept in tests/vectors/fuzz/TARGET/. Inputs it finds interesting go to
# build-fuzz/corpus/TARGET/; an input that crashes it, or whose error does not name the file,
# is written to tests/vectors/fuzz/TARGET/ — fix the parser and commit the input: the suite
# (tests/apps/test_mutations.cpp) checks every kept input from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ne 2 ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS (TARGET: safetensors binarized fairseq_index dictionary bpe_codes checkpoint_json torch_file)" >&2
  exit 2
fi
target=$1 seconds=$2
if [[ ! -f fuzz/fuzz_${target}.cpp ]]; then
  echo "scripts/fuzz.sh: no target '${target}' (fuzz/fuzz_${target}.cpp)" >&2
  exit 2
fi
command -v clang++ >/dev/null || { echo "scripts/fuzz.sh: needs clang (apt-get install clang)" >&2; exit 1; }

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer" \
  -DATTNLAB_FUZZ=ON -DATTNLAB_BUILD_TESTS=OFF -DATTNLAB_BUILD_BENCH=OFF -DATTNLAB_CUDA=OFF -DATTNLAB_NATIVE=OFF \
  ${ATTNLAB_CMAKE_ARGS:-} >/dev/null
cmake --build build-fuzz --target "fuzz_${target}" -j "$(nproc)"

kept=tests/vectors/fuzz/${target}
mkdir -p "build-fuzz/corpus/${target}" "${kept}" build-fuzz/tmp
export TMPDIR=$PWD/build-fuzz/tmp  # the targets' input files (fuzz/fuzz_input_file.hpp)
build-fuzz/fuzz/fuzz_${target} -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="${kept}/" "build-fuzz/corpus/${target}" "${kept}"
