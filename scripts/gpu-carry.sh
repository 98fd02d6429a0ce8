#!/usr/bin/env bash
# Assembles .gpu-carry/ (git-ignored): what one device call needs to check the GPU path without
# building there, which saves the 3–4 minutes of a 15-minute lease that a build costs:
#   bin/      minrnn and the test binaries holding `*Cuda*` suites, built here for Hopper
#             (sm_90 SASS only, no OSMesa, which the GPU machine lacks) in build-carry/, stripped;
#   debs/     the runtime Debian packages those binaries load (no -dev packages: nothing is built
#             there), plus .devdeps/fallback/ when FALLBACK=1;
#   peer/     ../shared/peer (CORL's dt.py and its bench), which the call cannot reach otherwise;
#   data/     DATA=FILE[:NAME]…: datasets a sweep there reads (D4RL_DATASET_DIR=.gpu-carry/data),
#             under NAME where given (the D4RL file name the sweep's dataset resolves to).
# Usage: scripts/gpu-carry.sh            (after scripts/gpu-deps-fetch.sh)
#        DATA=data/hopper_medium-v2.hdf5 scripts/gpu-carry.sh
#        TESTS= DATA=data/hopper_medium-250k.hdf5:hopper_medium-v2.hdf5 scripts/gpu-carry.sh
#             (minrnn alone, for scripts/gpu-sweep.sh: room for a 37 MB dataset in one call)
#        CARRY=.gpu-carry-twin TESTS= DATA=… scripts/gpu-carry.sh
#             (into another folder: both ready before a lease, one call carrying each)
#        BASELINE=d52556d scripts/gpu-carry.sh
#             (also that commit's minrnn, built in a worktree of it, as bin/minrnn-baseline:
#             gpu-check.sh times its training step beside this build's in the same call)
# Then, on the GPU machine (docs/core.md, "Checking on a GPU"): scripts/gpu-check.sh with
# PREBUILT=.gpu-carry. The test binaries read the checkout through the absolute path they were
# built in ($PWD here); gpu-check.sh links that path to the checkout there.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-carry}
CARRY=${CARRY:-.gpu-carry}
read -r -a TESTS <<< "${TESTS-test_compute test_rl test_collect}"
[ -d .devdeps ] || { echo "gpu-carry: no .devdeps/: run scripts/gpu-deps-fetch.sh first" >&2; exit 1; }
# Configured every time (seconds when nothing changed): a build dir configured once without the
# architecture builds torch's six, and its minrnn alone then outgrows a call with a dataset.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
  -DOSMESA_INCLUDE_DIR=OFF -DOSMESA_LIBRARY=OFF > "$BUILD.configure.log"
cmake --build "$BUILD" -j "$(nproc)" --target minrnn "${TESTS[@]}"

rm -rf "$CARRY"
mkdir -p "$CARRY/bin" "$CARRY/debs" "$CARRY/data"
strip -o "$CARRY/bin/minrnn" "$BUILD/minrnn"
for t in "${TESTS[@]}"; do strip -o "$CARRY/bin/$t" "$BUILD/tests/$t"; done
echo "$PWD/$BUILD" > "$CARRY/bin/built-in"
# The commit the binaries are built from ("-dirty": with uncommitted changes): the device call's
# copy of the checkout has no .git, so its summary names the build by this.
git describe --always --dirty --abbrev=7 > "$CARRY/bin/built-rev"
# What the binaries load at run time: MuJoCo and its closure, GL's dispatch libraries, HDF5,
# yaml-cpp, zlib. Headers, CMake files and GoogleTest are for building only.
runtime='libmujoco2.2.2_* libccd2_* liblodepng0_* libqhull-r8.0_* libtinyxml2-9_* libgl1_* libglx0_*
  libopengl0_* libglvnd0_* libhdf5-103-1_* libhdf5-cpp-103-1_* libhdf5-hl-100_* libhdf5-hl-cpp-100_*
  libsz2_* libaec0_* libyaml-cpp0.7_* zlib1g_1*'
for pattern in $runtime; do cp .devdeps/$pattern "$CARRY/debs/"; done
[ "${FALLBACK:-0}" = 1 ] && cp -r .devdeps/fallback "$CARRY/debs/"
if [ -n "${BASELINE:-}" ]; then
  tree="$PWD/$BUILD-baseline"  # a worktree of that commit, its own build dir inside
  [ -d "$tree" ] || git worktree add --detach "$tree" "$BASELINE" > /dev/null
  git -C "$tree" checkout -q --detach "$BASELINE"
  cmake -S "$tree" -B "$tree/$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90-real -DOSMESA_INCLUDE_DIR=OFF -DOSMESA_LIBRARY=OFF \
    > "$BUILD-baseline.configure.log"
  cmake --build "$tree/$BUILD" -j "$(nproc)" --target minrnn
  strip -o "$CARRY/bin/minrnn-baseline" "$tree/$BUILD/minrnn"
  git -C "$tree" log -1 --format=%h > "$CARRY/bin/baseline-rev"
fi
[ -d ../shared/peer ] && cp -r ../shared/peer "$CARRY/peer"
for f in ${DATA:-}; do
  name=${f#*:}
  [ "$name" = "$f" ] && name=$(basename "$f")
  cp "${f%%:*}" "$CARRY/data/$name"
done
du -sh "$CARRY"/* | sed 's/^/gpu-carry: /'
echo "gpu-carry: $(du -sh "$CARRY" | cut -f1) in $CARRY/ (a device call carries 64 MiB with the checkout)"
