# SPDX-License-Identifier: MIT OR Apache-2.0
# cmake -DSRC=<source> -DIN=<version.hpp.in> -DOUT=<version.hpp> -DPROJECT_VERSION=x.y.z
#       -DW8A16_HAVE_CUDA=ON|OFF -P W8a16Version.cmake: the version header for the source's HEAD,
# rewritten only when its text changes (configure_file), so an unchanged commit rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE W8A16_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT W8A16_GIT_COMMIT)
  set(W8A16_GIT_COMMIT unknown)
endif()
configure_file(${IN} ${OUT} @ONLY)
