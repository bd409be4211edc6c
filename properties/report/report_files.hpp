// SPDX-License-Identifier: MIT OR Apache-2.0
// The reports a subcommand writes (--json, --junit): checked before the work, written atomically,
// and never left from an earlier run looking current. Every report option is registered here, so
// that main writes an ERROR report in its place when the command line is refused or the command
// stops before its verdict.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace w8a16::cli {

enum class ReportFormat { json, junit };

// The version of what every report (JSON and JUnit) holds; raised when a field changes meaning or
// goes away, so that a reader can refuse a report it does not understand.
inline constexpr int kReportSchemaVersion = 1;

// Which run wrote a report: two runs given one --json path each replace the other's file whole
// (written by rename), and these say whose it is. One value per process, fixed at its start, so
// the INCOMPLETE placeholder, an ERROR report and the final report of one run carry the same id.
struct RunInfo {
  std::string id;            // 128 random bits, 32 lower-case hex digits
  std::string started_utc;   // ISO 8601, "2025-01-31T12:34:56.789Z"
  std::string host;          // gethostname(), escaped (golden::escaped)
  std::string command_line;  // argv, each word as golden::shown writes it, joined by spaces
};
// Called once by main before parsing; run_info() before it knows no command line.
void start_run(int argc, char** argv);
const RunInfo& run_info();
// j["run"] = {id, started_utc, host, command_line} and j["report_schema_version"].
void add_run_json(nlohmann::json* j);
// The same as JUnit <property> lines (run.id, run.started_utc, run.host, run.command_line,
// report.schema_version), each indented for <properties>.
std::string run_junit_properties();

// The line every job prints last: "verdict: PASS", "verdict: FAIL" or "verdict: SKIPPED", then what
// qualifies it in parentheses. Tests, CI logs and users match its first word, so one function
// writes it for every command.
std::string verdict_line(const char* word, const std::string& qualifier = "");

struct Report {
  std::string command;  // "verify"
  std::string option;   // "--json"
  ReportFormat format = ReportFormat::json;
  std::string path;      // the option's value; empty when not asked for
  bool settled = false;  // this run wrote it, or tried and said why not
  // The placeholder this run wrote and holds (an exclusive flock, for the run's life), by its file's
  // identity: another run that finds it held refuses to start, and this run writes its verdict only
  // over its own placeholder. -1: none held (not begun, or a device or FIFO).
  int held_fd = -1;
  unsigned long long held_dev = 0, held_ino = 0;
};

// Adds `name` to `cmd`, storing the path in report->path, and registers the report.
CLI::Option* add_report_option(CLI::App* cmd, const std::string& name, const std::shared_ptr<Report>& report,
                               const std::string& description);

// Before the work starts: the report's path can be written (its folder exists; it is not a folder),
// and a regular file already there (an earlier run's report) is replaced at once by an INCOMPLETE
// report, so that a run that dies never leaves the old verdict in place. A device or FIFO (/dev/stdout)
// is left alone until the end. Refused, writing nothing: a path that is a symbolic link (a report
// is replaced by a rename, which would replace the link rather than write where it points: name the
// file itself), a path another report of this run names too (`--json X --junit X`), and a report
// another run is writing now (it holds its placeholder). Nothing to do when the report was not asked
// for. False with the reason (naming the option and path) in *error.
bool begin_report(Report* report, std::string* error);

// Writes the final text atomically (golden/files.hpp) over this run's own placeholder, never over a
// report another run put there since; marks the report settled either way. False with the reason
// in *error (the caller exits 2: a report that cannot be written is an error).
bool finish_report(Report* report, const std::string& text, std::string* error);

// Remembers the message of a usage or input error, for the ERROR report main writes.
void note_error(const std::string& message);
// Prints a usage or input error on stderr, each of its lines as "<command>: <line>", notes it, and
// returns the exit status 2.
int usage_error(const std::string& command, const std::string& message);

// For main, after the command line was refused or the command returned: every report that was
// asked for on the command line (CLI11's raw results count when parsing failed) and that this run
// did not settle gets an ERROR report (FAIL for exit status 1: a launch hung) naming the exit status
// and the last noted error. Prints a
// line for each report it cannot write; returns false then.
bool settle_reports(int exit_status, const std::string& why);

// A JSON or JUnit report saying the run has no verdict: verdict "ERROR" (stopped) or "INCOMPLETE"
// (still running, or killed), with the reason as its one failure.
std::string status_report(ReportFormat format, const std::string& command, const std::string& verdict,
                          const std::string& why);

// Text for XML attributes and character data, well-formed XML 1.0 whatever the bytes: & < > "
// escaped; what XML 1.0 cannot hold written out instead: control bytes other than tab and newline
// and every byte of invalid UTF-8 (overlong, a surrogate, past U+10FFFF, cut short) as \xHH, the
// noncharacters U+FFFE and U+FFFF as \u{FFFE} and \u{FFFF}. Valid UTF-8 otherwise passes as it is.
std::string xml_text(const std::string& s);

}  // namespace w8a16::cli
