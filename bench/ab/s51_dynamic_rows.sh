#!/usr/bin/env bash
# Session 51's call not made: RowThreadsAtLaunch's own kernels on the GPU,
# in order of need (a call cut short by its time limit still returns $OUT).
#   scripts/gpu-check build                                          # here
#   run(command="bench/ab/s51_dynamic_rows.sh", carry=["gpu-carry"])
# 1. the fp64 reference at the launch's thread counts and at fixed ones;
# 2. W17 with and without the option;
# 3. the sweep's 349 dynamic-row points with and without it, then the same
#    points static (dyn_at.jsonl, dyn_fixed.jsonl, static.jsonl: compare by id).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/s51}
mkdir -p "$out/chk"
nvidia-smi --query-gpu=name --format=csv,noheader
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jc}
S=gpu-carry/jitfuse_sweep
P="--only sum_abs_amax,softmax,layernorm,add_rmsnorm"
t0=$SECONDS
# The sweeps' kernels compile in the background meanwhile.
(for k in 0 1 2 3 4 5; do
   timeout 150 $S $P --compile-only --dynamic-row --row-threads-at-launch --shard $k/6 >/dev/null 2>&1 &
 done; wait
 for k in 0 1 2 3 4 5; do
   timeout 150 $S $P --compile-only --dynamic-row --shard $k/6 >/dev/null 2>&1 &
 done; wait) &
OUT=$out/chk GPU_CHECK_JOBS=3 GPU_CHECK_TIMEOUT_S=150 scripts/gpu-check run '[dynamic-rows],[launch]' \
  > "$out/chk.txt" 2>&1
tail -4 "$out/chk.txt"
echo "check done t=$((SECONDS - t0))"
for a in "--row-threads-at-launch" ""; do
  echo "== W17 $a"
  gpu-carry/jitfuse_bench --only W17 --skip-jit $a 2>&1 | grep "^W17 " | head -3
done
wait
echo "compiled t=$((SECONDS - t0))"
$S $P --dynamic-row --row-threads-at-launch --jsonl "$out/dyn_at.jsonl" --budget-s 30 \
  > "$out/dyn_at.txt" 2>&1; tail -1 "$out/dyn_at.txt"
$S $P --dynamic-row --jsonl "$out/dyn_fixed.jsonl" --budget-s 30 > "$out/dyn_fixed.txt" 2>&1
tail -1 "$out/dyn_fixed.txt"
$S $P --jsonl "$out/static.jsonl" --budget-s 40 > "$out/static.txt" 2>&1; tail -1 "$out/static.txt"
echo "all done t=$((SECONDS - t0))"
