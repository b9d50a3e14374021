#!/usr/bin/env bash
# Session 53: RowThreadsAtLaunch on by default, its loops unrolled 4 times
# (as NVVM unrolls the fixed count's); one call, in order of need:
#   git checkout flip-at-launch      # the default flipped (one commit on main)
#   scripts/gpu-check build && cp <last gpu-tests.log> gpu-carry/   # here
#   (the script itself is on main too; --no-row-threads-at-launch is the
#   branch's flag)
#   run(command="bench/ab/s53_at_launch.sh", carry=["gpu-carry"])
# 1. the fp64 reference at the launch's thread counts and at fixed ones;
# 2. W17 at the launch's threads and at the fixed 256;
# 3. the sweep's 349 dynamic-row points both ways (dyn_at.jsonl,
#    dyn_fixed.jsonl: compare by id);
# 4. the [gpu] tier (or TIER's cases), dealt by the last run's durations.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/s53}
mkdir -p "$out/chk" "$out/tier"
nvidia-smi --query-gpu=name --format=csv,noheader
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jc}
S=gpu-carry/jitfuse_sweep
P="--only sum_abs_amax,softmax,layernorm,add_rmsnorm"
t0=$SECONDS
(for k in 0 1 2 3 4 5; do
   timeout 150 $S $P --compile-only --dynamic-row --shard $k/6 >/dev/null 2>&1 &
 done; wait
 for k in 0 1 2 3 4 5; do
   timeout 150 $S $P --compile-only --dynamic-row --no-row-threads-at-launch --shard $k/6 >/dev/null 2>&1 &
 done; wait) &
OUT=$out/chk GPU_CHECK_JOBS=3 GPU_CHECK_TIMEOUT_S=150 scripts/gpu-check run '[dynamic-rows],[launch]' \
  > "$out/chk.txt" 2>&1
grep -E "FAILED|passed|failed" "$out/chk.txt" | tail -8
echo "check done t=$((SECONDS - t0))"
for a in "" "--no-row-threads-at-launch" "" "--no-row-threads-at-launch"; do
  echo "== W17 $a"
  gpu-carry/jitfuse_bench --only W17 --skip-jit $a 2>&1 | grep "^W17 " | head -1
done
wait
echo "compiled t=$((SECONDS - t0))"
$S $P --dynamic-row --jsonl "$out/dyn_at.jsonl" --budget-s 30 > "$out/dyn_at.txt" 2>&1
tail -1 "$out/dyn_at.txt"
$S $P --dynamic-row --no-row-threads-at-launch --jsonl "$out/dyn_fixed.jsonl" --budget-s 30 \
  > "$out/dyn_fixed.txt" 2>&1
tail -1 "$out/dyn_fixed.txt"
echo "sweeps done t=$((SECONDS - t0))"
# TIER: a catch filter (default: the whole tier); TIER_END: seconds from
# the start by which the tier stops itself.
left=$((${TIER_END:-430} - (SECONDS - t0)))
[ "$left" -gt 20 ] || { echo "no time left for the tier"; exit 0; }
OUT=$out/tier GPU_CHECK_JOBS=14 GPU_CHECK_TIMEOUT_S=$left GPU_CHECK_DURATIONS=gpu-carry/gpu-tests.log \
  scripts/gpu-check run ${TIER:-} > "$out/tier.txt" 2>&1
echo "tier rc=$?"; grep -E "FAILED|gpu-check:|not finished" "$out/tier.txt" | head -20
echo "all done t=$((SECONDS - t0))"
