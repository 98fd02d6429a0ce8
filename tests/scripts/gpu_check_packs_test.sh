#!/usr/bin/env bash
# scripts/gpu-check-packs.sh (the packs' benches and Table 3's projection from their rates) with
# its benches stubbed: every rates file the projections read must be one a bench of the check
# wrote, or the one GPU call a session may get ends its projections FAILED. A fake minrnn writes
# each --csv it is given and, for `sweep --estimate`, refuses a --rates file that is not there.
# Run in full and QUICK=1. Exit 0 when all hold.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/minrnn" << 'FAKE'
#!/usr/bin/env bash
rates=""
while [ $# -gt 0 ]; do
  case "$1" in
    --csv) : > "$2"; shift ;;
    --rates) rates=$2; shift ;;
  esac
  shift
done
IFS=',' read -ra files <<< "$rates"
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "no rates file $f"; exit 1; }
done
echo "Wall time: 1.0 h"
FAKE
chmod +x "$work/minrnn"

failures=0
expect() {  # what, condition…
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
for quick in 0 1; do
  LOGS="$work/logs-$quick"
  mkdir -p "$LOGS"
  (
    MINRNN="$work/minrnn" QUICK=$quick SKIP="" status=0 peak=(--peak-tflops 67) summary=()
    note() { summary+=("$*"); }
    skipped() { [[ " ${SKIP:-} " == *" $1 "* ]]; }
    bench() {  # name, then the minrnn arguments (as gpu-check.sh's, without filing)
      local name=$1
      shift
      "$MINRNN" "$@" > "$LOGS/bench-$name.log" 2>&1 || note "$name FAILED"
    }
    # shellcheck source=scripts/gpu-check-packs.sh
    source "$root/scripts/gpu-check-packs.sh" > "$LOGS/out.txt" 2>&1
    printf '%s\n' "${summary[@]}" > "$LOGS/summary.txt"
    exit "$status"
  )
  status=$?
  expect "QUICK=$quick: the projections and benches succeed" [ "$status" = 0 ]
  expect "QUICK=$quick: nothing FAILED" bash -c "! grep -q FAILED '$LOGS/summary.txt'"
  expect "QUICK=$quick: four projections of Table 3" \
    [ "$(grep -c '^Table 3 projected (table3-.*): Wall time' "$LOGS/summary.txt")" = 4 ]
done
[ "$failures" = 0 ] || cat "$work"/logs-*/summary.txt
exit $((failures > 0))
