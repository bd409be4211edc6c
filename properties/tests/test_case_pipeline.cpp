// SPDX-License-Identifier: MIT OR Apache-2.0
// The case pipeline: results come back in order and the same for any thread count, launches run
// one at a time in order, a hang launches nothing after it, and a stop or an exception ends the
// run cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "w8a16/device/sim_backend.hpp"
#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/case_draw.hpp"
#include "w8a16/properties/case_pipeline.hpp"

namespace {

namespace device = w8a16::device;
namespace golden = w8a16::golden;
namespace props = w8a16::props;

golden::Case drawn(std::size_t i) {
  props::DrawOptions d;
  d.max_macs = std::uint64_t{1} << 18;
  return props::draw_case_seeded(7, i, d);
}

// The simulation, recording the order of its launches and whether two ever overlapped; the case
// `hang_at` comes back as a launch that timed out.
class OrderLauncher final : public props::CaseLauncher {
 public:
  explicit OrderLauncher(std::size_t hang_at = SIZE_MAX) : CaseLauncher({}), inner_(sim_), hang_at_(hang_at) {}
  const char* name() const override { return "order"; }
  props::Launched launch(const golden::Case& c, const golden::CaseInputs& in) override {
    if (busy_.exchange(true)) overlapped_ = true;
    seeds_.push_back(c.seed);
    props::Launched r;
    if (seeds_.size() - 1 == hang_at_) r.status = device::Status::error(device::Errc::launch_timeout, "planted hang");
    else r = inner_.launch(c, in);
    busy_ = false;
    return r;
  }
  std::vector<std::uint64_t> seeds_;
  bool overlapped_ = false;

 private:
  device::SimBackend sim_;
  props::InProcessLauncher inner_;
  std::size_t hang_at_;
  std::atomic<bool> busy_{false};
};

TEST(CasePipeline, HandsEveryCaseBackInOrderWithItsEmulationAndLaunchesInOrder) {
  for (unsigned threads : {1u, 3u, 8u}) {
    OrderLauncher launcher;
    std::vector<std::size_t> order;
    props::PipelineSteps steps;
    steps.done = [&](std::size_t i, props::CaseWork& w) {
      order.push_back(i);
      EXPECT_EQ(golden::format_case(w.c), golden::format_case(drawn(i)));
      EXPECT_TRUE(w.input_error.empty()) << w.input_error;
      EXPECT_TRUE(w.launched);
      EXPECT_TRUE(w.got.status.ok()) << w.got.status.message;
      EXPECT_EQ(w.expected, w.got.c_bits) << golden::format_case(w.c);  // the simulation's values are the emulator's
      return true;
    };
    props::PipelineOptions opt;
    opt.threads = threads;
    const props::PipelineResult r = props::run_case_pipeline(40, drawn, &launcher, steps, opt);
    EXPECT_EQ(r.end, props::PipelineEnd::all);
    EXPECT_EQ(r.handed, 40u);
    ASSERT_EQ(order.size(), 40u);
    for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
    ASSERT_EQ(launcher.seeds_.size(), 40u);
    for (std::size_t i = 0; i < 40; ++i) EXPECT_EQ(launcher.seeds_[i], drawn(i).seed) << i;
    EXPECT_FALSE(launcher.overlapped_);
  }
}

// A byte budget smaller than any case still runs every case (one at a time).
TEST(CasePipeline, ABudgetBelowOneCaseStillRunsEveryCase) {
  props::PipelineOptions opt;
  opt.threads = 4;
  opt.max_bytes_ahead = 1;
  std::size_t handed = 0;
  props::PipelineSteps steps;
  steps.done = [&](std::size_t, props::CaseWork& w) {
    ++handed;
    EXPECT_FALSE(w.expected.empty());
    return true;
  };
  EXPECT_EQ(props::run_case_pipeline(12, drawn, nullptr, steps, opt).handed, 12u);
  EXPECT_EQ(handed, 12u);
}

TEST(CasePipeline, AHangIsHandedBackAndNothingAfterItLaunches) {
  OrderLauncher launcher(5);
  std::size_t handed = 0;
  props::PipelineSteps steps;
  steps.done = [&](std::size_t, props::CaseWork&) { return ++handed, true; };
  props::PipelineOptions opt;
  opt.threads = 4;
  const props::PipelineResult r = props::run_case_pipeline(30, drawn, &launcher, steps, opt);
  EXPECT_EQ(r.end, props::PipelineEnd::hang);
  EXPECT_EQ(r.handed, 6u);
  EXPECT_EQ(handed, 6u);
  EXPECT_EQ(launcher.seeds_.size(), 6u);
}

TEST(CasePipeline, BeforeAndDoneStopTheRunWhereTheySay) {
  props::PipelineSteps steps;
  steps.before = [](std::size_t i) { return i < 7; };
  steps.done = [](std::size_t, props::CaseWork&) { return true; };
  props::PipelineResult r = props::run_case_pipeline(20, drawn, nullptr, steps, {4, 0, {}});
  EXPECT_EQ(r.end, props::PipelineEnd::stopped);
  EXPECT_EQ(r.handed, 7u);
  steps.before = {};
  steps.done = [](std::size_t i, props::CaseWork&) { return i != 3; };
  r = props::run_case_pipeline(20, drawn, nullptr, steps, {4, 0, {}});
  EXPECT_EQ(r.end, props::PipelineEnd::stopped);
  EXPECT_EQ(r.handed, 4u);
}

TEST(CasePipeline, AnExceptionPreparingACaseReachesTheCallerAtThatCase) {
  std::size_t handed = 0;
  props::PipelineSteps steps;
  steps.done = [&](std::size_t, props::CaseWork&) { return ++handed, true; };
  auto case_at = [](std::size_t i) {
    if (i == 9) throw std::runtime_error("case 9");
    return drawn(i);
  };
  EXPECT_THROW(props::run_case_pipeline(20, case_at, nullptr, steps, {4, 0, {}}), std::runtime_error);
  EXPECT_EQ(handed, 9u);
}

// A case whose operands cannot be regenerated comes back with the reason, unlaunched.
TEST(CasePipeline, ACaseWithoutOperandsComesBackUnlaunchedWithTheReason) {
  OrderLauncher launcher;
  auto case_at = [](std::size_t i) {
    golden::Case c = drawn(i);
    if (i == 2) c.k = 100;  // not a multiple of 128: no operands
    return c;
  };
  std::vector<bool> launched;
  props::PipelineSteps steps;
  steps.done = [&](std::size_t i, props::CaseWork& w) {
    launched.push_back(w.launched);
    EXPECT_EQ(w.input_error.empty(), i != 2) << w.input_error;
    return true;
  };
  props::run_case_pipeline(4, case_at, &launcher, steps, {2, 0, {}});
  EXPECT_EQ(launched, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(launcher.seeds_.size(), 3u);
}

// The campaign's verdict and tallies do not depend on its thread count.
TEST(CasePipeline, TheCampaignsResultIsTheSameForAnyThreadCount) {
  props::CampaignOptions opt;
  opt.cases = 30;
  opt.draw.max_macs = std::uint64_t{1} << 18;
  std::vector<std::string> runs;
  for (unsigned threads : {1u, 2u, 7u}) {
    opt.threads = threads;
    device::SimBackend sim;
    const props::CampaignResult r = props::run_campaign(sim, opt, {});
    std::string text;
    for (const auto& [e, t] : r.per_entry)
      text += std::string(golden::entry_point_name(e)) + " " + std::to_string(t.cases) + " " +
              std::to_string(t.bytes_compared) + " " + std::to_string(t.specials_seen) + "\n";
    for (const auto& [k, c] : r.coverage) text += props::coverage_key_text(k) + " " + std::to_string(c.cases) + "\n";
    EXPECT_EQ(r.drawn_run, 30u);
    EXPECT_TRUE(r.failures.empty());
    runs.push_back(text);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

}  // namespace
