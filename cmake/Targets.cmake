# What every library of ours shares, whoever made it: its headers found from the repository root
# here and from include/minrnn once installed (cmake/Install.cmake), and the name a user's CMake
# links it by, minrnn::<folder> (the same name inside this build, as examples/ uses it).
function(minrnn_library_interface name)
  get_target_property(_type ${name} TYPE)
  set(_scope PUBLIC)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    set(_scope INTERFACE)
  endif()
  target_include_directories(${name} ${_scope} $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                               $<INSTALL_INTERFACE:include/minrnn>)
  string(REGEX REPLACE "^minrnn_" "" _short ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${_short})
  add_library(minrnn::${_short} ALIAS ${name})
endfunction()

# LibTorch as our libraries use it: its libraries, include directories and flags (the C++ ABI
# define, -fopenmp). Installed as minrnn::torch with the flags alone: the package's config adds the
# LibTorch its user's find_package(Torch) finds (cmake/minrnnConfig.cmake.in), so the package names
# none of this machine's files. libstdc++ comes first: the torch wheel's libtorch.so and
# libtorch_cpu.so export a copy of std::filesystem of their own (an older toolchain's); loaded
# ahead of libstdc++, that copy served our calls, and on a system with a newer libstdc++ (the lent
# H200's, 2026-11-27) its remove_all jumped to address 0. First in the search order, the system's
# own serves them (Linking.StdFilesystemCallsReachTheSystemsLibstdcxx).
add_library(minrnn_torch INTERFACE)
target_link_libraries(minrnn_torch INTERFACE stdc++ "$<BUILD_INTERFACE:${TORCH_LIBRARIES}>")
target_compile_options(minrnn_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_torch_cxx_flags}>)
if(MINRNN_WITH_CUDA)
  target_compile_definitions(minrnn_torch INTERFACE MINRNN_WITH_CUDA=1)
endif()
set_target_properties(minrnn_torch PROPERTIES EXPORT_NAME torch)

# minrnn_library(NAME folder [TORCH] [OWN_HEADERS] [DEPS targets...]): one static library per
# folder, built from the folder's *.cpp (and *.cu, *_cuda.cpp when CUDA is on). Headers sit beside
# their sources and are included from the repository root: #include "ops/scan.h". OWN_HEADERS: the
# library's headers include none of its dependencies' (infer/policy.h), so a program using it
# links them but compiles with none of their include directories or flags.
function(minrnn_library name)
  cmake_parse_arguments(ARG "TORCH;OWN_HEADERS" "" "DEPS" ${ARGN})
  file(GLOB _sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  # CUDA code: kernels in *.cu (no torch inside, so nvcc stays fast) and their host side in
  # *_cuda.cpp; both only when CUDA is on.
  list(FILTER _sources EXCLUDE REGEX "_cuda\\.cpp$")
  if(MINRNN_WITH_CUDA)
    file(GLOB _cuda_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cu"
         "${CMAKE_CURRENT_SOURCE_DIR}/*_cuda.cpp")
    list(APPEND _sources ${_cuda_sources})
  endif()
  if(NOT _sources)  # a folder whose code has not landed yet
    add_library(${name} INTERFACE)
    minrnn_library_interface(${name})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${_sources})
  minrnn_library_interface(${name})
  set(_scope PUBLIC)
  if(ARG_OWN_HEADERS)
    set(_scope PRIVATE)  # a static library's: its users still link them ($<LINK_ONLY:...>)
  endif()
  target_link_libraries(${name} ${_scope} ${ARG_DEPS})
  if(ARG_TORCH)
    minrnn_use_torch(${name} ${_scope})
  endif()
  minrnn_warnings(${name})
endfunction()

# Torch targets share one precompiled header (built once in minrnn_torch_pch) to keep a clean
# build on 2 cores within minutes. Loading it still costs a compile ~8 s (it is ~700 MB; parsing
# torch/torch.h without it, ~20 s), so torch targets are also unity builds: their sources compiled
# a batch at a time, one load per batch. -DMINRNN_UNITY_BUILD=OFF compiles file by file (quicker
# rebuilds of one file while working on it).
option(MINRNN_UNITY_BUILD "Compile torch targets' sources in batches (one precompiled-header load each)" ON)
set(MINRNN_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")
# minrnn_use_torch(target [PRIVATE]): LibTorch (minrnn_torch) for `target` and its users, or with
# PRIVATE for `target` alone (its users link it), plus the shared precompiled header.
function(minrnn_use_torch target)
  set(_scope PUBLIC)
  if(ARGN STREQUAL "PRIVATE")
    set(_scope PRIVATE)
    # Its users' strings must still be laid out as this library's were.
    if(_torch_abi_definition)
      target_compile_definitions(${target} INTERFACE ${_torch_abi_definition})
    endif()
  endif()
  target_link_libraries(${target} ${_scope} minrnn_torch)
  target_precompile_headers(${target} REUSE_FROM minrnn_torch_pch)
  if(MINRNN_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${MINRNN_UNITY_BATCH})
    # GCC takes each .cpp a unity source includes for a header, and so warns about a class of one
    # file holding a type of that file's anonymous namespace — one translation unit here, no issue.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()
