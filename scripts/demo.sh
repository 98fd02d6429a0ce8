#!/usr/bin/env bash
# The main job on the built-in default. Grows with the project: today it runs the core benchmark.
set -euo pipefail
BUILD="${1:-build}"
"$BUILD/minrnn" bench scan --quick
