#!/usr/bin/env bash
# Full-size D4RL-style datasets, made the way D4RL made them (docs/collect.md): for each env one SAC
# run trained to the medium level and then on to expert, and the five qualities written from it.
# Long (hours per env on a 2-core machine): run it in the background; rerun the same command after
# an interruption and it resumes, keeping every finished file.
#
#   scripts/collect_d4rl.sh [BUILD_DIR] [ENV...]      default: build hopper halfcheetah walker2d
#   QUALITIES="medium-replay medium" scripts/collect_d4rl.sh build hopper     a subset
#   SEED=1 scripts/collect_d4rl.sh                                            another SAC seed
#
# Outputs data/<env>_<quality>-v2.hdf5; per dataset a log and `minrnn data inspect --json` (steps,
# episodes, returns, normalized score) in data/logs/, and one row per finished (env, quality) in
# data/logs/collect_times.csv (env,quality,seed,seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD="${1:-build}"
shift || true
ENVS=("$@")
[ ${#ENVS[@]} -gt 0 ] || ENVS=(hopper halfcheetah walker2d)
# medium-replay first: it is the medium run's buffer, so it is ready as soon as medium training is.
QUALITIES="${QUALITIES:-medium-replay medium random expert medium-expert}"
SEED="${SEED:-0}"
SUFFIX=""  # seed 0 keeps D4RL's file names
[ "$SEED" = "0" ] || SUFFIX="-s$SEED"
MINRNN="$BUILD/minrnn"
[ -x "$MINRNN" ] || { echo "collect_d4rl: $MINRNN not found; build first (make build)" >&2; exit 1; }

mkdir -p data/logs
TIMES=data/logs/collect_times.csv
[ -f "$TIMES" ] || echo "env,quality,seed,seconds" >"$TIMES"
# The SAC networks are small: one thread each; run one env per core for throughput.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

for env in "${ENVS[@]}"; do
  for quality in $QUALITIES; do
    out="data/${env}_${quality//-/_}-v2${SUFFIX}.hdf5"
    if [ -f "$out" ]; then
      echo "[collect] $out exists: kept"
      continue
    fi
    log="data/logs/${env}_${quality//-/_}-s${SEED}.log"
    echo "[collect] $env $quality (seed $SEED) -> $out, log $log"
    start=$SECONDS
    # Progress lines go to the log; the summary line (data return, episodes) is printed here too.
    if "$MINRNN" collect "$env" "$quality" --seed "$SEED" --out "$out" >>"$log" 2>&1; then
      echo "$env,$quality,$SEED,$((SECONDS - start))" >>"$TIMES"
      grep '^wrote' "$log" | tail -1
      "$MINRNN" data inspect "$out" --json >"${log%.log}.json"
    else
      echo "[collect] $env $quality failed; see $log (rerun to resume)" >&2
      exit 1
    fi
  done
done
