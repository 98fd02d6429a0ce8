#!/usr/bin/env bash
# `make demo`'s job (scripts/demo.sh), the README's first command, in a folder of its own: once to
# its end (dataset, sweep, report, rollout video), then again, which reuses the dataset and the
# runs and renders the rollout anew. Usage: demo_test.sh SOURCE_DIR BUILD_DIR.
set -uo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
ln -s "$src/configs" configs
for round in first second; do
  if ! bash "$src/scripts/demo.sh" "$build" > "$round.log" 2>&1; then
    echo "the demo's $round run failed:" >&2
    tail -40 "$round.log" >&2
    exit 1
  fi
  if ! grep -q "== 5/5 results" "$round.log"; then
    echo "the demo's $round run ended without its results" >&2
    exit 1
  fi
done
run=runs/demo/hopper-tiny/mingru/seed0
for f in data/hopper-tiny-v2.hdf5 runs/demo/table3.md runs/demo/table3.csv runs/demo/table3.json \
  "$run/eval.json" "$run/eval-video.json" "$run/video/rollout.gif" "$run/video/frame_00000.png"; do
  if [ ! -s "$f" ]; then
    echo "the demo left no $f" >&2
    exit 1
  fi
done
if ! ls runs/demo/plots/*.svg > /dev/null 2>&1; then
  echo "the demo drew no learning curves (runs/demo/plots/*.svg)" >&2
  exit 1
fi
# The second run reused the first's work: no collection, no training.
if grep -q "sac hopper:" second.log; then
  echo "the demo's second run collected its dataset again" >&2
  exit 1
fi
echo "the demo ran to its end twice"
