#!/usr/bin/env bash
# Installs everything attnlab needs to build and run, from Debian packages only (README.md,
# "Dependencies", says what each is for). Idempotent: packages already present are skipped.
# Any failure ends with one line saying what is missing and what to do; nothing is left
# half-installed without saying so.
#
# OpenBLAS flavour: we install libopenblas0-openmp (via libopenblas-openmp-dev) so that
# OpenBLAS shares the OpenMP thread pool with our own kernels. With the pthread flavour the
# two pools spin-wait against each other on 2 cores and throughput halves. oneDNN
# (libdnnl-dev, the large float32/bfloat16 GEMMs) uses the same OpenMP runtime. Open MPI
# (libopenmpi-dev, openmpi-bin: mpirun) runs data-parallel training over processes; gloo
# (libgloo-dev) connects ranks started without mpirun (--distributed-init-method).
set -euo pipefail

PKGS=(build-essential cmake ninja-build pkg-config
      libeigen3-dev libopenblas-openmp-dev libdnnl-dev
      libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev
      libicu-dev libopenmpi-dev openmpi-bin libgloo-dev trans-de-en
      libcairo2-dev fonts-dejavu-core chromium libboost-context-dev libzip-dev)
MIN_GXX=12      # C++20 as the code uses it
MIN_CMAKE=3.25  # CMakeLists.txt's cmake_minimum_required

fail() {
  echo "setup: $*" >&2
  exit 1
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

command -v dpkg-query > /dev/null && command -v apt-get > /dev/null ||
  fail "this system has no apt-get/dpkg; attnlab installs its dependencies from Debian packages. Install these (or your system's equivalents) by hand: ${PKGS[*]}"

missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || fail "not root and no sudo: as root run  apt-get install ${missing[*]}"
    SUDO="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  $SUDO apt-get update -qq > "$log" 2>&1 ||
    fail "apt-get update failed (network or sources.list?); its last lines: $(tail -n 3 "$log" | tr '\n' ' ')"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" > "$log" 2>&1 ||
    fail "apt-get install failed, nothing was built; its last lines: $(tail -n 3 "$log" | tr '\n' ' ')"
  still=()
  for p in "${missing[@]}"; do installed "$p" || still+=("$p"); done
  [ ${#still[@]} -eq 0 ] || fail "these packages are still not installed after apt-get: ${still[*]}"
fi

# The toolchain the packages gave (an older Debian can have too old a g++ or CMake).
gxx_major=$(g++ -dumpversion | cut -d. -f1)
[ "$gxx_major" -ge "$MIN_GXX" ] ||
  fail "g++ $gxx_major is too old: attnlab needs g++ >= $MIN_GXX (Debian 12 has 12; apt-get install g++-12 and set CXX=g++-12)"
cmake_version=$(cmake --version | head -n 1 | awk '{print $3}')
[ "$(printf '%s\n%s\n' "$MIN_CMAKE" "$cmake_version" | sort -V | head -n 1)" = "$MIN_CMAKE" ] ||
  fail "CMake $cmake_version is too old: attnlab needs CMake >= $MIN_CMAKE (Debian 12 has 3.25)"
