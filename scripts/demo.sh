#!/usr/bin/env bash
# The main job on the built-in default, the whole loop: make a small hopper dataset the way D4RL
# made its medium-replay data (the replay buffer of a SAC agent, 5000 steps, D4RL layout), train
# small decision agents on it (minGRU, minLSTM and the Decision-Transformer baseline), roll them out
# in MuJoCo, report the D4RL normalized returns as the paper's Table 3 with learning curves, and
# render a rollout. Re-running reuses the dataset and finished runs (delete data/hopper-tiny-v2.hdf5
# or runs/demo to start over).
set -euo pipefail
BUILD="${1:-build}"
MINRNN="$BUILD/minrnn"
DATA=data/hopper-tiny-v2.hdf5
OUT=runs/demo
RUN="$OUT/hopper-tiny/mingru/seed0"
start=$(date +%s)

echo "== 1/5 dataset: $DATA"
if [ ! -f "$DATA" ]; then
  # The documented command for the built-in default dataset (docs/collect.md).
  # Its own work dir: the full-size collections' default (data/work/hopper-sac-s0) stays free.
  "$MINRNN" collect hopper medium-replay --train-steps 5000 --start-steps 1000 --eval-every 2500 \
    --seed 0 --out "$DATA" --work-dir data/work/hopper-tiny-s0
fi
"$MINRNN" data inspect "$DATA"

echo "== 2/5 train + evaluate: configs/sweeps/demo.yaml (minGRU, minLSTM, Transformer) → $OUT"
"$MINRNN" sweep configs/sweeps/demo.yaml

echo "== 3/5 report: Table 3 and learning curves"
"$MINRNN" report "$OUT"

echo "== 4/5 watch: minGRU agent, 10 episodes in MuJoCo, episode 0 rendered"
# Its own JSON beside the run (the run's eval.json is the sweep's result, which the report has
# read; the video folder holds frames only), replaced by a re-run.
"$MINRNN" eval "$RUN" --episodes 10 --video "$RUN/video" --out "$RUN/eval-video.json"

echo "== 5/5 results ($(($(date +%s) - start)) s)"
cat "$OUT/table3.md"
echo
echo "  runs:      $OUT/<dataset>/<backbone>/seed<S>/  (config.yaml, metrics.csv, evals.csv, checkpoint.pt, eval.json)"
echo "  table:     $OUT/table3.md, $OUT/table3.csv, $OUT/table3.json"
echo "  plots:     $OUT/plots/*.svg  (training loss and normalized score per backbone)"
echo "  video:     $RUN/video/rollout.gif  (frames: $RUN/video/frame_*.png)"
