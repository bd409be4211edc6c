// SPDX-License-Identifier: MIT OR Apache-2.0
#include "identify_report.hpp"

#include <nlohmann/json.hpp>

#include "report_files.hpp"
#include "w8a16/golden/case.hpp"

namespace w8a16::cli {
namespace {

nlohmann::json verdict_json(const props::EntryVerdict& ev) {
  nlohmann::json e;
  e["entry"] = std::string(golden::entry_point_name(ev.entry));
  e["keeps"] = ev.common;
  e["bodies_agree"] = ev.ok();
  e["tier_break"] = ev.tier_break();
  e["unreached_cells"] = ev.unreached;
  e["confirm_ms"] = ev.confirm_ms;
  e["confirm_errors"] = ev.confirm_errors;
  nlohmann::json bodies = nlohmann::json::array();
  for (const props::BodyVerdict& bv : ev.bodies) {
    const auto& cands = bv.candidates;
    nlohmann::json b;
    b["body"] = device::body_name(bv.body);
    b["kind"] = bv.gemv ? "gemv" : "tensor-core";
    b["keeps"] = bv.keeps;
    nlohmann::json described = nlohmann::json::array();
    for (std::size_t i : bv.match.keeps) described.push_back(cands[i].description);
    b["keeps_described"] = described;
    if (!bv.error.empty()) b["error"] = bv.error;
    // Per field the values the kept candidates hold: one is determined, several are undetermined.
    nlohmann::json fields = nlohmann::json::object();
    for (const auto& [key, values] : bv.fields) fields[key] = values;
    b["fields"] = fields;
    if (!bv.gemv) {
      b["k_order_determined"] = bv.order.determined;
      if (!bv.order.why.empty()) b["k_order_note"] = bv.order.why;
    }
    b["confirm_cases"] = bv.confirm_cases;
    if (!bv.nearest_first.empty()) b["nearest_first_difference"] = bv.nearest_first;
    if (!bv.confirm_failure.empty()) b["confirm_failure"] = bv.confirm_failure;
    nlohmann::json probes = nlohmann::json::array();
    for (std::size_t i = 0; i < bv.probes.size(); ++i) {
      nlohmann::json p;
      p["case"] = golden::format_case(bv.probes[i]);
      p["data"] = i < bv.probe_data.size() ? bv.probe_data[i]
                                           : std::string(golden::distribution_name(bv.probes[i].dist));
      if (i < bv.match.elements.size()) {
        p["elements"] = bv.match.elements[i];
        p["outside_changed"] = bv.match.outside[i];
      }
      if (bv.keeps.empty() && bv.error.empty() && i < bv.match.nearest_differ.size())
        p["nearest_differ"] = bv.match.nearest_differ[i];
      probes.push_back(p);
    }
    b["probes"] = probes;
    // Groups the split search's budget left together (identify.hpp): a limit of the probes.
    nlohmann::json unsplit = nlohmann::json::array();
    for (const auto& g : bv.unsplit) {
      nlohmann::json names = nlohmann::json::array();
      for (std::size_t i : g) names.push_back(cands[i].name);
      unsplit.push_back(names);
    }
    b["unsplit"] = unsplit;
    if (bv.keeps.empty() && bv.error.empty()) {
      b["nearest"] = {{"name", cands[bv.match.nearest].name},
                      {"description", cands[bv.match.nearest].description},
                      {"differ", bv.match.nearest_total}};
    }
    bodies.push_back(b);
  }
  e["bodies"] = bodies;
  return e;
}

}  // namespace

std::string identify_json_report(const std::vector<props::EntryVerdict>& verdicts, const IdentifyReportContext& ctx) {
  nlohmann::json j;
  add_run_json(&j);
  j["command"] = "identify";
  j["backend"] = ctx.backend;
  j["seed"] = ctx.seed;
  j["verdict"] = ctx.pass ? "PASS" : "FAIL";
  j["stopped_at_hang"] = ctx.hung;
  nlohmann::json list = nlohmann::json::array();
  for (const props::EntryVerdict& ev : verdicts) list.push_back(verdict_json(ev));
  j["entries"] = list;
  return j.dump(2) + "\n";
}

}  // namespace w8a16::cli
