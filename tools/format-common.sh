# SPDX-License-Identifier: MIT OR Apache-2.0
# Sourced by tools/format, tools/format-check and tools/reformat-tree.sh: which clang-format to run.
# find_clang_format: prints the clang-format 14 binary ($CLANG_FORMAT, else clang-format-14, else
# clang-format); returns 1, saying why on stderr, when none is version 14. .clang-format was tuned
# against 14 (docs in its header) and other major versions break some lines differently.
find_clang_format() {
  local c v
  for c in ${CLANG_FORMAT:-} clang-format-14 clang-format; do
    command -v "$c" >/dev/null 2>&1 || continue
    v=$("$c" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
    if [ "$v" = 14 ]; then echo "$c"; return 0; fi
    echo "format: $c is clang-format $v, not 14; set CLANG_FORMAT to a clang-format 14" >&2
  done
  echo "format: SKIPPED: no clang-format 14 (apt-get install clang-format-14)" >&2
  return 1
}
