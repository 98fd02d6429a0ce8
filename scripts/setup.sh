#!/usr/bin/env bash
# Installs what minrnn needs and is missing; a quick no-op when everything is there.
#   Debian packages: compilers, CMake/Ninja, MuJoCo (+qhull), HDF5, yaml-cpp, GoogleTest, CLI11, JSON,
#                    OSMesa/EGL for offscreen rendering, Slurm + munge (`minrnn sweep --backend slurm`
#                    and its tests, on the single-node cluster of scripts/slurm-local.sh).
#   LibTorch:        PyPI's `torch` wheel (CUDA 13 build, matching nvcc 13.x) in a virtual environment
#                    outside the clone ($MINRNN_CACHE, default ~/.cache/minrnn/venv) so every clone reuses it.
# Users with their own LibTorch can skip this part: set MINRNN_SKIP_TORCH=1 and pass CMAKE_PREFIX_PATH.
set -euo pipefail

TORCH_VERSION="${MINRNN_TORCH_VERSION:-2.11.0}"   # cu130 build on PyPI: matches nvcc 13.0 and the GPU hosts
CACHE="${MINRNN_CACHE:-$HOME/.cache/minrnn}"
VENV="$CACHE/venv"

say() { printf '[setup] %s\n' "$*"; }

DEB_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libmujoco-dev libqhull-dev libtinyxml2-dev
  libhdf5-dev hdf5-tools
  libyaml-cpp-dev libgtest-dev googletest
  libcli11-dev nlohmann-json3-dev
  libcurl4-openssl-dev libssl-dev
  libosmesa6-dev libegl-dev libgl-dev
  slurm-wlm munge
)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages: all present"
fi

if [ "${MINRNN_SKIP_TORCH:-0}" = "1" ]; then
  say "MINRNN_SKIP_TORCH=1: not installing LibTorch (pass CMAKE_PREFIX_PATH yourself)"
  exit 0
fi

have_torch() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" 2>/dev/null; }
if have_torch; then
  say "LibTorch: torch $TORCH_VERSION present in $VENV"
else
  say "installing torch==$TORCH_VERSION (LibTorch inside the wheel, ~3 GB with its CUDA libraries) into $VENV"
  mkdir -p "$CACHE"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q --progress-bar off "torch==$TORCH_VERSION" numpy
  have_torch || { echo "[setup] error: torch $TORCH_VERSION did not import from $VENV" >&2; exit 1; }
fi
"$VENV/bin/python" -c 'import torch; print("[setup] torch", torch.__version__, "cuda", torch.version.cuda, "prefix", torch.utils.cmake_prefix_path)'
