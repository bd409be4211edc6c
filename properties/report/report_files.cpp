// SPDX-License-Identifier: MIT OR Apache-2.0
// Report files: the registry, the INCOMPLETE placeholder, atomic writing, ERROR reports (report_files.hpp).
#include "report_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <utility>
#include <vector>

#include "exit_status.hpp"
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

std::string where(const Report& r, const std::string& path) {
  return r.command + ": " + r.option + " " + golden::shown(path);
}

RunInfo make_run_info() {
  RunInfo r;
  std::random_device rd;
  char hex[40];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  r.id = hex;
  struct timeval tv {};
  ::gettimeofday(&tv, nullptr);
  const std::time_t secs = tv.tv_sec;
  struct tm utc {};
  ::gmtime_r(&secs, &utc);
  char when[64];
  const std::size_t n = std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(when + n, sizeof when - n, ".%03dZ", static_cast<int>(tv.tv_usec / 1000));
  r.started_utc = when;
  char host[HOST_NAME_MAX + 1] = {};
  r.host = ::gethostname(host, sizeof host - 1) == 0 && host[0] ? golden::escaped(host, 255) : "unknown";
  return r;
}

RunInfo& run_info_mutable() {
  static RunInfo r = make_run_info();
  return r;
}

// A UTF-8 sequence XML 1.0 can hold, starting at s[i]: its length, or 0 when the bytes there are not
// valid UTF-8, with *cp set to U+FFFE or U+FFFF when that is why (and left alone otherwise).
std::size_t xml_char_at(const std::string& s, std::size_t i, std::uint32_t* cp) {
  std::uint32_t v = 0;
  const std::size_t len = golden::utf8_at(s, i, &v);
  if (len == 0) return 0;
  if (v == 0xFFFE || v == 0xFFFF) {
    *cp = v;  // three bytes, valid UTF-8, but not a character XML 1.0 allows
    return 0;
  }
  return len;
}

}  // namespace

void start_run(int argc, char** argv) {
  RunInfo& r = run_info_mutable();
  std::string line;
  // Each word cut at 400 bytes and at most 64 words: a report names the run, it does not archive
  // every argument of a command line of 100 kB.
  for (int i = 0; i < argc && i < 64; ++i) line += (i ? " " : "") + golden::shown(argv[i] ? argv[i] : "", 400);
  if (argc > 64) line += " ... (" + std::to_string(argc) + " words)";
  r.command_line = line;
}

const RunInfo& run_info() { return run_info_mutable(); }

void add_run_json(nlohmann::json* j) {
  const RunInfo& r = run_info();
  (*j)["report_schema_version"] = kReportSchemaVersion;
  (*j)["run"] = {{"id", r.id}, {"started_utc", r.started_utc}, {"host", r.host}, {"command_line", r.command_line}};
}

std::string verdict_line(const char* word, const std::string& qualifier) {
  return std::string("verdict: ") + word + (qualifier.empty() ? "" : " (" + qualifier + ")") + "\n";
}

std::string run_junit_properties() {
  const RunInfo& r = run_info();
  const std::pair<const char*, std::string> props[] = {{"report.schema_version", std::to_string(kReportSchemaVersion)},
                                                       {"run.id", r.id},
                                                       {"run.started_utc", r.started_utc},
                                                       {"run.host", r.host},
                                                       {"run.command_line", r.command_line}};
  std::string s;
  for (const auto& [k, v] : props)
    s += std::string("    <property name=\"") + k + "\" value=\"" + xml_text(v) + "\"/>\n";
  return s;
}

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
  char buf[16];
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      std::uint32_t cp = 0;
      const std::size_t len = xml_char_at(s, i, &cp);
      if (len != 0) {
        o.append(s, i, len);
        i += len;
      } else if (cp == 0xFFFE || cp == 0xFFFF) {
        std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
        o += buf;
        i += 3;
      } else {
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        o += buf;
        ++i;
      }
      continue;
    }
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
    ++i;
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
    if (verdict == "SKIPPED") {
      j["skipped"] = true;
      j["failures"] = nlohmann::json::array();
    } else {
      j["failures"] = nlohmann::json::array({{{"kind", verdict == "ERROR"  ? "error"
                                                       : verdict == "FAIL" ? "hang"
                                                                           : "incomplete"},
                                              {"why", why}}});
    }
    j["w8a16check"] = {{"version", kVersion}, {"commit", kGitCommit}};
    add_run_json(&j);
    // dump() with replace: invalid UTF-8 in a quoted path must not make the report unwritable.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // SKIPPED (no GPU for a GPU run, exit status 77) is a JUnit <skipped>: a CI's report shows the
  // gate as not run, never as passed or as an error of the kernels.
  const bool skipped = verdict == "SKIPPED";
  const std::string name = verdict == "ERROR" ? "stopped_before_its_verdict" : skipped ? "no_gpu" : "finished";
  const std::string outcome = skipped ? "    <skipped message=\"" + xml_text(verdict + ": " + why) + "\"/>\n"
                                      : "    <error message=\"" + xml_text(verdict + ": " + why) + "\">" +
                                            xml_text(why) + "</error>\n";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"w8a16check." + xml_text(command) +
         "\" tests=\"1\" failures=\"0\" errors=\"" + (skipped ? "0\" skipped=\"1" : "1") +
         "\">\n  <properties>\n    <property "
         "name=\"w8a16check.version\" value=\"" +
         xml_text(kVersion) +
         "\"/>\n    <property name=\"w8a16check.commit\" "
         "value=\"" +
         xml_text(kGitCommit) + "\"/>\n    <property name=\"verdict\" value=\"" + xml_text(verdict) + "\"/>\n" +
         run_junit_properties() + "  </properties>\n  <testcase classname=\"" + xml_text(command) + ".run\" name=\"" +
         name + "\">\n" + outcome + "  </testcase>\n</testsuite>\n</testsuites>\n";
}

namespace {

// The file a report path names, for telling two paths of one file apart ("" when it cannot say).
std::string same_file_key(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? "" : p.string();
}

// Whether `path` is still the file this run's placeholder was written to: "" when it is (or when no
// placeholder is held), else what happened to it.
std::string taken_by_another_run(const Report& r, const std::string& path) {
  if (r.held_fd < 0) return "";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "it was removed while this run ran";
  if (static_cast<unsigned long long>(st.st_dev) != r.held_dev ||
      static_cast<unsigned long long>(st.st_ino) != r.held_ino)
    return "another run replaced it while this run ran (two runs writing one report path): its report is left in "
           "place, not overwritten";
  return "";
}

// Why this run must not touch `path` at all, or "": a symbolic link (a rename would replace the
// link, not write where it points), or a report another run holds now (begin_report).
std::string untouchable(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return "is a symbolic link: a report replaces its file by a rename, which would replace the link rather than "
           "write where it points; name the file itself (nothing was written)";
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); fd >= 0) {
    const bool held = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) != 0 &&
                      errno == EWOULDBLOCK;
    ::close(fd);
    if (held)
      return "another run is writing this report now (it holds the file); wait for it or name another file "
             "(nothing was written)";
  }
  return "";
}

}  // namespace

bool begin_report(Report* report, std::string* error) {
  if (report->path.empty()) return true;
  std::string why = untouchable(report->path);
  struct stat st;
  if (!why.empty()) {
    report->settled = true;  // refused: no ERROR report goes there either
    *error = where(*report, report->path) + ": " + why;
    return false;
  }
  // One file, one report: a second report written over the first would leave only the last.
  const std::string key = same_file_key(report->path);
  for (const Registered& other : registry())
    if (other.report.get() != report && !other.report->path.empty() && !key.empty() &&
        same_file_key(other.report->path) == key && !(::stat(report->path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))) {
      report->settled = other.report->settled = true;  // neither is written, an ERROR report neither
      *error = where(*report, report->path) + ": " + other.report->option +
               " names the same file; each report needs a file of its own (nothing was written)";
      return false;
    }
  if (!golden::check_writable(report->path, &why)) {
    *error = where(*report, report->path) + ": " + why;
    return false;
  }
  if (::stat(report->path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return true;  // a device or FIFO
  const std::string text = status_report(report->format, report->command, "INCOMPLETE",
                                         "run " + run_info().id + ", which writes this report, started at " +
                                             run_info().started_utc + " (process " + std::to_string(::getpid()) +
                                             ") and has not finished: it is still running, or was stopped");
  if (!golden::write_file_atomic(report->path, text, &why)) {
    *error = where(*report, report->path) + ": " + why;
    return false;
  }
  // Held until this process ends (the descriptor closes with it).
  const int fd = ::open(report->path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &st) == 0) {
    report->held_fd = fd;
    report->held_dev = static_cast<unsigned long long>(st.st_dev);
    report->held_ino = static_cast<unsigned long long>(st.st_ino);
  } else if (fd >= 0) {
    ::close(fd);
    *error = where(*report, report->path) +
             ": another run began writing this report at the same moment; name another file for one of them";
    return false;
  }
  return true;
}

bool finish_report(Report* report, const std::string& text, std::string* error) {
  report->settled = true;
  std::string why = taken_by_another_run(*report, report->path);
  if (why.empty() && golden::write_file_atomic(report->path, text, &why)) return true;
  *error = where(*report, report->path) + ": cannot write the report: " + why;
  return false;
}

bool settle_reports(int exit_status, const std::string& why) {
  bool ok = true;
  for (const Registered& r : registry()) {
    Report& rep = *r.report;
    if (rep.settled || r.option->count() == 0) continue;
    const std::string path = !rep.path.empty()             ? rep.path
                             : r.option->results().empty() ? ""
                                                           : r.option->results().back();
    if (path.empty()) continue;
    rep.settled = true;
    const std::string reason = "w8a16check " + rep.command + " exited with status " + std::to_string(exit_status) +
                               " before its verdict" + (why.empty() ? "" : ": " + why) +
                               (last_error().empty() || last_error() == why ? "" : ": " + last_error());
    std::string error = rep.held_fd >= 0 ? taken_by_another_run(rep, path) : untouchable(path);
    const char* verdict = exit_status == kExitFail ? "FAIL" : exit_status == kExitNoGpu ? "SKIPPED" : "ERROR";
    if (!error.empty() ||
        !golden::write_file_atomic(path, status_report(rep.format, rep.command, verdict, reason), &error)) {
      std::fprintf(stderr, "%s: cannot write the report: %s\n", where(rep, path).c_str(), error.c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace w8a16::cli
