#!/usr/bin/env bash
# Copy a sweep's small text results — every run's config.yaml, env.json, metrics.csv, evals.csv,
# eval.json, done.json, and the eval-step<N>.json / done-step<N>.json (and, for a run trained
# again without its checkpoint, evals-step<N>.csv / metrics-step<N>.csv) an extended run
# (`--extend`) kept of its shorter budget — into a folder that can be committed, so a long
# study's results outlive the machine that ran it. A run's snapshot mirrors its directory: a file the run no longer
# holds (the done.json of a run being extended) leaves the snapshot too, so a snapshot never shows
# a run finished that is not (checkpoints stay behind: they are large, and the sweep resumes from
# them only on the machine that has them).
#   scripts/snapshot-sweep.sh runs/sweeps/evidence-hopper-medium docs/results/evidence-hopper-medium
# --restore copies the *finished* runs of a snapshot (done.json and eval.json present) back into a
# sweep directory on another machine, so the sweep counts them done and trains only the rest (of an
# unfinished run, only its *-step<N> files: it trains from the start there, and they stay with it);
# a run already in the sweep directory is never overwritten.
#   scripts/snapshot-sweep.sh --restore docs/results/evidence-hopper-medium runs/sweeps/evidence-hopper-medium
set -euo pipefail
FILES=(config.yaml env.json metrics.csv evals.csv eval.json done.json)
# What `minrnn train --extend` keeps of a shorter budget (checkpoint-step<N>.pt stays behind).
STEP_FILES=(\( -name 'eval-step*.json' -o -name 'done-step*.json' -o -name 'evals-step*.csv'
            -o -name 'metrics-step*.csv' \))
restore=0
if [[ ${1:-} == --restore ]]; then
  restore=1
  shift
fi
if [[ $# -ne 2 ]]; then
  echo "usage: $0 SWEEP_DIR DEST_DIR   |   $0 --restore SNAPSHOT_DIR SWEEP_DIR" >&2
  exit 2
fi
src=$1 dest=$2
if [[ ! -d "$src" ]]; then
  echo "$0: $src: no such directory" >&2
  exit 1
fi
copied=0 kept=0 partial=0
while IFS= read -r -d '' config; do
  run=$(dirname "$config")
  rel=${run#"$src"/}
  if [[ $restore == 1 ]]; then
    if [[ ! -f "$run/done.json" || ! -f "$run/eval.json" ]]; then
      # Unfinished (extended elsewhere): only what it kept of its shorter budget, so that the sweep
      # here trains it from the start and a later snapshot still holds those results.
      steps=()
      while IFS= read -r -d '' f; do steps+=("$f"); done < <(
        find "$run" -maxdepth 1 -type f "${STEP_FILES[@]}" -print0)
      if [[ ${#steps[@]} -gt 0 && ! -e "$dest/$rel" ]]; then
        mkdir -p "$dest/$rel" && cp "${steps[@]}" "$dest/$rel/"
        partial=$((partial + 1))
      fi
      continue
    fi
    if [[ -e "$dest/$rel" ]]; then
      kept=$((kept + 1))
      continue
    fi
  fi
  mkdir -p "$dest/$rel"
  # The results a run kept of a shorter budget, whether in the run or (gone from it, --force) only
  # in the snapshot still.
  kept_steps=()
  while IFS= read -r -d '' f; do kept_steps+=("$f"); done < <(
    find "$run" "$dest/$rel" -maxdepth 1 -type f "${STEP_FILES[@]}" -printf '%f\0' | sort -zu)
  for f in "${FILES[@]}" "${kept_steps[@]}"; do
    if [[ -f "$run/$f" ]]; then
      cp "$run/$f" "$dest/$rel/$f.tmp" && mv "$dest/$rel/$f.tmp" "$dest/$rel/$f"
    else
      rm -f "$dest/$rel/$f"
    fi
  done
  copied=$((copied + 1))
done < <(find "$src" -name config.yaml -print0 | sort -z)
# The --set options the sweep was started with (`minrnn sweep` keeps them there): a snapshot's
# --status, and a restored sweep, use them as the sweep did. A restore keeps the sweep's own.
if [[ -f "$src/sweep_sets.json" && ( $restore == 0 || ! -e "$dest/sweep_sets.json" ) ]]; then
  mkdir -p "$dest"
  cp "$src/sweep_sets.json" "$dest/sweep_sets.json.tmp" && mv "$dest/sweep_sets.json.tmp" "$dest/sweep_sets.json"
fi
if [[ $restore == 1 ]]; then
  echo "$0: restored $copied finished run(s) of $src into $dest ($kept already there, left as they were)," \
    "and the shorter budget's results of $partial unfinished one(s)"
else
  echo "$0: $copied run(s) of $src -> $dest"
fi
