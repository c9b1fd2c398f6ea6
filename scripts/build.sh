#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds attnlab into build/ (binary: build/attnlab).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${ATTNLAB_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
