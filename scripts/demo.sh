#!/usr/bin/env bash
# Installs the dependencies, builds attnlab and runs the teaching demo (output in demo/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/attnlab demo --out demo "$@"
