// SPDX-License-Identifier: MIT OR Apache-2.0
// The campaign: each case regenerated, launched, compared bit for bit, tallied, in order.
#include "w8a16/properties/campaign.hpp"

#include <algorithm>
#include <chrono>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_pipeline.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

enum class Ran { pass, fail, fault, hang };

// One case's result: its tally, its coverage cell and, when it fails, why.
// `contract` names a non-canonical contract the case was held to ("" for canonical).
Ran judge(const CaseWork& w, const char* launcher_name, const std::string& contract, EntryTally* t,
          CoverageTable* coverage, std::string* why, std::uint64_t* mismatched) {
  const golden::Case& c = w.c;
  ++t->cases;
  if (!w.input_error.empty()) {
    ++t->errors;
    *why = "inputs: " + w.input_error;
    return Ran::fail;
  }
  t->specials_seen |= w.specials;
  if (!w.contract_problem.empty()) {  // not launched, never compared: a failure saying why
    ++t->errors;
    *why = w.contract_problem;
    return Ran::fail;
  }
  const Launched& got = w.got;
  if (got.planned) {
    CoverageCell& cell = (*coverage)[CoverageKey{c.entry, got.plan.body, configuration_of(got.plan)}];
    ++cell.cases;
    cell.specials_seen |= w.specials;
    cell.planned_without += c.without != 0;
    cell.lone_seen |= lone_bits(c, w.lone, got.plan.body);
  }
  if (!got.status.ok()) {
    ++t->errors;
    const std::string where = got.planned ? "\n  " + launch_text(got.plan) : "";
    if (got.status.code == device::Errc::launch_timeout) {
      *why = "HANG: " + got.status.message + where;
      return Ran::hang;
    }
    if (got.status.code == device::Errc::context_lost) {
      *why = "FAULT: " + std::string(launcher_name) + ": " + got.status.message + where;
      return Ran::fault;
    }
    *why = std::string(launcher_name) + ": " + got.status.message;
    return Ran::fail;
  }
  const Comparison cmp = compare_output(c, w.expected, got.c_bits);
  t->bytes_compared += cmp.bytes_compared;
  if (cmp.equal()) return Ran::pass;
  ++t->mismatching_cases;
  t->mismatched_elements += cmp.mismatches;
  *mismatched = cmp.mismatches;
  *why = std::to_string(cmp.mismatches) + " elements differ from the emulator" +
         (contract.empty() ? "" : " under the contract " + contract);
  for (const std::string& d : cmp.details) *why += "; " + d;
  return Ran::fail;
}

// A case of this shard: which list it comes from and its index there.
struct Item {
  enum Kind { saved, aimed, drawn } kind;
  std::uint64_t index;
};

}  // namespace

CampaignResult run_campaign(device::Backend& backend, const CampaignOptions& opt,
                            const std::function<void(const CampaignProgress&)>& progress) {
  InProcessLauncher launcher(backend);
  return run_campaign(launcher, opt, progress);
}

CampaignResult run_campaign(CaseLauncher& launcher, const CampaignOptions& opt,
                            const std::function<void(const CampaignProgress&)>& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  CampaignResult r;
  const std::uint32_t count = opt.shard_count == 0 ? 1 : opt.shard_count;
  auto mine = [&](std::uint64_t i) { return i % count == opt.shard_index; };

  std::vector<Item> items;
  for (std::uint64_t i = 0; i < opt.saved.size(); ++i)
    if (mine(i)) items.push_back({Item::saved, i});
  for (std::uint64_t i = 0; i < opt.aimed.size(); ++i)
    if (mine(i)) items.push_back({Item::aimed, i});
  for (std::uint64_t i = 0; i < opt.cases; ++i)
    if (mine(i)) items.push_back({Item::drawn, i}), ++r.drawn_planned;
  CampaignProgress p;
  p.planned = items.size();

  auto case_at = [&](std::size_t j) {
    const Item& x = items[j];
    return x.kind == Item::saved   ? opt.saved[x.index]
           : x.kind == Item::aimed ? opt.aimed[x.index].c
                                   : draw_case_seeded(opt.seed, x.index, opt.draw);
  };
  auto source = [&](std::size_t j) {
    const Item& x = items[j];
    if (x.kind == Item::saved)
      return x.index < opt.saved_sources.size() ? opt.saved_sources[x.index] : "saved #" + std::to_string(x.index);
    if (x.kind == Item::aimed)
      return "aimed #" + std::to_string(x.index) + " (" + coverage_key_text(opt.aimed[x.index].target) + ")";
    return "drawn #" + std::to_string(x.index);
  };

  bool lost = false;
  PipelineSteps steps;
  steps.before = [&](std::size_t j) {
    if (opt.max_failures != 0 && r.failures.size() >= opt.max_failures) {
      r.stopped_by_failures = true;
      return false;
    }
    if (items[j].kind == Item::drawn && opt.time_budget_s > 0 && elapsed() >= opt.time_budget_s) {
      r.stopped_by_budget = true;
      return false;
    }
    if (!launcher.usable()) {
      lost = true;  // nothing can run this case or the later ones
      return false;
    }
    return true;
  };
  steps.done = [&](std::size_t j, CaseWork& w) {
    std::string why;
    std::uint64_t mismatched = 0;
    p.current = &w.c;
    const ref::Conventions& held = opt.contract.for_entry(w.c.entry);
    const Ran ran = judge(w, launcher.name(),
                          held.same_numerics(ref::canonical_conventions()) ? std::string() : held.name,
                          &r.per_entry[w.c.entry], &r.coverage, &why, &mismatched);
    const std::string from = source(j);
    if (ran != Ran::pass) r.failures.push_back({w.c, from, why, mismatched});
    if (ran == Ran::fault) ++r.faulted;
    if (ran == Ran::hang) {
      r.stopped_by_hang = true;
      r.hang = from + ": " + golden::format_case(w.c) + "\n  " + why;
    }
    (items[j].kind == Item::saved ? r.saved_run : items[j].kind == Item::aimed ? r.aimed_run : r.drawn_run) += 1;
    ++p.done;
    p.failures = r.failures.size();
    p.seconds = elapsed();
    if (progress) progress(p);
    p.current = nullptr;
    return true;
  };
  PipelineOptions po;
  po.threads = opt.threads;
  po.contract = opt.contract;
  const PipelineResult pr = run_case_pipeline(items.size(), case_at, &launcher, steps, po);
  // The cases that did not run for want of a device are counted, never coverage gaps.
  if (pr.end == PipelineEnd::hang) r.not_run_after_hang = items.size() - pr.handed;
  else if (lost) r.not_run_lost_context = items.size() - pr.handed;
  r.seconds = elapsed();
  r.worker_starts = launcher.restarts();
  return r;
}

void merge_campaign_result(CampaignResult* into, const CampaignResult& part) {
  for (const auto& [e, t] : part.per_entry) {
    EntryTally& x = into->per_entry[e];
    x.cases += t.cases;
    x.bytes_compared += t.bytes_compared;
    x.mismatching_cases += t.mismatching_cases;
    x.mismatched_elements += t.mismatched_elements;
    x.errors += t.errors;
    x.specials_seen |= t.specials_seen;
  }
  for (const auto& [k, c] : part.coverage) {
    CoverageCell& x = into->coverage[k];
    x.cases += c.cases;
    x.specials_seen |= c.specials_seen;
    x.planned_without += c.planned_without;
    x.lone_seen |= c.lone_seen;
  }
  into->saved_run += part.saved_run;
  into->aimed_run += part.aimed_run;
  into->drawn_run += part.drawn_run;
  into->drawn_planned += part.drawn_planned;
  into->stopped_by_budget = into->stopped_by_budget || part.stopped_by_budget;
  into->stopped_by_failures = into->stopped_by_failures || part.stopped_by_failures;
  into->failures.insert(into->failures.end(), part.failures.begin(), part.failures.end());
  into->seconds = std::max(into->seconds, part.seconds);
  into->faulted += part.faulted;
  into->not_run_lost_context += part.not_run_lost_context;
  into->not_run_after_hang += part.not_run_after_hang;
  into->worker_starts += part.worker_starts;
  if (part.stopped_by_hang && !into->stopped_by_hang) into->hang = part.hang;
  into->stopped_by_hang = into->stopped_by_hang || part.stopped_by_hang;
}

bool parse_shard(const std::string& text, std::uint32_t* index, std::uint32_t* count, std::string* error) {
  const std::size_t slash = text.find('/');
  auto parse = [](const std::string& s, std::uint32_t* out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = static_cast<std::uint32_t>(std::stoul(s));
    return true;
  };
  std::uint32_t i = 0, n = 0;
  if (slash == std::string::npos || !parse(text.substr(0, slash), &i) || !parse(text.substr(slash + 1), &n) || n == 0 ||
      i >= n) {
    *error = "shard '" + text + "' must be i/n with 0 <= i < n (e.g. 0/4)";
    return false;
  }
  *index = i;
  *count = n;
  return true;
}

}  // namespace w8a16::props
