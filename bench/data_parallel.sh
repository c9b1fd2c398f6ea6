#!/usr/bin/env bash
# Data-parallel throughput on the teaching model: 2 ranks × 1 thread (mpirun -np 2, and two
# processes started here that meet through --distributed-init-method tcp://: gloo) against
# 1 process × 2 threads, both training transformer_tiny on the Ding corpus with the same
# batches per update (the single process uses --update-freq 2, see
# apps/training/data_parallel.hpp), fp32, --max-tokens 4096; and the 2 ranks' gradient
# all-reduce in buckets started during the backward pass (--ddp-backend c10d, the default,
# 25 MiB buckets) against one buffer after it (--ddp-backend no_c10d). Prints each run's
# training rate (the trainer's "done training" line: target tokens/s over the training
# steps, all ranks together), its wall time and the CPU time of all its processes.
#
#   bash bench/data_parallel.sh [BUILD_DIR] [WORK_DIR] [UPDATES]
# defaults: build, /tmp/attnlab-bench-dp, 12. The data (about 10 s) is made once in WORK_DIR.
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/attnlab-bench-dp}
updates=${3:-12}
attnlab=$(realpath "$build/attnlab")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ ! -f "$work/bin/dict.en.txt" ]; then
  mkdir -p "$work/tok" "$work/bpe"
  "$attnlab" prepare ding --out "$work/raw" > /dev/null
  for split in train valid test; do
    for l in en de; do "$attnlab" tokenize -l $l -a -j 2 < "$work/raw/$split.$l" > "$work/tok/$split.$l"; done
  done
  "$attnlab" bpe learn-joint --input "$work/tok/train.en" "$work/tok/train.de" -s 8000 -o "$work/bpe/codes" \
      --write-vocabulary "$work/bpe/vocab.en" "$work/bpe/vocab.de" > /dev/null
  for split in train valid test; do
    for l in en de; do "$attnlab" bpe apply -c "$work/bpe/codes" < "$work/tok/$split.$l" > "$work/bpe/$split.$l"; done
  done
  "$attnlab" preprocess --source-lang en --target-lang de --trainpref "$work/bpe/train" --validpref "$work/bpe/valid" \
      --testpref "$work/bpe/test" --destdir "$work/bin" --joined-dictionary > /dev/null
fi

# run NAME COMMAND...: trains from scratch and prints one result line.
run() {
  local name=$1
  shift
  rm -rf "${work:?}/$name"
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/$name.cpu" "$@" --save-dir "$work/$name" > "$work/$name.log" 2>&1
  end=$(date +%s.%N)
  local rate cpu
  rate=$(grep -o '[0-9]* target tokens/s' "$work/$name.log" | tail -n 1)
  cpu=$(awk '{printf "%.1f", $1 + $2}' "$work/$name.cpu")
  printf '%-34s %s, wall %.1f s, CPU %s s\n' "$name" "$rate" "$(echo "$end - $start" | bc)" "$cpu"
}

flags=(--arch transformer_tiny --share-all-embeddings --optimizer adam --adam-betas '(0.9, 0.98)' --lr 0.0005
       --lr-scheduler inverse_sqrt --warmup-updates 400 --max-tokens 4096 --max-update "$updates"
       --no-epoch-checkpoints --progress lines --log-interval 1000)
grep -m 1 'model name' /proc/cpuinfo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
two_ranks=(mpirun -np 2 --bind-to none "$attnlab" train "$work/bin" "${flags[@]}" --threads 1)
# Two processes started by hand, each with its rank (run appends --save-dir to both).
gloo_ranks=(bash -c 'for rank in 0 1; do "$@" --distributed-rank $rank & done; wait' gloo_ranks
            "$attnlab" train "$work/bin" "${flags[@]}" --threads 1 --distributed-world-size 2
            --distributed-init-method tcp://127.0.0.1:29517)
for round in "" _again; do
  run one_process_2_threads$round "$attnlab" train "$work/bin" "${flags[@]}" --threads 2 --update-freq 2
  run two_ranks_1_thread_c10d$round "${two_ranks[@]}" --ddp-backend c10d
  run two_ranks_1_thread_no_c10d$round "${two_ranks[@]}" --ddp-backend no_c10d
  run gloo_two_ranks_1_thread_c10d$round "${gloo_ranks[@]}" --ddp-backend c10d
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
