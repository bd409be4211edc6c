# SPDX-License-Identifier: MIT OR Apache-2.0
# The gate in a user's own build: a CTest test that holds a kernel module built there to the
# family's contract (docs/NUMERICS.md 2) with `w8a16check verify --backend cuda --module FILE`.
# Included by the installed package's config (find_package(w8a16check CONFIG)) and by the
# checkout's own CMakeLists.txt, so an add_subdirectory of a checkout has it too.
#
#   w8a16check_add_kernel_module(<target> SOURCES <file.cu>... [ARCHITECTURES <arch>...]
#                                [INCLUDE_DIRECTORIES <dir>...] [OPTIONS <nvcc option>...]
#                                [DEPENDS <header>...])
#     Compiles the .cu files, each a whole program, into one fatbin (<build dir>/<target>.fatbin)
#     with one cubin per architecture (default 90a, the H200's own target), and makes <target> the
#     custom target that builds it (in ALL). The file's path is the target's W8A16CHECK_MODULE_FILE
#     property, which w8a16check_add_verify_test(MODULE <target>) reads. Needs nvcc
#     (CMAKE_CUDA_COMPILER when the project enabled CUDA, else nvcc on the PATH or in
#     $CUDA_PATH/bin or /usr/local/cuda/bin); no enable_language(CUDA) is needed. Headers the
#     sources include are rebuilt on only when listed in DEPENDS.
#
#   w8a16check_add_verify_test(NAME <name> MODULE <file or target>
#                              [QUICK] [SANITIZE] [PERTURB <seed>] [CASES <n>] [GPUS <n>]
#                              [SHARD <i/n>] [SEED <n>]
#                              [ENTRIES <entry>...] [JUNIT <path>] [DATA_DIR <dir>]
#                              [LABELS <label>...] [TIMEOUT <seconds>] [ARGS <verify argument>...])
#     One test, <name>, that runs
#       w8a16check verify --backend cuda --module <file> --no-save --junit <path>
#                         [--quick] [--sanitize] [--perturb seed] [--cases n] [--gpus n] [--shard i/n]
#                         [--seed n] [--entry e]... [ARGS]
#     SANITIZE adds verify's sanitizer stage (compute-sanitizer's racecheck and synccheck over one case
#     per body and configuration cell; NOT CHECKED, a skipped JUnit case, where the tool is absent).
#     PERTURB runs the perturbed stage instead of the campaign: MODULE must then be a perturbed
#     module (one built with the timing policy, W8A16_PERTURB; verify refuses another), and SANITIZE
#     is not taken with it.
#     MODULE is a cubin or fatbin file, or a target with the W8A16CHECK_MODULE_FILE property (one
#     made by w8a16check_add_kernel_module). ENTRIES are the entry points the module is verified
#     for: a module that holds some of the family's kernels only must name them (docs/KERNEL_ABI.md
#     1: verify refuses a module that lacks a kernel of an entry point it verifies). Relative paths
#     follow CMake's own rule: what the test reads (a MODULE file, DATA_DIR) is taken from the
#     current source dir, as SOURCES are; what it writes (JUNIT) from the current build dir. JUNIT
#     defaults to <current build dir>/<name>.junit.xml; two tests naming one JUnit file is a
#     configure error (the later would replace the earlier's report).
#     The test's verdict is verify's exit status (README "Exit status"): 0 passed; 1 a byte differs
#     (the output names the case line, which `w8a16check repro` replays); 2 a usage or input error;
#     77, on a machine without a GPU or its driver, is CTest's SKIP_RETURN_CODE: the test shows as
#     Skipped, never as Passed. --no-save keeps verify from appending failing cases to the data
#     folder (an installed prefix is no place to write); the failing case line is in the test's
#     output and in the JUnit report. Labels: gpu, w8a16check, and LABELS.
include_guard(GLOBAL)

function(w8a16check_add_kernel_module target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;ARCHITECTURES;INCLUDE_DIRECTORIES;OPTIONS;DEPENDS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "w8a16check_add_kernel_module(${target}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "w8a16check_add_kernel_module(${target}): SOURCES names no .cu file")
  endif()
  if(NOT arg_ARCHITECTURES)
    set(arg_ARCHITECTURES 90a)
  endif()
  if(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  else()
    find_program(W8A16CHECK_NVCC nvcc HINTS "$ENV{CUDA_PATH}/bin" /usr/local/cuda/bin
                 DOC "nvcc, for w8a16check_add_kernel_module")
    set(nvcc "${W8A16CHECK_NVCC}")
  endif()
  if(NOT nvcc)
    message(FATAL_ERROR "w8a16check_add_kernel_module(${target}): no nvcc found (set CMAKE_CUDA_COMPILER or W8A16CHECK_NVCC)")
  endif()
  set(gencode "")
  foreach(a IN LISTS arg_ARCHITECTURES)
    if(NOT a MATCHES "^[0-9]+[af]?$")
      message(FATAL_ERROR "w8a16check_add_kernel_module(${target}): architecture '${a}' is not a number like 90 or 90a")
    endif()
    list(APPEND gencode "-gencode=arch=compute_${a},code=sm_${a}")
  endforeach()
  set(includes "")
  foreach(d IN LISTS arg_INCLUDE_DIRECTORIES)
    get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND includes "-I${d}")
  endforeach()
  set(sources "")
  foreach(s IN LISTS arg_SOURCES)
    get_filename_component(s "${s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND sources "${s}")
  endforeach()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.fatbin")
  # Whole-program compilation: each file's kernels are extern "C" and self-contained, so no device
  # link step is needed (the symbols are the kernels' names, docs/KERNEL_ABI.md 1).
  add_custom_command(OUTPUT "${out}"
    COMMAND "${nvcc}" -std=c++17 -O3 -lineinfo -fatbin ${gencode} ${includes} ${arg_OPTIONS} -o "${out}" ${sources}
    DEPENDS ${sources} ${arg_DEPENDS}
    COMMENT "nvcc -fatbin (${arg_ARCHITECTURES}): the kernel module ${target}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${out}")
  set_target_properties(${target} PROPERTIES W8A16CHECK_MODULE_FILE "${out}")
endfunction()

function(w8a16check_add_verify_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "QUICK;SANITIZE" "NAME;MODULE;CASES;GPUS;SHARD;SEED;PERTURB;JUNIT;DATA_DIR;TIMEOUT"
                        "ENTRIES;LABELS;ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "w8a16check_add_verify_test: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME)
    message(FATAL_ERROR "w8a16check_add_verify_test: NAME is required")
  endif()
  if(NOT arg_MODULE)
    message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): MODULE (a cubin or fatbin file, or its target) is required")
  endif()
  if(NOT TARGET w8a16check::cli)
    message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): no w8a16check::cli target "
                        "(find_package(w8a16check CONFIG) or add_subdirectory of a checkout defines it)")
  endif()
  if(TARGET "${arg_MODULE}")
    get_target_property(module "${arg_MODULE}" W8A16CHECK_MODULE_FILE)
    if(NOT module)
      message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): target ${arg_MODULE} has no W8A16CHECK_MODULE_FILE "
                          "property (w8a16check_add_kernel_module sets it; or name the module file itself)")
    endif()
  else()
    get_filename_component(module "${arg_MODULE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  if(arg_SANITIZE AND DEFINED arg_PERTURB)
    message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): SANITIZE is a stage of the campaign, PERTURB runs "
                        "the perturbed stage instead: give one of them")
  endif()
  foreach(n IN ITEMS CASES GPUS SEED PERTURB TIMEOUT)
    if(DEFINED arg_${n} AND NOT arg_${n} MATCHES "^[0-9]+$")
      message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): ${n} '${arg_${n}}' is not a whole number")
    endif()
  endforeach()
  if(DEFINED arg_SHARD AND NOT arg_SHARD MATCHES "^[0-9]+/[1-9][0-9]*$")
    message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): SHARD '${arg_SHARD}' is not i/n")
  endif()
  if(NOT arg_JUNIT)
    set(arg_JUNIT "${arg_NAME}.junit.xml")
  endif()
  get_filename_component(junit "${arg_JUNIT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  # One JUnit file per test: verify replaces its report, so a second test would leave only its own.
  get_property(taken GLOBAL PROPERTY W8A16CHECK_VERIFY_JUNIT_FILES)
  foreach(entry IN LISTS taken)
    string(REPLACE "|" ";" pair "${entry}")
    list(GET pair 0 other_junit)
    list(GET pair 1 other_name)
    if(other_junit STREQUAL junit)
      message(FATAL_ERROR "w8a16check_add_verify_test(${arg_NAME}): JUNIT ${junit} is the JUnit file of the test "
                          "${other_name} too: each test needs a file of its own")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY W8A16CHECK_VERIFY_JUNIT_FILES "${junit}|${arg_NAME}")
  # verify writes its reports atomically into an existing folder and refuses a missing one (exit 2).
  get_filename_component(junit_dir "${junit}" DIRECTORY)
  file(MAKE_DIRECTORY "${junit_dir}")
  if(NOT arg_DATA_DIR)
    get_property(arg_DATA_DIR GLOBAL PROPERTY W8A16CHECK_DATA_DIR)
  endif()
  if(arg_DATA_DIR)
    get_filename_component(arg_DATA_DIR "${arg_DATA_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()

  set(cmd $<TARGET_FILE:w8a16check::cli> verify --backend cuda --module "${module}" --no-save --junit "${junit}")
  if(arg_DATA_DIR)
    list(APPEND cmd --data-dir "${arg_DATA_DIR}")
  endif()
  if(arg_QUICK)
    list(APPEND cmd --quick)
  endif()
  if(arg_SANITIZE)
    list(APPEND cmd --sanitize)
  endif()
  if(DEFINED arg_PERTURB)
    list(APPEND cmd --perturb "${arg_PERTURB}")
  endif()
  foreach(pair IN ITEMS "CASES;--cases" "GPUS;--gpus" "SHARD;--shard" "SEED;--seed")
    list(GET pair 0 key)
    list(GET pair 1 flag)
    if(DEFINED arg_${key})
      list(APPEND cmd ${flag} "${arg_${key}}")
    endif()
  endforeach()
  foreach(e IN LISTS arg_ENTRIES)
    list(APPEND cmd --entry "${e}")
  endforeach()
  list(APPEND cmd ${arg_ARGS})
  add_test(NAME "${arg_NAME}" COMMAND ${cmd})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 1800)
  endif()
  # 77: verify found no GPU or no driver here and checked nothing (README "Exit status").
  set_tests_properties("${arg_NAME}" PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${arg_TIMEOUT}
                       LABELS "gpu;w8a16check;${arg_LABELS}" ATTACHED_FILES_ON_FAIL "${junit}")
endfunction()
