#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, in one run, most important first (README "CUDA"):
#   1. the GPUs and versions `attnlab info` sees;
#   2. the cross-backend suite on the real CUDA runtime (every kernel, forward and backward,
#      CPU vs GPU), with ATTNLAB_REQUIRE_GPU=1 so that a skip is a failure;
#   3. the NCCL communicator (one rank; two where there are two GPUs and mpirun);
#   4. training throughput of transformer base and big on the GPU (`bench_train`), beside
#      PyTorch's anchor on the same GPU when ANCHORS names the folder of torch_train.py, the
#      device time of each kernel of one base step (CUDA events around each), the host's part of
#      each call (`--kernels host`), and each of a base step's products and bias sums
#      (`bench_device_ops`);
#   5. decoding speed on the GPU (`bench_decode`);
#   6. compute-sanitizer (memcheck, racecheck, synccheck) over the suite of step 2;
#   7. the teaching demo trained, averaged, decoded and scored on the GPU, when DEMO names a
#      demo folder (its prepared data is reused; its checkpoints are started afresh).
# Each step has a time limit and its own log under OUT; a table of the outcomes ends the run.
#
#   BUILD=build OUT=gpu-check DEMO=demo ANCHORS=path/to/anchors bash scripts/gpu-check.sh
#
# TOTAL_SECONDS caps the whole run (a step gets at most what is left; the steps after the
# budget is spent are listed as not run); PYTHON is the command that runs the anchor
# (default python3; e.g. "env LD_LIBRARY_PATH= python3" when attnlab's libraries are on
# LD_LIBRARY_PATH and PyTorch's must not see them).
#
# BUILD must hold attnlab, tests/cuda_test_cuda_backend, tests/dist_test_nccl_communicator,
# bench/bench_train, bench/bench_decode and bench/bench_device_ops, built with the CUDA toolkit
# (-DATTNLAB_CUDA=ON; add -DATTNLAB_NATIVE=OFF when the GPU machine's CPU is not the build
# machine's).
set -uo pipefail
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
summary=()

# step NAME SECONDS COMMAND...: runs COMMAND with a time limit, output to $OUT/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  if [ "${TOTAL_SECONDS:-0}" -gt 0 ]; then
    local left=$((TOTAL_SECONDS - SECONDS))
    if [ $left -lt 10 ]; then
      summary+=("$(printf '%-16s %s' "$name" "not run: TOTAL_SECONDS spent")")
      return
    fi
    [ $left -lt "$limit" ] && limit=$left
  fi
  local start=$SECONDS
  echo "=== $name: $*" >"$OUT/$name.log"
  timeout --signal=INT --kill-after=10 "$limit" "$@" >>"$OUT/$name.log" 2>&1
  local rc=$?
  local outcome=passed
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then outcome="TIMED OUT after ${limit}s"; elif [ $rc -ne 0 ]; then outcome="FAILED (exit $rc)"; fi
  tail -n 8 "$OUT/$name.log"
  summary+=("$(printf '%-16s %-24s %4ds' "$name" "$outcome" $((SECONDS - start)))")
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$OUT/gpu.txt" 2>&1
step info 30 "$BUILD/attnlab" info
export ATTNLAB_REQUIRE_GPU=1
step suite 120 "$BUILD/tests/cuda_test_cuda_backend" --durations yes
step nccl 60 "$BUILD/tests/dist_test_nccl_communicator"
step bench_train 120 "$BUILD/bench/bench_train" --device cuda --model base,transformer_wmt_en_de_big --steps 20 --warmup 5
if [ -n "${ANCHORS:-}" ]; then
  step torch_train 90 ${PYTHON:-python3} "$ANCHORS/torch_train.py" --device cuda --config base --steps 20 --warmup 5 --max-wait 0
fi
step kernel_times 60 "$BUILD/bench/bench_train" --device cuda --model base --steps 3 \
  --warmup 2 --kernels device
step host_times 60 "$BUILD/bench/bench_train" --device cuda --model base --steps 3 --warmup 2 --kernels host
step device_ops 60 "$BUILD/bench/bench_device_ops" --device cuda --reps 20
step bench_decode 90 "$BUILD/bench/bench_decode" --device cuda --models softmax,t2r --lengths 64,256,1024
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck synccheck; do
    step "sanitize_$tool" "${SANITIZE_SECONDS:-90}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$BUILD/tests/cuda_test_cuda_backend"
  done
else
  summary+=("sanitize         skipped: compute-sanitizer is not on the PATH")
fi
if [ -n "${DEMO:-}" ]; then
  rm -rf "$DEMO/checkpoints" "$DEMO/gen" "$DEMO/report.html" "$DEMO/summary.json"
  step demo "${DEMO_SECONDS:-240}" "$BUILD/attnlab" demo --out "$DEMO" --device cuda --threads "$(nproc)" \
    --max-update "${DEMO_UPDATES:-7000}"
  cp "$DEMO/summary.json" "$DEMO/checkpoints/train_log.jsonl" "$OUT/" 2>/dev/null
fi
printf '\n%s\n' "--- outcome (logs in $OUT)"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
