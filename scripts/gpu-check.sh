#!/usr/bin/env bash
# Everything the GPU path needs checked on a real GPU, in one command, for whoever first has one:
#   1. build with CUDA (MINRNN_CUDA=ON) and check the build: the kernels carry SASS for this GPU's
#      architecture (cuobjdump --list-elf) and the process links torch's CUDA runtime (ldd);
#   2. the `cuda`-labelled tests (every scan kernel, every dtype, against float64 on the CPU — the
#      same cases the emulator runs in `make test`), the device handling, a checkpoint round trip;
#   3. the GPU benchmarks: scan (each kernel's GB/s beside a copy's, the bandwidth ceiling), a
#      training step (CUDA graph beside eager, the kernels it launches, and in TF32), packs of
#      1-32 runs side by side (run-steps/s and the share of the fp32 peak; also in TF32, through
#      CUDA's default 8 hardware queues, and as two processes at once) with Table 3's time
#      projected from them (`minrnn sweep --estimate`), the peer (CORL's dt.py) as one process and
#      as four, a train + eval of a small agent and of a pack of 4 on cuda, and Figure 1;
#   4. files the results in docs/benchmarks.md (the benches append their own entries; this script
#      adds a summary under "## GPU check") and leaves full logs in $LOGS.
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (default build-gpu; reused when it exists)
#        QUICK=1 scripts/gpu-check.sh        (shorter benches: fits a 10-minute call with the build)
#        TARGETS="minrnn test_compute" …        (build only these; default: everything)
#        PREBUILT=.gpu-carry scripts/gpu-check.sh  (no build: the binaries scripts/gpu-carry.sh
#                                             built here for the GPU, copied into their build dir)
#        SKIP="scan figure1" …                (leave out these steps: device-tests scan train ncu
#                                             pack agent peer figure1; device-tests: ~70 s of a call;
#                                             kernel-choices (scan kernels, cuBLAS logs), cublaslt:
#                                             comparisons already read; pack-limits: ~80 s)
#        CUDA_TESTS='*Cuda*:-ScanCuda.*' …    (PREBUILT: the cuda tests' gtest filter; default *Cuda*)
#        TEST_SECONDS=240 …                   (PREBUILT: each test binary's limit, a group at a time)
#        PEER=path/to/run.sh PEER_SECONDS=10 … (the peer's timed seconds per process; default 20)
#        PEER_PROCS="4 8 16" …               (the peer's processes at once, each count in turn)
#        (PREBUILT with bin/minrnn-baseline, gpu-carry.sh's BASELINE=REV: the training step of that
#        commit's build and of this one, alternating in the same call)
# On a GPU machine without a package registry (the project's lent one), first
# `source scripts/gpu-deps-env.sh` with .devdeps/ carried (docs/core.md, "Checking on a GPU").
# Exit status: non-zero when the build, a check or a cuda test failed (the benches still ran).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD="${1:-build-gpu}"
LOGS="${LOGS:-runs/gpu-check}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$LOGS"
LOGS=$(cd "$LOGS" && pwd)  # the tests run in the build dir
MINRNN="$BUILD/minrnn"
status=0
summary=()
note() {  # one line of the summary, printed now and filed at the end
  echo "[gpu-check] $*"
  summary+=("- $*")
}

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi > "$LOGS/nvidia-smi.txt" 2>&1; then
  echo "[gpu-check] nvidia-smi finds no GPU here; nothing to check (see $LOGS/nvidia-smi.txt)" >&2
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader | head -1)
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
note "GPU: $gpu (sm_$cap); $(nproc) CPU cores; $(date -u '+%Y-%m-%d %H:%M UTC')"

skipped() { [[ " ${SKIP:-} " == *" $1 "* ]]; }
if [ -n "${PREBUILT:-}" ]; then
  # The test binaries name the checkout and build dir they were built in; the same paths here.
  built_in=$(cat "$PREBUILT/bin/built-in")
  BUILD=$(basename "$built_in")
  MINRNN="$BUILD/minrnn"
  [ -e "$(dirname "$built_in")" ] || { mkdir -p "$(dirname "$(dirname "$built_in")")" &&
                                       ln -s "$PWD" "$(dirname "$built_in")"; }
  mkdir -p "$BUILD/tests"
  cp "$PREBUILT/bin/minrnn" "$BUILD/"
  for t in "$PREBUILT"/bin/test_*; do cp "$t" "$BUILD/tests/"; done
  # Their RUNPATH names the build machine's venv; gpu-deps-env.sh put this machine's torch first.
  built_rev=$(cat "$PREBUILT/bin/built-rev" 2> /dev/null || echo "an unrecorded commit")
  note "prebuilt binaries from $PREBUILT (built in $built_in from $built_rev), no build here"
fi

echo "== 1/4 build ($BUILD)"
if [ -n "${PREBUILT:-}" ]; then
  :
elif ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMINRNN_CUDA=ON \
         ${MINRNN_PYTHON:+-DMINRNN_PYTHON="$MINRNN_PYTHON"} &&
       cmake --build "$BUILD" -j "$JOBS" ${TARGETS:+--target $TARGETS}; } > "$LOGS/build.log" 2>&1; then
  tail -40 "$LOGS/build.log"
  note "build FAILED (log: $LOGS/build.log)"
  exit 1
fi
kernels="$BUILD/kernels/libminrnn_kernels.a"
[ -f "$kernels" ] || kernels=$MINRNN
archs=$(cuobjdump --list-elf "$kernels" 2>/dev/null | grep -o 'sm_[0-9]*' | sort -uV | tr '\n' ' ')
ptx=$(cuobjdump --list-ptx "$kernels" 2>/dev/null | grep -o 'sm_[0-9]*' | sort -uV | tr '\n' ' ')
note "kernels built as SASS for: ${archs:-none}; PTX for: ${ptx:-none}"
if [[ " $archs " != *" sm_$cap "* ]]; then
  note "no SASS for this GPU (sm_$cap): it runs the PTX, JIT-compiled at first launch"
fi
cudart=$(ldd "$MINRNN" | grep -o 'libcudart[^ ]* => [^ ]*' | head -1)
torch_cudart=$(ldd "$(dirname "$(ldd "$MINRNN" | grep -o '/[^ ]*libtorch_cuda.so')")/libtorch_cuda.so" 2>/dev/null |
               grep -o 'libcudart[^ ]* => [^ ]*' | head -1)
note "CUDA runtime of minrnn: ${cudart:-none}; of libtorch_cuda: ${torch_cudart:-none}"
# The same file by two spellings (torch's is reached through torch/lib/../../nvidia) is one runtime.
if [ "$(readlink -f "${cudart##* }")" != "$(readlink -f "${torch_cudart##* }")" ]; then
  note "CHECK FAILED: minrnn and libtorch_cuda resolve different CUDA runtimes"
  status=1
fi

echo "== 2/4 cuda-labelled tests"
# ctest's files name the build machine's paths: carried test binaries run directly, side by side.
# shellcheck source=scripts/gpu-check-gtest.sh
source scripts/gpu-check-gtest.sh
# One group of tests, passed or failed into the summary: with a build here through ctest, with
# carried binaries (PREBUILT) through their gtest filter.
test_group() {  # log name, what it is, gtest filter, ctest arguments…
  local log=$1 what=$2 filter=$3 ok=1 result
  shift 3
  if [ -n "${PREBUILT:-}" ]; then
    gtest_each "$log" "$filter" || ok=0
    result=$(gtest_summary "$log")
  else
    ctest --test-dir "$BUILD" "$@" --output-on-failure > "$LOGS/$log.log" 2>&1 || ok=0
    result=$(grep -E 'tests passed' "$LOGS/$log.log" | tail -1)
  fi
  if [ $ok = 1 ]; then
    note "$what: $result"
  else
    status=1
    note "$what FAILED: $result (logs: $LOGS/$log*.log)"
    grep -hE '^\[  FAILED  \] [A-Z]|^\s+[0-9]+ - ' "$LOGS/$log"*.log | head -20
  fi
}
# CUDA_TESTS: another gtest filter for the carried binaries, e.g. '*Cuda*:-ScanCuda.*' where the
# scan kernels did not change (~80 s of the ~100).
test_group ctest-cuda "cuda tests (${CUDA_TESTS:-*Cuda*})" "${CUDA_TESTS:-*Cuda*}" -L cuda -j 4
# The device handling and the emulated kernels, on a machine where CUDA is usable.
skipped device-tests || test_group ctest-device "device-handling and emulator tests" \
  '*Device*:*Emulated*:GridEmulator*' \
  -j 4 -R 'Device|Emulated|GridEmulator|Cli.AskingForAGpu'

echo "== 3/4 benchmarks (each --record: appends its entry to docs/benchmarks.md)"
bench() {  # name, then the minrnn arguments
  local name=$1
  shift
  local t0
  t0=$(date +%s)
  if "$MINRNN" "$@" --record > "$LOGS/bench-$name.log" 2>&1; then
    note "bench $name: done in $(( $(date +%s) - t0 )) s (\`minrnn $*\`)"
  else
    status=1
    note "bench $name FAILED (log: $LOGS/bench-$name.log)"
  fi
}
# QUICK=1: the paper's shapes still, fewer and shorter cells (figure 1 last: it is the longest).
fig1=()
train=(--devices cpu,cuda --eager-too)
if [ "${QUICK:-0}" = 1 ]; then
  fig1=(--lengths 64,256,1024,4096 --repeats 3 --max-seconds 10)
  train=(--devices cuda --backbones mingru,transformer --seconds 2)  # the graph alone
fi
if ! skipped scan; then
  bench scan bench scan --device cuda --batch 64 --dim 256 --lengths 64,512,4096,16384 --repeats 5
  grep -E '^\| (copy|scan kernel|scan: ours)' "$LOGS/bench-scan.log" | sed 's/^/    /'
  # The data grid::choose_scan_kernel's tiled8/tiled32 threshold was set from (docs/core.md, "Which
  # kernel"): each kernel at B·D from 512 to 64 k channels, to re-check it on another GPU.
  for bd in "8 64" "8 256" "64 64" "8 1024" "64 1024"; do
    read -r b d <<< "$bd"
    bench "scan-b$b-d$d" bench scan --device cuda --batch "$b" --dim "$d" --lengths 512,4096 --repeats 5
    grep -E '^\| (scan kernel|scan: ours)' "$LOGS/bench-scan-b$b-d$d.log" | sed 's/^/    /'
  done
fi
# The trainer's step (rl/train_step.h) replayed as a CUDA graph, beside the same step run eagerly;
# then the graph beside the graph with its weight gradients queued on a side stream
# (ops/side_work.h: off by default until these rows show it pays).
# Then, on their own (a profiler that fails takes no other number with it), the kernels the GPU
# ran for the graph step (--profile: launches, µs, and how busy the GPU was: where the ≤ 1 ms a
# step of issue 41 has to come from; every kernel listed, not the top 15: the step is now its
# kernels' own time, spread over dozens of them), and the graph step in TF32.
if ! skipped train; then
  bench train bench train "${train[@]}" --csv "$LOGS/rates-train.csv"
  grep -E '^\| ' "$LOGS/bench-train.log" | sed 's/^/    /'
  # On its own (new code that has not run on a GPU yet takes no other number with it if it fails).
  bench train-side-work bench train --devices cuda --backbones mingru,transformer --seconds 2 \
    --side-work-too --csv "$LOGS/rates-train-side-work.csv"
  grep -E '^\| (mingru|transformer) ' "$LOGS/bench-train-side-work.log" | sed 's/^/    /'
  bench train-kernels bench train --devices cuda --backbones mingru,transformer --seconds 1 \
    --profile --top-ops 60
  grep -E '^\| \*\*all|no kernel trace' "$LOGS/bench-train-kernels.log" | sed 's/^/    /'
  # The side-work step's kernels: how far its weight gradients overlapped the rest (GPU busy).
  MINRNN_SIDE_WORK=1 bench train-kernels-side-work bench train --devices cuda \
    --backbones mingru,transformer --seconds 1 --profile --top-ops 60
  grep -E '^\| \*\*all|no kernel trace' "$LOGS/bench-train-kernels-side-work.log" | sed 's/^/    /'
  bench train-tf32 bench train --devices cuda --backbones mingru,transformer --seconds 2 \
    --matmul-precision tf32
  grep -E '^\| (mingru|transformer) ' "$LOGS/bench-train-tf32.log" | sed 's/^/    /'
  # The TF32 step's kernels: how much of it is still matmuls (issue 41's 1-hour Table 3 is TF32's).
  # In the full check only since 2026-11-28: its ~6 s went to the scan kernels' and cuBLAS's logs.
  if [ "${QUICK:-0}" != 1 ]; then
    bench train-kernels-tf32 bench train --devices cuda --backbones mingru --seconds 1 --profile \
      --top-ops 60 --matmul-precision tf32
    grep -E '^\| \*\*all|no kernel trace' "$LOGS/bench-train-kernels-tf32.log" | sed 's/^/    /'
  fi
fi
# Comparisons a check alone could not read: Nsight Compute on our slowest kernels, an earlier
# commit's step beside this build's, LibTorch's cuBLASLt path beside its cuBLAS one.
peak=()
case "$gpu" in
  *H100*PCIe*) peak=(--peak-tflops 51) ;;
  *H100* | *H200*) peak=(--peak-tflops 67) ;;
esac
# shellcheck source=scripts/gpu-check-comparisons.sh
source scripts/gpu-check-comparisons.sh
# shellcheck source=scripts/gpu-check-packs.sh
source scripts/gpu-check-packs.sh

agent_check() {  # a small agent trained and evaluated end to end on the GPU, then a pack of 4
  work="$LOGS/agent"
  rm -rf "$work" && mkdir -p "$work"
  "$MINRNN" data synth "$work/d.hdf5" --env hopper --steps 20000 --episode-len 200 > /dev/null
  cat > "$work/c.yaml" << EOF
dataset: $work/d.hdf5
env: hopper
backbone: mingru
max_steps: 500
eval_every: 0
checkpoint_every: 250
log_every: 50
EOF
  seconds_since() {  # $1: a `date +%s%N` stamp
    local ms=$(( ($(date +%s%N) - $1) / 1000000 ))
    printf '%d.%01d' $((ms / 1000)) $((ms % 1000 / 100))
  }
  t0=$(date +%s%N)
  if "$MINRNN" train "$work/c.yaml" --run-dir "$work/run" --set device=cuda --quiet > "$LOGS/train.log" 2>&1; then
    note "train on cuda: 500 steps of the configs/defaults.yaml model in $(seconds_since "$t0") s"
    t0=$(date +%s%N)
    if "$MINRNN" eval "$work/run" --device cuda --engine torch --episodes 10 --out "$work/eval.json" \
         > "$LOGS/eval.log" 2>&1; then
      note "eval on cuda (torch engine): 10 episodes in $(seconds_since "$t0") s: $(tail -1 "$LOGS/eval.log")"
    else
      status=1
      note "eval on cuda FAILED (log: $LOGS/eval.log)"
    fi
  else
    status=1
    note "train on cuda FAILED (log: $LOGS/train.log)"
  fi

  # A pack (issue 41): four seeds of the same agent in one process (rl::train_pack), each stepping
  # its own CUDA graph, beside the one run above: the aggregate run-steps/s a sweep gets from
  # `pack: 4`.
  # The same four stacked as one model (MINRNN_STACKED_PACK=1), through the CLI: their run dirs,
  # checkpoints and curves as the pack of streams writes them, each run's last loss beside its
  # streams twin's (within float rounding: the stacked step's products are batched).
  for way in streams stacked; do
    t0=$(date +%s%N)
    if MINRNN_STACKED_PACK=$([ $way = stacked ] && echo 1 || echo 0) "$MINRNN" train "$work/c.yaml" \
         --seed 0,1,2,3 --run-dir "$work/$way-0" --run-dir "$work/$way-1" --run-dir "$work/$way-2" \
         --run-dir "$work/$way-3" --set device=cuda --quiet > "$LOGS/train-pack-$way.log" 2>&1; then
      note "train a pack of 4 on cuda ($way): 4 × 500 steps in $(seconds_since "$t0") s, last losses $(
        for r in 0 1 2 3; do tail -1 "$work/$way-$r/metrics.csv" | cut -d, -f2; done | paste -sd' ')"
    else
      status=1
      note "train a pack of 4 on cuda ($way) FAILED (log: $LOGS/train-pack-$way.log)"
    fi
  done
}

# The peer on the same GPU in the same call, when its script is carried: PEER=path/to/run.sh
# (CORL's dt.py, ../shared/peer; PEER_PYTHON defaults to python3 here, which has torch). Before
# the agent check: issue 41's targets are ratios to it, and a call that runs out of time should
# lose the check that has passed before, not these.
if [ -n "${PEER:-}" ] && ! skipped peer; then
  if PEER_PYTHON="${PEER_PYTHON:-python3}" bash "$PEER" train "${PEER_SECONDS:-20}" cuda > "$LOGS/peer-train.log" 2>&1; then
    note "peer (CORL dt.py, one process) on cuda: $(tail -1 "$LOGS/peer-train.log")"
  else
    note "peer on cuda FAILED (log: $LOGS/peer-train.log)"
  fi
  # Its best aggregate: N processes sharing the GPU (PEER_PROCS, each N in turn), their steps/s
  # summed. Python starts them staggered, so their timed windows overlap only in part: the sum
  # flatters the peer.
  for n in ${PEER_PROCS:-4 8 16}; do
    for i in $(seq 1 "$n"); do
      PEER_PYTHON="${PEER_PYTHON:-python3}" bash "$PEER" train "${PEER_SECONDS:-20}" cuda > "$LOGS/peer-train-x$n-$i.log" 2>&1 &
    done
    wait
    aggregate=$(cat "$LOGS"/peer-train-x"$n"-*.log | grep -o '= [0-9.]* steps/s' | awk '{s += $2; n++} END {if (n) printf "%.1f steps/s from %d processes", s, n}')
    note "peer, $n processes at once on cuda: ${aggregate:-FAILED (logs: $LOGS/peer-train-x$n-*.log)}"
  done
fi

# Issue 41's targets against what this call measured, one line each (scripts/gpu-check-targets.sh),
# before the agent check: a call cut short by its time still prints them.
# shellcheck source=scripts/gpu-check-targets.sh
source scripts/gpu-check-targets.sh
issue41_targets "${peak[1]:-0}"

skipped agent || agent_check

skipped figure1 || bench figure1 bench figure1 --device cuda "${fig1[@]}"

echo "== 4/4 filing the summary in docs/benchmarks.md"
header=""
grep -q '^## GPU check' docs/benchmarks.md || header=$'\n## GPU check (scripts/gpu-check.sh)\n'
{
  printf '%s' "$header"
  echo
  echo "### $(date -u '+%Y-%m-%d %H:%M UTC') — $gpu"
  echo
  printf '%s\n' "${summary[@]}"
  echo "- overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
} >> docs/benchmarks.md
echo "[gpu-check] $([ $status -eq 0 ] && echo PASSED || echo FAILED); logs in $LOGS; summary appended to docs/benchmarks.md"
exit $status
