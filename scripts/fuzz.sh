#!/usr/bin/env bash
# Longer fuzzing than `make test` does: every target (or those named) for SECONDS each, with a
# seed of its own every time unless FUZZ_SEED is set.
#   scripts/fuzz.sh [SECONDS] [TARGET...]           # default 600 s each, all targets
#   FUZZ_BUILD=build-asan scripts/fuzz.sh 300 d4rl  # in the sanitizer build (make test-asan first)
# Findings (crashes, hangs, huge allocations, errors that do not name the file) are saved under
# fuzz-findings/TARGET/; replay one with `BUILD/minrnn_fuzz TARGET FILE`, and once it is fixed,
# commit it under tests/fuzz/regressions/TARGET/ so every `make test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${FUZZ_BUILD:-build}"
SECONDS_EACH="${1:-600}"
shift || true
FUZZ="$BUILD/tests/minrnn_fuzz"
if [ ! -x "$FUZZ" ]; then
  if [ "$BUILD" = build ]; then make build; else echo "no $FUZZ: build $BUILD first" >&2; exit 2; fi
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <("$FUZZ" --list | awk '{print $1}')
if [ -f "$BUILD/CMakeCache.txt" ] && grep -q '^MINRNN_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  export MINRNN_SAN_DIR="$PWD/scripts/sanitizers"
  . scripts/sanitizers/env.sh
  # Under ASan the allocation limit is ASan's own, and covers malloc (HDF5's) as well.
  export ASAN_OPTIONS="$ASAN_OPTIONS:max_allocation_size_mb=1024:allocator_may_return_null=0"
fi
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
status=0
for t in "${targets[@]}"; do
  seed="${FUZZ_SEED:-$(date +%s%N | tail -c 10)}"
  echo "== $t: ${SECONDS_EACH}s, --seed $seed"
  "$FUZZ" "$t" --runs 1000000000 --seconds "$SECONDS_EACH" --seed "$seed" \
    --findings "fuzz-findings/$t" || status=1
done
exit $status
