# SPDX-License-Identifier: MIT OR Apache-2.0
# Third-party packages, all from the platform (tools/setup installs them). The libraries and the
# CLI need only Threads, CLI11 and nlohmann_json; the tests add GoogleTest, RapidCheck and
# Eigen, the benchmarks Google Benchmark and Eigen, so BUILD_TESTING=OFF needs none of those.

find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
if(W8A16_BUILD_TESTS OR W8A16_BENCHMARKS)
  find_package(Eigen3 3.3 REQUIRED NO_MODULE)
endif()
if(W8A16_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
if(NOT W8A16_BUILD_TESTS)
  return()
endif()
find_package(GTest REQUIRED)
find_package(rapidcheck REQUIRED)          # Debian's librapidcheck-dev; gtest integration is header-only
include(GoogleTest)

# One helper for every GoogleTest binary: discovery, labels, visible skips. (JUnit XML comes from
# the test presets' outputJUnitFile, under the build tree.)
#   w8a16_add_gtest(TARGET LABELS cpu|slow|gpu [TIMEOUT s] [COST c])
function(w8a16_add_gtest target)
  cmake_parse_arguments(ARG "" "TIMEOUT;COST" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  # COST: ctest starts the tests of higher cost first (a binary of long tests: no core waits on
  # them at the end of a parallel run).
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  # CMake 3.25's gtest_discover_tests writes PROPERTIES unquoted into its generated script, so a
  # second label would be read as a property name: one label per binary (cpu: fast CPU tests,
  # slow: long CPU tests, gpu: need a GPU).
  list(LENGTH ARG_LABELS n_labels)
  if(NOT n_labels EQUAL 1)
    message(FATAL_ERROR "w8a16_add_gtest(${target}): exactly one label (cpu, slow or gpu), got '${ARG_LABELS}'")
  endif()
  # A sanitizer tree (W8A16_SANITIZE) runs the `cpu` label only: its `gpu` tests have no kernels
  # there (the asan preset builds no CUDA) and its `slow` ones take the sanitized emulator past
  # their timeouts. Their binaries are left out of its `all` and register no test, so that tree
  # neither spends its build on them nor lists tests it cannot run; the unsanitized trees run them.
  if(W8A16_SANITIZE AND NOT ARG_LABELS STREQUAL "cpu")
    set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
    return()
  endif()
  # Under the sanitizers a test binary's own sources compile at -O0: their runs spend their time in
  # the libraries they test, which keep the tree's -O1, while at -O1 the tests' GoogleTest,
  # RapidCheck and JSON code under ASan+UBSan was most of that tree's compile time.
  if(W8A16_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
  gtest_discover_tests(${target}
    DISCOVERY_TIMEOUT 60
    PROPERTIES
      LABELS "${ARG_LABELS}"
      TIMEOUT ${ARG_TIMEOUT}
      COST ${ARG_COST}
      # GTEST_SKIP() must show as Skipped in CTest, never as Passed.
      SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
