# Source on the GPU machine, in the project root, with .devdeps/ carried there
# (scripts/gpu-deps-fetch.sh made it):  source scripts/gpu-deps-env.sh
# DEVDEPS=DIR names another folder of packages: scripts/gpu-carry.sh's runtime-only set, for
# binaries built here for the GPU (a build there needs the -dev packages of .devdeps/ too).
# Unpacks the packages into /opt/devdeps (never into /: they could break the machine's own), copies
# a fallback library in only where the machine lacks one, and exports what CMake and the loader
# need: the packages, the LibTorch inside the machine's PyTorch (CUDA-enabled) and that Python
# (MINRNN_PYTHON, whose wheel's CUDA architectures the kernels are built for).
_devroot=/opt/devdeps
_debs=${DEVDEPS:-.devdeps}
if [ ! -d "$_debs" ]; then
  echo "gpu-deps-env: no $_debs/ here: run scripts/gpu-deps-fetch.sh first and carry it" >&2
  return 1 2>/dev/null || exit 1
fi
mkdir -p "$_devroot"
for _f in "$_debs"/*.deb; do dpkg -x "$_f" "$_devroot"; done
# Debian's MuJoCo CMake config names /usr/include/libqhull_r literally.
[ -e /usr/include/libqhull_r ] || [ ! -e "$_devroot/usr/include/libqhull_r" ] || ln -s "$_devroot/usr/include/libqhull_r" /usr/include/libqhull_r
MINRNN_PYTHON=$(command -v python3)
export MINRNN_PYTHON
# As an environment variable, CMAKE_PREFIX_PATH is ':'-separated (';' hides every package).
CMAKE_PREFIX_PATH="$_devroot/usr:$("$MINRNN_PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export CMAKE_PREFIX_PATH
export HDF5_ROOT="$_devroot/usr/lib/x86_64-linux-gnu/hdf5/serial"
_devlib="$_devroot/usr/lib/x86_64-linux-gnu"
# This machine's torch and its CUDA libraries first: a minrnn built elsewhere for this GPU
# (scripts/gpu-carry.sh) has a RUNPATH naming the build machine's venv.
_torch_lib=$("$MINRNN_PYTHON" -c 'import os, torch; print(os.path.dirname(torch.__file__))')/lib
export LD_LIBRARY_PATH="$_torch_lib:$_torch_lib/../../nvidia/cu13/lib:$_devlib:$HDF5_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUJOCO_GL=egl
if [ -d "$_debs/fallback" ]; then
  mkdir -p /opt/devdeps-fallback
  for _f in "$_debs"/fallback/*.deb; do dpkg -x "$_f" /opt/devdeps-fallback; done
  for _pass in 1 2 3 4 5 6; do  # a copied library may itself need another
    _missing=$(for _l in "$_devlib"/*.so.* "$HDF5_ROOT"/lib/*.so.*; do ldd "$_l" 2>/dev/null; done |
               awk '/not found/{print $1}' | sort -u)
    [ -z "$_missing" ] && break
    for _s in $_missing; do
      _src=$(find /opt/devdeps-fallback -name "$_s" | head -1)
      if [ -n "$_src" ]; then cp -L "$_src" "$_devlib/$_s" && echo "gpu-deps-env: $_s from a fallback package"
      else echo "gpu-deps-env: WARNING: no carried package provides $_s" >&2; fi
    done
  done
fi
echo "gpu-deps-env: packages in $_devroot; torch $("$MINRNN_PYTHON" -c 'import torch; print(torch.__version__, torch.version.cuda)'); $(nvcc --version | tail -1)"
