// SPDX-License-Identifier: MIT OR Apache-2.0
// verify's sanitizer stage (sanitize.hpp): compute-sanitizer's racecheck and synccheck over one
// case per cell, their reports read into findings.
#include "w8a16/properties/sanitize.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <unistd.h>

#include "w8a16/device/bodies.hpp"
#include "w8a16/properties/external_tool.hpp"

namespace w8a16::props {
namespace {

// The tools prefix every line of theirs with "=========" (the Compute Sanitizer guide's sample
// reports); the rest of the output is the replay's.
bool tool_line(const std::string& line, std::string* rest) {
  static const std::string prefix = "=========";
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t i = prefix.size();
  if (i < line.size() && line[i] == ' ') ++i;
  *rest = line.substr(i);
  return true;
}

bool starts_report(const std::string& s) {
  return s.find("Race reported between") != std::string::npos || s.find("hazard detected") != std::string::npos ||
         s.find("Barrier error detected") != std::string::npos ||
         s.find("Warpgroup MMA sequence error detected") != std::string::npos;
}

std::string tail_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n    " + lines[i];
  return out;
}

}  // namespace

std::size_t SanitizeReport::findings() const {
  std::size_t n = 0;
  for (const SanitizerToolRun& t : tools) n += t.findings.size();
  return n;
}

SanitizerToolRun parse_sanitizer_output(const std::string& tool, const std::string& output) {
  SanitizerToolRun r;
  r.tool = tool;
  static const std::regex at_re(R"(at (.+?)\+(0x[0-9a-fA-F]+))");
  static const std::regex race_summary(
      R"(RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\))");
  static const std::regex error_summary(R"(ERROR SUMMARY: (\d+) errors?)");
  std::string case_line;
  SanitizerFinding* open = nullptr;
  bool summary = false;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::string rest;
    if (!tool_line(line, &rest)) {
      open = nullptr;
      if (line.rfind("case: ", 0) == 0) case_line = line.substr(6);
      // replay's verdict on a case it ran under the tool: the bytes must still be the emulator's.
      if (line.rfind("FAIL ", 0) == 0 || line.rfind("HANG ", 0) == 0) {
        SanitizerFinding f;
        f.tool = "replay";
        f.what = "under " + tool + ": " + line;
        f.case_line = case_line;
        f.text = line;
        r.findings.push_back(f);
      }
      continue;
    }
    std::smatch m;
    if (std::regex_search(rest, m, race_summary)) {
      summary = true;
      r.summary = rest;
      r.reported = std::stoull(m[2]) + std::stoull(m[3]);
      open = nullptr;
      continue;
    }
    if (std::regex_search(rest, m, error_summary)) {
      summary = true;
      r.summary = rest;
      r.reported = std::stoull(m[1]);
      open = nullptr;
      continue;
    }
    if (starts_report(rest)) {
      SanitizerFinding f;
      f.tool = tool;
      f.what = rest;
      f.case_line = case_line;
      f.text = rest;
      r.findings.push_back(f);
      open = &r.findings.back();
    } else if (open && !rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) {
      open->text += "\n" + rest;
    } else {
      open = nullptr;
      continue;
    }
    for (std::sregex_iterator it(rest.begin(), rest.end(), at_re), end; it != end; ++it) {
      if (open->kernel.empty()) open->kernel = (*it)[1];
      open->offsets.push_back((*it)[2]);
    }
  }
  std::size_t reports = 0;
  for (const SanitizerFinding& f : r.findings) reports += f.tool == tool;
  if (summary && r.reported > reports) {
    SanitizerFinding f;
    f.tool = tool;
    f.what = r.summary + ": " + std::to_string(r.reported) + " counted, " + std::to_string(reports) +
             " reports read (the rest past the print limit or in a form not read)";
    f.case_line = case_line;
    r.findings.push_back(f);
  }
  r.ran = summary;
  if (!summary) r.why_not = "no summary line in " + tool + "'s output (cut short, or not its output)";
  return r;
}

std::vector<golden::Case> sanitize_cases(const std::vector<AimedCase>& aimed, std::vector<std::string>* cells) {
  std::map<std::string, const AimedCase*> best;
  std::vector<std::string> order;
  for (const AimedCase& a : aimed) {
    const std::string cell = std::string(golden::entry_point_name(a.target.entry)) + " / " +
                             device::body_name(a.target.body) + " (" + a.target.config + ")";
    auto it = best.find(cell);
    const std::uint64_t work = std::uint64_t{a.c.m} * a.c.n * a.c.k;
    if (it == best.end()) {
      best[cell] = &a;
      order.push_back(cell);
    } else if (work < std::uint64_t{it->second->c.m} * it->second->c.n * it->second->c.k) {
      it->second = &a;
    }
  }
  std::vector<golden::Case> out;
  if (cells) cells->clear();
  for (const std::string& cell : order) {
    out.push_back(best[cell]->c);
    if (cells) cells->push_back(cell);
  }
  return out;
}

std::string find_sanitizer(std::string* looked) {
  std::vector<std::string> also{"/usr/local/cuda/compute-sanitizer"};
  if (const char* home = std::getenv("CUDA_HOME")) also.push_back(std::string(home) + "/compute-sanitizer");
  return find_cuda_tool("compute-sanitizer", also, looked);
}

SanitizeReport run_sanitize(const std::vector<golden::Case>& cases, const std::vector<std::string>& cells,
                            const SanitizeOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SanitizeReport r;
  r.cells = cells;
  for (const golden::Case& c : cases) r.cases.push_back(golden::format_case(c));
  std::string looked;
  r.sanitizer = o.sanitizer.empty() ? find_sanitizer(&looked) : o.sanitizer;
  if (r.sanitizer.empty()) {
    r.why_not = looked + " (the CUDA toolkit's; --sanitizer names one)";
    return r;
  }
  if (cases.empty()) {
    r.why_not = "no case: the coverage plan holds no aimed case";
    return r;
  }
  std::error_code ec;
  const std::filesystem::path dir = o.work_dir.empty() ? std::filesystem::temp_directory_path(ec)
                                                       : std::filesystem::path(o.work_dir);
  const std::string file = (dir / ("w8a16check-sanitize-" + std::to_string(::getpid()) + ".case")).string();
  {
    std::ofstream out(file, std::ios::trunc);
    for (std::size_t i = 0; i < cases.size(); ++i)
      out << "# " << (i < cells.size() ? cells[i] : "") << "\n" << golden::format_case(cases[i]) << "\n";
    if (!out) {
      r.why_not = "cannot write the case file " + file;
      return r;
    }
  }
  r.checked = true;
  for (const std::string& tool : o.tools) {
    std::vector<std::string> argv{r.sanitizer, "--tool", tool};
    if (tool == "racecheck") argv.insert(argv.end(), {"--racecheck-report", "analysis"});
    argv.insert(argv.end(), {"--target-processes", "all", "--print-limit", "1000", o.self, "replay", "--backend",
                             "cuda", "--mark-cases"});
    if (!o.module.empty()) argv.insert(argv.end(), {"--module", o.module});
    argv.push_back(file);
    const auto t0 = Clock::now();
    const ToolRun run = run_tool(argv, o.timeout_s, true);
    SanitizerToolRun t = parse_sanitizer_output(tool, run.output);
    t.exit_code = run.exit_code;
    t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!run.started) t.ran = false, t.why_not = run.error;
    else if (run.timed_out)
      t.ran = false, t.why_not = "passed its " + std::to_string(static_cast<int>(o.timeout_s)) + " s and was killed";
    if (!t.ran && !run.output.empty()) t.why_not += "; its output ended:" + tail_lines(run.output, 6);
    r.checked = r.checked && t.ran;
    if (!t.ran) r.why_not += (r.why_not.empty() ? "" : "; ") + tool + ": " + t.why_not;
    r.tools.push_back(std::move(t));
  }
  std::filesystem::remove(file, ec);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

std::string sanitize_text(const SanitizeReport& r) {
  std::string s = "sanitize (" + std::to_string(r.cases.size()) + " cases, one per body and configuration cell" +
                  (r.sanitizer.empty() ? "" : ", " + r.sanitizer) + "): ";
  if (!r.checked && r.tools.empty()) return s + "NOT CHECKED: " + r.why_not + "\n";
  s += !r.checked          ? "NOT CHECKED: " + r.why_not
       : r.findings() == 0 ? "no finding"
                           : std::to_string(r.findings()) + " findings";
  char secs[32];
  std::snprintf(secs, sizeof secs, " (%.1f s)", r.seconds);
  s += std::string(secs) + "\n";
  for (const SanitizerToolRun& t : r.tools) {
    s += "  " + t.tool + ": " + (t.ran ? t.summary : "NOT CHECKED: " + t.why_not) + "\n";
    for (const SanitizerFinding& f : t.findings) {
      s += "  FAIL [" + f.tool + "] " + f.what;
      if (!f.kernel.empty()) s += " [kernel " + f.kernel + "]";
      if (!f.offsets.empty()) {
        s += " [SASS";
        for (const std::string& off : f.offsets) s += " " + off;
        s += "]";
      }
      s += "\n    case: " + (f.case_line.empty() ? std::string("(before the first case)") : f.case_line) + "\n";
    }
  }
  return s;
}

}  // namespace w8a16::props
