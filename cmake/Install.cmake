# `cmake --install build --prefix DIR` (`make install`): minrnn as a package a user's own CMake
# project finds (find_package(minrnn); README, "Use a trained policy from C++"), plus the `minrnn`
# command and the configs.
#   include/minrnn/<folder>/*.h            the headers, included as in this tree: "infer/policy.h"
#   lib/libminrnn_<folder>.a               the libraries of the policy's stack and its plant:
#                                          io, kernels, ops, models, envs, datasets, rl, infer
#   lib/cmake/minrnn/                      minrnnConfig.cmake: targets minrnn::<folder>, which
#                                          find LibTorch, MuJoCo, HDF5, ... as this build did,
#                                          where the user's machine has them
#   bin/minrnn, share/minrnn/configs/      the CLI (its run path keeps LibTorch's folder) and
#                                          the experiment and sweep configs
include(CMakePackageConfigHelpers)

set(MINRNN_PACKAGE_LIBRARIES minrnn_io minrnn_kernels minrnn_ops minrnn_models minrnn_envs
    minrnn_datasets minrnn_rl minrnn_infer)
install(TARGETS ${MINRNN_PACKAGE_LIBRARIES} EXPORT minrnnTargets ARCHIVE DESTINATION lib)
foreach(_library IN LISTS MINRNN_PACKAGE_LIBRARIES)
  string(REGEX REPLACE "^minrnn_" "" _folder ${_library})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_folder} DESTINATION include/minrnn
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(TARGETS minrnn_torch EXPORT minrnnTargets)  # minrnn::torch: LibTorch's flags, then the config's LibTorch
install(EXPORT minrnnTargets NAMESPACE minrnn:: DESTINATION lib/cmake/minrnn)

# What the config needs to find the dependencies this build used: its LibTorch (the ABI and
# version the libraries were compiled against), the CUDA architectures torch is told (so its
# CMake does not probe for a GPU), and whether the kernels are in (then torch's CUDA libraries).
set(MINRNN_PACKAGE_TORCH_DIR "${Torch_DIR}")
set(MINRNN_PACKAGE_TORCH_CUDA_ARCH_LIST "${TORCH_CUDA_ARCH_LIST}")
set(MINRNN_PACKAGE_WITH_CUDA ${MINRNN_WITH_CUDA})
configure_package_config_file(cmake/minrnnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/minrnnConfig.cmake INSTALL_DESTINATION lib/cmake/minrnn)
# 0.x: a minor version may change the API, so find_package(minrnn 0.1) accepts 0.1.* alone.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/minrnnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/minrnnConfig.cmake ${PROJECT_BINARY_DIR}/minrnnConfigVersion.cmake
        cmake/TorchLibraries.cmake DESTINATION lib/cmake/minrnn)

set_target_properties(minrnn PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS minrnn RUNTIME DESTINATION bin)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION share/minrnn/configs)
