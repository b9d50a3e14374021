#!/usr/bin/env bash
# Which sweep points an option changes, on the development machine (no GPU):
# compiles the points twice with `jitfuse_sweep --compile-only` (A: the
# arguments; B: the arguments and the options under test), two shards at a
# time, and compares the programs they run (bench/plan_diff.py).
#   bench/plan_diff.sh "--no-row-clusters-values" --min-row 16384
#   bench/plan_diff.sh "--no-wide-rows" --ids softmax/bf16/H128256/R132/o0
# The report (changed points, their variants' registers A -> B) is printed
# and written to $OUT/plan_diff.md with both jsonl runs. Each run compiles
# into its own fresh kernel cache. PYTHON: the interpreter (python3).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/plan_diff.sh 'B OPTIONS' [jitfuse_sweep args]" >&2; exit 2; }
read -r -a opts <<< "$1"
shift
sweep=${SWEEP:-build-gpu/bench/jitfuse_sweep}
[ -x "$sweep" ] || { echo "plan_diff.sh: no $sweep (build it, or set SWEEP)" >&2; exit 2; }
out=${OUT:-$(mktemp -d)}
jobs=${PLAN_DIFF_JOBS:-2}
mkdir -p "$out"

compile() { # name, extra options...
  local name=$1
  shift
  local cache="$out/cache-$name"
  rm -rf "$cache"
  local pids=() k
  for ((k = 0; k < jobs; k++)); do
    JITFUSE_CACHE_DIR="$cache" "$sweep" --compile-only --shard "$k/$jobs" "$@" \
      --jsonl "$out/$name.$k.jsonl" > "$out/$name.$k.log" 2>&1 &
    pids+=($!)
  done
  local status=0
  for k in "${!pids[@]}"; do
    wait "${pids[$k]}" || { status=1; echo "plan_diff.sh: $name shard $k failed:" >&2;
                             tail -n 5 "$out/$name.$k.log" >&2; }
  done
  cat "$out/$name".*.jsonl > "$out/$name.jsonl"
  echo "plan_diff.sh: $name: $(wc -l < "$out/$name.jsonl") points ($(date +%T))"
  return $status
}

start=$(date +%s)
compile A "$@" || exit 1
compile B "$@" "${opts[@]}" || exit 1
"${PYTHON:-python3}" bench/plan_diff.py "$out/A.jsonl" "$out/B.jsonl" --md "$out/plan_diff.md"
status=$?
echo "plan_diff.sh: B = ${opts[*]}; $(( $(date +%s) - start )) s; $out/plan_diff.md"
exit $status
