#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The one-shot reformat of the tree to .clang-format, with the two checks that make it safe to
# commit as a change of layout only. Run it on a clean checkout (everything committed); it leaves
# the reformat uncommitted for review and prints the commit command.
#
#   1. The kernels' SASS before: the cuda preset's kernel modules (device/kernels -> the embedded
#      fatbin, device/probes/kernels -> the probes' fatbin), built from HEAD in a scratch copy with
#      the preset's nvcc flags, disassembled with cuobjdump -sass. No GPU is needed.
#   2. tools/format over the tree (tools/format-files lists what it touches).
#   3. tools/gpu-mutants plants each bug by replacing an exact string of device/kernels/*.cu(h)
#      (its mutant_table, "old" field); a reformat that re-wraps or re-spaces such a line would make
#      `tools/gpu-mutants build` refuse ("pattern found 0 times"). Every pattern is checked against
#      the reformatted files; a pattern that now differs only in spaces and still lies on one line is
#      rewritten in tools/gpu-mutants to the reformatted text (the planted bug is unchanged); one that
#      cannot be (re-wrapped over lines, or no longer unique) stops the script: put that line
#      between `// clang-format off` and `// clang-format on` and run it again.
#   4. The kernels' SASS after, from the working tree, compared with step 1 (addresses and
#      instructions; //## line-info comments, which move with the lines, are dropped). Any
#      difference stops the script: a reformat must not change one instruction. Without cuobjdump
#      (a toolkit of compiler packages only, as on the build machine) both builds leave out the
#      preset's -lineinfo, the one flag whose output depends on line numbers (it only adds line
#      tables: nvcc's documentation), and the fatbins must then be identical byte for byte, which
#      implies the same SASS.
#
# W8A16_REFORMAT_SASS=0 leaves out steps 1 and 4 (no CUDA toolkit). CUDA from /usr/local/cuda/bin
# when nvcc is not on PATH. Exit 0 when the tree is reformatted with every check passing.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/format-common.sh
cf=$(find_clang_format) || exit 2
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "reformat-tree: the checkout has uncommitted changes; commit or stash them first" >&2
  exit 2
fi
sass=${W8A16_REFORMAT_SASS:-1}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

# kernel_sass SRC OUT: the kernel modules of the source tree SRC, built as the cuda preset builds
# them (tools/gpu-mutants builds its mutants the same way), disassembled into OUT (tools/kernel-sass).
kernel_sass() { tools/kernel-sass dump "$1" "$2"; }

if [ "$sass" = 1 ]; then
  echo "reformat-tree: 1. SASS of HEAD's kernel modules (a scratch build; minutes on 2 cores)"
  mkdir -p "$scratch/before"
  git archive HEAD | tar -x -C "$scratch/before"
  kernel_sass "$scratch/before" "$scratch/sass-before.txt"
  echo "reformat-tree:    $(cat "$scratch/sass-before.txt" | grep -c 'Function :\|bytes (built' || true) kernels or fatbins recorded"
fi

echo "reformat-tree: 2. tools/format"
tools/format
git diff --shortstat

echo "reformat-tree: 3. the mutant patterns of tools/gpu-mutants"
python3 - <<'PY'
import re, subprocess, sys
tool = "tools/gpu-mutants"
text = open(tool).read()
files = dict(re.findall(r'^(\w+)=(device/kernels/\S+)$', text, flags=re.M))
table = re.search(r"mutant_table\(\) \{\n  cat <<'EOF'\n(.*?)\nEOF\n", text, flags=re.S)
lines = table.group(1).split("\n")
kept, fixed, broken = 0, [], []
for i, line in enumerate(lines):
    mid, key, kind, what, old, new = line.split("|")
    src = open(files[key]).read()
    if src.count(old) == 1:
        kept += 1
        continue
    # The same tokens with other spaces, on one line: clang-format only moves whitespace.
    rx = r"[ \t]*".join(re.escape(tok) for tok in re.findall(r"\w+|\S", old))
    if old[:1].isspace():
        rx = r"[ \t]+" + rx
    hits = [m.group(0) for m in re.finditer(rx, src)]
    if len(hits) == 1 and "\n" not in hits[0] and "|" not in hits[0]:
        lines[i] = "|".join([mid, key, kind, what, hits[0], new])
        fixed.append(f"{mid}: {old!r} -> {hits[0]!r}")
    else:
        broken.append(f"{mid} ({files[key]}): {len(hits)} matches on one line of {old!r}")
if fixed:
    open(tool, "w").write(text.replace(table.group(1), "\n".join(lines)))
print(f"reformat-tree:    {kept} patterns still match once; {len(fixed)} rewritten in {tool}; {len(broken)} broken")
for f in fixed: print("reformat-tree:    rewritten", f)
for b in broken: print("reformat-tree:    BROKEN", b)
sys.exit(1 if broken else 0)
PY

if [ "$sass" = 1 ]; then
  echo "reformat-tree: 4. SASS of the reformatted tree"
  mkdir -p "$scratch/after"
  git ls-files -z | tar --null -T - -c | tar -x -C "$scratch/after"
  kernel_sass "$scratch/after" "$scratch/sass-after.txt"
  if ! tools/kernel-sass compare "$scratch/sass-before.txt" "$scratch/sass-after.txt" >"$scratch/compare.txt"; then
    grep -v identical "$scratch/compare.txt" | head -40
    echo "reformat-tree: FAIL: the reformat changed the kernels' SASS" >&2
    exit 1
  fi
  echo "reformat-tree:    SASS identical:"; sed 's/^/reformat-tree:      /' "$scratch/sass-after.txt" | grep -v '^reformat-tree:      [[:space:]]*/\*' | head -8
fi
tools/format-check >/dev/null
echo "reformat-tree: done: $(git diff --shortstat)"
echo "reformat-tree: review, then: git commit -am 'One layout for the tree: tools/format (.clang-format); no token moved, the kernels' SASS unchanged'"
