#!/usr/bin/env bash
# scripts/gpu-check-gtest.sh on fake test binaries: one that passes, one that fails a test, one that
# hangs past TEST_SECONDS. Each gets its own log; the hung one is stopped and its log says so; the
# run reports failure; and the counts read back add up across the logs. Exit 0 when all hold.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PREBUILT="$work/carry" BUILD="$work/build" LOGS="$work/logs" TEST_SECONDS=2
mkdir -p "$PREBUILT/bin" "$BUILD/tests" "$LOGS"
fake() {  # name, body
  printf '#!/usr/bin/env bash\n%s\n' "$2" > "$BUILD/tests/$1"
  chmod +x "$BUILD/tests/$1"
  cp "$BUILD/tests/$1" "$PREBUILT/bin/$1"
}
# shellcheck disable=SC2016  # the fake's own $1, expanded when it runs
fake test_passes 'echo "filter $1"; echo "[  PASSED  ] 3 tests."; echo "[  SKIPPED ] 1 test, listed below:"'
fake test_fails 'echo "[  PASSED  ] 2 tests."; echo "[  FAILED  ] 1 test, listed below:"; exit 1'
fake test_hangs 'echo "[ RUN      ] Slow.Forever"; exec sleep 60'
# shellcheck source=scripts/gpu-check-gtest.sh
source "$root/scripts/gpu-check-gtest.sh"

failures=0
expect() {  # what, condition…
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
start=$SECONDS
gtest_each cuda '*Cuda*'
status=$?
expect "the run reports a failure" [ "$status" != 0 ]
expect "the hung binary is stopped within its limit" [ $((SECONDS - start)) -lt 30 ]
logs=("$LOGS"/*)
expect "each binary its own log" [ "${#logs[@]}" = 3 ]
expect "the filter reaches the binaries" grep -q 'filter --gtest_filter=\*Cuda\*' "$LOGS/cuda-test_passes.log"
expect "the hung binary's log says it was stopped" \
  grep -q 'FAILED  \] 1 test: test_hangs stopped after 2 s' "$LOGS/cuda-test_hangs.log"
expect "the hung binary's log keeps where it was" grep -q 'Slow.Forever' "$LOGS/cuda-test_hangs.log"
counts=$(gtest_summary cuda)
expect "the counts add up ($counts)" [ "$counts" = "5 passed, 2 failed, 1 skipped" ]
exit $((failures > 0))
