#!/usr/bin/env bash
# scripts/gpu-check.sh as docs/core.md's prepared call runs it (PREBUILT carry, QUICK=1, its SKIP
# list, the peer), on this CPU machine with everything the GPU machine provides faked: nvidia-smi,
# the carried minrnn (and its baseline), test binaries and the peer. The one call a lent GPU gets
# must not stop on the script itself: every step is walked, the summary is filed in (a copy of)
# docs/benchmarks.md, and the overall verdict is PASSED; the full check (no QUICK, no SKIP) too.
# The fake minrnn refuses a --rates file no bench wrote. Exit 0 when all hold.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo" fake="$work/fake" carry="$work/repo/.gpu-carry"
mkdir -p "$repo/docs" "$fake" "$carry/bin"
cp -r "$root/scripts" "$root/configs" "$repo/"

cat > "$fake/nvidia-smi" << 'FAKE'
#!/usr/bin/env bash
case "$*" in
  *compute_cap,memory*) echo "NVIDIA H200, 570.00, 9.0, 143771 MiB" ;;
  *compute_cap*) echo "9.0" ;;
  *) echo "a fake GPU" ;;
esac
FAKE
# The carried minrnn: it notes each call, writes each --csv it is given, makes the run dirs a
# train names, and refuses a --rates file no bench wrote (as the real one refuses a missing file).
cat > "$carry/bin/minrnn" << 'FAKE'
#!/usr/bin/env bash
echo "$*" >> "$MINRNN_CALLS"
args=("$@")
dirs=()
for ((i = 0; i < $#; i++)); do
  case "${args[i]}" in
    --csv) : > "${args[i + 1]}" ;;
    --run-dir) dirs+=("${args[i + 1]}") ;;
    --rates)
      IFS=',' read -ra files <<< "${args[i + 1]}"
      for f in "${files[@]}"; do [ -f "$f" ] || { echo "no rates file $f"; exit 1; }; done ;;
  esac
done
case "$1" in
  data) : > "$3" ;;
  train) for d in "${dirs[@]}"; do mkdir -p "$d" && printf 'step,loss\n500,0.1\n' > "$d/metrics.csv"; done ;;
  sweep) echo "Wall time: 1.0 h" ;;
esac
echo "| mingru | cuda | cuda graph | 1 | 2 | 3 | 4 | 5 | 6 | 7 |"
FAKE
cp "$carry/bin/minrnn" "$carry/bin/minrnn-baseline"
echo bc02d63 > "$carry/bin/baseline-rev"
for t in test_compute test_rl; do
  printf '#!/usr/bin/env bash\necho "[  PASSED  ] 2 tests."\n' > "$carry/bin/$t"
done
chmod +x "$fake/nvidia-smi" "$carry/bin/"*
echo "$work/built/main/build-carry" > "$carry/bin/built-in"
echo "abc1234" > "$carry/bin/built-rev"
printf '#!/usr/bin/env bash\necho "peer: = 100.0 steps/s"\n' > "$work/peer.sh"

failures=0
expect() {  # what, condition…
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
check() {  # name, then the environment of the call
  local name=$1
  shift
  printf '# Benchmarks\n' > "$repo/docs/benchmarks.md"
  export MINRNN_CALLS="$work/calls-$name.txt"
  (cd "$repo" && env PATH="$fake:$PATH" LOGS="$work/logs-$name" PREBUILT=.gpu-carry "$@" \
    timeout 120 bash scripts/gpu-check.sh > "$work/out-$name.txt" 2>&1)
  local status=$?
  filed="$repo/docs/benchmarks.md"
  expect "$name: the check ends PASSED (exit $status)" [ "$status" = 0 ]
  expect "$name: its summary is filed" grep -q '^- overall: PASSED' "$filed"
  expect "$name: no step FAILED" bash -c "! grep -q FAILED '$filed'"
  expect "$name: the carried build is named" grep -q 'built in .*build-carry from abc1234' "$filed"
  expect "$name: the baseline was timed beside this build" grep -q 'baseline bc02d63' "$filed"
  expect "$name: Table 3 was projected four ways" [ "$(grep -c 'Table 3 projected' "$filed")" = 4 ]
  expect "$name: issue 41's targets were read" grep -q "issue 41's targets, from this call" "$filed"
  expect "$name: the agent check trained a stacked pack" \
    grep -q 'train a pack of 4 on cuda (stacked)' "$filed"
}

# docs/core.md's prepared call.
check prepared QUICK=1 SKIP='device-tests scan figure1 ncu kernel-choices cublaslt pack-limits' \
  CUDA_TESTS='*Cuda*:-ScanCuda.*' PEER="$work/peer.sh" PEER_SECONDS=1 PEER_PROCS='2'
expect "prepared: the cuda tests ran with their filter" \
  grep -q 'cuda tests (\*Cuda\*:-ScanCuda.\*): 4 passed' "$filed"
expect "prepared: the peer ran, alone and 2 at once" \
  grep -q 'peer, 2 processes at once on cuda: 200.0 steps/s' "$filed"
expect "prepared: the skipped steps did not run" \
  bash -c "! grep -q 'bench scan\|bench figure1\|pack-limits' '$MINRNN_CALLS'"
# The full check, every step (the peer not carried).
check full
expect "full: the steps QUICK leaves out ran" \
  bash -c "grep -q 'bench scan' '$MINRNN_CALLS' && grep -q 'bench figure1' '$MINRNN_CALLS' &&
           grep -q 'bench pack-limits' '$MINRNN_CALLS' && grep -q -- '--packs 8,16' '$MINRNN_CALLS'"
[ "$failures" = 0 ] || tail -n 40 "$work"/out-*.txt
exit $((failures > 0))
