// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU tests' cases, checked without a GPU: every line is valid, every case's plan on an sm_90a
// module (the simulation's registry, the H200's limits) reaches the body it is aimed at, the
// awkward shapes reach every configuration, and a few run through verify's launch path on the
// simulation with every byte of C, guard rows included, equal to the emulator's.
#include <gtest/gtest.h>

#include <set>

#include "gpu_cases.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"

namespace {

namespace device = w8a16::device;
namespace golden = w8a16::golden;
namespace props = w8a16::props;
namespace gputest = w8a16::gputest;
using device::Body;
using golden::EntryPoint;

// The campaigns of test_kernels_match_emulator.cpp at full size (the by_m campaign aims at the
// 128-row tile only where its rows take it, so it is not checked for its target there either).
const std::vector<std::pair<EntryPoint, std::vector<std::pair<Body, std::uint32_t>>>> kCampaigns = {
    {EntryPoint::gemm_pipelined, {{Body::gemm128_tile, 600}}},
    {EntryPoint::gemm_pipelined_m32, {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}},
    {EntryPoint::gemm_pipelined_m32_strided,
     {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}},
    {EntryPoint::gemm_pipelined_m64, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}},
    {EntryPoint::gemm_pipelined_m64_strided, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}},
    {EntryPoint::gemv_batch4_strided, {{Body::gemv_strip, 500}}},
    {EntryPoint::gemv_batch16_strided, {{Body::gemv_strip, 500}}},
    {EntryPoint::gemm_packed_strided,
     {{Body::wgmma_packed128, 150}, {Body::wgmma_packed128_x2, 90}, {Body::tc_rows_packed, 90}}},
};
constexpr EntryPoint kTensorEntries[] = {
    EntryPoint::gemm_pipelined,     EntryPoint::gemm_pipelined_m32,         EntryPoint::gemm_pipelined_m32_strided,
    EntryPoint::gemm_pipelined_m64, EntryPoint::gemm_pipelined_m64_strided, EntryPoint::gemm_pipelined_by_m};

void expect_lands(const gputest::GpuCase& g, std::set<props::CoverageKey>* reached) {
  ASSERT_EQ(golden::case_problem(g.c), "") << g.line();
  const device::Planned p = props::plan_case(g.c, device::StaticRegistry::all_present(), device::DeviceLimits::h200());
  ASSERT_TRUE(p.ok()) << p.status.message << "\n  " << g.line();
  EXPECT_EQ(p.plan.body, g.target) << g.line() << " reaches " << device::body_name(p.plan.body);
  if (reached) reached->insert({g.c.entry, p.plan.body, props::configuration_of(p.plan)});
}

TEST(GpuTestCases, EveryCampaignCaseIsAValidLineThatReachesItsBody) {
  std::size_t count = 0;
  std::set<golden::Distribution> dists;
  for (const auto& [entry, plan] : kCampaigns)
    for (const auto& [body, n] : plan)
      for (const gputest::GpuCase& g : gputest::make_cases(entry, body, n, 0x5EEDCAFE2026ull, 48'000'000ull)) {
        expect_lands(g, nullptr);
        dists.insert(g.c.dist);
        ++count;
      }
  for (EntryPoint e : kTensorEntries)
    for (Body b : {Body::wgmma_units, Body::wgmma_units128, Body::wgmma_units128_x2})
      for (const gputest::GpuCase& g :
           gputest::make_cases(e, b, b == Body::wgmma_units128_x2 ? 30 : 90, 0x5EEDCAFE2026ull, 48'000'000ull)) {
        expect_lands(g, nullptr);
        ++count;
      }
  EXPECT_EQ(count, 5650u);                                        // 600 + 2 x 670 + 2 x 560 + 2 x 500 + 330 + 6 x 210
  EXPECT_EQ(dists.size(), std::size(golden::kAllDistributions));  // every distribution, in turn
}

// The awkward shapes: each body and each configuration of the row-tile kernel (11) and of the
// Hopper tier that the GPU tests aim at, through a padded-pitch entry point mostly.
TEST(GpuTestCases, TheAwkwardShapesReachEveryRowTileConfigurationAndTheTiersRowTiles) {
  std::set<props::CoverageKey> reached;
  for (const gputest::GpuCase& g : gputest::awkward_cases()) expect_lands(g, &reached);
  std::set<std::string> tc, wg;
  for (const props::CoverageKey& k : reached) {
    if (k.body == Body::tc_rows_strip) tc.insert(k.config);
    if (device::is_wgmma_body(k.body)) wg.insert(std::string(device::body_name(k.body)) + " " + k.config);
  }
  EXPECT_EQ(tc.size(), 11u);
  EXPECT_GE(wg.size(), 12u);
}

// A case taken away from the Hopper tier says so in its line (repro replays the same plan).
TEST(GpuTestCases, ACaseAimedBelowTheTierNamesTheKernelsItTakesAway) {
  const auto cases = gputest::make_cases(EntryPoint::gemm_pipelined_m32_strided, Body::m32_tile, 3, 1, 1u << 24);
  for (const auto& g : cases)
    EXPECT_NE(g.line().find(" without=w8a16_wgmma_rows,w8a16_wgmma_rows_n128,w8a16_wgmma_rows_n128_x2"),
              std::string::npos)
        << g.line();
  const auto only64 = gputest::make_cases(EntryPoint::gemm_pipelined, Body::wgmma_units, 1, 1, 1u << 24);
  EXPECT_NE(only64[0].line().find(" without=w8a16_wgmma_rows_n128,w8a16_wgmma_rows_n128_x2"), std::string::npos);
  // A module without the tier (an sm_80 cubin) has nothing to take away.
  const std::uint32_t no_hopper = gputest::kAllKernelsMask & ~golden::kWithoutHopperTier;
  EXPECT_EQ(gputest::make_cases(EntryPoint::gemm_pipelined_m32_strided, Body::m32_tile, 1, 1, 1u << 24, no_hopper)[0]
                .c.without,
            0u);
}

// The GPU tests' launch path, on the simulation: the small awkward cases, every byte of C.
TEST(GpuTestCases, SmallAwkwardCasesRunThroughVerifysLaunchPathOnTheSimulation) {
  device::SimBackend sim;
  int ran = 0;
  for (const gputest::GpuCase& g : gputest::awkward_cases()) {
    if (std::uint64_t{g.c.m} * g.c.n * g.c.k > (std::uint64_t{1} << 22)) continue;
    golden::CaseInputs in;
    std::string error;
    ASSERT_TRUE(golden::regenerate_inputs(g.c, &in, &error)) << error;
    const props::Launched got = props::launch_case(sim, g.c, in);
    ASSERT_TRUE(got.status.ok()) << got.status.message << "\n  " << g.line();
    EXPECT_EQ(got.plan.body, g.target) << g.line();
    EXPECT_EQ(got.c_bits.size(), std::size_t{g.c.m + golden::kOutputGuardRows} * g.c.c_row_stride);
    const props::Comparison cmp = props::compare_output(g.c, props::expected_output(g.c, in), got.c_bits);
    EXPECT_TRUE(cmp.equal()) << g.line() << ": " << (cmp.details.empty() ? "" : cmp.details.front());
    ++ran;
  }
  EXPECT_GE(ran, 6);
}

}  // namespace
