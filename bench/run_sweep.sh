#!/usr/bin/env bash
# Runs the shape sweep (issue 12 item 6) on the GPU machine, from the repo root:
#   here:     scripts/gpu-check build   (stages jitfuse_sweep in gpu-carry/)
#   GPU:      run(command="bench/run_sweep.sh", carry=["gpu-carry"])
# Writes $OUT/{sweep_points.json,sweep_jitfuse.jsonl,sweep_jitfuse.log,
# sweep_torch.jsonl,sweep_torch.log,sweep_table.md,sweep_heatmap.png,
# odd_rows_table.md}. Steps:
# the point list; the kernel cache warmed by 8 parallel compile-only shards;
# jitfuse timing (stops timing after 75 s; 588 points took 24 s on the
# H200); PyTorch eager + torch.compile (torch.compile stops after 280 s of
# its own time, everything after 350 s: with 130 s, session 15's run had
# torch.compile times for about 200 of the 588 points); the report. Each
# step has its own time limit (30+60+90+370+30 s: at most 9.7 minutes,
# under the device tool's 10-minute command limit); a failed step does not
# stop the others. Arguments go to jitfuse_sweep (all three of
# its runs), e.g. --only softmax,rope or --max-points 50.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/jitfuse-sweep}
mkdir -p "$out"
# The device tool brings back at most 8 files from $OUT: the compile
# shards' logs stay in a scratch folder (their last lines are printed).
logs=$(mktemp -d)
bin=${JITFUSE_SWEEP_BIN:-gpu-carry/jitfuse_sweep}
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jitfuse-sweep-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader || true
start=$(date +%s)

echo "== jitfuse_sweep --list"
timeout 30 "$bin" --list "$@" > "$out/sweep_points.json"
echo "list exit $? ($(grep -c '"id"' "$out/sweep_points.json") points)"

echo "== compile (8 shards)"
pids=()
for k in 0 1 2 3 4 5 6 7; do
  timeout 60 "$bin" --compile-only --shard "$k/8" "$@" > "$logs/sweep_compile_$k.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "compile shard (pid $p) exit $?"; done
tail -q -n 1 "$logs"/sweep_compile_*.log
echo "compile done after $(( $(date +%s) - start )) s"

echo "== jitfuse_sweep"
timeout 90 "$bin" --jsonl "$out/sweep_jitfuse.jsonl" --budget-s 75 "$@" > "$out/sweep_jitfuse.log" 2>&1
echo "jitfuse_sweep exit $? after $(( $(date +%s) - start )) s"
tail -n 3 "$out/sweep_jitfuse.log"

echo "== sweep_torch.py"
timeout 370 python3 bench/sweep_torch.py --points "$out/sweep_points.json" \
  --jsonl "$out/sweep_torch.jsonl" --compile-budget-s 280 --budget-s 350 > "$out/sweep_torch.log" 2>&1
echo "sweep_torch.py exit $? after $(( $(date +%s) - start )) s"
tail -n 3 "$out/sweep_torch.log"

echo "== report"
timeout 30 python3 bench/sweep_report.py --jitfuse "$out/sweep_jitfuse.jsonl" \
  --torch "$out/sweep_torch.jsonl" --md "$out/sweep_table.md" --png "$out/sweep_heatmap.png"
echo "== offsets and odd rows against the aligned row of 4096 (issue 12's 5% target)"
timeout 10 python3 bench/odd_rows_table.py "$out/sweep_jitfuse.jsonl" | tee "$out/odd_rows_table.md"
echo "run_sweep.sh: done in $(( $(date +%s) - start )) s; results in $out"
