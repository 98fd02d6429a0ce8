# Which of LibTorch's libraries a program links beside TORCH_LIBRARIES, found in the LibTorch at
# hand: used by this build (cmake/Dependencies.cmake) and by a user's program built against the
# installed package (cmake/minrnnConfig.cmake.in), so both link alike and the package names none of
# the building machine's files.

# at::parallel_for is a header template: with torch's OpenMP backend its `#pragma omp parallel`
# compiles in our own translation units (built with -fopenmp), and they must call the libgomp torch
# itself loads, so one OpenMP runtime (one thread pool, the size torch sets) serves both. Where
# torch uses OpenMP: MINRNN_TORCH_OPENMP ON, and that runtime (MINRNN_TORCH_OPENMP_RUNTIME) appended
# to TORCH_LIBRARIES.
macro(minrnn_add_torchs_openmp_runtime)
  set(MINRNN_TORCH_OPENMP OFF)
  file(STRINGS "${TORCH_INSTALL_PREFIX}/include/ATen/Config.h" _aten_openmp
       REGEX "#define AT_PARALLEL_OPENMP 1")
  if(_aten_openmp)
    set(MINRNN_TORCH_OPENMP ON)
    find_library(MINRNN_TORCH_GOMP NAMES libgomp.so.1 gomp PATHS "${TORCH_INSTALL_PREFIX}/lib"
                 NO_DEFAULT_PATH)
    set(MINRNN_TORCH_OPENMP_RUNTIME "${MINRNN_TORCH_GOMP}")
    if(NOT MINRNN_TORCH_GOMP)  # a torch linked against the system's libgomp
      find_package(OpenMP REQUIRED COMPONENTS CXX)
      set(MINRNN_TORCH_OPENMP_RUNTIME OpenMP::OpenMP_CXX)
    endif()
    list(APPEND TORCH_LIBRARIES "${MINRNN_TORCH_OPENMP_RUNTIME}")
  endif()
endmacro()

# One CUDA runtime in a process, torch's. find_package(Torch) links cudart and NVRTC by the CUDA
# toolkit's path, and the tuned stacked products call cuBLASLt (ops/tuned_gemm_cuda.cpp); the torch
# wheel loads its own copies (nvidia/cu*/lib), so a program linking the toolkit's would hold two.
# This macro points those CUDA:: targets, and TORCH_LIBRARIES' NVRTC, at the wheel's copies where
# the wheel has them.
macro(minrnn_link_torchs_cuda_libraries)
  foreach(_lib cudart nvrtc cublasLt)
    file(GLOB _wheel_lib "${TORCH_INSTALL_PREFIX}/../nvidia/cu*/lib/lib${_lib}.so.*")
    # libnvrtc-builtins, libnvrtc.alt: other libraries by their file names (a folder on the way
    # named /home/walter/ is not one).
    list(FILTER _wheel_lib EXCLUDE REGEX "/lib[^/]*(alt|builtins)[^/]*$")
    if(_wheel_lib AND TARGET CUDA::${_lib})
      list(GET _wheel_lib 0 _wheel_lib)
      get_filename_component(_wheel_lib "${_wheel_lib}" ABSOLUTE)
      set_target_properties(CUDA::${_lib} PROPERTIES IMPORTED_LOCATION "${_wheel_lib}")
      if(_lib STREQUAL "nvrtc" AND CUDA_NVRTC_LIB)  # TorchConfig adds it by path, too
        set(_libs "")
        foreach(_l IN LISTS TORCH_LIBRARIES)
          if(_l STREQUAL CUDA_NVRTC_LIB)
            set(_l "${_wheel_lib}")
          endif()
          list(APPEND _libs "${_l}")
        endforeach()
        set(TORCH_LIBRARIES "${_libs}")
      endif()
    endif()
  endforeach()
endmacro()
