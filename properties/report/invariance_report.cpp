// SPDX-License-Identifier: MIT OR Apache-2.0
#include "invariance_report.hpp"

#include <nlohmann/json.hpp>

#include "report_files.hpp"
#include "w8a16/golden/case.hpp"

namespace w8a16::cli {
namespace {

nlohmann::json failure_json(const props::InvarianceFailure& f) {
  nlohmann::json j;
  j["m"] = f.m;
  j["position"] = f.position;
  j["call"] = f.what;
  if (!f.error.empty()) {
    j["error"] = f.error;
  } else {
    j["row"] = f.row;
    j["column"] = f.column;
    j["got"] = f.got;
    j["want"] = f.want;
    j["against"] = f.against;
  }
  j["replay_kind"] = f.replay_kind;
  j["replay"] = f.replay;
  return j;
}

nlohmann::json entry_json(const props::EntryInvariance& e) {
  nlohmann::json j;
  j["entry"] = std::string(golden::entry_point_name(e.entry));
  j["ms"] = e.ms;
  nlohmann::json spans = nlohmann::json::array();
  for (const props::DispatchSpan& s : e.map.spans)
    spans.push_back({{"first", s.first}, {"last", s.last}, {"body", s.label}});
  j["dispatch"] = spans;
  nlohmann::json forced = nlohmann::json::array();
  for (const props::DispatchSpan& s : e.map.forced_spans)
    forced.push_back({{"first", s.first}, {"last", s.last}, {"bodies", s.label}});
  j["forced_bodies"] = forced;
  j["edges"] = e.map.edges;
  j["forced_edges"] = e.map.forced_edges;
  j["edges_crossed"] = e.edges_crossed;
  nlohmann::json verdicts = nlohmann::json::object();
  for (const props::InvarianceVerdict& v : e.verdicts) {
    nlohmann::json vj;
    vj["verdict"] = !v.asked ? "NOT ASKED" : !v.applicable() ? "N/A" : v.pass() ? "PASS" : "FAIL";
    vj["compared"] = v.comparisons;
    vj["failures"] = v.failures;
    vj["failing_ms"] = v.failing_ms;
    if (v.has_failure) vj["first_failure"] = failure_json(v.first);
    verdicts[props::invariance_kind_name(v.kind)] = vj;
  }
  j["verdicts"] = verdicts;
  return j;
}

}  // namespace

std::string invariance_json_report(const props::InvarianceReport& report, const props::InvarianceOptions& opt,
                                   const std::string& backend) {
  const bool pass = report.pass();
  nlohmann::json j;
  add_run_json(&j);
  j["command"] = "invariance";
  j["backend"] = backend;
  j["seed"] = opt.seed;
  j["contract"] = opt.contract.describe();
  j["verdict"] = pass ? "PASS" : "FAIL";
  j["launches"] = report.launches;
  j["run_to_run"] = report.run_to_run_how;
  j["hung"] = report.hung;
  if (!report.hang.empty()) j["stopped"] = report.hang;
  nlohmann::json needles = nlohmann::json::array();
  for (golden::Distribution d : opt.needles) needles.push_back(std::string(golden::distribution_name(d)));
  j["needles"] = needles;
  nlohmann::json kinds = nlohmann::json::object();
  for (props::InvarianceKind k : props::kAllInvarianceKinds)
    kinds[props::invariance_kind_name(k)] = !opt.asked(k) ? "NOT ASKED" : report.pass(k) ? "PASS" : "FAIL";
  j["verdicts"] = kinds;
  nlohmann::json shapes = nlohmann::json::array();
  for (const props::ShapeInvariance& s : report.shapes) {
    nlohmann::json sj;
    sj["n"] = s.shape.n;
    sj["k"] = s.shape.k;
    nlohmann::json list = nlohmann::json::array();
    for (const props::EntryInvariance& e : s.entries) list.push_back(entry_json(e));
    sj["entries"] = list;
    shapes.push_back(sj);
  }
  j["shapes"] = shapes;
  return j.dump(2) + "\n";
}

}  // namespace w8a16::cli
