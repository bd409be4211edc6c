// SPDX-License-Identifier: MIT OR Apache-2.0
// The campaign and the comparison can fail: a backend that corrupts one output bit is caught, and
// shards split a campaign's cases without loss or overlap.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace {

namespace device = w8a16::device;
namespace golden = w8a16::golden;
namespace props = w8a16::props;

// The simulation, then one flipped bit in C[row][col] (host memory on this backend): a stand-in
// for a kernel that gets one element wrong, writes one pitch-padding element, or (row = m) one
// element of the first guard row past M.
class OneBitWrongBackend final : public device::Backend {
 public:
  OneBitWrongBackend(std::uint32_t row, std::uint32_t col, std::uint16_t mask) : row_(row), col_(col), mask_(mask) {}
  const char* name() const override { return "one-bit-wrong"; }
  device::BackendKind kind() const override { return device::BackendKind::simulation; }
  device::DeviceLimits limits() const override { return sim_.limits(); }
  const device::KernelRegistry& registry() const override { return sim_.registry(); }
  std::unique_ptr<device::Buffer> allocate(std::size_t bytes, device::Status* status) override {
    return sim_.allocate(bytes, status);
  }
  device::Status execute(const device::Plan& plan) override {
    const device::Status st = sim_.execute(plan);
    if (st.ok() && row_ <= plan.params.m && col_ < plan.params.c_row_stride) {
      auto* c = reinterpret_cast<std::uint16_t*>(plan.params.output);
      c[std::size_t{row_} * plan.params.c_row_stride + col_] ^= mask_;
    }
    return st;
  }
  device::Status synchronize() override { return sim_.synchronize(); }

 private:
  device::SimBackend sim_;
  std::uint32_t row_, col_;
  std::uint16_t mask_;
};

golden::Case small_case() {
  return golden::CaseSpec{}
      .entry(golden::EntryPoint::gemm_pipelined_m32_strided)
      .shape(3, 9, 256)
      .strides(264, 12)
      .dist(golden::Distribution::activation_like)
      .seed(5);
}

TEST(Comparison, FindsOneFlippedBitInAnOutputAndInThePitchPadding) {
  const golden::Case c = small_case();
  golden::CaseInputs in;
  std::string error;
  ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
  const std::vector<std::uint16_t> expected = props::expected_output(c, in);
  for (std::uint32_t col : {4u, 10u}) {  // an output, then a padding element (n = 9 <= col < 12)
    OneBitWrongBackend bad(2, col, 0x0001);
    const props::Launched got = props::launch_case(bad, c, in);
    ASSERT_TRUE(got.status.ok()) << got.status.message;
    const props::Comparison cmp = props::compare_output(c, expected, got.c_bits);
    EXPECT_EQ(cmp.mismatches, 1u) << "col " << col;
    ASSERT_EQ(cmp.details.size(), 1u);
    EXPECT_NE(cmp.details[0].find("C[2][" + std::to_string(col) + "]"), std::string::npos) << cmp.details[0];
  }
}

// A write one row past M (as a store guard `row <= m` would make) lands in the guard rows the
// launch gives C, and the comparison, which covers them, names it.
TEST(Comparison, FindsAWriteOneRowPastM) {
  const golden::Case c = small_case();
  golden::CaseInputs in;
  std::string error;
  ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
  const std::vector<std::uint16_t> expected = props::expected_output(c, in);
  ASSERT_EQ(expected.size(), std::size_t{c.m + golden::kOutputGuardRows} * c.c_row_stride);
  OneBitWrongBackend bad(c.m, 4, 0x0001);
  const props::Launched got = props::launch_case(bad, c, in);
  ASSERT_TRUE(got.status.ok()) << got.status.message;
  const props::Comparison cmp = props::compare_output(c, expected, got.c_bits);
  EXPECT_EQ(cmp.mismatches, 1u);
  ASSERT_EQ(cmp.details.size(), 1u);
  EXPECT_NE(cmp.details[0].find("C[3][4] (guard row past M)"), std::string::npos) << cmp.details[0];
}

TEST(Campaign, ABackendWithOneWrongBitFailsTheCampaignNamingTheCase) {
  props::CampaignOptions opt;
  opt.cases = 6;
  opt.draw.max_macs = std::uint64_t{1} << 16;
  OneBitWrongBackend bad(0, 0, 0x8000);
  const props::CampaignResult r = props::run_campaign(bad, opt, nullptr);
  EXPECT_EQ(r.drawn_run, 6u);
  ASSERT_EQ(r.failures.size(), 6u);  // every case has C[0][0]
  EXPECT_NE(r.failures[0].why.find("C[0][0]"), std::string::npos) << r.failures[0].why;
  EXPECT_EQ(r.failures[0].c, props::draw_case_seeded(opt.seed, 0, opt.draw));
}

TEST(Campaign, ShardsRunEveryCaseExactlyOnceAndAllPassOnTheSimulation) {
  props::CampaignOptions opt;
  opt.cases = 30;
  opt.draw.max_macs = std::uint64_t{1} << 16;
  opt.shard_count = 3;
  std::uint64_t total = 0, tallied = 0;
  for (std::uint32_t i = 0; i < 3; ++i) {
    opt.shard_index = i;
    device::SimBackend sim;
    const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
    EXPECT_TRUE(r.failures.empty()) << r.failures.front().why;
    EXPECT_EQ(r.drawn_run, 10u);
    total += r.drawn_run;
    for (const auto& [e, t] : r.per_entry) {
      tallied += t.cases;
      EXPECT_GT(t.bytes_compared, 0u);
    }
  }
  EXPECT_EQ(total, 30u);
  EXPECT_EQ(tallied, 30u);
}

// verify spreads shard i/n over g GPUs as sub-shards (i + n*j)/(n*g); together they must run
// exactly shard i/n's cases. Every case fails on this backend, so the failures list them.
TEST(Campaign, SubShardsPerGpuTogetherRunExactlyTheirShardsCases) {
  props::CampaignOptions opt;
  opt.cases = 40;
  opt.draw.max_macs = std::uint64_t{1} << 14;
  opt.shard_index = 1;
  opt.shard_count = 3;
  OneBitWrongBackend bad(0, 0, 1);
  std::set<std::string> whole, merged_sources;
  for (const props::CaseFailure& f : props::run_campaign(bad, opt, nullptr).failures) whole.insert(f.source);
  props::CampaignResult merged;
  const std::uint32_t gpus = 2;
  for (std::uint32_t j = 0; j < gpus; ++j) {
    props::CampaignOptions o = opt;
    o.shard_index = opt.shard_index + opt.shard_count * j;
    o.shard_count = opt.shard_count * gpus;
    props::merge_campaign_result(&merged, props::run_campaign(bad, o, nullptr));
  }
  for (const props::CaseFailure& f : merged.failures) merged_sources.insert(f.source);
  EXPECT_EQ(whole.size(), 13u);  // indices 1, 4, ..., 37
  EXPECT_EQ(merged_sources, whole);
  EXPECT_EQ(merged.failures.size(), whole.size());
  EXPECT_EQ(merged.drawn_run, 13u);
}

TEST(Campaign, ATimeBudgetStopsDrawingAndSaysSo) {
  props::CampaignOptions opt;
  opt.cases = 1000000;
  // Long enough that the first drawn case starts inside it on a loaded machine (under the
  // sanitizers, beside another build), far too short for a million cases.
  opt.time_budget_s = 1.0;
  opt.draw.max_macs = std::uint64_t{1} << 14;
  device::SimBackend sim;
  const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
  EXPECT_TRUE(r.stopped_by_budget);
  EXPECT_LT(r.drawn_run, opt.cases);
  EXPECT_GT(r.drawn_run, 0u);
}

TEST(Campaign, ParseShardAcceptsIOverNAndRejectsTheRest) {
  std::uint32_t i = 9, n = 9;
  std::string error;
  EXPECT_TRUE(props::parse_shard("2/5", &i, &n, &error));
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(n, 5u);
  for (const char* bad : {"5/5", "1/0", "", "/", "a/2", "1/2/3", "-1/2", "1", "99999999999/2"}) {
    i = n = 7;
    EXPECT_FALSE(props::parse_shard(bad, &i, &n, &error)) << bad;
    EXPECT_EQ(i, 7u);
    EXPECT_EQ(n, 7u);
  }
}

}  // namespace
