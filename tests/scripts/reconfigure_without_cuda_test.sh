#!/usr/bin/env bash
# A build configured without our CUDA kernels (-DMINRNN_CUDA=OFF, as `make test-sanitize` does)
# on a machine with nvcc configures again and again: ninja re-runs CMake whenever a source is
# added to a globbed folder, and until 2026-11-28 the third configure failed in torch's GPU
# detection ("CUDA_ARCHITECTURES is empty") once ours had taken the architectures out of the
# cache. Usage: reconfigure_without_cuda_test.sh SOURCE_DIR [CMAKE_ARGS...]; exit 0 when all
# three configures succeed.
set -uo pipefail
source_dir=$1
shift
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
for round in 1 2 3; do
  if ! cmake -S "$source_dir" -B "$build" -G Ninja -DMINRNN_CUDA=OFF "$@" > "$build.log" 2>&1; then
    echo "configure $round of a build without CUDA kernels failed:" >&2
    tail -30 "$build.log" >&2
    rm -f "$build.log"
    exit 1
  fi
  echo "configure $round: ok"
done
rm -f "$build.log"
