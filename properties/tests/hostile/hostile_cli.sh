#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Hostile input through every subcommand of the CLI, as a user or an attacker would give it: paths
# that are not regular files (folders, /dev/zero, FIFOs, unreadable files, a file whose read fails),
# huge, negative, wrapping and NaN values, truncated files of every format, unwritable report paths,
# and text with control bytes or of absurd length. Each run has a memory limit (ulimit -v) and a
# timeout, and must end with the documented exit status (README "Exit status"), a clear message
# matching its pattern, no signal (no crash, no core), no raw control byte in what it prints, and no
# report left from an earlier run (each report path starts out holding a stale PASS).
# The verify runs that hold input handling run without the invariance rows (--no-invariance: they
# are the invariance tests' to hold, and under the sanitizers they cost seconds a run); one run,
# verify.pass, keeps them (`vqi`), so that a passing report of the default shape is held here too.
#
# Usage: hostile_cli.sh CLI SOURCE_DIR [PYTHON]. Prints one line per run and a summary; exits 1 if
# any run broke a rule. W8A16_HOSTILE_VMEM_KIB (default 4194304, 0: none, e.g. under ASan, which
# reserves terabytes of shadow) and W8A16_HOSTILE_TIMEOUT (seconds, default 120) set the limits.
set -u
cli=$1
src=$2
py=${3:-python3}
vmem=${W8A16_HOSTILE_VMEM_KIB:-4194304}
tmo=${W8A16_HOSTILE_TIMEOUT:-120}
work=$(mktemp -d "${TMPDIR:-/tmp}/w8a16-hostile.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
ulimit -c 0  # a crash must show as a signal status below, never as a core file left behind

runs=0
broken=0
stale='{"verdict": "PASS", "stale": "STALE-REPORT-FROM-AN-EARLIER-RUN"}'

# run NAME STATUS REGEX [--report FILE]... -- COMMAND...
#   STATUS: the exit status the run must have; REGEX: an extended regex its output must match.
#   Each --report FILE is filled with a stale PASS first, and must not hold it afterwards.
run() {
  local name=$1 want=$2 regex=$3
  shift 3
  local reports=()
  while [ "$1" = --report ]; do
    reports+=("$2")
    shift 2
  done
  [ "$1" = -- ] && shift
  local r
  for r in "${reports[@]}"; do [ -d "$(dirname "$r")" ] && [ ! -e "$r" -o -f "$r" ] && printf '%s\n' "$stale" > "$r"; done
  local out rc
  out=$( (if [ "$vmem" != 0 ]; then ulimit -v "$vmem"; fi; exec timeout -k 10 "$tmo" "$@") 2>&1 < /dev/null)
  rc=$?
  runs=$((runs + 1))
  local why=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="did not finish within ${tmo} s (exit $rc): a hang"
  elif [ "$rc" -ge 128 ]; then
    why="killed by signal $((rc - 128)) (exit $rc): a crash"
  elif [ "$rc" -ne "$want" ]; then
    why="exit status $rc, documented $want"
  elif ! printf '%s' "$out" | grep -Eq -- "$regex"; then
    why="output does not match /$regex/"
  elif printf '%s' "$out" | LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]'; then
    why="output holds a raw control byte (user input must be escaped)"
  elif ! printf '%s' "$out" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1; then
    why="output is not valid UTF-8 (user input must be escaped)"
  elif [ "${#out}" -gt 60000 ]; then
    why="output is ${#out} bytes: long input must be cut"
  else
    for r in "${reports[@]}"; do
      if [ -f "$r" ] && grep -q STALE-REPORT "$r"; then why="$r still holds the report of an earlier run"; fi
    done
  fi
  if [ -n "$why" ]; then
    broken=$((broken + 1))
    printf 'BROKEN  %s: %s\n  command: %s\n  output (first 1500 bytes):\n%s\n' "$name" "$why" "$*" \
      "$(printf '%s' "$out" | head -c 1500 | LC_ALL=C tr -d '\000-\010\013-\037\177' | sed 's/^/    | /')"
  else
    printf 'ok      %s (exit %d)\n' "$name" "$rc"
  fi
}

# ---- the files -------------------------------------------------------------------------------
mkfifo "$work/fifo" "$work/fifo.case" "$work/fifo.rec"
mkdir -p "$work/empty" "$work/with_fifo" "$work/regressions"
ln -s "$work/fifo" "$work/with_fifo/looks_like.case"
printf 'not a folder\n' > "$work/afile"
small_case='case/1 w8a16_gemv_batch4_strided m=2 n=5 k=128 a_row_stride=136 c_row_stride=7 dist=specials seed=0x0000000000000042 gen=1'
huge_case='case/1 w8a16_gemm_pipelined m=65536 n=32768 k=32768 a_row_stride=32768 c_row_stride=32768 dist=specials seed=0x0000000000000001 gen=1'
printf '%s\n' "$small_case" > "$work/small.case"
printf '%s\n' "$huge_case" > "$work/huge.case"
printf '%s\n' "${small_case:0:60}" > "$work/cut.case"
printf '%s\n' "$small_case" > "$work/unreadable.case"
chmod 000 "$work/unreadable.case"
# A recording of the small case, by the tool itself (the simulation: values from the emulator).
"$cli" record --source sim --cases "$work/small.case" --out "$work/small.rec" > /dev/null 2>&1
head -n -1 "$work/small.rec" > "$work/cut_at_line.rec"                     # the trailer dropped
head -c "$(($(wc -c < "$work/small.rec") - 20))" "$work/small.rec" > "$work/cut_mid_line.rec"
sed 's/^w8a16check-recording 2$/w8a16check-recording 1/; /^end /d' "$work/small.rec" > "$work/v1.rec"
# A recording that names a case no machine here can run (digest only: more than 4096 outputs).
sed '/^out /d; /^end /d; s/^w8a16check-recording 2$/w8a16check-recording 1/' "$work/small.rec" > "$work/huge_v1.rec"
printf 'out 0x0000000000000000 2147483648 - %s\n' "$huge_case" >> "$work/huge_v1.rec"
"$cli" upgrade-recording "$work/huge_v1.rec" --cases 1 --out "$work/huge.rec" > /dev/null 2>&1
"$py" - "$work" "$src" <<'EOF'
import os, struct, sys
work, src = sys.argv[1], sys.argv[2]
mmav = open(os.path.join(src, "golden/mma/h200/h200_10_targeted.mmav"), "rb").read()
open(os.path.join(work, "cut.mmav"), "wb").write(mmav[: len(mmav) - 100])
open(os.path.join(work, "lying_count.mmav"), "wb").write(mmav[:8] + struct.pack("<I", 0xFFFFFFFF) + mmav[12:])
def bundle(m, n, k, launches, body=True, entry=b"gemm_pipelined"):
    h = b"W8A16OPB" + struct.pack("<I", 1) + entry.ljust(32, b"\0")
    h += struct.pack("<IIIIIIIII", m, n, k, k, n, launches, 0, 0, 0)
    if not body:
        return h
    return h + b"\0" * (2 * launches * m * k + n * k + 4 * ((n + 127) // 128) * (k // 128))
open(os.path.join(work, "ok.bundle"), "wb").write(bundle(2, 8, 128, 1))
open(os.path.join(work, "many.bundle"), "wb").write(bundle(1, 8, 128, 5000, entry=b"gemv_batch4_strided"))
open(os.path.join(work, "packed.bundle"), "wb").write(bundle(4, 256, 256, 1, entry=b"gemm_packed_strided"))
open(os.path.join(work, "cut.bundle"), "wb").write(bundle(2, 8, 128, 1)[:-7])
# launches * m * a_row_stride wraps 2^64 when multiplied unchecked; the file is as long as the wrapped size says.
open(os.path.join(work, "wrapping.bundle"), "wb").write(bundle(0xFFFFFFFF, 8, 128, 0x80000001, body=False))
EOF

d="$src/golden"
esc=$'\x1b[31mred\x07'
long=$(head -c 100000 /dev/zero | tr '\0' 'x')
rtl=$'gemv\u202ebatch4'

# ---- every reader: paths that are not regular files -----------------------------------------
run vectors.folder 2 "golden/mma/h200: error: is a folder" -- "$cli" vectors "$d/mma/h200"
run vectors.dev_zero 2 "/dev/zero: error: is a character device" -- "$cli" vectors /dev/zero
run vectors.fifo 2 "fifo: error: is a FIFO" -- "$cli" vectors "$work/fifo"
run vectors.read_error 2 "read failed" -- "$cli" vectors /proc/self/mem
run vectors.missing 2 "no such file" -- "$cli" vectors "$work/missing.mmav"
run vectors.truncated 2 "size mismatch" -- "$cli" vectors "$work/cut.mmav"
run vectors.lying_count 2 "size mismatch" -- "$cli" vectors "$work/lying_count.mmav"
run replay.empty_folder 2 "holds no .case file: nothing to replay" -- "$cli" replay --backend sim "$work/empty"
run replay.dev_zero 2 "/dev/zero: is a character device" -- "$cli" replay --backend sim /dev/zero
run replay.fifo 2 "fifo.case: is a FIFO" -- "$cli" replay --backend sim "$work/fifo.case"
run replay.fifo_line 2 "fifo: is a FIFO" -- "$cli" replay --backend sim "$work/fifo:3"
run replay.fifo_in_folder 2 "looks_like.case: is a FIFO" -- "$cli" replay --backend sim "$work/with_fifo"
run replay.line_zero 2 "line numbers start at 1" -- "$cli" replay --backend sim "$work/small.case:0"
run replay.truncated_case 2 "expected 10 space-separated fields" -- "$cli" replay --backend sim "$work/cut.case"
run replay.recordings_folder_without_rec 2 "no .rec file in this folder" -- "$cli" replay --backend sim --recordings "$work/empty"
run replay.recordings_dev_zero 2 "/dev/zero: is a character device" -- "$cli" replay --backend sim --recordings /dev/zero
run replay.recordings_fifo 2 "fifo.rec: is a FIFO" -- "$cli" replay --backend sim --recordings "$work/fifo.rec"
run replay.recordings_cut_at_a_line 2 "without its trailer line.*the file is cut" -- "$cli" replay --backend sim --recordings "$work/cut_at_line.rec"
run replay.recordings_cut_mid_line 2 "cut_mid_line.rec:[0-9]+: (corrupt|the trailer|expected)" -- "$cli" replay --backend sim --recordings "$work/cut_mid_line.rec"
run replay.recordings_version_1_unverifiable 0 "version 1: unverifiable length" -- "$cli" replay --backend sim --recordings "$work/v1.rec"
run repro.fifo 2 "fifo.case: is a FIFO" -- "$cli" repro --backend sim "$work/fifo.case"
run repro.folder 2 "empty: is a folder" -- "$cli" repro --backend sim "$work/empty"
run record.fifo_case 2 "fifo.case: is a FIFO" -- "$cli" record --source sim --cases "$work/fifo.case" --out "$work/never.rec"
run record.fifo_in_folder 2 "looks_like.case: is a FIFO" -- "$cli" record --source sim --cases "$work/with_fifo" --out "$work/never.rec"
run run_operands.fifo 2 "fifo: is a FIFO" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/fifo" --out "$work/o.bin"
run run_operands.dev_zero 2 "/dev/zero: is a character device" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in /dev/zero --out "$work/o.bin"
run run_operands.folder 2 "empty: is a folder" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/empty" --out "$work/o.bin"
run run_operands.truncated 2 "truncated, or trailing bytes" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/cut.bundle" --out "$work/o.bin"
run run_operands.wrapping_header 2 "larger than 2\^31" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/wrapping.bundle" --out "$work/o.bin"
run upgrade_recording.fifo 2 "fifo.rec: is a FIFO" -- "$cli" upgrade-recording "$work/fifo.rec" --out "$work/u.rec"
run upgrade_recording.folder 2 "empty: is a folder" -- "$cli" upgrade-recording "$work/empty" --out "$work/u.rec"
run verify.cases_from_fifo 1 "case file error: .*fifo.case: is a FIFO" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --cases 1 --no-recordings --cases-from "$work/fifo.case"
run verify.mma_dir_dev_zero 1 "/dev/zero: is a character device" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --cases 1 --no-recordings --no-saved --mma-dir /dev/zero
run verify.recordings_fifo 1 "fifo.rec: is a FIFO" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --cases 1 --no-saved --recordings-from "$work/fifo.rec"
run verify.data_dir_not_a_folder 2 "no such folder" -- "$cli" verify --no-invariance --backend sim --data-dir /dev/zero
run probe.out_is_a_file 2 "cannot create .*afile/.*Not a directory" -- "$cli" probe --source sim --out "$work/afile" --cases 1
run module.folder 2 "module|CUDA backend" -- "$cli" replay --module "$work/empty" "$work/small.case"
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
  run replay.unreadable_file 2 "unreadable.case: (cannot open|cannot read).*[Pp]ermission denied" -- \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$cli" replay --backend sim "$work/unreadable.case"
elif [ "$(id -u)" -ne 0 ]; then
  run replay.unreadable_file 2 "unreadable.case: (cannot open|cannot read).*[Pp]ermission denied" -- "$cli" replay --backend sim "$work/unreadable.case"
else
  echo "SKIPPED replay.unreadable_file: running as root without setpriv, so no file is unreadable"
fi

# ---- work that cannot be done ------------------------------------------------------------------
run replay.huge_case 2 "needs 70368744177664 \(2\^46\) multiply-adds, more than --max-macs.*pass --max-macs" -- "$cli" replay --backend sim "$huge_case"
run replay.huge_case_bytes 2 "bytes of host memory, more than --max-bytes.*pass --max-bytes" -- "$cli" replay --backend sim --max-macs 0x400000000000 "$huge_case"
run repro.huge_case 2 "repro: nothing was run" -- "$cli" repro --backend sim "$huge_case"
run verify.huge_saved_case 2 "huge.case:1 .*more than --max-macs" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --no-recordings --cases-from "$work/huge.case"
run record.huge_case 2 "more than --max-macs" -- "$cli" record --source sim --cases "$work/huge.case" --out "$work/never.rec"
run replay.recordings_huge_case 2 "huge.rec case 1 .*more than --max-macs" -- "$cli" replay --backend sim --recordings "$work/huge.rec"
run run_operands.over_max_macs 2 "needs 2048 \(2\^11\) multiply-adds, more than --max-macs 1" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/ok.bundle" --out "$work/o.bin" --max-macs 1
run bench.huge_shape 2 "bytes of host memory, more than --max-bytes" -- "$cli" bench --shapes 65536x65408 --m 1
run replay.max_macs_admits_a_small_case 0 "1 cases, 0 failed" -- "$cli" replay --backend sim --max-macs 1280 "$work/small.case"

# ---- flag values that wrap or mean nothing --------------------------------------------------
for v in -1 18446744073709551616 1e3 ' 5' 0x 1000000001 010x; do
  run "verify.cases=$v" 2 "--cases: .*(not a whole number|outside)" -- "$cli" verify --cases "$v"
done
run verify.cases_octal_reads_as_decimal 2 "--max-macs: .*outside" -- "$cli" verify --max-macs 0
run verify.seed_negative 2 "--seed: '-1' is not a whole number" -- "$cli" verify --seed -1
run verify.seed_past_2_64 2 "--seed: .*not a whole number" -- "$cli" verify --seed 0x1ffffffffffffffff
for v in -1 nan inf -inf 1e999 '' 5s; do
  run "verify.time_budget=$v" 2 "--time-budget: .*not a finite number|--time-budget: .*outside|--time-budget" -- "$cli" verify --time-budget "$v"
done
run verify.gpus_negative 2 "--gpus: '-1'" -- "$cli" verify --gpus -1
run verify.shard_zero 2 "shard '1/0' must be i/n" -- "$cli" verify --shard 1/0
run verify.max_bytes_negative 2 "--max-bytes: '-5'" -- "$cli" verify --max-bytes -5
run verify.draw_max_macs_negative 2 "--draw-max-macs: '-1'" -- "$cli" verify --draw-max-macs -1
run replay.max_macs_negative 2 "--max-macs: '-1'" -- "$cli" replay --max-macs -1 "$work/small.case"
run repro.element_negative 2 "--element: '-1'" -- "$cli" repro --element -1 0 "$work/small.case"
run repro.show_negative 2 "--show: '-1'" -- "$cli" repro --show -1 "$work/small.case"
run vectors.show_negative 2 "--show: '-1'" -- "$cli" vectors --show -1 "$d/mma/h200/h200_10_targeted.mmav"
run probe.cases_negative 2 "--cases: '-1'" -- "$cli" probe --source sim --cases -1 --out "$work/probe"
run probe.cases_zero 2 "--cases: 0 is outside 1..65536" -- "$cli" probe --source sim --cases 0 --out "$work/probe"
run probe.seed_negative 2 "--seed: '-1'" -- "$cli" probe --source sim --seed -1 --out "$work/probe"
run bench.reps_negative 2 "--reps: '-1'" -- "$cli" bench --reps -1
run bench.m_negative 2 "--m: '-1'" -- "$cli" bench --m 1,-1
run bench.rotate_nan 2 "--rotate-mib: 'nan'" -- "$cli" bench --rotate-mib nan
run bench.device_negative 2 "--device: '-1'" -- "$cli" bench --device -1
run bench.check_macs_negative 2 "--check-macs: '-1'" -- "$cli" bench --check-macs -1
run cli.unknown_subcommand 2 "unknown subcommand 'nosuch'" -- "$cli" nosuch
run cli.unknown_option 2 "The following argument was not expected: --nosuch" -- "$cli" verify --nosuch
run cli.missing_value 2 "--cases: .*missing" -- "$cli" verify --cases
run cli.missing_required 2 "--in is required|--in.*required" -- "$cli" run-operands --backend sim --entry gemm_pipelined --out "$work/o.bin"
run cli.help_is_exit_0 0 "Exit status, every subcommand" -- "$cli" --help

# ---- reports and outputs that cannot be written; no stale report -----------------------------
# The runs below check what a campaign does with its reports, its output and its options, not the
# saved cases: each replays one small saved case, not the 48 of golden/cases (under ASan each of
# those campaigns took 40 s).
quick=(--backend sim --no-invariance --no-save --no-coverage --cases 2 --no-recordings --mma-dir "$d/mma/h200/h200_10_targeted.mmav"
       --cases-from "$work/small.case")
run verify.json_to_dev_full 2 "--json /dev/full: cannot write the report: .*No space left" -- "$cli" verify "${quick[@]}" --json /dev/full
run verify.junit_to_dev_full 2 "--junit /dev/full: cannot write the report: .*No space left" -- "$cli" verify "${quick[@]}" --junit /dev/full
run verify.junit_in_missing_folder 2 "--junit .*missing/v.xml: the folder .*missing does not exist" -- "$cli" verify "${quick[@]}" --junit "$work/missing/v.xml"
run verify.json_is_a_folder 2 "--json .*empty: is a folder" -- "$cli" verify "${quick[@]}" --json "$work/empty"
run verify.stale_report_after_a_usage_error 2 "--cases: '-1'" --report "$work/v1.json" --report "$work/v1.xml" -- \
  "$cli" verify --cases -1 --json "$work/v1.json" --junit "$work/v1.xml"
run verify.stale_report_after_an_input_error 2 "no such file or folder" --report "$work/v2.json" --report "$work/v2.xml" -- \
  "$cli" verify "${quick[@]}" --cases-from "$work/missing.case" --json "$work/v2.json" --junit "$work/v2.xml"
run verify.stale_report_replaced_by_this_run 0 "verdict: PASS" --report "$work/v3.json" --report "$work/v3.xml" -- \
  "$cli" verify "${quick[@]}" --json "$work/v3.json" --junit "$work/v3.xml"
run verify.stdout_to_dev_full 2 "cannot write to standard output" -- sh -c '"$0" verify "$@" > /dev/full' "$cli" "${quick[@]}"
# Without a GPU (this catalogue runs where there is none; CUDA_VISIBLE_DEVICES= hides one): a CUDA
# build says SKIPPED (77) for every command that needs one, a build without the CUDA backend 2.
if "$cli" --version | grep -q "CUDA ON"; then nogpu=77 nogpu_says="SKIPPED: no GPU"; else nogpu=2 nogpu_says="no CUDA backend"; fi
run bench.stale_report_without_a_gpu "$nogpu" "bench: .*$nogpu_says" --report "$work/b.json" -- \
  env CUDA_VISIBLE_DEVICES= "$cli" bench --json "$work/b.json" --m 1 --shapes 128x128
run record.without_a_gpu "$nogpu" "record: .*$nogpu_says" -- env CUDA_VISIBLE_DEVICES= "$cli" record --cases "$work/small.case" --out "$work/nogpu.rec"
run probe.without_a_gpu "$nogpu" "probe: .*$nogpu_says" -- env CUDA_VISIBLE_DEVICES= "$cli" probe --out "$work/nogpu_probe" --cases 1
run record.out_dev_full 2 "--out /dev/full: is a character device" -- "$cli" record --source sim --cases "$work/small.case" --out /dev/full
run record.out_under_a_file 2 "afile/sub/x.rec|Not a directory|cannot" -- "$cli" record --source sim --cases "$work/small.case" --out "$work/afile/sub/x.rec"
run run_operands.out_dev_full 2 "--out /dev/full: cannot write: .*No space left" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/ok.bundle" --out /dev/full
run run_operands.out_missing_folder 2 "--out .*missing/o.bin: the folder .*does not exist" -- "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/ok.bundle" --out "$work/missing/o.bin"
run upgrade_recording.out_dev_full 2 "--out /dev/full: is a character device" -- "$cli" upgrade-recording "$work/v1.rec" --out /dev/full
run upgrade_recording.writes_version_2 0 "version 2, every header and out line byte for byte" -- "$cli" upgrade-recording "$work/v1.rec" --cases 1 --out "$work/v1_up.rec"
run upgrade_recording.result_replays_verified 0 "1 recorded cases: emulator 0 differ" -- "$cli" replay --backend sim --recordings "$work/v1_up.rec"

# ---- report paths: one file per report, never a link replaced, never another run's report --------
printf '{"stale": "an earlier report"}\n' > "$work/same.json"
run reports.one_file_named_twice 2 "names the same file; each report needs a file of its own" -- \
  "$cli" verify "${quick[@]}" --json "$work/same.json" --junit "$work/./same.json"
printf '{"stale": "an earlier report"}\n' > "$work/linked_target.json"
ln -sf linked_target.json "$work/linked.json"
run reports.symlinked_path_refused 2 "linked.json'?: is a symbolic link" -- "$cli" verify "${quick[@]}" --json "$work/linked.json"
runs=$((runs + 1))
if ! grep -q 'an earlier report' "$work/same.json" || [ ! -L "$work/linked.json" ] || ! grep -q 'an earlier report' "$work/linked_target.json"; then
  broken=$((broken + 1)); echo "BROKEN  reports.refused_paths_left_as_they_were"
else
  echo "ok      reports.refused_paths_left_as_they_were"
fi
W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided "$cli" verify "${quick[@]}" --launch-deadline 30 --json "$work/held.json" > /dev/null 2>&1 &
held_pid=$!
for _ in $(seq 1 200); do grep -q INCOMPLETE "$work/held.json" 2> /dev/null && break; sleep 0.05; done
run reports.second_run_on_a_held_report_refused 2 "another run is writing this report now" -- "$cli" verify "${quick[@]}" --json "$work/held.json"
kill "$held_pid" 2> /dev/null
{ wait "$held_pid"; } 2> /dev/null
runs=$((runs + 1))
if grep -q INCOMPLETE "$work/held.json"; then echo "ok      reports.held_report_untouched"; else broken=$((broken + 1)); echo "BROKEN  reports.held_report_untouched"; fi

# ---- reports that agree with the verdict: every FAIL reason is a failure in both reports -------
# reports_agree NAME VERDICT JSON XML NEEDLE: the JSON's verdict is VERDICT; on FAIL its "failures"
# list every reason of "why_not_pass" (NEEDLE among them) and the JUnit has one <failure> per
# failing test case, each reason's text in one; on PASS both list none.
reports_agree() {
  runs=$((runs + 1))
  local why
  why=$("$py" - "$@" <<'EOF'
import json, re, sys
name, verdict, jpath, xpath, needle = sys.argv[1:6]
try:
    j = json.load(open(jpath))
    x = open(xpath).read()
except Exception as e:
    print(f"a report is missing or unreadable: {e}"); sys.exit()
fails = re.findall(r'<failure message="([^"]*)"', x)
count = int(re.search(r'<testsuite [^>]*failures="(\d+)"', x).group(1))
whys = [f.get("why", "") for f in j.get("failures", [])]
if j.get("verdict") != verdict:
    print(f"JSON verdict {j.get('verdict')}, expected {verdict}")
elif verdict == "PASS" and (whys or fails or count or j.get("why_not_pass")):
    print("a PASS report lists failures")
elif verdict == "FAIL":
    problems = []
    if not j.get("why_not_pass"): problems.append("no why_not_pass")
    if not whys: problems.append("the JSON lists no failure")
    if count == 0 or not fails: problems.append(f"the JUnit says failures={count}")
    if count != len(fails): problems.append(f"JUnit failures={count} but {len(fails)} <failure> elements")
    for reason in j.get("why_not_pass", []):
        if reason.endswith("failing cases"): continue  # listed case by case
        if reason not in whys: problems.append(f"reason {reason!r} is not among the JSON failures")
        if not any(reason in f for f in fails): problems.append(f"reason {reason!r} is not a JUnit failure")
    if not any(needle in r for r in j.get("why_not_pass", [])): problems.append(f"no reason mentions {needle!r}")
    print("; ".join(problems))
EOF
)
  if [ -n "$why" ]; then
    broken=$((broken + 1))
    printf 'BROKEN  %s: %s\n' "$1" "$why"
  else
    printf 'ok      %s (reports agree: %s)\n' "$1" "$2"
  fi
}
vq=(--backend sim --no-invariance --no-save --no-coverage --no-recordings --mma-dir "$d/mma/h200/h200_10_targeted.mmav")
vqi=(--backend sim --no-save --no-coverage --no-recordings --mma-dir "$d/mma/h200/h200_10_targeted.mmav")
vr=(--backend sim --no-invariance --no-save --no-coverage --cases 2 --mma-dir "$d/mma/h200/h200_10_targeted.mmav" --cases-from "$work/small.case")
one_saved=(--cases-from "$work/small.case")
run verify.malformed_saved_case 1 "verdict: FAIL" -- "$cli" verify "${vq[@]}" --cases 2 --cases-from "$work/cut.case" --json "$work/r1.json" --junit "$work/r1.xml"
reports_agree reports.malformed_saved_case FAIL "$work/r1.json" "$work/r1.xml" "case file errors"
grep -q "expected 10 space-separated fields" "$work/r1.xml" || { broken=$((broken + 1)); echo "BROKEN  reports.malformed_saved_case: the JUnit does not name the bad line"; }
run verify.nothing_checked 1 "not a pass: no case ran" -- "$cli" verify "${vq[@]}" --cases 0 --no-saved --json "$work/r2.json" --junit "$work/r2.xml"
reports_agree reports.nothing_checked FAIL "$work/r2.json" "$work/r2.xml" "no case ran"
run verify.no_recorded_mma 1 "not a pass: no recorded MMA was replayed" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --cases 2 --no-recordings --mma-dir "$work/empty" "${one_saved[@]}" --json "$work/r3.json" --junit "$work/r3.xml"
reports_agree reports.no_recorded_mma FAIL "$work/r3.json" "$work/r3.xml" "no recorded MMA"
run verify.unreadable_mma 1 "is a FIFO" -- "$cli" verify --no-invariance --backend sim --no-save --no-coverage --cases 2 --no-recordings --mma-dir "$work/fifo" "${one_saved[@]}" --json "$work/r4.json" --junit "$work/r4.xml"
reports_agree reports.unreadable_mma FAIL "$work/r4.json" "$work/r4.xml" "unreadable"
run verify.recording_that_differs 1 "emulator 1 differ" -- "$cli" verify "${vr[@]}" --recordings-from "$d/examples/one_output_changed.rec" --json "$work/r5.json" --junit "$work/r5.xml"
reports_agree reports.recording_that_differs FAIL "$work/r5.json" "$work/r5.xml" "recorded cases differ from the emulator"
run verify.pass 0 "verdict: PASS" -- "$cli" verify "${vqi[@]}" "${one_saved[@]}" --cases 2 --json "$work/r6.json" --junit "$work/r6.xml"
reports_agree reports.pass PASS "$work/r6.json" "$work/r6.xml" ""

# ---- user text in messages: escaped and cut -------------------------------------------------
run quote.control_bytes_in_a_case_line 2 "unknown entry point '.*\\\\x1B\[31mred\\\\x07'" -- "$cli" replay --backend sim "case/1 w8a16_$esc m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1"
run quote.long_argument_is_cut 2 "\(cut: 100[0-9]{3} bytes\)" -- "$cli" replay --backend sim "$long"
run quote.bidi_override_in_an_entry 2 "unknown --entry 'gemv\\\\u\{202E\}batch4'" -- "$cli" verify --no-invariance --backend sim --entry "$rtl"
run quote.control_bytes_in_a_path 2 "no such file" -- "$cli" vectors "$work/$esc.mmav"
run quote.long_option_value 2 "\(cut: 100[0-9]{3} bytes\)" -- "$cli" verify --cases "$long"

# ---- what a writer writes, its readers read: refused before anything is written ---------------
printf '%s\n%s\n' "$small_case" "$small_case" > "$work/dup.case"
run record.duplicated_case_line 2 "dup.case:2: the same case as .*dup.case:1" -- \
  "$cli" record --source sim --cases "$work/dup.case" --out "$work/dup.rec"
run record.case_file_named_twice 2 "small.case:1 \\(a file named twice in --cases\\)" -- \
  "$cli" record --source sim --cases "$work/small.case" "$work/small.case" --out "$work/dup.rec"
[ -e "$work/dup.rec" ] && { broken=$((broken + 1)); echo "BROKEN  record.duplicated_case_line: it wrote $work/dup.rec"; }

# ---- an option given an empty value is a usage error naming it --------------------------------
# empty NAME OPTION COMMAND...: COMMAND with OPTION "" appended must exit 2 naming OPTION (a number's
# own validator may say so first).
empty() {
  local name=$1 opt=$2
  shift 2
  run "empty.$name" 2 "${opt}: (an empty value|'' is not a (whole|finite) number)" -- "$@" "$opt" ""
}
for o in --json --junit --module --data-dir --mma-dir --recordings-from --cases-from --entry --dist --backend --shard \
         --launch-deadline --time-budget --cases; do
  empty "verify$o" "$o" "$cli" verify --no-invariance --backend sim
done
for o in --recordings --gpu --module --backend; do empty "replay$o" "$o" "$cli" replay "$work/small.case"; done
for o in --module --backend; do empty "repro$o" "$o" "$cli" repro "$work/small.case"; done
for o in --cases --out --source --module; do empty "record$o" "$o" "$cli" record --source sim --cases "$work/small.case" --out "$work/e.rec"; done
for o in --in --out --entry --backend --module; do
  empty "run_operands$o" "$o" "$cli" run-operands --backend sim --entry gemm_pipelined --in "$work/ok.bundle" --out "$work/o.bin"
done
for o in --out --data-dir --source --instruction --seed; do empty "probe$o" "$o" "$cli" probe --source sim --out "$work/probe"; done
for o in --json --module --shapes; do empty "bench$o" "$o" "$cli" bench; done
for o in --write --check --source --from; do empty "manifest$o" "$o" "$cli" manifest; done
empty upgrade_recording--out --out "$cli" upgrade-recording "$work/v1.rec"
empty vectors--arch --arch "$cli" vectors "$d/mma/h200/h200_10_targeted.mmav"
run empty.replay_positional 2 "CASES: an empty value" -- "$cli" replay --backend sim ""
run empty.vectors_positional 2 "FILE: an empty value" -- "$cli" vectors ""
run empty.upgrade_recording_positional 2 "IN: an empty value" -- "$cli" upgrade-recording "" --out "$work/u2.rec"
run empty.json_with_equals 2 "--json: (an empty value|1 required TEXT missing)" -- "$cli" verify --json=
run empty.one_of_several 2 "--mma-dir: an empty value" -- "$cli" verify --no-invariance --backend sim --mma-dir "$d/mma" ""
run empty.json_beside_a_junit 2 "--json: an empty value" --report "$work/e1.xml" -- "$cli" verify "${quick[@]}" --junit "$work/e1.xml" --json ""

# ---- paths with escapes, newlines and invalid UTF-8: escaped in what is printed and in reports ---
nl_dir="$work/new"$'\n'"line"
bad_dir="$work/bad"$'\xff\xfe'"utf"$'\u202e'
mkdir -p "$nl_dir" "$bad_dir"
printf 'case/1 nonsense\n' > "$bad_dir/e$esc.case"
run paths.newline_in_a_missing_path 2 "new\\\\nline/missing" --report "$work/p1.json" --report "$work/p1.xml" -- \
  "$cli" verify "${quick[@]}" --cases-from "$nl_dir/missing" --json "$work/p1.json" --junit "$work/p1.xml"
run paths.invalid_utf8_in_a_case_file 1 "bad\\\\xFF\\\\xFEutf\\\\u\{202E\}/e\\\\x1B\[31mred\\\\x07.case'?:1" -- \
  "$cli" verify "${vq[@]}" --cases 1 --cases-from "$bad_dir" --json "$work/p2.json" --junit "$work/p2.xml"
run paths.report_path_in_a_missing_folder 2 "--json '.*new\\\\nline/x/r.json': the folder '.*new\\\\nline/x' does not exist" -- \
  "$cli" verify "${quick[@]}" --json "$nl_dir/x/r.json"
run paths.data_dir_with_escapes 2 "--data-dir '.*bad\\\\xFF\\\\xFEutf\\\\u\{202E\}/missing': no such folder" -- \
  "$cli" verify --no-invariance --backend sim --data-dir "$bad_dir/missing"
run paths.record_out_with_a_newline 0 "wrote 1 outputs to '.*new\\\\nline/r.rec'" -- \
  "$cli" record --source sim --cases "$work/small.case" --out "$nl_dir/r.rec"
run paths.probe_out_with_invalid_utf8 0 "wrote 11 files to '.*bad\\\\xFF\\\\xFEutf" -- \
  "$cli" probe --source sim --cases 1 --out "$bad_dir/probe"

# ---- evidence: every file verify reads is listed by a checked manifest, with a fitting provenance ---
# A copy of the data folder's evidence; each run below plants one thing in it and takes it away.
data="$work/data"
mkdir -p "$data"
for sub in mma recordings cases order; do cp -r "$d/$sub" "$data/$sub"; done
"$cli" probe --source sim --cases 1 --out "$work/simprobe" > /dev/null 2>&1
ev=(--backend sim --no-invariance --cases 0 --no-coverage --no-save --entry gemv_batch4_strided --data-dir "$data")
mkdir -p "$data/mma/notes.md"
cp -r "$work/simprobe/emulator-sm90-not-hardware" "$data/mma/notes.md/"
run evidence.folder_named_like_documentation 1 "notes.md: a folder not listed" -- "$cli" verify "${ev[@]}" --no-recordings
rm -rf "$data/mma/notes.md"
# recordings/ read as verify reads it by default, over three cases of h200.rec listed anew: the
# whole file's replay (313 cases, minutes under the sanitizers) is the committed recordings' tests'.
{ grep -v '^out \|^end ' "$d/recordings/h200.rec" | sed 's/^w8a16check-recording 2$/w8a16check-recording 1/'
  grep -m 3 '^out ' "$d/recordings/h200.rec"; } > "$work/h200_3_v1.rec"
"$cli" upgrade-recording "$work/h200_3_v1.rec" --cases 3 --out "$data/recordings/h200.rec" --overwrite > /dev/null 2>&1
"$cli" manifest --write "$data/recordings" > /dev/null 2>&1
mkdir -p "$data/recordings/old.md"
cp "$work/small.rec" "$data/recordings/old.md/sim.rec"
run evidence.recording_in_a_folder_named_like_documentation 1 "old.md: a folder not listed" -- "$cli" verify "${ev[@]}"
rm -rf "$data/recordings/old.md"
cp "$d/recordings/h200.rec" "$d/recordings/evidence-manifest.txt" "$data/recordings/"
for src in none input; do
  sed -i "s/^\(file h200_10_targeted.mmav .*\) source=hardware /\1 source=$src /" "$data/mma/h200/evidence-manifest.txt"
  run "evidence.mmav_listed_as_source_$src" 1 "h200_10_targeted.mmav: its manifest says source=$src" -- \
    "$cli" verify "${ev[@]}" --no-recordings
  sed -i "s/^\(file h200_10_targeted.mmav .*\) source=$src /\1 source=hardware /" "$data/mma/h200/evidence-manifest.txt"
done
# A version-1 recording listed whole, then cut by one case: --write refuses to re-list it.
sed 's/^w8a16check-recording 2$/w8a16check-recording 1/; /^end /d' "$d/recordings/h200.rec" > "$data/recordings/h200.rec"
sed -i "s/^file h200.rec bytes=[0-9]* sha256=[0-9a-f]* /file h200.rec bytes=$(wc -c < "$data/recordings/h200.rec") sha256=$(sha256sum "$data/recordings/h200.rec" | cut -d' ' -f1) /" \
  "$data/recordings/evidence-manifest.txt"
run evidence.manifest_write_keeps_a_whole_version_1_recording 0 "manifest: wrote" -- "$cli" manifest --write "$data/recordings"
sed -i '$d' "$data/recordings/h200.rec"
run evidence.manifest_write_refuses_a_cut_version_1_recording 2 "h200.rec: a version-1 recording .*it says 313 cases; this file holds 312" -- \
  "$cli" manifest --write "$data/recordings"
run evidence.cut_version_1_recording_fails 1 "h200.rec: holds 312 cases, its manifest says 313" -- "$cli" verify "${ev[@]}"
cp "$d/recordings/h200.rec" "$d/recordings/evidence-manifest.txt" "$data/recordings/"

# ---- a shard says it is one and judges no coverage -------------------------------------------------
sh=(--backend sim --no-invariance --quick --cases 20 --no-save --no-recordings --entry gemv_batch4_strided --mma-dir "$d/mma/h200/h200_10_targeted.mmav"
    --cases-from "$work/small.case")
run shard.says_so_and_judges_no_coverage 0 "verdict: PASS \(shard 0/4 only; coverage not judged\)" \
  --report "$work/s1.json" --report "$work/s1.xml" -- "$cli" verify "${sh[@]}" --shard 0/4 --json "$work/s1.json" --junit "$work/s1.xml"
run shard.inherited_from_gtest_says_so 0 "shard 7/300 \(a shard, from GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS" \
  --report "$work/s2.json" --report "$work/s2.xml" -- \
  env GTEST_TOTAL_SHARDS=300 GTEST_SHARD_INDEX=7 "$cli" verify "${sh[@]}" --json "$work/s2.json" --junit "$work/s2.xml"
runs=$((runs + 1))
why=$("$py" - "$work" <<'EOF'
import json, os, re, sys
work = sys.argv[1]
problems = []
for n, shard in (("s1", "0/4"), ("s2", "7/300")):
    try:
        j = json.load(open(os.path.join(work, n + ".json")))
        x = open(os.path.join(work, n + ".xml")).read()
    except Exception as e:
        problems.append(f"{n}: a report is missing or unreadable: {e}"); continue
    if j["coverage"].get("checked") is not False: problems.append(f"{n}: the JSON says coverage was checked")
    if not j["shard"].get("is_shard"): problems.append(f"{n}: the JSON does not say it is a shard")
    cov = re.search(r'classname="verify.coverage".*?</testcase>', x, re.S)
    if not cov or "<skipped" not in cov.group(0): problems.append(f"{n}: every_cell_drawn is not skipped")
    if f'<property name="shard" value="{shard}"/>' not in x: problems.append(f"{n}: the JUnit does not name the shard")
print("; ".join(problems))
EOF
)
if [ -n "$why" ]; then broken=$((broken + 1)); printf 'BROKEN  shard.reports_say_it: %s\n' "$why"; else echo "ok      shard.reports_say_it"; fi

# ---- a launch worker never outlives verify: SIGTERM while a launch hangs --------------------------
# SIGINT is LaunchFaults.ATerminatedVerifyKillsAndReapsItsHungWorker's to send: a background job of a
# non-interactive shell ignores it.
for sig in TERM HUP; do
  runs=$((runs + 1))
  W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided "$cli" verify --no-invariance --backend sim --no-save --no-coverage --no-recordings --cases 0 \
    --mma-dir "$d/mma/h200/h200_10_targeted.mmav" --cases-from "$work/small.case" --launch-deadline 600 > /dev/null 2>&1 &
  vpid=$!
  wpid=""
  for _ in $(seq 1 300); do
    wpid=$(pgrep -P "$vpid" | head -n 1)
    [ -n "$wpid" ] && break
    sleep 0.05
  done
  sleep 1.5  # the worker has taken the case and sleeps in the hung launch
  kill -s "$sig" "$vpid"
  { wait "$vpid"; } 2> /dev/null
  vrc=$?
  left=""
  for _ in $(seq 1 100); do
    { [ -z "$wpid" ] || [ ! -e "/proc/$wpid" ] || grep -q '^State:[[:space:]]*Z' "/proc/$wpid/status" 2> /dev/null; } && break
    sleep 0.05
  done
  if [ -n "$wpid" ] && [ -e "/proc/$wpid" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$wpid/status" 2> /dev/null; then
    left="the launch worker $wpid is still running"
    kill -KILL "$wpid" 2> /dev/null
  fi
  if [ -z "$wpid" ]; then
    broken=$((broken + 1)); echo "BROKEN  worker.dies_with_verify_on_SIG$sig: verify started no launch worker"
  elif [ -n "$left" ] || [ "$vrc" -ne $((128 + $(kill -l "$sig"))) ]; then
    broken=$((broken + 1)); echo "BROKEN  worker.dies_with_verify_on_SIG$sig: verify exit $vrc; $left"
  else
    echo "ok      worker.dies_with_verify_on_SIG$sig (exit $vrc)"
  fi
done

# ---- deadlines: one launch's, in range, from the environment only where a command launches ---------
run deadline.run_operands_hang_named_within_one_launchs_deadline 1 "HANG: run-operands: .*launch 1 of 5000" -- \
  env W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided "$cli" run-operands --backend sim --entry gemv_batch4_strided \
  --launch-deadline 2 --in "$work/many.bundle" --out "$work/many.out"
run deadline.longest_times_many_launches_does_not_overflow 0 "verdict: PASS" -- "$cli" run-operands --backend sim \
  --entry gemv_batch4_strided --launch-deadline 1000000 --check --in "$work/many.bundle" --out "$work/many.out"
for v in 1e-9 0.5 1e10; do
  run "deadline.out_of_range_$v" 2 "launch deadline '$v' must be a number of seconds from 1 to 1000000" -- \
    "$cli" verify --no-invariance --backend sim --cases 0 --launch-deadline "$v"
done
run deadline.bad_environment_leaves_version_alone 0 "w8a16check [0-9]" -- env W8A16_LAUNCH_DEADLINE=soon "$cli" --version
run deadline.bad_environment_fails_a_command_that_launches 2 "W8A16_LAUNCH_DEADLINE: launch deadline 'soon'" -- \
  env W8A16_LAUNCH_DEADLINE=soon "$cli" replay --backend sim "$work/small.case"

# ---- the simulation's fault injection: a symbol no plan names is an error, never a silent PASS ----
run sim_inject.unknown_symbol 2 "W8A16_SIM_INJECT: .*w8a16_no_such_kernel' is not a kernel symbol of the family" -- \
  env W8A16_SIM_INJECT=fault:w8a16_no_such_kernel "$cli" replay --backend sim "$work/small.case"

# ---- an operand bundle of the packed entry point: W packed by the launch layer, said so ------------
run run_operands.packed_entry_packs_w 0 "codes were packed by the launch layer \(NUMERICS.md 2.3\)" -- \
  "$cli" run-operands --backend sim --entry gemm_packed_strided --check --in "$work/packed.bundle" --out "$work/packed.out"

# ---- every report: a parsable JUnit, and the run that wrote it ----------------------------------
# A run whose launch hangs (the simulation's injected hang, a 2 s deadline): the INCOMPLETE report
# it leaves while it runs and the final one must carry one run id.
"$py" - "$cli" "$work" "$small_case" "$d/mma/h200/h200_10_targeted.mmav" <<'EOF' > "$work/incomplete.txt" 2>&1
import json, os, subprocess, sys, time
cli, work, case, mma = sys.argv[1:5]
path = os.path.join(work, "hang.json")
open(path, "w").write('{"verdict": "PASS"}\n')
env = dict(os.environ, W8A16_SIM_INJECT="hang:w8a16_gemv_batch4_strided")
p = subprocess.Popen([cli, "verify", "--backend", "sim", "--no-save", "--no-coverage", "--no-recordings", "--cases", "0",
                      "--mma-dir", mma, "--cases-from", os.path.join(work, "small.case"), "--launch-deadline", "2",
                      "--json", path], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seen = None
while p.poll() is None and seen is None:
    try:
        j = json.load(open(path))
        if j.get("verdict") == "INCOMPLETE": seen = j["run"]["id"]
    except (ValueError, KeyError, OSError):
        pass
    time.sleep(0.01)
p.wait(timeout=120)
final = json.load(open(path))
if seen is None: print("never saw the INCOMPLETE report")
elif final.get("run", {}).get("id") != seen: print(f"INCOMPLETE run id {seen}, final {final.get('run', {}).get('id')}")
elif final.get("verdict") == "INCOMPLETE": print("the final report still says INCOMPLETE")
EOF
runs=$((runs + 1))
if [ -s "$work/incomplete.txt" ]; then
  broken=$((broken + 1)); printf 'BROKEN  reports.incomplete_and_final_share_a_run_id: %s\n' "$(head -c 500 "$work/incomplete.txt")"
else
  echo "ok      reports.incomplete_and_final_share_a_run_id"
fi
# Two runs of one command line: each report says which run wrote it.
"$cli" verify "${vq[@]}" "${one_saved[@]}" --cases 1 --json "$work/two1.json" --junit "$work/two1.xml" > /dev/null 2>&1
"$cli" verify "${vq[@]}" "${one_saved[@]}" --cases 1 --json "$work/two2.json" --junit "$work/two2.xml" > /dev/null 2>&1
"$cli" bench --json "$work/bench.json" > /dev/null 2>&1
runs=$((runs + 1))
why=$("$py" - "$work" <<'EOF'
import glob, json, os, re, sys
import xml.etree.ElementTree as ET
work = sys.argv[1]
problems, ids = [], {}
for x in sorted(glob.glob(os.path.join(work, "*.xml"))):
    if "STALE-REPORT" in open(x, "rb").read().decode("utf-8", "replace"): continue
    try:
        props = {p.get("name"): p.get("value") for p in ET.parse(x).iter("property")}
    except ET.ParseError as e:
        problems.append(f"{os.path.basename(x)}: not XML: {e}"); continue
    if not re.fullmatch(r"[0-9a-f]{32}", props.get("run.id") or ""): problems.append(f"{os.path.basename(x)}: run.id {props.get('run.id')!r}")
    for k in ("run.started_utc", "run.host", "run.command_line", "report.schema_version"):
        if not props.get(k): problems.append(f"{os.path.basename(x)}: no {k}")
    ids[x[:-4]] = props.get("run.id")
for jp in sorted(glob.glob(os.path.join(work, "*.json"))):
    try:
        j = json.load(open(jp))
    except ValueError as e:
        problems.append(f"{os.path.basename(jp)}: not JSON: {e}"); continue
    if j.get("stale"): continue
    run = j.get("run", {})
    if not re.fullmatch(r"[0-9a-f]{32}", run.get("id", "")): problems.append(f"{os.path.basename(jp)}: run.id {run.get('id')!r}")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", run.get("started_utc", "")): problems.append(f"{os.path.basename(jp)}: started_utc {run.get('started_utc')!r}")
    if not run.get("host") or "verify" not in run.get("command_line", "") and "bench" not in run.get("command_line", ""): problems.append(f"{os.path.basename(jp)}: host or command line missing")
    if j.get("report_schema_version") != 1: problems.append(f"{os.path.basename(jp)}: report_schema_version {j.get('report_schema_version')!r}")
    if jp[:-5] in ids and ids[jp[:-5]] != run.get("id"): problems.append(f"{os.path.basename(jp)}: another run id than its JUnit")
for a, b in (("two1", "two2"),):
    ja, jb = (json.load(open(os.path.join(work, n + ".json"))) for n in (a, b))
    if ja["run"]["id"] == jb["run"]["id"]: problems.append("two runs wrote one run id")
print("; ".join(problems))
EOF
)
if [ -n "$why" ]; then broken=$((broken + 1)); printf 'BROKEN  reports.parse_and_name_their_run: %s\n' "$why"; else echo "ok      reports.parse_and_name_their_run"; fi

echo "hostile_cli: $runs runs, $broken broken"
[ "$broken" -eq 0 ]
