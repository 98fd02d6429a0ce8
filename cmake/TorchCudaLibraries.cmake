# One CUDA runtime in a process, torch's. find_package(Torch) links cudart and NVRTC by the CUDA
# toolkit's path, and the tuned stacked products call cuBLASLt (ops/tuned_gemm_cuda.cpp); the torch
# wheel loads its own copies (nvidia/cu*/lib), so a program linking the toolkit's would hold two.
# This macro points those CUDA:: targets, and TORCH_LIBRARIES' NVRTC, at the wheel's copies where
# the wheel has them. Used by this build (cmake/Dependencies.cmake) and by a user's program built
# against the installed package (cmake/minrnnConfig.cmake.in), so both link alike.
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
