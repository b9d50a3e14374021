#!/usr/bin/env bash
# Same-binary A/B of a jitfuse_sweep option on the GPU machine, from the repo
# root: the points timed without the option (A), with it (B), then A again,
# each point's A time the faster of its two runs, and the change table B
# against A.
#   here:  scripts/gpu-check build   (stages jitfuse_sweep in gpu-carry/)
#   GPU:   run(command="bench/run_ab.sh --aligned-row-copy --peeled-only --only layernorm,add_rmsnorm",
#              carry=["gpu-carry"])
# The first argument is the option under test (or several, one quoted
# argument: "--mix-order-columns --mix-few-groups"); the rest go to every
# jitfuse_sweep run (the point selection). To compare two builds instead,
# give `-` as the option and JITFUSE_SWEEP_BIN_B=path for side B (e.g.
# JITFUSE_SWEEP_BIN=gpu-carry/base_jitfuse_sweep, an earlier commit's built
# by scripts/build-baseline REV, against JITFUSE_SWEEP_BIN_B=
# gpu-carry/jitfuse_sweep). Writes $OUT/{ab_a,ab_b}.jsonl and
# ab_table.md; the two A runs and every log go to a scratch folder. Time
# limits: 60 s of compiles a side (8 shards), AB_BUDGET_S (150) s of timing
# a run: at most ~9 minutes (bench/run_ab_many.sh runs several with less).
set -uo pipefail
cd "$(dirname "$0")/.."
flag=${1:?usage: bench/run_ab.sh OPTION [jitfuse_sweep arguments...]}
shift
out=${OUT:-/tmp/jitfuse-ab}
mkdir -p "$out"
# The device tool brings back at most 8 files from $OUT: only the results
# go there (ab_a.jsonl, ab_b.jsonl, ab_table.md); logs and the two A runs
# stay in a scratch folder whose tails this script prints.
logs=$(mktemp -d)
bin=${JITFUSE_SWEEP_BIN:-gpu-carry/jitfuse_sweep}
bin_b=${JITFUSE_SWEEP_BIN_B:-$bin}
# Side B's arguments: the option (split at spaces: "--a --b" tests two
# options together against neither), or none for a build comparison.
opt=()
[ "$flag" != - ] && read -r -a opt <<< "$flag"
export JITFUSE_CACHE_DIR=${JITFUSE_CACHE_DIR:-/tmp/jitfuse-ab-cache}
budget=${AB_BUDGET_S:-150}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
start=$(date +%s)

for side in A B; do
  extra=()
  b=$bin
  [ "$side" = B ] && extra=("${opt[@]}") && b=$bin_b
  echo "== compile $side (8 shards) $b ${extra[*]:-}"
  pids=()
  for k in 0 1 2 3 4 5 6 7; do
    timeout 60 "$b" --compile-only --shard "$k/8" "${extra[@]}" "$@" \
      > "$logs/ab_compile_${side}_$k.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "compile shard (pid $p) exit $?"; done
done
echo "compiles done after $(( $(date +%s) - start )) s"

run() { # name, extra jitfuse_sweep arguments...
  local name=$1
  shift
  echo "== $name $*"
  local dir=$logs b=$bin
  [ "$name" = b ] && dir=$out && b=$bin_b
  timeout $((budget + 10)) "$b" --jsonl "$dir/ab_$name.jsonl" --budget-s "$budget" "$@" \
    > "$logs/ab_$name.log" 2>&1
  echo "$name exit $? after $(( $(date +%s) - start )) s"
  tail -n 1 "$logs/ab_$name.log"
}
run a1 "$@"
run b "${opt[@]}" "$@"
run a2 "$@"

# A: each point's faster time over the two A runs.
python3 - "$logs" "$out" <<'EOF'
import json, sys
logs, out = sys.argv[1], sys.argv[2]
best = {}
for name in ("ab_a1", "ab_a2"):
    try:
        lines = open(f"{logs}/{name}.jsonl").read().splitlines()
    except OSError:
        continue
    for line in lines:
        r = json.loads(line)
        us = r.get("us")
        if isinstance(us, (int, float)) and us > 0:
            if r["id"] not in best or us < best[r["id"]]["us"]:
                best[r["id"]] = r
with open(f"{out}/ab_a.jsonl", "w") as f:
    for r in best.values():
        f.write(json.dumps(r) + "\n")
print(f"A: {len(best)} points, the faster of two runs each")
EOF
timeout 30 python3 bench/sweep_report.py --jitfuse "$out/ab_b.jsonl" --baseline "$out/ab_a.jsonl" \
  --md "$out/ab_table.md"
tail -q -n 1 "$logs"/ab_compile_*.log | sort | uniq -c
echo "run_ab.sh: done in $(( $(date +%s) - start )) s; results in $out, logs in $logs"
