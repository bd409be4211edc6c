// SPDX-License-Identifier: MIT OR Apache-2.0
// verify's sanitizer stage (`verify --sanitize`): one aimed case per body and configuration cell of
// the coverage plan, replayed on the GPU under compute-sanitizer's racecheck (shared-memory
// hazards: a stage refilled before every warp's reads of it ended, partial sums read before the
// barrier that publishes them) and synccheck (barriers and warpgroup MMA sequences used wrongly).
// The tools see what the campaign's bytes cannot: on one GPU's timing an ordering bug may change no
// output bit. Each report the tools print is a finding that names its kernel, the SASS offsets and
// the case that was running (`replay --mark-cases`); a hazard on the clean module is a finding too.
// Where the tool is absent or its run gives no summary, the stage says NOT CHECKED, never a pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/properties/coverage.hpp"

namespace w8a16::props {

struct SanitizerFinding {
  std::string tool;                  // "racecheck", "synccheck", or "replay" (bytes that differed under the tool)
  std::string what;                  // the report's first line, without the tool's "=========" prefix
  std::string kernel;                // the function of its first "at F+0x..." ("" when none is named)
  std::vector<std::string> offsets;  // every SASS offset the report names ("0x90", ...)
  std::string case_line;             // the case that was running ("" when no marker came before it)
  std::string text;                  // the report's lines
};

struct SanitizerToolRun {
  std::string tool;
  bool ran = false;     // the tool ran and its summary line was read
  std::string why_not;  // when not: what went wrong, with the output's last lines
  int exit_code = -1;
  std::string summary;         // "RACECHECK SUMMARY: ..." or "ERROR SUMMARY: ..."
  std::uint64_t reported = 0;  // the hazards (errors and warnings) or errors the summary counts
  std::vector<SanitizerFinding> findings;
  double seconds = 0;
};

struct SanitizeReport {
  bool checked = false;  // every tool ran over every case and each summary was read
  std::string why_not;
  std::string sanitizer;           // the program run
  std::vector<std::string> cases;  // one case line per cell
  std::vector<std::string> cells;  // "entry / body (configuration)" per case
  std::vector<SanitizerToolRun> tools;
  double seconds = 0;
  std::size_t findings() const;
  bool pass() const { return checked && findings() == 0; }
};

// One tool's output read: every report (a line "Error:|Warning: Race reported between ...", "...
// hazard detected ...", "Barrier error detected...", "Warpgroup MMA sequence error detected..." and
// the indented lines after it) with the case line of the last `case: LINE` before it, and the
// summary ("RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)", "ERROR SUMMARY: N
// errors"). Without a summary, ran = false. A summary that counts more than the reports read adds a
// finding saying so; replay's FAIL and HANG lines (bytes that differed under the tool) are findings.
SanitizerToolRun parse_sanitizer_output(const std::string& tool, const std::string& output);

// One aimed case per (entry point, body, configuration) cell of the plan: its smallest by m*n*k.
// *cells (when given) gets each cell's name.
std::vector<golden::Case> sanitize_cases(const std::vector<AimedCase>& aimed, std::vector<std::string>* cells);

struct SanitizeOptions {
  std::string sanitizer;  // the program; "" finds compute-sanitizer (find_sanitizer)
  std::string self;       // the w8a16check that replays the cases
  std::string module;     // --module for the replay ("" for the embedded module)
  std::vector<std::string> tools{"racecheck", "synccheck"};
  double timeout_s = 600;  // per tool: past it the run is killed and the stage NOT CHECKED
  std::string work_dir;    // where the case file is written
};

// compute-sanitizer on PATH, under $CUDA_HOME/bin or /usr/local/cuda/bin, or in the toolkit's
// compute-sanitizer folders; "" with *looked saying where it looked.
std::string find_sanitizer(std::string* looked);

// Each tool over every case in one run of `self replay --backend cuda --mark-cases FILE`.
SanitizeReport run_sanitize(const std::vector<golden::Case>& cases, const std::vector<std::string>& cells,
                            const SanitizeOptions& options);

// The stage's lines for the text report: NOT CHECKED with why, or per tool its summary and each
// finding (FAIL, its kernel, offsets and case line).
std::string sanitize_text(const SanitizeReport& r);

}  // namespace w8a16::props
