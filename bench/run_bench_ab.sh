#!/usr/bin/env bash
# Same-binary A/B of jitfuse_bench options on the GPU machine, from the repo
# root: the workloads timed without the options (A), with them (B), then A
# and B again, alternating so that a drift of the clocks shows as A1 against
# A2; then each workload's fused median per run and B / A (each side's
# faster run). Sessions 30-31 ran these alternations by hand.
#   here:  scripts/gpu-check build && strip -o gpu-carry/jitfuse_bench build-gpu/bench/jitfuse_bench
#   GPU:   run(command="bench/run_bench_ab.sh --mix-order-columns --only W21", carry=["gpu-carry"])
# The first argument is side B's options as one word list ("--mix-order-columns
# --mix-max-groups 1024" in quotes); the rest go to every run (--only, --dims,
# --iters). Writes $OUT/bench_ab.md and $OUT/bench_ab_{A1,B1,A2,B2}.json (the
# device tool brings back at most 8 files: the logs stay in a scratch folder,
# their last lines printed). Each
# run has 150 s; without a GPU jitfuse_bench only compiles and the table has
# no times (the CPU test runs it that way).
set -uo pipefail
cd "$(dirname "$0")/.."
opts=${1:?usage: bench/run_bench_ab.sh "OPTIONS" [jitfuse_bench arguments...]}
shift
read -r -a side_b <<< "$opts"
out=${OUT:-/tmp/jitfuse-bench-ab}
mkdir -p "$out"
logs=$(mktemp -d)
bin=${JITFUSE_BENCH_BIN:-gpu-carry/jitfuse_bench}
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jitfuse-bench-ab-cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
start=$(date +%s)
for run in A1 B1 A2 B2; do
  extra=()
  [ "${run:0:1}" = B ] && extra=("${side_b[@]}")
  echo "== $run $bin --skip-jit $* ${extra[*]:-}"
  timeout 150 "$bin" --skip-jit --json "$out/bench_ab_$run.json" "$@" "${extra[@]}" \
    > "$logs/bench_ab_$run.log" 2>&1
  echo "$run exit $? after $(( $(date +%s) - start )) s"
  tail -n 3 "$logs/bench_ab_$run.log"
done
python3 - "$out" "$opts" <<'EOF'
import json, os, sys
out, opts = sys.argv[1], sys.argv[2]
runs = {}
for run in ("A1", "B1", "A2", "B2"):
    try:
        with open(os.path.join(out, f"bench_ab_{run}.json")) as f:
            runs[run] = {w["id"]: w for w in json.load(f).get("workloads", [])}
    except (OSError, ValueError):
        runs[run] = {}
def med(run, wid):
    v = runs[run].get(wid, {}).get("fused", {}).get("median_us")
    return v if isinstance(v, (int, float)) else None
def fmt(v):
    return "-" if v is None else f"{v:.1f}"
ids = []
for r in runs.values():
    ids += [i for i in r if i not in ids]
lines = [f"B: `{opts}`", "",
         "| workload | kernels A / B | A1 us | B1 us | A2 us | B2 us | B / A |",
         "|---|---|---|---|---|---|---|"]
for wid in ids:
    a = [m for m in (med("A1", wid), med("A2", wid)) if m is not None]
    b = [m for m in (med("B1", wid), med("B2", wid)) if m is not None]
    ratio = f"{min(b) / min(a):.3f}" if a and b else "-"
    ka = runs["A1"].get(wid, {}).get("fused", {}).get("kernels", "-")
    kb = runs["B1"].get(wid, {}).get("fused", {}).get("kernels", "-")
    lines.append(f"| {wid} | {ka} / {kb} | {fmt(med('A1', wid))} | {fmt(med('B1', wid))} | "
                 f"{fmt(med('A2', wid))} | {fmt(med('B2', wid))} | {ratio} |")
text = "\n".join(lines) + "\n"
with open(os.path.join(out, "bench_ab.md"), "w") as f:
    f.write(text)
print(text, end="")
EOF
