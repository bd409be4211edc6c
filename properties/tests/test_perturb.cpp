// SPDX-License-Identifier: MIT OR Apache-2.0
// The perturbed campaign's rules (properties/perturb.hpp), on the simulation: which cases it runs,
// the timing seeds it draws, and that a launch that differs under one seed fails naming that seed.
// What the perturbed module does on a GPU is the GPU runs' (docs/JOURNAL.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "w8a16/device/plan.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/perturb.hpp"

namespace {

using w8a16::golden::Case;
using w8a16::golden::EntryPoint;
namespace device = w8a16::device;
namespace props = w8a16::props;

std::vector<Case> coverage_cases(const device::Backend& b) {
  std::vector<Case> out;
  for (const props::AimedCase& x :
       props::coverage_plan(b.registry(), b.limits(),
                            {std::begin(w8a16::golden::kAllEntryPoints), std::end(w8a16::golden::kAllEntryPoints)},
                            {w8a16::golden::Distribution::every_special}, 5, nullptr))
    out.push_back(x.c);
  return out;
}

// A launcher that runs each case on the simulation and, while the seed last set is `bad_seed`,
// hands back C with one bit of one output flipped: a kernel whose bytes depend on the timing.
class SeedSensitiveLauncher final : public props::CaseLauncher {
 public:
  explicit SeedSensitiveLauncher(device::Backend& b) : CaseLauncher({}), inner_(b) {}
  const char* name() const override { return "simulation"; }
  props::Launched launch(const Case& c, const w8a16::golden::CaseInputs& in) override {
    props::Launched l = inner_.launch(c, in);
    if (seed == bad_seed && !l.c_bits.empty()) l.c_bits[0] ^= 1u;
    return l;
  }
  std::uint64_t seed = 0, bad_seed = 0;

 private:
  props::InProcessLauncher inner_;
};

// The controls of a module whose waits never give up, recording each seed set into the launcher.
props::TimingControl recording_seeds(SeedSensitiveLauncher& launcher, std::vector<std::uint64_t>& set) {
  return {[&](std::uint64_t s) {
            launcher.seed = s;
            set.push_back(s);
            return device::Status::success();
          },
          [](std::uint32_t* stalls) {
            *stalls = 0;
            return device::Status::success();
          }};
}

// The first two coverage cases whose plans run a body the perturbed module delays.
std::vector<Case> two_pipelined_cases(const device::SimBackend& sim) {
  const std::vector<Case> cases = props::pipelined_cases(coverage_cases(sim), sim.registry(), sim.limits());
  EXPECT_GE(cases.size(), 2u);
  return {cases.begin(), cases.begin() + std::min<std::size_t>(2, cases.size())};
}

TEST(Perturb, RunsTheCasesWhosePlansRunADelayedBodyEachOnce) {
  device::SimBackend sim;
  std::vector<Case> all = coverage_cases(sim);
  all.insert(all.end(), all.begin(), all.end());  // every case twice: kept once
  const std::vector<Case> picked = props::pipelined_cases(all, sim.registry(), sim.limits());
  ASSERT_FALSE(picked.empty());
  std::set<device::Body> bodies;
  for (const Case& c : picked) {
    const device::Planned p = props::plan_case(c, sim.registry(), sim.limits());
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(props::perturbed_body(p.plan.body)) << w8a16::golden::format_case(c);
    bodies.insert(p.plan.body);
    EXPECT_EQ(std::count(picked.begin(), picked.end(), c), 1);
  }
  // Every body the perturbed module delays, the Hopper tier's (the packed ones included) and the
  // cp.async rings', is among them; the skinny body and the GEMV, which have no delay point, are not.
  for (device::Body b : device::kAllBodies)
    EXPECT_EQ(bodies.count(b), props::perturbed_body(b) ? 1u : 0u) << device::body_name(b);
  EXPECT_FALSE(props::perturbed_body(device::Body::m32_skinny));
  EXPECT_FALSE(props::perturbed_body(device::Body::gemv_strip));
  // A module without the tier runs the cp.async rings' cases alone.
  for (const Case& c : props::pipelined_cases(all, device::StaticRegistry::without_hopper_tier(), sim.limits())) {
    const device::Planned p = props::plan_case(c, device::StaticRegistry::without_hopper_tier(), sim.limits());
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(device::is_wgmma_body(p.plan.body)) << w8a16::golden::format_case(c);
  }
}

TEST(Perturb, TimingSeedsAreNeverZeroAndDifferPerCaseAndLaunch) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 50; ++i)
    for (std::uint32_t j = 0; j < 8; ++j) {
      const std::uint64_t s = props::perturb_timing_seed(1, i, j);
      EXPECT_NE(s, 0u);
      EXPECT_EQ(s, props::perturb_timing_seed(1, i, j));  // a run replays
      seen.insert(s);
    }
  EXPECT_EQ(seen.size(), 400u);
  EXPECT_NE(props::perturb_timing_seed(1, 0, 0), props::perturb_timing_seed(2, 0, 0));
}

TEST(Perturb, ALaunchThatDiffersUnderOneSeedFailsNamingThatSeed) {
  device::SimBackend sim;
  const std::vector<Case> two = two_pipelined_cases(sim);
  ASSERT_EQ(two.size(), 2u);
  SeedSensitiveLauncher launcher(sim);
  props::PerturbOptions opt;
  opt.seeds_per_case = 3;
  std::vector<std::uint64_t> set;
  const props::TimingControl timing = recording_seeds(launcher, set);
  const props::PerturbResult clean = props::run_perturbed(launcher, two, timing, opt);
  EXPECT_TRUE(clean.pass());
  EXPECT_EQ(clean.launches, 6u);
  ASSERT_EQ(set.size(), 6u);
  EXPECT_EQ(set[4], props::perturb_timing_seed(1, 1, 1));  // case 1, its second seed

  launcher.bad_seed = props::perturb_timing_seed(1, 1, 2);
  const props::PerturbResult r = props::run_perturbed(launcher, two, timing, opt);
  EXPECT_FALSE(r.pass());
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].timing_seed, launcher.bad_seed);
  EXPECT_EQ(r.failures[0].case_index, 1u);
  EXPECT_EQ(r.failures[0].c, two[1]);
  EXPECT_EQ(r.failures[0].mismatches, 1u);
}

// The cases are prepared ahead on a pool while earlier ones launch (case_pipeline.hpp): each
// failure still names its own case and seed, a case whose operands cannot be made fails alone
// without a launch, and the cases after it run under their own seeds.
TEST(Perturb, ACaseWithoutOperandsFailsAloneAndTheCasesAroundItKeepTheirSeeds) {
  device::SimBackend sim;
  const std::vector<Case> cases = props::pipelined_cases(coverage_cases(sim), sim.registry(), sim.limits());
  ASSERT_GE(cases.size(), 2u);
  Case unknown = cases[0];
  unknown.gen = 999;  // a generator version with no implementation
  const std::vector<Case> three{cases[0], unknown, cases[1]};
  SeedSensitiveLauncher launcher(sim);
  launcher.bad_seed = props::perturb_timing_seed(1, 2, 0);
  props::PerturbOptions opt;
  opt.seeds_per_case = 2;
  std::vector<std::uint64_t> set;
  const props::PerturbResult r = props::run_perturbed(launcher, three, recording_seeds(launcher, set), opt);
  EXPECT_FALSE(r.pass());
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.cases_run, 3u);
  EXPECT_EQ(r.launches, 4u);
  EXPECT_EQ(set,
            (std::vector<std::uint64_t>{props::perturb_timing_seed(1, 0, 0), props::perturb_timing_seed(1, 0, 1),
                                        props::perturb_timing_seed(1, 2, 0), props::perturb_timing_seed(1, 2, 1)}));
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].case_index, 1u);
  EXPECT_EQ(r.failures[0].timing_seed, 0u);
  EXPECT_EQ(r.failures[0].detail.rfind("inputs: ", 0), 0u) << r.failures[0].detail;
  EXPECT_EQ(r.failures[1].case_index, 2u);
  EXPECT_EQ(r.failures[1].timing_seed, launcher.bad_seed);
  EXPECT_EQ(r.failures[1].mismatches, 1u);
}

// A launch whose waits gave up (the perturbed module's bound on a deadlocked protocol) fails naming
// its seed and the count, whatever its bytes.
TEST(Perturb, ALaunchWhoseWaitsGaveUpFailsEvenWithTheRightBytes) {
  device::SimBackend sim;
  const std::vector<Case> two = two_pipelined_cases(sim);
  ASSERT_EQ(two.size(), 2u);
  SeedSensitiveLauncher launcher(sim);
  props::PerturbOptions opt;
  opt.seeds_per_case = 2;
  const std::uint64_t stalled_seed = props::perturb_timing_seed(1, 0, 1);
  const props::TimingControl timing{[&](std::uint64_t s) {
                                      launcher.seed = s;
                                      return device::Status::success();
                                    },
                                    [&](std::uint32_t* stalls) {
                                      *stalls = launcher.seed == stalled_seed ? 3 : 0;
                                      return device::Status::success();
                                    }};
  const props::PerturbResult r = props::run_perturbed(launcher, two, timing, opt);
  EXPECT_FALSE(r.pass());
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.launches, 4u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].timing_seed, stalled_seed);
  EXPECT_EQ(r.failures[0].case_index, 0u);
  EXPECT_EQ(r.failures[0].stalls, 3u);
  EXPECT_EQ(r.failures[0].mismatches, 0u);
}

TEST(Perturb, AControlThatFailsOrABudgetSpentIsNeverAPass) {
  device::SimBackend sim;
  const std::vector<Case> cases = props::pipelined_cases(coverage_cases(sim), sim.registry(), sim.limits());
  props::InProcessLauncher launcher(sim);
  props::PerturbOptions opt;
  const auto fine = [](std::uint64_t) { return device::Status::success(); };
  const auto none = [](std::uint32_t* stalls) {
    *stalls = 0;
    return device::Status::success();
  };
  const props::PerturbResult refused = props::run_perturbed(
      launcher, cases,
      {[](std::uint64_t) { return device::Status::error(device::Errc::backend_error, "no seed"); }, none}, opt);
  EXPECT_FALSE(refused.pass());
  EXPECT_FALSE(refused.complete);
  EXPECT_EQ(refused.launches, 0u);
  // The stall count unread after the first launch: that launch counts, none follows.
  const props::PerturbResult unread = props::run_perturbed(
      launcher, cases,
      {fine, [](std::uint32_t*) { return device::Status::error(device::Errc::backend_error, "no count"); }}, opt);
  EXPECT_FALSE(unread.pass());
  EXPECT_FALSE(unread.complete);
  EXPECT_EQ(unread.launches, 1u);
  ASSERT_FALSE(unread.failures.empty());
  EXPECT_NE(unread.failures.back().detail.find("stalled waits not read: no count"), std::string::npos);
  opt.time_budget_s = 1e-9;
  const props::PerturbResult cut = props::run_perturbed(launcher, cases, {fine, none}, opt);
  EXPECT_FALSE(cut.pass());
  EXPECT_FALSE(cut.complete);
  // No case at all is no pass either.
  EXPECT_FALSE(props::run_perturbed(launcher, {}, {fine, none}, {}).pass());
}

}  // namespace
