// SPDX-License-Identifier: MIT OR Apache-2.0
// Report files: the registry, the INCOMPLETE placeholder, atomic writing, ERROR reports (report_files.hpp).
#include "report_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "w8a16/golden/files.hpp"
#include "w8a16/version.hpp"

namespace w8a16::cli {
namespace {

struct Registered {
  std::shared_ptr<Report> report;
  CLI::Option* option;
};

std::vector<Registered>& registry() {
  static std::vector<Registered> r;
  return r;
}

std::string& last_error() {
  static std::string e;
  return e;
}

std::string where(const Report& r, const std::string& path) { return r.command + ": " + r.option + " " + golden::shown(path); }

}  // namespace

CLI::Option* add_report_option(CLI::App* cmd, const std::string& name, const std::shared_ptr<Report>& report,
                               const std::string& description) {
  report->command = cmd->get_name();
  report->option = name;
  CLI::Option* opt = cmd->add_option(name, report->path, description);
  registry().push_back({report, opt});
  return opt;
}

void note_error(const std::string& message) { last_error() = message; }

int usage_error(const std::string& command, const std::string& message) {
  std::size_t pos = 0;
  do {
    const std::size_t eol = std::min(message.find('\n', pos), message.size());
    std::fprintf(stderr, "%s: %s\n", command.c_str(), message.substr(pos, eol - pos).c_str());
    pos = eol + 1;
  } while (pos < message.size());
  note_error(message);
  return 2;
}

std::string xml_text(const std::string& s) {
  std::string o;
  char buf[8];
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        if ((c < 0x20 && ch != '\n' && ch != '\t') || c == 0x7F) {
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          o += buf;
        } else {
          o += ch;
        }
    }
  }
  return o;
}

std::string status_report(ReportFormat format, const std::string& command, const std::string& verdict,
                          const std::string& why) {
  if (format == ReportFormat::json) {
    nlohmann::json j;
    j["verdict"] = verdict;
    j["pass"] = false;
    j["command"] = command;
    j["why_not_pass"] = {why};
    j["failures"] = nlohmann::json::array({{{"kind", verdict == "ERROR" ? "error" : verdict == "FAIL" ? "hang" : "incomplete"}, {"why", why}}});
    j["w8a16check"] = {{"version", kVersion}, {"commit", kGitCommit}};
    // dump() with replace: invalid UTF-8 in a quoted path must not make the report unwritable.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  const std::string name = verdict == "ERROR" ? "stopped_before_its_verdict" : "finished";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"w8a16check." +
         xml_text(command) + "\" tests=\"1\" failures=\"0\" errors=\"1\">\n  <properties>\n    <property "
         "name=\"w8a16check.version\" value=\"" + xml_text(kVersion) + "\"/>\n    <property name=\"w8a16check.commit\" "
         "value=\"" + xml_text(kGitCommit) + "\"/>\n    <property name=\"verdict\" value=\"" + xml_text(verdict) +
         "\"/>\n  </properties>\n  <testcase classname=\"" + xml_text(command) + ".run\" name=\"" + name +
         "\">\n    <error message=\"" + xml_text(verdict + ": " + why) + "\">" + xml_text(why) +
         "</error>\n  </testcase>\n</testsuite>\n</testsuites>\n";
}

bool begin_report(Report* report, std::string* error) {
  if (report->path.empty()) return true;
  std::string why;
  if (!golden::check_writable(report->path, &why)) {
    *error = where(*report, report->path) + ": " + why;
    return false;
  }
  struct stat st;
  if (::stat(report->path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return true;  // a device or FIFO
  char when[64] = "?";
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string text = status_report(report->format, report->command, "INCOMPLETE",
                                         "the run that writes this report started at " + std::string(when) +
                                             " (process " + std::to_string(::getpid()) +
                                             ") and has not finished: it is still running, or was stopped");
  if (!golden::write_file_atomic(report->path, text, &why)) {
    *error = where(*report, report->path) + ": " + why;
    return false;
  }
  return true;
}

bool finish_report(Report* report, const std::string& text, std::string* error) {
  report->settled = true;
  std::string why;
  if (golden::write_file_atomic(report->path, text, &why)) return true;
  *error = where(*report, report->path) + ": cannot write the report: " + why;
  return false;
}

bool settle_reports(int exit_status, const std::string& why) {
  bool ok = true;
  for (const Registered& r : registry()) {
    Report& rep = *r.report;
    if (rep.settled || r.option->count() == 0) continue;
    const std::string path = !rep.path.empty() ? rep.path : r.option->results().empty() ? "" : r.option->results().back();
    if (path.empty()) continue;
    rep.settled = true;
    const std::string reason = "w8a16check " + rep.command + " exited with status " + std::to_string(exit_status) +
                               " before its verdict" + (why.empty() ? "" : ": " + why) +
                               (last_error().empty() || last_error() == why ? "" : ": " + last_error());
    std::string error;
    if (!golden::write_file_atomic(path, status_report(rep.format, rep.command, exit_status == 1 ? "FAIL" : "ERROR", reason), &error)) {
      std::fprintf(stderr, "%s: cannot write the report: %s\n", where(rep, path).c_str(), error.c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace w8a16::cli
