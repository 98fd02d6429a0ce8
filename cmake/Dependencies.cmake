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
# They are built for every architecture the torch wheel is built for (so they run wherever torch
# runs: sm_75 T4 … sm_120), as SASS, plus PTX of the newest so later GPUs JIT-compile them; an
# explicit -DCMAKE_CUDA_ARCHITECTURES=… wins. Without the wheel's list (a standalone LibTorch):
# the same list as torch 2.11's cu130 wheel.
include(CheckLanguage)
set(MINRNN_WITH_CUDA OFF)
if(NOT MINRNN_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # find_package(Torch) below needs CMAKE_CUDA_ARCHITECTURES out of the cache, so an explicit
    # -DCMAKE_CUDA_ARCHITECTURES=… is kept here: a re-configure (ninja runs one when a globbed
    # folder changes) then builds for it again instead of for torch's list.
    # -DMINRNN_CUDA_ARCHITECTURES= (empty) goes back to torch's list.
    if(DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(MINRNN_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CACHE STRING
          "CUDA architectures of the kernels, as given by -DCMAKE_CUDA_ARCHITECTURES (empty: torch's)" FORCE)
    elseif(MINRNN_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "${MINRNN_CUDA_ARCHITECTURES}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(_torch_archs "")
      if(MINRNN_PYTHON)
        # get_arch_list() is empty without a GPU; the flags the wheel was built with are not.
        execute_process(COMMAND "${MINRNN_PYTHON}" -c "import torch; print(torch._C._cuda_getArchFlags() or '', end='')"
                        OUTPUT_VARIABLE _torch_archs RESULT_VARIABLE _rc ERROR_QUIET)
        if(NOT _rc EQUAL 0)
          set(_torch_archs "")
        endif()
      endif()
      if(NOT _torch_archs)
        set(_torch_archs "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120")
      endif()
      # Only those this nvcc can build (CUDA 13 dropped sm_50 … sm_72).
      execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code OUTPUT_VARIABLE _nvcc_codes ERROR_QUIET)
      string(REGEX REPLACE "[ \t\r\n]+" ";" _nvcc_codes "${_nvcc_codes}")
      string(REPLACE " " ";" _torch_archs "${_torch_archs}")
      set(_archs "")
      foreach(_a IN LISTS _torch_archs)
        if(_a IN_LIST _nvcc_codes AND _a MATCHES "^sm_([0-9]+)$")
          list(APPEND _archs "${CMAKE_MATCH_1}-real")
        endif()
      endforeach()
      if(NOT _archs)
        message(FATAL_ERROR "nvcc ${CMAKE_CUDA_COMPILER} can build none of torch's CUDA architectures (${_torch_archs})")
      endif()
      list(REMOVE_DUPLICATES _archs)
      list(SORT _archs COMPARE NATURAL)
      list(POP_BACK _archs _newest)
      string(REPLACE "-real" "" _newest "${_newest}")
      list(APPEND _archs "${_newest}")  # SASS and PTX
      set(CMAKE_CUDA_ARCHITECTURES "${_archs}")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(MINRNN_WITH_CUDA ON)
  elseif(MINRNN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MINRNN_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
# find_package(Torch) rewrites the CUDA architectures from TORCH_CUDA_ARCH_LIST: pin it to ours.
# Without our kernels (MINRNN_CUDA=OFF where nvcc is present) the architectures are torch's own
# business, and left alone: taken out of the cache, a re-configure's try_run of torch's GPU
# detection found none and failed ("CUDA_ARCHITECTURES is empty"), from the third configure on.
if(MINRNN_WITH_CUDA)
  if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "")
    foreach(_a IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX REPLACE "^([0-9]+)([0-9])(-real)?$" "\\1.\\2" _v "${_a}")
      if(_a MATCHES "-real$")
        list(APPEND TORCH_CUDA_ARCH_LIST "${_v}")
      else()
        list(APPEND TORCH_CUDA_ARCH_LIST "${_v}+PTX")
      endif()
    endforeach()
  endif()
  set(_minrnn_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
  unset(CMAKE_CUDA_ARCHITECTURES)
  unset(CMAKE_CUDA_ARCHITECTURES CACHE)
endif()
find_package(Torch REQUIRED)
include(${CMAKE_CURRENT_LIST_DIR}/TorchLibraries.cmake)
if(MINRNN_WITH_CUDA)
  set(CMAKE_CUDA_ARCHITECTURES "${_minrnn_cuda_archs}")
  # One CUDA runtime in the process, torch's: the kernels must not bring a static copy of their
  # own (CMake's default), and everything links the libcudart torch loads — the wheel's
  # nvidia/cu*/lib one when there is one, else the toolkit's that torch's CMake found.
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)
  minrnn_link_torchs_cuda_libraries()
  if(TARGET CUDA::cudart)
    get_target_property(_cudart CUDA::cudart IMPORTED_LOCATION)
  endif()
  message(STATUS "minrnn: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}; CUDA runtime ${_cudart}")
endif()
# Torch's interface flags carry the ABI define; nvcc must not see host-only flags.
string(REPLACE " " ";" _torch_cxx_flags "${TORCH_CXX_FLAGS}")
string(REGEX MATCH "_GLIBCXX_USE_CXX11_ABI=[01]" _torch_abi_definition "${TORCH_CXX_FLAGS}")

# Torch's OpenMP runtime (cmake/TorchLibraries.cmake): every parallel_for of ours (the scans, the
# fused MLP, dropout and AdamW passes) is compiled with -fopenmp, or it ran on one thread whatever
# torch::set_num_threads said.
minrnn_add_torchs_openmp_runtime()
if(MINRNN_TORCH_OPENMP)
  list(APPEND _torch_cxx_flags -fopenmp)
  message(STATUS "minrnn: torch's OpenMP backend; parallel_for compiled with -fopenmp, runtime "
                 "${MINRNN_TORCH_OPENMP_RUNTIME}")
endif()

# --- System packages (Debian): MuJoCo, HDF5, yaml-cpp, CLI11, nlohmann-json, GoogleTest.
find_package(mujoco REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Threads REQUIRED)
