# SPDX-License-Identifier: MIT OR Apache-2.0
# build/bin is the one documented path to the CLI in every preset: a symlink to the bin/ of the
# build tree under <source>/build/ configured last (README, "Build trees"). A tree anywhere else, a
# subproject build and a pip build leave the checkout alone.
get_filename_component(_w8a16_build_parent "${PROJECT_BINARY_DIR}" DIRECTORY)
if(PROJECT_IS_TOP_LEVEL AND NOT SKBUILD AND _w8a16_build_parent STREQUAL "${PROJECT_SOURCE_DIR}/build")
  set(_w8a16_bin_link "${PROJECT_SOURCE_DIR}/build/bin")
  file(REMOVE "${_w8a16_bin_link}")
  file(CREATE_LINK "${PROJECT_BINARY_DIR}/bin" "${_w8a16_bin_link}" SYMBOLIC)
endif()
