// SPDX-License-Identifier: MIT OR Apache-2.0
// verify's text, JSON and JUnit reports over one props::VerifyResult (verify_report.hpp).
#include "verify_report.hpp"

#include <cinttypes>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "report_files.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::cli {
namespace {

using props::CampaignResult;
using props::Reason;
using props::VerifyResult;

// The JUnit test cases that are not an entry point's, in order: (group, classname, name).
constexpr const char* kGroups[][3] = {
    {"evidence", "verify.evidence", "files_match_their_manifests_and_are_hardware"},
    {"recorded_mma", "verify.recorded_mma", "sm90_model_vs_hardware"},
    {"recordings", "verify.recordings", "emulator_vs_gpu_recordings"},
    {"saved_cases", "verify.saved_cases", "case_files_read_and_replayed"},
    {"campaign", "verify.campaign", "cases_ran"},
    {"coverage", "verify.coverage", "every_cell_drawn"},
    {"protocol", "verify.protocol", "pipelined_symbols_release_after_their_wgmmas_and_fence_refills"},
    {"perturb", "verify.perturb", "pipelined_cases_under_timing_seeds"},
    {"sanitize", "verify.sanitize", "one_case_per_cell_under_racecheck_and_synccheck"},
};

// A `verify --perturb` run's stages: the others did not run, and its reports say so.
bool stage_ran(const VerifyResult& v, const std::string& group) {
  if (group == "perturb") return v.perturb_run;
  return !v.perturb_run || group == "protocol";
}

int specials_count(std::uint32_t seen) {
  int n = 0;
  for (int b = 0; b < golden::kSpecialClassCount; ++b) n += static_cast<int>((seen >> b) & 1u);
  return n;
}

nlohmann::json specials_json(std::uint32_t seen, bool present) {
  nlohmann::json a = nlohmann::json::array();
  for (int b = 0; b < golden::kSpecialClassCount; ++b)
    if (((seen >> b) & 1u) == present) a.push_back(std::string(golden::special_class_name(b)));
  return a;
}

// The lone cells a table filled, by body (coverage.hpp lone_bit).
std::map<device::Body, std::uint32_t> lone_seen_by_body(const props::CoverageTable& table) {
  std::map<device::Body, std::uint32_t> seen;
  for (const auto& [k, cell] : table) seen[k.body] |= cell.lone_seen;
  return seen;
}

nlohmann::json lone_json(std::uint32_t seen) {
  nlohmann::json a = nlohmann::json::array();
  for (golden::LoneKind kind : golden::kLoneKinds)
    for (golden::LoneStep step : golden::kLoneSteps)
      if (seen & props::lone_bit(kind, step))
        a.push_back(std::string(golden::lone_kind_name(kind)) + "@" + std::string(golden::lone_step_name(step)));
  return a;
}

void print_entry_table(std::FILE* out, const CampaignResult& r) {
  std::fprintf(out, "\n%-34s %7s %16s %11s %7s  %s\n", "entry point", "cases", "bytes compared", "mismatches", "errors",
               "special classes seen");
  for (const auto& [e, t] : r.per_entry)
    std::fprintf(out, "%-34s %7" PRIu64 " %16" PRIu64 " %11" PRIu64 " %7" PRIu64 "  %s\n",
                 std::string(golden::entry_point_name(e)).c_str(), t.cases, t.bytes_compared, t.mismatching_cases,
                 t.errors, props::specials_text(t.specials_seen).c_str());
}

// The coverage table: what the cases really ran (their plans), cell by cell.
void print_coverage(std::FILE* out, const VerifyResult& v) {
  const CampaignResult& r = v.campaign;
  const props::CoverageReport& cov = v.coverage;
  if (!cov.checked) {
    std::fprintf(out, "\ncoverage: not checked (--no-coverage)\n");
    return;
  }
  if (props::cut_short(v)) {
    std::fprintf(out,
                 "\ncoverage: not judged: %" PRIu64
                 " cases did not run (%s); the cells they would have reached are "
                 "not counted as gaps\n",
                 r.not_run_after_hang + r.not_run_lost_context,
                 r.not_run_lost_context ? "the context was lost and could not be replaced" : "after a launch hung");
    return;
  }
  const std::string not_judged = props::coverage_not_judged(v);
  if (!not_judged.empty()) std::fprintf(out, "\ncoverage: %s\n", not_judged.c_str());
  std::fprintf(out, "\ncoverage (entry point x body x configuration x special class; the plan each case ran):\n");
  std::fprintf(out, "  %-34s %-18s %-34s %6s %9s %8s\n", "entry point", "body", "configuration", "cases", "specials",
               "without=");
  for (const props::CoverageRow& row : props::coverage_rows(v)) {
    const int seen = specials_count(row.cell.specials_seen);
    std::fprintf(out, "  %-34s %-18s %-34s %6" PRIu64 " %6d/%-2d %8" PRIu64 "%s\n",
                 std::string(golden::entry_point_name(row.key.entry)).c_str(), device::body_name(row.key.body),
                 row.key.config.c_str(), row.cell.cases, seen, golden::kSpecialClassCount, row.cell.planned_without,
                 row.cell.cases == 0                 ? "  EMPTY"
                 : seen < golden::kSpecialClassCount ? "  (classes missing)"
                                                     : "");
  }
  // The lone specials over long ranges, by body: kind x K-step, filled through any of its cells.
  const std::vector<props::LoneCell> lone = props::expected_lone_cells(cov.expected);
  const std::map<device::Body, std::uint32_t> lone_seen = lone_seen_by_body(r.coverage);
  std::fprintf(out,
               "\nlone specials over long ranges (body x special x K-step, the first, a middle and the last, of a "
               "range longer than the body's longest stride over K):\n");
  const std::size_t per_body = std::size(golden::kLoneKinds) * std::size(golden::kLoneSteps);
  for (std::size_t i = 0; i < lone.size(); i += per_body) {
    const auto it = lone_seen.find(lone[i].body);
    const std::uint32_t seen = it == lone_seen.end() ? 0 : it->second;
    std::string row;
    for (golden::LoneKind kind : golden::kLoneKinds) {
      row += "  " + std::string(golden::lone_kind_name(kind)) + " ";
      for (golden::LoneStep step : golden::kLoneSteps) row += (seen & props::lone_bit(kind, step)) ? "+" : "-";
    }
    std::fprintf(out, "  %-18s > %2u steps %s%s\n", device::body_name(lone[i].body),
                 device::body_info(lone[i].body).long_range().stride_steps, row.c_str(),
                 (seen & props::kAllLoneBits) == props::kAllLoneBits ? "" : "  (EMPTY cells)");
  }
  std::fprintf(out,
               "coverage: %zu cells expected, %" PRIu64 " coverage cases, %" PRIu64
               " of them planned with kernels taken away (without=: the Hopper tier, to reach the seed's bodies on an "
               "sm_90a module; the tier's other symbols, to reach each of its own; the row-tile kernel, to reach "
               "by_m's 32-row tile); %s\n",
               cov.expected.size(), cov.aimed, cov.aimed_without,
               not_judged.empty() ? (std::to_string(cov.gaps.size()) + " gaps").c_str() : "gaps not judged");
}

nlohmann::json coverage_json(const VerifyResult& v) {
  const props::CoverageReport& cov = v.coverage;
  nlohmann::json c;
  // `checked`: coverage was judged (every expected cell reached, or the gaps named); a shard, a run
  // cut short and --no-coverage never say so. `planned`: coverage cases were in the plan.
  const std::string not_judged = props::coverage_not_judged(v);
  c["checked"] = not_judged.empty();
  if (!not_judged.empty()) c["why_not_checked"] = not_judged;
  c["planned"] = cov.checked;
  c["aimed_cases"] = cov.aimed;
  c["aimed_cases_planned_without_some_kernels"] = cov.aimed_without;
  c["gaps"] = cov.gaps;
  c["cells"] = nlohmann::json::array();
  for (const props::CoverageRow& row : props::coverage_rows(v))
    c["cells"].push_back({{"entry_point", std::string(golden::entry_point_name(row.key.entry))},
                          {"body", device::body_name(row.key.body)},
                          {"configuration", row.key.config},
                          {"expected", row.expected},
                          {"cases", row.cell.cases},
                          {"planned_without_some_kernels", row.cell.planned_without},
                          {"special_classes_seen", specials_json(row.cell.specials_seen, true)},
                          {"special_classes_missing", specials_json(row.cell.specials_seen, false)},
                          {"lone_specials_seen", lone_json(row.cell.lone_seen)}});
  // The lone cells (coverage.hpp LoneCell), each filled or not, over the body's cells.
  const std::map<device::Body, std::uint32_t> lone_seen = lone_seen_by_body(v.campaign.coverage);
  c["lone_specials"] = nlohmann::json::array();
  for (const props::LoneCell& l : props::expected_lone_cells(cov.expected)) {
    const auto it = lone_seen.find(l.body);
    c["lone_specials"].push_back({{"body", device::body_name(l.body)},
                                  {"more_steps_than", device::body_info(l.body).long_range().stride_steps},
                                  {"special", std::string(golden::lone_kind_name(l.kind))},
                                  {"k_step", std::string(golden::lone_step_name(l.step))},
                                  {"filled", it != lone_seen.end() && (it->second & props::lone_bit(l.kind, l.step))}});
  }
  return c;
}

// Every reason for the verdict, then every failing case: a FAIL always lists what failed.
nlohmann::json failures_json(const VerifyResult& v, const std::vector<Reason>& reasons) {
  nlohmann::json f = nlohmann::json::array();
  for (const Reason& x : reasons)
    if (x.group != "cases") f.push_back({{"kind", x.group}, {"why", x.message}, {"details", x.details}});
  for (const props::CaseFailure& c : v.campaign.failures)
    f.push_back({{"kind", c.why.rfind("HANG", 0) == 0    ? "hang"
                          : c.why.rfind("FAULT", 0) == 0 ? "fault"
                                                         : "case"},
                 {"case", golden::format_case(c.c)},
                 {"source", c.source},
                 {"why", c.why},
                 {"mismatched_elements", c.mismatched_elements}});
  return f;
}

// The JUnit test case of one group: one <failure> (JUnit's schema) holding every reason of it.
std::string junit_group(const VerifyResult& v, const std::vector<Reason>& reasons, const char* const g[3],
                        std::size_t* failed) {
  std::string message, details;
  for (const Reason& x : reasons) {
    if (x.group != g[0]) continue;
    message += (message.empty() ? "" : "; ") + x.message;
    for (const std::string& d : x.details) details += xml_text(d) + "\n";
  }
  const std::string fails = message.empty()
                                ? ""
                                : "    <failure message=\"" + xml_text(message) + "\">" + details + "</failure>\n";
  *failed += !fails.empty();
  std::string body = std::string("  <testcase classname=\"") + g[1] + "\" name=\"" + g[2] + "\">\n" + fails;
  if (!stage_ran(v, g[0]))
    return body + "    <skipped message=\"" +
           xml_text(v.perturb_run
                        ? std::string("not run: verify --perturb runs the perturbed stage and the protocol check")
                        : std::string("not run (no --perturb)")) +
           "\"/>\n  </testcase>\n";
  if (std::string(g[0]) == "recordings" && !v.recordings_replayed && fails.empty())
    body += "    <skipped message=\"not replayed (--no-recordings)\"/>\n";
  if (std::string(g[0]) == "protocol" && fails.empty() && !v.protocol.checked)
    body += "    <skipped message=\"" +
            xml_text(v.protocol_run ? "not checked: " + v.protocol.why_not : std::string("not run: no GPU module")) +
            "\"/>\n";
  if (std::string(g[0]) == "sanitize" && fails.empty() && !v.sanitize.checked)
    body += "    <skipped message=\"" +
            xml_text(!v.sanitize_asked             ? std::string("not run (no --sanitize)")
                     : !v.sanitize_not_run.empty() ? "not run: " + v.sanitize_not_run
                                                   : "NOT CHECKED: " + v.sanitize.why_not) +
            "\"/>\n";
  if (std::string(g[0]) == "coverage" && fails.empty() && !props::coverage_not_judged(v).empty())
    body += "    <skipped message=\"" + xml_text(props::coverage_not_judged(v)) + "\"/>\n";
  return body + "  </testcase>\n";
}

// The JUnit test case of one entry point: its failing cases, and what it compared.
std::string junit_entry(const CampaignResult& r, golden::EntryPoint e, const props::EntryTally& t,
                        const std::string& backend, std::size_t* failed) {
  std::string body = "  <testcase classname=\"verify." + xml_text(backend) + "\" name=\"" +
                     std::string(golden::entry_point_name(e)) + "\">\n";
  if (t.mismatching_cases || t.errors) {
    ++*failed;
    body += "    <failure message=\"" + std::to_string(t.mismatching_cases) + " mismatching cases, " +
            std::to_string(t.errors) + " errors\">";
    for (const props::CaseFailure& f : r.failures)
      if (f.c.entry == e) body += xml_text(f.source + ": " + golden::format_case(f.c) + "\n  " + f.why) + "\n";
    body += "</failure>\n";
  }
  return body + "    <system-out>cases " + std::to_string(t.cases) + ", bytes compared " +
         std::to_string(t.bytes_compared) + ", special classes " + xml_text(props::specials_text(t.specials_seen)) +
         "</system-out>\n  </testcase>\n";
}

// What the kernels were held to (NUMERICS.md 2.4): the short form reports print, whether it is the
// canonical numerics, and each value's name and text form (the file a reader can pass back with
// --contract), for every entry point and for each one overridden.
nlohmann::json contract_json(const props::ContractChoice& choice) {
  auto value = [](const ref::Conventions& c) {
    return nlohmann::json{{"name", c.name}, {"text", ref::format_conventions(c)}};
  };
  nlohmann::json j{{"name", choice.describe()}, {"canonical", choice.is_canonical()}, {"all", value(choice.all)}};
  j["entry_points"] = nlohmann::json::object();
  for (const auto& [e, c] : choice.per_entry) {
    nlohmann::json x = value(c);
    x["describe"] = choice.describe_for(e);
    j["entry_points"][std::string(golden::entry_point_name(e))] = x;
  }
  return j;
}

// The same as JUnit <property> lines: contract (the short form), then contract.<entry> for each
// overridden entry point (its describe_for line).
std::string contract_junit_properties(const props::ContractChoice& choice) {
  std::string s = "    <property name=\"contract\" value=\"" + xml_text(choice.describe()) + "\"/>\n";
  s += "    <property name=\"contract.tc\" value=\"" + xml_text(ref::describe(choice.all.tc)) + "\"/>\n";
  s += "    <property name=\"contract.gemv\" value=\"" + xml_text(ref::describe(choice.all.gemv)) + "\"/>\n";
  for (const auto& [e, c] : choice.per_entry)
    s += "    <property name=\"contract." + std::string(golden::entry_point_name(e)) + "\" value=\"" +
         xml_text(choice.describe_for(e)) + "\"/>\n";
  return s;
}

// The invariance rows (verify.hpp invariance): per entry point its batch and tier verdicts at the
// dispatch edges. What each row says: PASS with the count compared, or FAIL with the first failure.
constexpr props::InvarianceKind kInvarianceRows[] = {props::InvarianceKind::batch, props::InvarianceKind::tier};

std::string hex4(std::uint16_t bits) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", bits);
  return b;
}

std::string invariance_row_text(const props::InvarianceVerdict& iv) {
  if (!iv.applicable()) return "n/a (one body and no twin entry point: nothing to compare)";
  if (iv.failures == 0)
    return iv.comparisons ? "PASS (" + std::to_string(iv.comparisons) + " compared)" : "FAIL (compared nothing)";
  const props::InvarianceFailure& f = iv.first;
  return "FAIL at M=" + std::to_string(f.m) + " " + f.position +
         (f.error.empty() ? " row " + std::to_string(f.row) + " column " + std::to_string(f.column) + ": got 0x" +
                                hex4(f.got) + ", want 0x" + hex4(f.want) + " (" + f.against + ")"
                          : ": " + f.error);
}

void print_invariance(std::FILE* out, const VerifyResult& v) {
  if (!v.invariance_run) {
    std::fprintf(out, "invariance at the dispatch edges: not run (%s)\n",
                 v.invariance_not_asked   ? "--no-invariance"
                 : v.shard_index != 0     ? "shard 0 runs it"
                 : v.campaign.faulted > 0 ? "a kernel faulted in the campaign"
                                          : "the run was cut short");
    return;
  }
  for (const props::ShapeInvariance& s : v.invariance.shapes) {
    std::fprintf(
        out,
        "invariance at the dispatch edges (N=%u K=%u, needles fold_ties, cancelling_steps and pair_order; %.1f s):\n",
        s.shape.n, s.shape.k, v.invariance_seconds);
    for (const props::EntryInvariance& e : s.entries) {
      std::string edges;
      for (std::uint32_t x : e.edges_crossed) edges += (edges.empty() ? "" : ",") + std::to_string(x);
      std::fprintf(out, "  %-34s edges %s\n", std::string(golden::entry_point_name(e.entry)).c_str(),
                   edges.empty() ? "none" : edges.c_str());
      for (props::InvarianceKind k : kInvarianceRows)
        std::fprintf(out, "    %-6s %s\n", props::invariance_kind_name(k),
                     invariance_row_text(e.verdicts[static_cast<int>(k)]).c_str());
    }
  }
  if (v.invariance.hung) std::fprintf(out, "  HANG: %s\n", v.invariance.hang.c_str());
}

nlohmann::json invariance_json(const VerifyResult& v) {
  nlohmann::json j;
  j["run"] = v.invariance_run;
  j["asked"] = !v.invariance_not_asked;
  j["seconds"] = v.invariance_seconds;
  j["hung"] = v.invariance.hung;
  nlohmann::json rows = nlohmann::json::array();
  for (const props::ShapeInvariance& s : v.invariance.shapes)
    for (const props::EntryInvariance& e : s.entries)
      for (props::InvarianceKind k : kInvarianceRows) {
        const props::InvarianceVerdict& iv = e.verdicts[static_cast<int>(k)];
        nlohmann::json row;
        row["entry"] = std::string(golden::entry_point_name(e.entry));
        row["verdict_kind"] = props::invariance_kind_name(k);
        row["n"] = s.shape.n;
        row["k"] = s.shape.k;
        row["ms"] = e.ms;
        row["edges_crossed"] = e.edges_crossed;
        row["compared"] = iv.comparisons;
        row["verdict"] = !iv.applicable() ? "N/A" : iv.pass() ? "PASS" : "FAIL";
        row["text"] = invariance_row_text(iv);
        if (iv.has_failure)
          row["first_failure"] = {{"m", iv.first.m},
                                  {"position", iv.first.position},
                                  {"row", iv.first.row},
                                  {"column", iv.first.column},
                                  {"got", iv.first.got},
                                  {"want", iv.first.want},
                                  {"against", iv.first.against},
                                  {"error", iv.first.error},
                                  {"call", iv.first.what},
                                  {"replay", iv.first.replay}};
        rows.push_back(row);
      }
  j["rows"] = rows;
  return j;
}

// One JUnit test case per entry point and verdict: verify.invariance.<verdict> / <entry point>.
std::string junit_invariance(const VerifyResult& v, std::size_t* tests, std::size_t* failed) {
  if (!v.invariance_run) return "";
  std::string body;
  bool first = true;
  for (const props::ShapeInvariance& s : v.invariance.shapes)
    for (const props::EntryInvariance& e : s.entries)
      for (props::InvarianceKind k : kInvarianceRows) {
        const props::InvarianceVerdict& iv = e.verdicts[static_cast<int>(k)];
        ++*tests;
        body += std::string("  <testcase classname=\"verify.invariance.") + props::invariance_kind_name(k) +
                "\" name=\"" + std::string(golden::entry_point_name(e.entry)) + "\">\n";
        std::string why = iv.pass() ? "" : invariance_row_text(iv);
        const bool skipped = !iv.applicable() && why.empty();
        if (first && k == props::InvarianceKind::batch && v.invariance.hung)
          why += (why.empty() ? "" : "; ") + std::string("a launch hung: ") + v.invariance.hang;
        first = first && k != props::InvarianceKind::batch;
        if (!why.empty()) {
          ++*failed;
          body += "    <failure message=\"" + xml_text(why) + "\">" + xml_text(iv.first.what + "\n" + iv.first.replay) +
                  "</failure>\n";
        }
        if (skipped) body += "    <skipped message=\"" + xml_text(invariance_row_text(iv)) + "\"/>\n";
        body += "    <system-out>" + std::to_string(iv.comparisons) + " rows compared at M " +
                std::to_string(e.ms.size()) + " values</system-out>\n  </testcase>\n";
      }
  return body;
}

// verify --perturb's stage: the run's seed, the cases and launches, and every failing launch with
// its timing seed (the same --perturb seed and flags replay it).
nlohmann::json perturb_json(const VerifyResult& v) {
  const props::PerturbResult& p = v.perturb;
  nlohmann::json j{{"run", v.perturb_run},   {"seed", v.perturb_seed},   {"seeds_per_case", v.perturb_seeds_per_case},
                   {"cases", p.cases},       {"cases_run", p.cases_run}, {"launches", p.launches},
                   {"complete", p.complete}, {"seconds", p.seconds},     {"failures", nlohmann::json::array()}};
  for (const props::PerturbFailure& f : p.failures)
    j["failures"].push_back({{"case", golden::format_case(f.c)},
                             {"perturb_seed", f.timing_seed},
                             {"case_index", f.case_index},
                             {"body", f.body},
                             {"mismatched_elements", f.mismatches},
                             {"stalls", f.stalls},
                             {"why", props::perturb_failure_text(f)}});
  return j;
}

// verify --sanitize's stage: whether it ran (or why not), the tool, the cases, and per tool its
// summary and every finding with its kernel, SASS offsets and case line.
nlohmann::json sanitize_json(const VerifyResult& v) {
  const props::SanitizeReport& r = v.sanitize;
  nlohmann::json j{{"asked", v.sanitize_asked},
                   {"run", v.sanitize_run},
                   {"why_not_run", v.sanitize_not_run},
                   {"checked", r.checked},
                   {"why_not_checked", r.why_not},
                   {"sanitizer", r.sanitizer},
                   {"cases", r.cases},
                   {"cells", r.cells},
                   {"seconds", r.seconds},
                   {"tools", nlohmann::json::array()}};
  for (const props::SanitizerToolRun& t : r.tools) {
    nlohmann::json tj{{"tool", t.tool},         {"ran", t.ran},
                      {"why_not", t.why_not},   {"summary", t.summary},
                      {"reported", t.reported}, {"exit_code", t.exit_code},
                      {"seconds", t.seconds},   {"findings", nlohmann::json::array()}};
    for (const props::SanitizerFinding& f : t.findings)
      tj["findings"].push_back({{"tool", f.tool},
                                {"what", f.what},
                                {"kernel", f.kernel},
                                {"sass_offsets", f.offsets},
                                {"case", f.case_line},
                                {"text", f.text}});
    j["tools"].push_back(tj);
  }
  return j;
}

// One JUnit test case per failing launch of verify --perturb, its timing seed a property.
std::string junit_perturb(const VerifyResult& v, std::size_t* tests, std::size_t* failed) {
  std::string body;
  for (const props::PerturbFailure& f : v.perturb.failures) {
    char seed[24];
    std::snprintf(seed, sizeof seed, "0x%016llx", static_cast<unsigned long long>(f.timing_seed));
    ++*tests, ++*failed;
    body += "  <testcase classname=\"verify.perturb.launch\" name=\"" + xml_text(golden::format_case(f.c)) +
            " perturb-seed=" + seed + "\">\n    <properties>\n      <property name=\"perturb_seed\" value=\"" + seed +
            "\"/>\n      <property name=\"run_seed\" value=\"" + std::to_string(v.perturb_seed) +
            "\"/>\n      <property name=\"body\" value=\"" + xml_text(f.body) + "\"/>\n    </properties>\n" +
            "    <failure message=\"" + xml_text(props::perturb_failure_text(f)) + "\"/>\n  </testcase>\n";
  }
  return body;
}

}  // namespace

void print_verify_summary(std::FILE* out, const VerifyResult& v) {
  const CampaignResult& r = v.campaign;
  print_entry_table(out, r);
  print_coverage(out, v);
  print_invariance(out, v);
  if (v.sanitize_asked && !v.sanitize_run) std::fprintf(out, "sanitize: not run: %s\n", v.sanitize_not_run.c_str());
  else if (v.sanitize_run) std::fputs(props::sanitize_text(v.sanitize).c_str(), out);
  std::fprintf(out, "%" PRIu64 " saved, %" PRIu64 " coverage and %" PRIu64 " of %" PRIu64 " drawn cases in %.1fs%s%s\n",
               r.saved_run, r.aimed_run, r.drawn_run, r.drawn_planned, r.seconds,
               r.stopped_by_budget ? " (stopped by --time-budget)" : "",
               r.stopped_by_failures ? " (stopped by --max-failures)" : "");
  const bool hung = r.stopped_by_hang || !v.recordings.hang.empty();
  std::fprintf(out,
               "launches: %" PRIu64 " faulted (each its case's failure), %" PRIu64
               " not run after a lost context, "
               "%s; %" PRIu64 " worker processes\n",
               r.faulted, r.not_run_lost_context,
               hung ? ("a HANG, " + std::to_string(r.not_run_after_hang) + " not run after it").c_str() : "no hang",
               r.worker_starts);
  std::fprintf(out, "time: evidence %.1f s, recorded MMAs %.1f s, recordings %.1f s, cases %.1f s; %.1f s in all\n",
               v.times.evidence, v.times.recorded_mma, v.times.recordings, v.times.cases, v.times.total);
}

std::string verify_json_report(const VerifyResult& v, const VerifyReportContext& ctx) {
  const CampaignResult& r = v.campaign;
  const std::vector<Reason> reasons = props::verdict_reasons(v);
  nlohmann::json j;
  j["verdict"] = reasons.empty() ? "PASS" : "FAIL";
  j["why_not_pass"] = nlohmann::json::array();
  for (const Reason& x : reasons) j["why_not_pass"].push_back(x.message);
  add_identity_json(&j, ctx.identity);
  j["data_dir"] = ctx.data_dir;
  j["backend"] = ctx.backend;
  j["contract"] = contract_json(ctx.contract);
  j["seed"] = v.seed;
  j["shard"] = {{"index", v.shard_index},
                {"count", v.shard_count},
                {"is_shard", v.shard_count != 1},
                {"from", v.shard_from.empty() ? "-" : v.shard_from}};
  j["seconds"] = r.seconds;
  j["mode"] = v.quick ? "quick" : "full";
  j["stage_seconds"] = {{"evidence", v.times.evidence},       {"recorded_mma", v.times.recorded_mma},
                        {"recordings", v.times.recordings},   {"cases", v.times.cases},
                        {"invariance", v.invariance_seconds}, {"total", v.times.total}};
  j["evidence"] = {{"folders", v.evidence.folders},        {"manifests", v.evidence.manifests},
                   {"files_checked", v.evidence.files},    {"problems", v.evidence.failures},
                   {"not_hardware", v.evidence.simulated}, {"notes", v.evidence.notes}};
  j["recorded_mma"] = {{"files", v.mma.files},
                       {"dot_products", v.mma.dots},
                       {"mismatches", v.mma.mismatches},
                       {"unreadable", v.mma.unreadable}};
  const props::RecordingsResult& rec = v.recordings;
  j["recordings"] = {{"replayed", v.recordings_replayed},
                     {"files", rec.files},
                     {"cases", rec.cases},
                     {"emulator_differ", rec.emulator_differ},
                     {"device_differ", rec.device_differ},
                     {"notes", rec.notes}};
  j["cases"] = {{"saved_run", r.saved_run},
                {"aimed_run", r.aimed_run},
                {"drawn_run", r.drawn_run},
                {"drawn_planned", r.drawn_planned},
                {"stopped_by_time_budget", r.stopped_by_budget},
                {"stopped_by_max_failures", r.stopped_by_failures},
                {"case_file_errors", v.case_file_errors}};
  j["coverage"] = coverage_json(v);
  j["protocol"] = {{"run", v.protocol_run},
                   {"checked", v.protocol.checked},
                   {"why_not_checked", v.protocol.why_not},
                   {"tool", v.protocol.tool},
                   {"kernels", v.protocol.kernels},
                   // the phase rule reads only the first waits whose parity is built from constants
                   {"first_waits", v.protocol.first_waits},
                   {"first_waits_read", v.protocol.first_waits_read},
                   {"findings", nlohmann::json::array()}};
  for (const props::ProtocolFinding& f : v.protocol.findings)
    j["protocol"]["findings"].push_back({{"kernel", f.kernel}, {"rule", f.rule}, {"what", f.what}});
  j["invariance"] = invariance_json(v);
  j["perturb"] = perturb_json(v);
  j["sanitize"] = sanitize_json(v);
  if (v.perturb_run) j["mode"] = v.quick ? "perturb, quick" : "perturb";
  j["launches"] = {{"faulted", r.faulted},
                   {"not_run_lost_context", r.not_run_lost_context},
                   {"hang", !rec.hang.empty() ? rec.hang : r.hang},
                   {"not_run_after_hang", r.not_run_after_hang},
                   {"worker_processes", r.worker_starts}};
  j["entry_points"] = nlohmann::json::object();
  for (const auto& [e, t] : r.per_entry)
    j["entry_points"][std::string(golden::entry_point_name(e))] = {
        {"cases", t.cases},
        {"bytes_compared", t.bytes_compared},
        {"mismatching_cases", t.mismatching_cases},
        {"mismatched_elements", t.mismatched_elements},
        {"errors", t.errors},
        {"special_classes_seen", specials_json(t.specials_seen, true)}};
  j["failures"] = failures_json(v, reasons);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {
// identity_junit_properties' block with the contract's and the shard's properties added before its
// end: a shard's JUnit says it is one.
std::string with_contract(const std::string& properties, const props::ContractChoice& choice, const VerifyResult& v) {
  const std::string end = "  </properties>\n";
  const std::size_t at = properties.rfind(end);
  if (at == std::string::npos) return properties;
  std::string shard = "    <property name=\"shard\" value=\"" + std::to_string(v.shard_index) + "/" +
                      std::to_string(v.shard_count) + "\"/>\n";
  if (!v.shard_from.empty()) shard += "    <property name=\"shard.from\" value=\"" + xml_text(v.shard_from) + "\"/>\n";
  return properties.substr(0, at) + contract_junit_properties(choice) + shard + properties.substr(at);
}
}  // namespace

std::string verify_junit_report(const VerifyResult& v, const VerifyReportContext& ctx) {
  const CampaignResult& r = v.campaign;
  const std::vector<Reason> reasons = props::verdict_reasons(v);
  std::size_t failed = 0;
  std::string body;
  for (const auto& g : kGroups) body += junit_group(v, reasons, g, &failed);
  for (const auto& [e, t] : r.per_entry) body += junit_entry(r, e, t, ctx.backend, &failed);
  std::size_t more_tests = 0;  // the invariance rows' and the failing perturbed launches'
  body += junit_invariance(v, &more_tests, &failed);
  body += junit_perturb(v, &more_tests, &failed);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", v.perturb_run ? v.perturb.seconds : r.seconds);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"w8a16check.verify\" tests=\"" +
         std::to_string(std::size(kGroups) + r.per_entry.size() + more_tests) + "\" failures=\"" +
         std::to_string(failed) + "\" time=\"" + seconds + "\">\n" +
         with_contract(identity_junit_properties(ctx.identity), ctx.contract, v) + body +
         "</testsuite>\n</testsuites>\n";
}

}  // namespace w8a16::cli
