#!/usr/bin/env bash
# ctest's `python`-labelled tests: makes (or reuses) the venv of scripts/python_env.sh, then runs
# tests/python/<script> with it. Exit 77 (skipped) when the venv cannot be made.
#   tests/python/run.sh SCRIPT.py ARGS...
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="$(bash "$here/../../scripts/python_env.sh")"
status=$?
if [ $status -ne 0 ]; then
  [ $status -eq 77 ] && echo "skipped: the Python venv could not be made (see above)"
  exit $status
fi
script="$1"
shift
exec "$python" "$here/$script" "$@"
