#!/usr/bin/env bash
# The main job on the built-in default: make a small hopper dataset the way D4RL made its
# medium-replay data (the replay buffer of a SAC agent, 5000 steps, D4RL layout), train a small
# minGRU decision agent on it, roll it out in MuJoCo, and report the D4RL normalized return.
# Re-running reuses the dataset and the finished run (delete data/ or runs/demo to start over).
set -euo pipefail
BUILD="${1:-build}"
MINRNN="$BUILD/minrnn"
DATA=data/hopper-tiny-v2.hdf5
RUN=runs/demo-hopper-mingru

echo "== 1/4 dataset: $DATA"
if [ ! -f "$DATA" ]; then
  # The documented command for the built-in default dataset (docs/collect.md).
  "$MINRNN" collect hopper medium-replay --train-steps 5000 --start-steps 1000 --eval-every 2500 \
    --seed 0 --out "$DATA"
fi
"$MINRNN" data inspect "$DATA"

echo "== 2/4 train: configs/tiny-hopper-mingru.yaml → $RUN"
if [ -f "$RUN/done.json" ]; then
  echo "(already trained: $RUN/done.json; delete $RUN to train again)"
else
  "$MINRNN" train configs/tiny-hopper-mingru.yaml --seed 0 --run-dir "$RUN" --set "dataset=$DATA"
fi

echo "== 3/4 evaluate: 10 episodes in MuJoCo, episode 0 rendered"
"$MINRNN" eval "$RUN" --episodes 10 --video "$RUN/video"

echo "== 4/4 results"
echo "  run directory:  $RUN  (config.yaml, metrics.csv, checkpoint.pt)"
echo "  evaluation:     $RUN/eval.json"
echo "  video:          $RUN/video/rollout.gif  (frames: $RUN/video/frame_*.png)"
