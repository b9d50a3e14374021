#!/usr/bin/env bash
# Several same-binary A/Bs (bench/run_ab.sh) in one device call, from the
# repo root, each within a share of the call's time:
#   here:  scripts/gpu-check build   (stages jitfuse_sweep in gpu-carry/)
#   GPU:   run(command="bench/run_ab_many.sh bench/ab/<spec>.txt", carry=["gpu-carry"])
# SPEC has one A/B a line, `name | option(s) under test | jitfuse_sweep
# arguments` (blank lines and # comments skipped), e.g.
#   narrow4 | --mix-order-columns --mix-block-rows 4 | --ids layernorm_bwd/bf16/H1021/R16384/o0
# Every A/B times three runs (A, B, A), each within AB_BUDGET_S (default:
# 420 s over the three runs of every line, at least 20), plus its compiles. Writes $OUT/tables.md (every change table, in order) and
# $OUT/ab_many.tgz (each A/B's jsonl); prints each table as it comes.
set -uo pipefail
cd "$(dirname "$0")/.."
spec=${1:?usage: bench/run_ab_many.sh SPEC}
out=${OUT:-/tmp/jitfuse-ab-many}
mkdir -p "$out"
work=$(mktemp -d)
mapfile -t lines < <(grep -v -E '^\s*(#|$)' "$spec")
n=${#lines[@]}
[ "$n" -gt 0 ] || { echo "run_ab_many.sh: no A/B in $spec" >&2; exit 2; }
export AB_BUDGET_S=${AB_BUDGET_S:-$(( 140 / n < 20 ? 20 : 140 / n ))}
start=$(date +%s)
: > "$out/tables.md"
status=0
for line in "${lines[@]}"; do
  IFS='|' read -r name opts args <<< "$line"
  name=$(echo "$name" | xargs)
  opts=$(echo "$opts" | xargs)
  read -r -a sweep_args <<< "$args"
  echo "==== $name: B = $opts; $args (timing budget ${AB_BUDGET_S} s a run, t=$(( $(date +%s) - start )) s)"
  mkdir -p "$work/$name"
  if ! OUT="$work/$name" bench/run_ab.sh "$opts" "${sweep_args[@]}" > "$work/$name.log" 2>&1; then
    status=1
    echo "run_ab_many.sh: $name failed; its log's tail:"
    tail -n 20 "$work/$name.log"
  fi
  { echo "## $name: B = \`$opts\`"; echo; echo "\`$args\`"; echo;
    cat "$work/$name/ab_table.md" 2>/dev/null || echo "(no table)"; echo; } >> "$out/tables.md"
  cat "$work/$name/ab_table.md" 2>/dev/null
done
tar -C "$work" -czf "$out/ab_many.tgz" .
echo "run_ab_many.sh: $n A/Bs in $(( $(date +%s) - start )) s; $out/tables.md, $out/ab_many.tgz"
exit $status
