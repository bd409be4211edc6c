#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# What the CLI tells a newcomer is true and enough: on a machine without a GPU the default `verify`
# says in its first lines what it compares and replays the GPU recordings; the README's
# reproduction steps work on a fresh checkout; the shipped failing example fails with its known
# first difference; `replay --recordings` prints a repro hint only when repro would show the
# difference. Usage: cli_clear_words.sh CLI SOURCE_DIR. Exits 1 on the first broken rule.
set -u
cli=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/w8a16-words.XXXXXX")
trap 'rm -rf "$work"' EXIT
broken=0
fail() {
  broken=1
  printf 'BROKEN  %s\n' "$1"
  [ -f "$work/out" ] && sed 's/^/    | /' "$work/out" | head -40
}
ok() { printf 'ok      %s\n' "$1"; }

# 1. The default verify without a GPU, on a data folder of the layout the README gives (mma/,
#    recordings/, cases/): its first lines say what is compared, and it replays the recordings.
data=$work/golden
mkdir -p "$data/mma" "$data/cases" "$data/recordings"
cp "$src/golden/mma/h200/h200_10_targeted.mmav" "$data/mma/"
cp "$src/golden/cases/boundaries.case" "$data/cases/"
printf '%s\n' 'case/1 w8a16_gemv_batch4_strided m=3 n=7 k=640 a_row_stride=648 c_row_stride=9 dist=specials seed=0x0000000000000042 gen=1' > "$work/one.case"
# Its recording: the first case of the H200's (a simulation recording is not hardware evidence, and
# verify fails on it), as version 1 upgraded with its count; then the folders' evidence manifests.
{ sed -n '1,/^digest: /p' "$src/golden/recordings/h200.rec" | sed 's/^w8a16check-recording 2$/w8a16check-recording 1/'
  grep -m 1 '^out ' "$src/golden/recordings/h200.rec"; } > "$work/one_v1.rec"
"$cli" upgrade-recording "$work/one_v1.rec" --cases 1 --out "$data/recordings/h200_first.rec" > /dev/null 2>&1
"$cli" manifest --write "$data/mma" "$data/cases" "$data/recordings" --source hardware \
  --from "golden/mma/h200/h200_10_targeted.mmav, copied" > /dev/null 2>&1
env -u W8A16_DATA_DIR "$cli" verify --backend sim --cases 4 --no-save --no-coverage --data-dir "$data" > "$work/out" 2>&1
rc=$?
head -8 "$work/out" > "$work/first"
if [ $rc -ne 0 ] || ! grep -q "^what this run compares:" "$work/first" ||
   ! grep -q "recorded MMAs (.*/mma): the emulator's tensor-core step against MMAs recorded on hardware" "$work/first" ||
   ! grep -q "GPU recordings (.*/recordings): the emulator's whole-GEMM outputs against outputs recorded on a GPU" "$work/first" ||
   ! grep -q "on the simulation (no GPU here): each kernel's launch plan and geometry" "$work/first" ||
   ! grep -q "It cannot find an arithmetic bug in a kernel" "$work/first" ||
   ! grep -q "^1 recorded cases: emulator 0 differ, device not run" "$work/out" || ! grep -q "^verdict: PASS" "$work/out"; then
  fail "verify.default_says_what_it_compares_and_replays_the_recordings (exit $rc)"
else
  ok "verify.default_says_what_it_compares_and_replays_the_recordings"
fi
# The data folder's recordings/ is part of the default, like mma/ and cases/: missing, it is exit 2.
rm -r "$data/recordings"
env -u W8A16_DATA_DIR "$cli" verify --backend sim --cases 4 --no-save --no-coverage --data-dir "$data" > "$work/out" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q "recordings: no such file or folder" "$work/out"; then
  fail "verify.a_data_folder_without_recordings_is_an_input_error (exit $rc)"
else
  ok "verify.a_data_folder_without_recordings_is_an_input_error"
fi

# 2. The README's reproduction steps on this checkout (CI runs this on a fresh clone).
"$cli" replay "$src/golden/regressions" > "$work/out" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q "golden/regressions: this folder holds no .case file: nothing to replay" "$work/out"; then
  # A checkout where properties have saved regressions replays them instead: then every verdict is printed.
  if ls "$src"/golden/regressions/*.case > /dev/null 2>&1 && grep -q " cases, [0-9]* failed$" "$work/out"; then
    ok "readme.replay_golden_regressions (this checkout has saved regressions)"
  else
    fail "readme.replay_golden_regressions (exit $rc)"
  fi
else
  ok "readme.replay_golden_regressions (a fresh checkout: nothing saved, and it says so)"
fi
# What a fresh clone gets: golden/regressions/ holds its README alone, never a committed case.
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
  committed=$(git -C "$src" ls-files golden/regressions | grep -v '^golden/regressions/README.md$')
  if [ -n "$committed" ]; then
    fail "readme.no_regression_is_committed (committed: $(echo $committed))"
  else
    ok "readme.no_regression_is_committed"
  fi
fi
"$cli" replay "$src/golden/cases" > "$work/out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^[0-9]* cases, 0 failed$" "$work/out"; then fail "readme.replay_golden_cases (exit $rc)"; else ok "readme.replay_golden_cases"; fi
first=$(grep -n '^case/' "$src/golden/cases/boundaries.case" | head -n 1 | cut -d: -f1)  # FILE:LINE counts every line
"$cli" repro "$src/golden/cases/boundaries.case:$first" > "$work/out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^verdict: PASS" "$work/out"; then fail "readme.repro_file_line (exit $rc)"; else ok "readme.repro_file_line"; fi

# 3. The shipped failing example: fails, with its known first difference, and no repro hint (repro
#    compares a backend with the same emulator and would show nothing).
"$cli" replay --recordings "$src/golden/examples/one_output_changed.rec" > "$work/out" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q "^FAIL emulator vs recording: digest 0x78c47cb3273c3eed, recorded 0x838bf2020b002280; 1 outputs differ, first C\[2\]\[17\] = 0xC09A, recorded 0xC09B$" "$work/out" ||
   ! grep -q "^2 recorded cases: emulator 1 differ, device not run$" "$work/out" || grep -q "explain:" "$work/out"; then
  fail "example.the_failing_recording_fails_with_its_first_difference_and_no_false_hint (exit $rc)"
else
  ok "example.the_failing_recording_fails_with_its_first_difference_and_no_false_hint"
fi
# A failing replay of cases does print its hint, since repro reproduces exactly that comparison.
"$cli" replay --backend sim "$work/one.case" > "$work/out" 2>&1
grep -q "explain:" "$work/out" && fail "replay.a_passing_case_prints_no_hint" || ok "replay.a_passing_case_prints_no_hint"

[ $broken -eq 0 ]
