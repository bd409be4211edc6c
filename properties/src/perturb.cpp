// SPDX-License-Identifier: MIT OR Apache-2.0
#include "w8a16/properties/perturb.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "w8a16/device/geometry.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_pipeline.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

constexpr std::uint64_t mix(std::uint64_t x) { return golden::splitmix64(x); }

}  // namespace

std::uint64_t perturb_timing_seed(std::uint64_t run_seed, std::uint64_t case_index, std::uint32_t j) {
  const std::uint64_t s = mix(run_seed ^ mix(case_index ^ mix(j)));
  return s == 0 ? 1 : s;
}

bool perturbed_body(device::Body b) {
  // The Hopper tier (w8a16_timing.cuh) and the cp.async rings (w8a16_sync_timing.cuh); the skinny
  // body (one copy, no ring) and the GEMV (no shared-memory stage) have no delay point.
  return b != device::Body::m32_skinny && b != device::Body::gemv_strip;
}

std::vector<golden::Case> pipelined_cases(const std::vector<golden::Case>& candidates,
                                          const device::KernelRegistry& registry, const device::DeviceLimits& limits) {
  std::vector<golden::Case> out;
  for (const golden::Case& c : candidates) {
    const device::Planned p = plan_case(c, registry, limits);
    if (!p.ok() || !perturbed_body(p.plan.body)) continue;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

namespace {

// The pipeline's launcher (case_pipeline.hpp): each case it is handed runs under every timing seed
// of its index, one launch after another, and their outputs wait for the pipeline's `done`, which
// holds them to the expected bytes the pool emulated meanwhile. The pool prepares the cases after
// it while these launches run, so the GPU does not wait on the emulator.
class SeededLaunches final : public CaseLauncher {
 public:
  SeededLaunches(CaseLauncher& inner, const TimingControl& timing, const PerturbOptions& opt)
      : CaseLauncher(inner.deadlines()), inner_(inner), timing_(timing), opt_(opt) {}
  const char* name() const override { return inner_.name(); }
  bool usable() const override { return inner_.usable(); }
  std::uint64_t restarts() const override { return inner_.restarts(); }

  struct Run {
    std::uint64_t seed = 0;
    Launched got;
    std::uint32_t stalls = 0;
  };
  std::uint64_t index = 0;  // the case's index in the run: its timing seeds
  std::vector<Run> runs;    // the case's launches, in seed order
  std::uint64_t control_seed = 0;
  std::string control_error;  // not empty: a control failed under control_seed, and no launch followed

  // The last launch: the pipeline ends the run after a hang.
  Launched launch(const golden::Case& c, const golden::CaseInputs& in) override {
    runs.clear();
    control_error.clear();
    for (std::uint32_t j = 0; j < opt_.seeds_per_case; ++j) {
      const std::uint64_t seed = perturb_timing_seed(opt_.seed, index, j);
      if (const device::Status st = timing_.set_seed(seed); !st.ok()) {
        control_seed = seed;
        control_error = "timing seed not set: " + st.message;
        break;
      }
      runs.push_back({seed, inner_.launch(c, in)});
      Run& run = runs.back();
      const device::Status& st = run.got.status;
      if (st.code == device::Errc::launch_timeout || (!st.ok() && !inner_.usable())) break;
      if (!st.ok()) continue;
      if (const device::Status taken = timing_.take_stalls(&run.stalls); !taken.ok()) {
        control_seed = seed;
        control_error = "stalled waits not read: " + taken.message;
        break;
      }
    }
    return runs.empty() ? Launched{} : runs.back().got;
  }

 private:
  CaseLauncher& inner_;
  const TimingControl& timing_;
  const PerturbOptions& opt_;
};

}  // namespace

std::string perturb_failure_text(const PerturbFailure& f) {
  char head[64];
  std::snprintf(head, sizeof head, " perturb-seed=0x%016llx", static_cast<unsigned long long>(f.timing_seed));
  std::string t = golden::format_case(f.c) + head + " (case " + std::to_string(f.case_index) + ", body " +
                  (f.body.empty() ? "-" : f.body) + "): ";
  // Waits that gave up at the perturbed module's bound (w8a16_timing.cuh), where the product
  // module would have hung.
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g s", static_cast<double>(device::kPerturbStallNs) / 1e9);
  if (f.stalls)
    t += std::to_string(f.stalls) + " waits passed their " + bound +
         " bound (a barrier phase or cross-CTA flag never reached: a deadlocked protocol) and the launch ended; ";
  if (f.mismatches) t += std::to_string(f.mismatches) + " elements differ; first: ";
  return t + f.detail;
}

PerturbResult run_perturbed(CaseLauncher& launcher, const std::vector<golden::Case>& cases, const TimingControl& timing,
                            const PerturbOptions& opt, const PerturbProgress& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  PerturbResult r;
  r.cases = cases.size();
  SeededLaunches seeded(launcher, timing, opt);
  PipelineSteps steps;
  steps.before = [&](std::size_t i) {
    if ((opt.time_budget_s > 0 && elapsed() >= opt.time_budget_s) ||
        (opt.max_failures > 0 && r.failures.size() >= opt.max_failures) || !launcher.usable())
      return false;
    seeded.index = i;
    return true;
  };
  steps.done = [&](std::size_t i, CaseWork& w) {
    // The launches the launcher holds are this case's only if it reached the launcher (a case
    // without operands or contract never does): taken, so that none is read twice.
    std::vector<SeededLaunches::Run> runs;
    std::string control_error;
    if (w.launched) {
      runs.swap(seeded.runs);
      control_error.swap(seeded.control_error);
    }
    const std::size_t failed_before = r.failures.size();
    if (!w.input_error.empty()) r.failures.push_back({w.c, i, 0, "", 0, "inputs: " + w.input_error});
    else if (!w.contract_problem.empty()) r.failures.push_back({w.c, i, 0, "", 0, w.contract_problem});
    for (const SeededLaunches::Run& run : runs) {
      ++r.launches;
      const std::string body = run.got.planned ? device::body_name(run.got.plan.body) : "";
      if (!run.got.status.ok()) {
        r.failures.push_back({w.c, i, run.seed, body, 0, run.got.status.message});
        continue;
      }
      const Comparison cmp = compare_output(w.c, w.expected, run.got.c_bits, 1);
      if (!cmp.equal() || run.stalls != 0)
        r.failures.push_back({w.c, i, run.seed, body, cmp.mismatches, cmp.details.empty() ? "" : cmp.details.front(),
                              run.stalls});
    }
    if (!control_error.empty()) {
      r.failures.push_back({w.c, i, seeded.control_seed, "", 0, control_error});
      return false;  // the run ends (incomplete): no later launch would run under its seed either
    }
    ++r.cases_run;
    if (progress) progress(w.c, i, r.failures.size() - failed_before);
    return true;
  };
  PipelineOptions po;
  po.contract = opt.contract;
  const PipelineResult pr = run_case_pipeline(
      cases.size(), [&](std::size_t i) { return cases[i]; }, &seeded, steps, po);
  r.complete = pr.end == PipelineEnd::all;  // every case handed back, none stopped, no hang
  r.seconds = elapsed();
  return r;
}

}  // namespace w8a16::props
