#!/usr/bin/env bash
# Installs everything attnlab needs to build and run, from Debian packages only.
# Idempotent: packages already present are skipped by apt-get.
#
# OpenBLAS flavour: we install libopenblas0-openmp (via libopenblas-openmp-dev) so that
# OpenBLAS shares the OpenMP thread pool with our own kernels. With the pthread flavour the
# two pools spin-wait against each other on 2 cores and throughput halves. oneDNN
# (libdnnl-dev, the large float32/bfloat16 GEMMs) uses the same OpenMP runtime.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(build-essential cmake ninja-build pkg-config
      libeigen3-dev libopenblas-openmp-dev libdnnl-dev
      libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev
      libicu-dev trans-de-en)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
