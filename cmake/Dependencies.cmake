# Finds every third-party dependency once, so the folder CMakeLists only name targets.

# --- LibTorch: the one inside PyPI's torch wheel, installed by scripts/setup.sh into a venv outside
# the clone. A user with their own LibTorch passes -DCMAKE_PREFIX_PATH=/path/to/libtorch instead.
set(MINRNN_PYTHON "" CACHE FILEPATH "Python whose torch package provides LibTorch (default: the setup venv)")
if(NOT MINRNN_PYTHON)
  if(DEFINED ENV{MINRNN_CACHE})
    set(_venv "$ENV{MINRNN_CACHE}/venv")
  else()
    set(_venv "$ENV{HOME}/.cache/minrnn/venv")
  endif()
  if(EXISTS "${_venv}/bin/python")
    set(MINRNN_PYTHON "${_venv}/bin/python")
  endif()
endif()
if(MINRNN_PYTHON)
  execute_process(COMMAND "${MINRNN_PYTHON}" -c "import torch; print(torch.utils.cmake_prefix_path, end='')"
                  OUTPUT_VARIABLE _torch_prefix RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
  endif()
endif()

# --- CUDA: our kernels compile whenever nvcc is present (MINRNN_CUDA=AUTO), or are forced ON/OFF.
include(CheckLanguage)
set(MINRNN_WITH_CUDA OFF)
if(NOT MINRNN_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # H100/H200 are sm_90; sm_80 for A100; the 90 PTX lets newer GPUs JIT.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(MINRNN_WITH_CUDA ON)
  elseif(MINRNN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MINRNN_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
# find_package(Torch) rewrites the CUDA architectures from TORCH_CUDA_ARCH_LIST: pin it to ours.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0+PTX")
endif()
set(_minrnn_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
unset(CMAKE_CUDA_ARCHITECTURES)
unset(CMAKE_CUDA_ARCHITECTURES CACHE)
find_package(Torch REQUIRED)
if(MINRNN_WITH_CUDA)
  set(CMAKE_CUDA_ARCHITECTURES "${_minrnn_cuda_archs}")
endif()
# Torch's interface flags carry the ABI define; nvcc must not see host-only flags.
string(REPLACE " " ";" _torch_cxx_flags "${TORCH_CXX_FLAGS}")

# --- System packages (Debian): MuJoCo, HDF5, yaml-cpp, CLI11, nlohmann-json, GoogleTest.
find_package(mujoco REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Threads REQUIRED)
