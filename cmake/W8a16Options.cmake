# SPDX-License-Identifier: MIT OR Apache-2.0
# Compiler flags shared by every target, and the CUDA toggle (W8A16_CUDA).

include(GNUInstallDirs)  # the install layout (cmake/W8a16Install.cmake); the CLI finds its data by it

add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wall> $<$<COMPILE_LANGUAGE:CXX>:-Wextra>)
# The emulator relies on IEEE semantics (subnormals kept, no reassociation): never fast-math.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-fast-math> $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)

if(W8A16_SANITIZE)
  add_compile_options(-fsanitize=${W8A16_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${W8A16_SANITIZE})
endif()

if(W8A16_STATIC_RUNTIME)
  # The GPU machine has no Debian packages: its binaries carry their C++ runtime (README, "The GPU machine").
  # Executables only: a shared object (the Python module) with a private static libstdc++ inside a
  # process that already has one breaks iostream locale facets (numbers stop formatting).
  string(APPEND CMAKE_EXE_LINKER_FLAGS " -static-libstdc++ -static-libgcc")
endif()

set(W8A16_HAVE_CUDA OFF)
if(NOT W8A16_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # sm_90a: the H200's own target, with its architecture-specific instructions (wgmma needs it);
      # "80;90;120;121" also builds, the row-tile kernel absent from the sm_80 cubin (KERNEL_ABI.md 1.2).
      set(CMAKE_CUDA_ARCHITECTURES 90a CACHE STRING "CUDA architectures (the H200 is 90a)")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    if(W8A16_STATIC_RUNTIME)
      set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(W8A16_HAVE_CUDA ON)
  elseif(W8A16_CUDA STREQUAL "ON")
    message(FATAL_ERROR "W8A16_CUDA=ON but no CUDA compiler was found (is nvcc on PATH or CUDACXX set?)")
  endif()
endif()
message(STATUS "w8a16check: CUDA ${W8A16_HAVE_CUDA} (W8A16_CUDA=${W8A16_CUDA}), static runtime ${W8A16_STATIC_RUNTIME}")

# Version header: the version and the commit, which --version, every report and every recording
# carry. Written at configure time and again at every build (cmake/W8a16Version.cmake rewrites it
# only when the commit changed), so that a report never names a commit older than its binary's.
set(_w8a16_version_args -DSRC=${PROJECT_SOURCE_DIR} -DIN=${CMAKE_CURRENT_LIST_DIR}/version.hpp.in
    -DOUT=${PROJECT_BINARY_DIR}/generated/w8a16/version.hpp -DPROJECT_VERSION=${PROJECT_VERSION}
    -DW8A16_HAVE_CUDA=${W8A16_HAVE_CUDA})
execute_process(COMMAND ${CMAKE_COMMAND} ${_w8a16_version_args} -P ${CMAKE_CURRENT_LIST_DIR}/W8a16Version.cmake)
add_custom_target(w8a16_version_header
  COMMAND ${CMAKE_COMMAND} ${_w8a16_version_args} -P ${CMAKE_CURRENT_LIST_DIR}/W8a16Version.cmake
  BYPRODUCTS ${PROJECT_BINARY_DIR}/generated/w8a16/version.hpp
  COMMENT "version header (the commit of the source tree)"
  VERBATIM)
add_library(w8a16_version INTERFACE)
add_library(w8a16check::version ALIAS w8a16_version)
add_dependencies(w8a16_version w8a16_version_header)
target_include_directories(w8a16_version INTERFACE ${PROJECT_BINARY_DIR}/generated)
