# SPDX-License-Identifier: MIT OR Apache-2.0
# The stage table of the README's test command (tools/setup && tools/build && tools/test), sourced
# by those three and by tools/test-packaging. Each stage appends one line to build/stage-times.tsv:
#   name <TAB> PASS|FAIL|SKIPPED <TAB> start <TAB> end (epoch seconds) <TAB> CPU seconds <TAB> note
# CPU seconds are user+sys of the stage's processes and everything they waited for. tools/test
# prints the table at its end; tools/setup and tools/build print it when they fail (the chain
# stops there). A run of the chain starts a new table: tools/setup always, tools/build unless a
# setup ended just before it, tools/test unless a build did.
stage_log=build/stage-times.tsv
# The stages of a full run, in the order the table lists them; one that never recorded a line
# shows as "not run".
stage_names=(setup build ctest pytest "packaging: install" "packaging: consumer" "packaging: pip"
             "packaging: architectures" "fuzz: build" fuzz "asan: build" "asan: tests")

# stage_chain_begin NAME: start a new table unless the last line is PREVIOUS, ended at most 60 s ago.
stage_chain_begin() {
  local previous=${1:-}
  mkdir -p build
  if [ -n "$previous" ] && [ -f "$stage_log" ]; then
    local last end
    last=$(tail -n 1 "$stage_log")
    end=$(cut -f4 <<< "$last")
    if [ "$(cut -f1 <<< "$last")" = "$previous" ] && [ -n "$end" ] &&
       [ "$(awk -v e="$end" -v n="$EPOCHREALTIME" 'BEGIN { print (n - e <= 60) }')" = 1 ]; then
      return 0
    fi
  fi
  : > "$stage_log"
  stage_busy_jiffies > build/stage-times.machine
}

# The machine's busy time so far, all cores (clock ticks): the table compares the run's own CPU
# seconds with everything the machine did meanwhile (another build beside it, say).
stage_busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat 2>/dev/null || echo 0; }

# The user+sys seconds of the children a shell waited for, from bash's `times` output on stdin.
stage_children_cpu() {
  awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] }
                 printf "%.1f", s }'
}

# stage_cpu_now: sets stage_cpu to the user+sys seconds of the children this shell waited for so
# far. `times` must run in this shell itself: a subshell ($(...), a pipe) counts from zero.
stage_cpu_now() {
  local f
  f=$(mktemp)
  times > "$f"
  stage_cpu=$(stage_children_cpu < "$f")
  rm -f "$f"
}

# stage_record NAME STATUS START END CPU [NOTE]
stage_record() {
  mkdir -p build
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}" >> "$stage_log"
}

# stage_run NAME [--skip-code N] [--note TEXT] -- COMMAND...: runs COMMAND and records it: exit 0
# PASS, exit N SKIPPED, anything else FAIL. Returns COMMAND's exit status.
stage_run() {
  local name=$1 skip_code="" note=""
  shift
  while [ "$1" != -- ]; do
    case "$1" in
      --skip-code) skip_code=$2; shift 2 ;;
      --note) note=$2; shift 2 ;;
      *) echo "stage_run: unknown option $1" >&2; return 2 ;;
    esac
  done
  shift
  local start=$EPOCHREALTIME rc=0 cpu_file status
  cpu_file=$(mktemp)
  # A subshell of its own: `times` then counts this stage's processes only.
  ( set +e; "$@"; rc=$?; times > "$cpu_file"; exit $rc ) || rc=$?
  if [ "$rc" -eq 0 ]; then status=PASS; elif [ -n "$skip_code" ] && [ "$rc" -eq "$skip_code" ]; then status=SKIPPED
  else status=FAIL; note="${note:+$note; }exit $rc"; fi
  stage_record "$name" "$status" "$start" "$EPOCHREALTIME" "$(stage_children_cpu < "$cpu_file")" "$note"
  rm -f "$cpu_file"
  return "$rc"
}

# stage_self NAME: records the calling script itself as stage NAME when it exits (an EXIT trap:
# PASS on exit 0, else FAIL), with its CPU seconds, and prints the table when it failed.
stage_self() {
  stage_self_name=$1
  stage_self_start=$EPOCHREALTIME
  trap 'stage_self_end $?' EXIT
}
stage_self_end() {
  local rc=$1
  stage_cpu_now
  stage_record "$stage_self_name" "$([ "$rc" -eq 0 ] && echo PASS || echo FAIL)" "$stage_self_start" "$EPOCHREALTIME" \
    "$stage_cpu" "${stage_self_note:-}$([ "$rc" -eq 0 ] || echo "${stage_self_note:+; }exit $rc")"
  [ "$rc" -eq 0 ] || stage_table
}

# stage_table: the table of this run's stages: wall and CPU seconds, when each started and ended
# (seconds after the first began), and the total.
stage_table() {
  [ -f "$stage_log" ] || return 0
  local machine_start
  machine_start=$(cat build/stage-times.machine 2>/dev/null || echo 0)
  awk -F'\t' -v names="$(printf '%s\n' "${stage_names[@]}")" -v busy_now="$(stage_busy_jiffies)" \
      -v busy_start="$machine_start" -v hz="$(getconf CLK_TCK)" -v now="$EPOCHREALTIME" '
    { n++; name[n] = $1; st[n] = $2; t0[n] = $3; t1[n] = $4; cpu[n] = $5; note[n] = $6; seen[$1] = 1
      if (n == 1 || $3 < first) first = $3; if ($4 > last) last = $4; total_cpu += $5; if ($2 == "FAIL") failed = 1 }
    END {
      printf "\n%-26s %-8s %7s %7s %7s %7s  %s\n", "stage", "result", "wall s", "cpu s", "from", "to", "note"
      for (i = 1; i <= n; i++)
        printf "%-26s %-8s %7.0f %7.0f %7.0f %7.0f  %s\n", name[i], st[i], t1[i] - t0[i], cpu[i], t0[i] - first, t1[i] - first, note[i]
      m = split(names, want, "\n")
      for (i = 1; i <= m; i++) if (want[i] != "" && !(want[i] in seen)) missing = missing (missing ? ", " : "") want[i]
      if (missing != "") printf "%-26s %-8s  %s\n", "(not in this run)", "-", missing
      printf "%-26s %-8s %7.0f %7.0f\n", "total", (failed ? "FAIL" : "PASS"), last - first, total_cpu
      if (busy_start > 0 && hz > 0)
        printf "machine: %.0f CPU seconds busy on all cores from the first stage to now (%.0f s), this run %.0f\n",
               (busy_now - busy_start) / hz, now - first, total_cpu
    }' "$stage_log"
  echo "load: $(uptime)"
}
