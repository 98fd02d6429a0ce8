#!/usr/bin/env bash
# Train a sweep's unfinished runs on a lent GPU machine for a fixed time, and bring back what they
# made (docs/results.md, "What is left", item 2: the calls that finished issue 23). Run there, in
# the project root, with .devdeps carried (scripts/gpu-deps-fetch.sh):
#   D4RL_DATASET_DIR=data scripts/gpu-sweep.sh SWEEP_YAML SNAPSHOT_DIR SECONDS [COLLECT_ARGS...]
# SNAPSHOT_DIR '-': a sweep from nothing. UNFINISHED=0: bring back no unfinished run (a sweep
# that cannot finish elsewhere, where the 8 files a call returns are wanted for other logs).
# 1. minrnn: $MINRNN (e.g. .gpu-carry/bin/minrnn, scripts/gpu-carry.sh) or a carried
#    build-carry/minrnn when it runs its CUDA kernels there (built here for the GPU, saving the
#    ~150 s of a build there; docs/core.md, "Checking on a GPU"), else one built there in build-gpu/.
# 2. With COLLECT_ARGS, `minrnn collect COLLECT_ARGS` (which refuses to overwrite a dataset already
#    there), e.g. resampling from a carried data/work SAC checkpoint.
# 3. The snapshot's finished runs are restored into the sweep's `out` directory (never over a run
#    there), and `minrnn sweep SWEEP_YAML --extend --set device=cuda` runs until SECONDS after this
#    script started, less what packing takes. It is then stopped with SIGTERM: its runs
#    checkpoint, and the same command on the same warm machine resumes them.
# 4. Into $OUT: log.txt; snap.tgz, the sweep's snapshot (scripts/snapshot-sweep.sh) with its
#    finished runs; and the run directories of the two furthest unfinished runs, checkpoint
#    included, as <sweep>-<dataset>-<backbone>-seed<N>.tar.part-aa/-ab (a returned file is at most
#    16 MiB, and at most 8 come back). Join with `cat X.tar.part-* | tar x -C <the sweep's out>`
#    and resume anywhere with the same sweep command: a checkpoint loads onto any device.
set -uo pipefail
start=$(date +%s)
if [[ $# -lt 3 || -z "${OUT:-}" ]]; then
  echo "usage: OUT=DIR $0 SWEEP_YAML SNAPSHOT_DIR SECONDS [COLLECT_ARGS...]" >&2
  exit 2
fi
sweep=$1 snapshot=$2 seconds=$3
shift 3
log=$OUT/log.txt
say() { echo "[gpu-sweep +$(($(date +%s) - start))s] $*" | tee -a "$log"; }

# shellcheck source=/dev/null
source scripts/gpu-deps-env.sh >> "$log" 2>&1 || { say "gpu-deps-env failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader >> "$log" 2>&1
bin=${MINRNN:-build-carry/minrnn}
if [[ -z ${MINRNN:-} && -x build-gpu/minrnn ]]; then
  bin=build-gpu/minrnn
elif ! "$bin" bench scan --quick --device cuda --no-append >> "$log" 2>&1; then
  say "no carried minrnn that loads here; building build-gpu/"
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DMINRNN_CUDA=ON \
      -DMINRNN_PYTHON="$MINRNN_PYTHON" && cmake --build build-gpu -j "$(nproc)" --target minrnn; } \
    >> "$log" 2>&1 || { say "build failed"; exit 1; }
  bin=build-gpu/minrnn
fi
say "minrnn: $bin"
# The sweep's own reading of its file says where its runs live (the plan's first line ends "→ OUT").
out=$("$bin" sweep "$sweep" --dry-run 2>> "$log" | sed -n '1s/.*→ //p')
[[ -n $out ]] || { say "minrnn sweep $sweep --dry-run failed"; exit 1; }
if [[ $# -gt 0 ]]; then
  if OMP_NUM_THREADS=1 "$bin" collect "$@" >> "$log" 2>&1; then
    say "collect done"
  else  # an existing dataset is refused too, and is no failure here: its error line says which
    say "collect $* did not write: $(grep -a 'error' "$log" | tail -n 1)"
  fi
fi
[[ $snapshot == - ]] || scripts/snapshot-sweep.sh --restore "$snapshot" "$out" 2>&1 | tee -a "$log"

pack_s=30  # the SIGTERM'd runs' checkpoints, the snapshot and the tars
left=$((seconds - ($(date +%s) - start) - pack_s))
if [[ $left -gt 10 ]]; then
  say "sweep for ${left}s"
  t0=$(date +%s)
  timeout --signal=TERM --kill-after=20 "$left" \
    "$bin" sweep "$sweep" --extend --set device=cuda --parallel 4 >> "$log" 2>&1
  say "sweep exit $? after $(($(date +%s) - t0)) s"
  "$bin" report "$out" >> "$log" 2>&1 && cp "$out/table3.md" "$OUT/" 2>/dev/null
fi

scripts/snapshot-sweep.sh "$out" "$OUT/snap" 2>&1 | tee -a "$log"
tar czf "$OUT/snap.tgz" -C "$OUT" snap && rm -rf "$OUT/snap"
# The unfinished runs, furthest first (their metrics.csv's last step).
name=$(basename "$sweep" .yaml)
[[ ${UNFINISHED:-1} == 0 ]] || while IFS= read -r -d '' ckpt; do
  run=$(dirname "$ckpt")
  [[ -f $run/done.json ]] && continue
  step=$(tail -n 1 "$run/metrics.csv" 2>/dev/null | cut -d, -f1)
  echo "${step:-0} $run"
done < <(find "$out" -name checkpoint.pt -print0) | sort -rn | head -n 2 |
  while read -r step run; do
    rel=${run#"$out"/}
    tar cf - -C "$out" "$rel" | split -b 15M - "$OUT/$name-${rel//\//-}.tar.part-"
    say "packed $rel at step $step"
  done
say "done"
