#!/usr/bin/env bash
# The Python side of minrnn's checks against the ecosystem, in a virtual environment of its own
# outside the clone (like LibTorch's: $MINRNN_CACHE, default ~/.cache/minrnn, so every clone and
# CI run reuses it): Farama's minari (with its DataCollector), Gymnasium's MuJoCo envs and
# TensorBoard (its reader of event files).
#   tests/python/minari_roundtrip.py   Minari files both ways (a `python`-labelled ctest)
#   tests/python/tensorboard_events.py a run's event files read by TensorBoard (a `python` ctest)
#   scripts/fidelity_gymnasium.py      our envs against Gymnasium's v4 and v5 (optional)
# Prints the venv's python on success. Exits 77 (ctest's "skipped") when the venv cannot be made,
# e.g. without network access to PyPI; any other failure is an error. Idempotent: a no-op in about
# a second when everything is there.
set -euo pipefail

CACHE="${MINRNN_CACHE:-$HOME/.cache/minrnn}"
VENV="${MINRNN_PY_VENV:-$CACHE/py-venv}"
# Pinned: the versions docs/envs.md, docs/datasets.md and docs/agent.md report against.
REQUIREMENTS=("minari[create,hdf5]==0.5.4" "gymnasium[mujoco]==1.4.0" "mujoco==4.0.0"
              "tensorboard==2.21.0")

say() { printf '[python_env] %s\n' "$*" >&2; }

ready() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m, sys
want = {"minari": "0.5.4", "gymnasium": "1.4.0", "mujoco": "4.0.0", "tensorboard": "2.21.0"}
ok = all(m.version(k) == v for k, v in want.items())
import h5py, jax, minari, gymnasium.envs.mujoco.hopper_v5  # noqa: F401  (extras installed)
import tensorboard.backend.event_processing.event_accumulator  # noqa: F401
sys.exit(0 if ok else 1)
PY
}

if ready; then
  echo "$VENV/bin/python"
  exit 0
fi
command -v python3 >/dev/null || { say "python3 not found"; exit 77; }
mkdir -p "$CACHE"
# ctest runs the python tests side by side: the second caller waits for the first's install here
# (it found a half-made venv, its own pip failed beside the other's, and its test was skipped).
exec 9>"$CACHE/py-venv.lock" || { say "cannot write $CACHE/py-venv.lock"; exit 77; }
if command -v flock >/dev/null; then flock 9; fi
if ready; then
  echo "$VENV/bin/python"
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV" || { say "python3 -m venv failed (python3-venv missing?)"; exit 77; }
fi
say "installing ${REQUIREMENTS[*]} into $VENV (once: about 800 MB with jax, ~25 s)"
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --progress-bar off \
    --timeout 30 --retries 2 "${REQUIREMENTS[@]}" >&2; then
  say "pip could not install the requirements (no access to PyPI?)"
  exit 77
fi
ready || { say "installed, but the packages do not import"; exit 1; }
echo "$VENV/bin/python"
