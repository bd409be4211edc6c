// SPDX-License-Identifier: MIT OR Apache-2.0
// The campaign loop: each case regenerated, launched, compared bit for bit, tallied.
#include "w8a16/properties/campaign.hpp"

#include <algorithm>
#include <chrono>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

enum class Ran { pass, fail, fault, hang };

// One case: its tally, its coverage cell and, when it fails, why.
Ran run_one(CaseLauncher& launcher, const golden::Case& c, EntryTally* t, CoverageTable* coverage, std::string* why,
            std::uint64_t* mismatched) {
  ++t->cases;
  golden::CaseInputs in;
  std::string error;
  if (!golden::regenerate_inputs(c, &in, &error)) {
    ++t->errors;
    *why = "inputs: " + error;
    return Ran::fail;
  }
  const std::uint32_t specials = golden::special_classes(c, in);
  t->specials_seen |= specials;
  const Launched got = launcher.launch(c, in);
  if (got.planned) {
    CoverageCell& cell = (*coverage)[CoverageKey{c.entry, got.plan.body, configuration_of(got.plan)}];
    ++cell.cases;
    cell.specials_seen |= specials;
    cell.planned_without += c.without != 0;
  }
  if (!got.status.ok()) {
    ++t->errors;
    const std::string where = got.planned ? "\n  " + launch_text(got.plan) : "";
    if (got.status.code == device::Errc::launch_timeout) {
      *why = "HANG: " + got.status.message + where;
      return Ran::hang;
    }
    if (got.status.code == device::Errc::context_lost) {
      *why = "FAULT: " + std::string(launcher.name()) + ": " + got.status.message + where;
      return Ran::fault;
    }
    *why = std::string(launcher.name()) + ": " + got.status.message;
    return Ran::fail;
  }
  const Comparison cmp = compare_output(c, expected_output(c, in), got.c_bits);
  t->bytes_compared += cmp.bytes_compared;
  if (cmp.equal()) return Ran::pass;
  ++t->mismatching_cases;
  t->mismatched_elements += cmp.mismatches;
  *mismatched = cmp.mismatches;
  *why = std::to_string(cmp.mismatches) + " elements differ from the emulator";
  for (const std::string& d : cmp.details) *why += "; " + d;
  return Ran::fail;
}

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

  CampaignProgress p;
  for (std::uint64_t i = 0; i < opt.saved.size(); ++i) p.planned += mine(i);
  for (std::uint64_t i = 0; i < opt.aimed.size(); ++i) p.planned += mine(i);
  for (std::uint64_t i = 0; i < opt.cases; ++i) r.drawn_planned += mine(i);
  p.planned += r.drawn_planned;

  // False when the case was not run: after a hang, or with the context lost for good.
  auto one = [&](const golden::Case& c, const std::string& source) {
    if (r.stopped_by_hang) {
      ++r.not_run_after_hang;
      return false;
    }
    if (!launcher.usable()) {
      ++r.not_run_lost_context;
      return false;
    }
    std::string why;
    std::uint64_t mismatched = 0;
    p.current = &c;
    const Ran ran = run_one(launcher, c, &r.per_entry[c.entry], &r.coverage, &why, &mismatched);
    if (ran != Ran::pass) r.failures.push_back({c, source, why, mismatched});
    if (ran == Ran::fault) ++r.faulted;
    if (ran == Ran::hang) {
      r.stopped_by_hang = true;
      r.hang = source + ": " + golden::format_case(c) + "\n  " + why;
    }
    ++p.done;
    p.failures = r.failures.size();
    p.seconds = elapsed();
    if (progress) progress(p);
    return true;
  };
  auto enough_failures = [&] {
    if (opt.max_failures == 0 || r.failures.size() < opt.max_failures) return false;
    r.stopped_by_failures = true;
    return true;
  };
  for (std::uint64_t i = 0; i < opt.saved.size(); ++i) {
    if (!mine(i)) continue;
    if (enough_failures()) break;
    r.saved_run += one(opt.saved[i], i < opt.saved_sources.size() ? opt.saved_sources[i] : "saved #" + std::to_string(i));
  }
  for (std::uint64_t i = 0; i < opt.aimed.size(); ++i) {
    if (!mine(i)) continue;
    if (enough_failures()) break;
    r.aimed_run += one(opt.aimed[i].c, "aimed #" + std::to_string(i) + " (" + coverage_key_text(opt.aimed[i].target) + ")");
  }
  for (std::uint64_t i = 0; i < opt.cases; ++i) {
    if (!mine(i)) continue;
    if (enough_failures()) break;
    if (opt.time_budget_s > 0 && elapsed() >= opt.time_budget_s) {
      r.stopped_by_budget = true;
      break;
    }
    if (r.stopped_by_hang || !launcher.usable()) {
      // The drawn cases left are counted, not drawn: nothing could run them.
      (r.stopped_by_hang ? r.not_run_after_hang : r.not_run_lost_context) += 1;
      continue;
    }
    r.drawn_run += one(draw_case_seeded(opt.seed, i, opt.draw), "drawn #" + std::to_string(i));
  }
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
