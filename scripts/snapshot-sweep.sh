#!/usr/bin/env bash
# Copy a sweep's small text results — every run's config.yaml, env.json, metrics.csv, evals.csv,
# eval.json, done.json — into a folder that can be committed, so a long study's results outlive
# the machine that ran it (checkpoints stay behind: they are large, and the sweep resumes from
# them only on the machine that has them).
#   scripts/snapshot-sweep.sh runs/sweeps/evidence-hopper-medium docs/results/evidence-hopper-medium
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 SWEEP_DIR DEST_DIR" >&2
  exit 2
fi
src=$1 dest=$2
if [[ ! -d "$src" ]]; then
  echo "$0: $src: no such sweep directory" >&2
  exit 1
fi
copied=0
while IFS= read -r -d '' config; do
  run=$(dirname "$config")
  rel=${run#"$src"/}
  mkdir -p "$dest/$rel"
  for f in config.yaml env.json metrics.csv evals.csv eval.json done.json; do
    if [[ -f "$run/$f" ]]; then
      cp "$run/$f" "$dest/$rel/$f.tmp" && mv "$dest/$rel/$f.tmp" "$dest/$rel/$f"
    fi
  done
  copied=$((copied + 1))
done < <(find "$src" -name config.yaml -print0 | sort -z)
echo "$0: $copied run(s) of $src -> $dest"
