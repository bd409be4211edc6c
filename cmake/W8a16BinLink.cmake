# SPDX-License-Identifier: MIT OR Apache-2.0
# build/bin is the one documented path to the CLI in every preset: a symlink to the bin/ of the
# build tree configured last (README, "Build trees").
set(_w8a16_bin_link "${CMAKE_SOURCE_DIR}/build/bin")
if(NOT "${CMAKE_BINARY_DIR}" STREQUAL "${CMAKE_SOURCE_DIR}/build")
  file(MAKE_DIRECTORY "${CMAKE_SOURCE_DIR}/build")
  file(REMOVE "${_w8a16_bin_link}")
  file(CREATE_LINK "${CMAKE_BINARY_DIR}/bin" "${_w8a16_bin_link}" SYMBOLIC)
endif()
