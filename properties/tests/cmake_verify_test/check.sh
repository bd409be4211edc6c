#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# cmake.verify_test_paths: configures cmake_verify_test/ and reads the test command CMake wrote.
# Usage: check.sh CMAKE_DIR. Prints "verify_test_paths: ok" when every rule holds.
set -u
cmake_dir=$1
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/w8a16-verify-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
cmake -S "$src" -B "$work/one" -DW8A16_CMAKE_DIR="$cmake_dir" > "$work/one.log" 2>&1 || { cat "$work/one.log"; exit 1; }
t="$work/one/CTestTestfile.cmake"
grep -q -- "--module\" \"$src/kernels/my.fatbin\"" "$t" || { echo "MODULE not taken from the source dir:"; cat "$t"; bad=1; }
grep -q -- "--data-dir\" \"$src/golden\"" "$t" || { echo "DATA_DIR not taken from the source dir:"; cat "$t"; bad=1; }
grep -q -- "--junit\" \"$work/one/reports/one.xml\"" "$t" || { echo "JUNIT not taken from the build dir:"; cat "$t"; bad=1; }
grep -q -- "--quick\" \"--sanitize\"" "$t" || { echo "SANITIZE not passed as --sanitize:"; cat "$t"; bad=1; }
grep -q -- "--perturb\" \"7\"" "$t" || { echo "PERTURB not passed as --perturb 7:"; cat "$t"; bad=1; }
if cmake -S "$src" -B "$work/both" -DW8A16_CMAKE_DIR="$cmake_dir" -DBOTH_STAGES=ON > "$work/both.log" 2>&1; then
  echo "a test asking for both stages was accepted"; bad=1
elif ! tr -s ' \n' ' ' < "$work/both.log" | grep -q "give one of them"; then
  echo "both stages: not the expected error:"; cat "$work/both.log"; bad=1
fi
if cmake -S "$src" -B "$work/two" -DW8A16_CMAKE_DIR="$cmake_dir" -DTWO_TESTS_ONE_JUNIT=ON > "$work/two.log" 2>&1; then
  echo "two tests with one JUnit file were accepted"; bad=1
elif ! tr -s ' \n' ' ' < "$work/two.log" | grep -q "is the JUnit file of the test paths.one too"; then
  echo "two tests with one JUnit file: not the expected error:"; cat "$work/two.log"; bad=1
fi
[ "$bad" -eq 0 ] && echo "verify_test_paths: ok"
exit "$bad"
