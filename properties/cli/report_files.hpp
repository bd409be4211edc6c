// SPDX-License-Identifier: MIT OR Apache-2.0
// The reports a subcommand writes (--json, --junit): checked before the work, written atomically,
// and never left from an earlier run looking current. Every report option is registered here, so
// that main writes an ERROR report in its place when the command line is refused or the command
// stops before its verdict.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace w8a16::cli {

enum class ReportFormat { json, junit };

struct Report {
  std::string command;  // "verify"
  std::string option;   // "--json"
  ReportFormat format = ReportFormat::json;
  std::string path;     // the option's value; empty when not asked for
  bool settled = false; // this run wrote it, or tried and said why not
};

// Adds `name` to `cmd`, storing the path in report->path, and registers the report.
CLI::Option* add_report_option(CLI::App* cmd, const std::string& name, const std::shared_ptr<Report>& report,
                               const std::string& description);

// Before the work starts: the report's path can be written (its folder exists; it is not a folder),
// and a regular file already there (an earlier run's report) is replaced at once by an INCOMPLETE
// report, so that a run that dies never leaves the old verdict in place. A device or FIFO (/dev/stdout)
// is left alone until the end. Nothing to do when the report was not asked for. False with the
// reason (naming the option and path) in *error.
bool begin_report(Report* report, std::string* error);

// Writes the final text atomically (golden/files.hpp); marks the report settled either way. False
// with the reason in *error (the caller exits 2: a report that cannot be written is an error).
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

// Text for XML attributes and character data: & < > " escaped, and characters XML 1.0 cannot hold
// (control bytes other than tab and newline) written as \xHH.
std::string xml_text(const std::string& s);

}  // namespace w8a16::cli
