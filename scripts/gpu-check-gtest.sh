# The carried test binaries run by gpu-check.sh (PREBUILT): each with a gtest filter, side by
# side, a log each, and their counts read back. Sourced; reads PREBUILT, BUILD, LOGS and
# TEST_SECONDS (tests/scripts/gpu_check_gtest_test.sh checks it on fake binaries).
# Each binary within TEST_SECONDS (default 240): a test that hangs or crawls costs the call that
# much, not all of it, and its log says where it was.
gtest_each() {  # log name, gtest filter: every carried test binary, a log each
  local pids=() failed=0 t
  for t in "$PREBUILT"/bin/test_*; do
    t=$(basename "$t")
    (cd "$BUILD" && OMP_WAIT_POLICY=PASSIVE timeout "${TEST_SECONDS:-240}" "tests/$t" \
       --gtest_filter="$2" > "$LOGS/$1-$t.log" 2>&1 ||
     { rc=$?; [ $rc != 124 ] || echo "[  FAILED  ] 1 test: $t stopped after ${TEST_SECONDS:-240} s" \
         >> "$LOGS/$1-$t.log"; exit $rc; }) &
    pids+=($!)
  done
  for t in "${pids[@]}"; do wait "$t" || failed=1; done
  return $failed
}
gtest_summary() {  # log name: passed/failed counts over its logs
  cat "$LOGS/$1"-test_*.log | awk '/^\[  PASSED  \]/{p += $4} /^\[  FAILED  \] [0-9]+ test/{f += $4}
                                  /^\[  SKIPPED \] [0-9]+ test/{s += $4} END {printf "%d passed, %d failed, %d skipped", p, f, s}'
}
