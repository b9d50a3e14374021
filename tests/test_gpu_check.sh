#!/usr/bin/env bash
# scripts/gpu-check run against a fake catch2 binary (no GPU needed): cases
# dealt to processes, shards reported as they finish, a failing case's exit
# code kept, and GPU_CHECK_TIMEOUT_S stopping the run with the unfinished
# cases listed and the log written.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/fake" <<'FAKE'
#!/usr/bin/env bash
if [ "${2:-}" = "--list-test-names-only" ]; then
  printf 'quick a\nquick b, with comma\nslow [x]\n%s\n' "${FAKE_LAST:-quick c}"; exit 0
fi
rc=0
while IFS= read -r line; do
  name=$(printf '%s' "$line" | sed 's/\\\(.\)/\1/g')
  case "$name" in
    slow*) sleep "${FAKE_SLOW:-20}" ;;
    fail*) echo "FAILED: $name"; rc=1 ;;
  esac
  echo "0.100 s: $name"
done < "$2"
exit $rc
FAKE
chmod +x "$tmp/fake"
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$tmp/out.txt"; exit 1; }
run() {
  OUT="$tmp" GPU_CHECK_BIN="$tmp/fake" GPU_CHECK_JOBS=2 "$@" "$repo/scripts/gpu-check" run \
    > "$tmp/out.txt" 2>&1
}

# 1. Stopped: the slow case is killed, listed, and the run exits 124.
FAKE_SLOW=20 GPU_CHECK_TIMEOUT_S=2 run env
rc=$?
[ "$rc" -eq 124 ] || fail "stopped run: exit $rc, expected 124"
grep -q "stopped after" "$tmp/out.txt" || fail "no stop message"
grep -q "^   slow \[x\]$" "$tmp/out.txt" || fail "the unfinished case is not listed"
grep -q "0.100 s: quick a" "$tmp/gpu-tests.log" || fail "the finished cases' log is missing"

# 2. A failing case: every shard runs to the end, the exit code is kept.
FAKE_SLOW=0 FAKE_LAST="fail c" run env
rc=$?
[ "$rc" -eq 1 ] || fail "failing run: exit $rc, expected 1"
[ "$(grep -c '^== shard [01] of 2' "$tmp/out.txt")" -eq 2 ] || fail "not every shard reported"
grep -q "4 of 4 cases ran" "$tmp/out.txt" || fail "case count"

# 3. All passing.
FAKE_SLOW=0 run env
rc=$?
[ "$rc" -eq 0 ] || fail "passing run: exit $rc"
echo "gpu-check: 3 scenarios pass"
