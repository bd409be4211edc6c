// SPDX-License-Identifier: MIT OR Apache-2.0
#include "w8a16/properties/perturb.hpp"

#include <algorithm>
#include <chrono>

#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

constexpr std::uint64_t mix(std::uint64_t x) { return golden::splitmix64(x); }

}  // namespace

std::uint64_t perturb_timing_seed(std::uint64_t run_seed, std::uint64_t case_index, std::uint32_t j) {
  const std::uint64_t s = mix(run_seed ^ mix(case_index ^ mix(j)));
  return s == 0 ? 1 : s;
}

std::vector<golden::Case> pipelined_cases(const std::vector<golden::Case>& candidates,
                                          const device::KernelRegistry& registry, const device::DeviceLimits& limits) {
  std::vector<golden::Case> out;
  for (const golden::Case& c : candidates) {
    const device::Planned p = plan_case(c, registry, limits);
    if (!p.ok() || !device::is_wgmma_body(p.plan.body)) continue;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

PerturbResult run_perturbed(CaseLauncher& launcher, const std::vector<golden::Case>& cases,
                            const std::function<device::Status(std::uint64_t)>& set_seed, const PerturbOptions& opt,
                            const PerturbProgress& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  PerturbResult r;
  r.cases = cases.size();
  for (std::uint64_t i = 0; i < cases.size(); ++i) {
    if ((opt.time_budget_s > 0 && elapsed() >= opt.time_budget_s) ||
        (opt.max_failures > 0 && r.failures.size() >= opt.max_failures) || !launcher.usable()) {
      r.complete = false;
      break;
    }
    const golden::Case& c = cases[i];
    golden::CaseInputs in;
    std::string why;
    const std::size_t failed_before = r.failures.size();
    if (!golden::regenerate_inputs(c, &in, &why)) {
      r.failures.push_back({c, i, 0, "", 0, "inputs: " + why});
    } else {
      const std::vector<std::uint16_t> expected = expected_output(c, in);
      for (std::uint32_t j = 0; j < opt.seeds_per_case; ++j) {
        const std::uint64_t seed = perturb_timing_seed(opt.seed, i, j);
        if (const device::Status st = set_seed(seed); !st.ok()) {
          r.failures.push_back({c, i, seed, "", 0, "timing seed not set: " + st.message});
          r.complete = false;
          r.seconds = elapsed();
          return r;
        }
        const Launched got = launcher.launch(c, in);
        ++r.launches;
        const std::string body = got.planned ? device::body_name(got.plan.body) : "";
        if (!got.status.ok()) {
          r.failures.push_back({c, i, seed, body, 0, got.status.message});
          if (!launcher.usable()) break;
          continue;
        }
        const Comparison cmp = compare_output(c, expected, got.c_bits, 1);
        if (!cmp.equal())
          r.failures.push_back({c, i, seed, body, cmp.mismatches, cmp.details.empty() ? "" : cmp.details.front()});
      }
    }
    ++r.cases_run;
    if (progress) progress(c, i, r.failures.size() - failed_before);
  }
  r.seconds = elapsed();
  return r;
}

}  // namespace w8a16::props
