#!/usr/bin/env bash
# Runs the whole benchmark on the GPU machine, from the repo root:
#   here:     scripts/gpu-check build     (stages gpu-carry/jitfuse_bench)
#   GPU:      run(command="bench/run_all.sh", carry=["gpu-carry"])
# Writes $OUT/{jitfuse.json,jitfuse.log,torch.json,torch.log,bench_table.md,
# bench_chart.png}; bench_table.md includes the per-kernel roofline (every
# fused kernel, the slowest unfused ones) from jitfuse.json. Each step has its
# own time limit so the whole run stays under 8 minutes; a failed step does not
# stop the others.
# BENCH_ONLY=W3,W8 limits both sides to those workloads (BENCH_ONLY=W8,W9: the
# per-call workloads, host overhead and the decode layer); further arguments go
# to jitfuse_bench only (e.g. --iters 50).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/jitfuse-bench}
mkdir -p "$out"
bin=${JITFUSE_BENCH_BIN:-gpu-carry/jitfuse_bench}
# Workload kernels compile into a scratch cache; C1/C2 make their own empty
# caches, so this cache being warm or cold changes no reported number.
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jitfuse-bench-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader || true
start=$(date +%s)
only=()
[ -n "${BENCH_ONLY:-}" ] && only=(--only "$BENCH_ONLY")

echo "== jitfuse_bench"
timeout 180 "$bin" --json "$out/jitfuse.json" "${only[@]}" "$@" 2>&1 | tee "$out/jitfuse.log"
echo "jitfuse_bench exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s"

echo "== torch_bench.py"
timeout 270 python3 bench/torch_bench.py --json "$out/torch.json" "${only[@]}" 2>&1 | tee "$out/torch.log" \
  | grep -v -E "^\s*$"
echo "torch_bench.py exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s"

echo "== report"
python3 bench/report.py --jitfuse "$out/jitfuse.json" --torch "$out/torch.json" \
  --md "$out/bench_table.md" --chart "$out/bench_chart.png"
echo "run_all.sh: done in $(( $(date +%s) - start )) s; results in $out"
