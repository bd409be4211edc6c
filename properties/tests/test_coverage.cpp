// SPDX-License-Identifier: MIT OR Apache-2.0
// Coverage by construction (coverage.hpp): every cell has a case whose plan lands in it, with every
// special class; the configurations follow geometry.hpp's thresholds; a gap is named.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <set>

#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"

namespace {

namespace device = w8a16::device;
namespace golden = w8a16::golden;
namespace props = w8a16::props;
using device::Body;
using golden::EntryPoint;

const std::vector<EntryPoint> kEntries(std::begin(golden::kAllEntryPoints), std::end(golden::kAllEntryPoints));

std::size_t count_body(const std::vector<props::CoverageKey>& cells, Body b) {
  std::size_t n = 0;
  for (const auto& c : cells) n += c.body == b;
  return n;
}

// The whole module (an sm_90a cubin: the simulation's registry): 6 tensor-core entries x the
// Hopper tier's 32 configurations, the row-tile kernel's 11 through 5 entries, the seed's bodies.
TEST(Coverage, TheCellsOfTheWholeModuleAreEveryBodyAtEveryConfiguration) {
  const auto cells = props::expected_cells(device::StaticRegistry::all_present(), kEntries);
  EXPECT_EQ(count_body(cells, Body::tc_rows_strip), 5u * 11u);
  EXPECT_EQ(count_body(cells, Body::wgmma_units), 6u * 14u);
  EXPECT_EQ(count_body(cells, Body::wgmma_units128), 6u * 14u);
  EXPECT_EQ(count_body(cells, Body::wgmma_units128_x2), 6u * 4u);
  EXPECT_EQ(count_body(cells, Body::m32_skinny), 3u);
  EXPECT_EQ(count_body(cells, Body::m32_tile), 3u);
  EXPECT_EQ(count_body(cells, Body::m64_tile), 3u);
  EXPECT_EQ(count_body(cells, Body::gemm128_tile), 2u);
  EXPECT_EQ(count_body(cells, Body::gemv_strip), 2u);
  EXPECT_EQ(std::set<props::CoverageKey>(cells.begin(), cells.end()).size(), cells.size());
}

// A module without the Hopper tier has none of its cells; one without the row-tile kernel none of
// its (what an sm_80 cubin resolves, docs/KERNEL_ABI.md 1.2). The packed strips (an sm_90 symbol)
// stay: gemm_packed_strided runs them on such a module where packed_body gives them the shape.
TEST(Coverage, AModuleWithoutAKernelHasNoCellOfItsBody) {
  const auto seed_only = props::expected_cells(device::StaticRegistry::without_hopper_tier(), kEntries);
  EXPECT_EQ(count_body(seed_only, Body::wgmma_units) + count_body(seed_only, Body::wgmma_units128) +
                count_body(seed_only, Body::wgmma_units128_x2) + count_body(seed_only, Body::wgmma_packed128) +
                count_body(seed_only, Body::wgmma_packed128_x2),
            0u);
  EXPECT_EQ(count_body(seed_only, Body::tc_rows_strip), 55u);
  EXPECT_EQ(count_body(seed_only, Body::tc_rows_packed), 3u);
  EXPECT_EQ(seed_only.size(), 71u);
  device::StaticRegistry no_rows = device::StaticRegistry::without_hopper_tier();
  no_rows.set_present(device::KernelId::tc_rows, false).set_present(device::KernelId::tc_rows_m64, false);
  EXPECT_EQ(count_body(props::expected_cells(no_rows, kEntries), Body::tc_rows_strip), 0u);
}

// Every cell gets an aimed case whose plan lands there, on the H200's limits, for each module
// kind; masks only where the dispatch would go elsewhere, and never the entry point's own kernel.
TEST(Coverage, EveryCellHasAnAimedCaseWhosePlanLandsInIt) {
  device::StaticRegistry no_rows = device::StaticRegistry::without_hopper_tier();
  no_rows.set_present(device::KernelId::tc_rows, false).set_present(device::KernelId::tc_rows_m64, false);
  for (const device::StaticRegistry& reg :
       {device::StaticRegistry::all_present(), device::StaticRegistry::without_hopper_tier(), no_rows}) {
    const auto cells = props::expected_cells(reg, kEntries);
    std::vector<props::CoverageKey> unreached;
    const auto plan = props::coverage_plan(reg, device::DeviceLimits::h200(), kEntries,
                                           props::coverage_distributions(true), 1, &unreached);
    for (const auto& k : unreached) ADD_FAILURE() << "no aimed shape reaches " << props::coverage_key_text(k);
    EXPECT_EQ(plan.size(), props::coverage_distributions(true).size() * cells.size());
    std::set<props::CoverageKey> landed;
    for (const props::AimedCase& a : plan) {
      EXPECT_EQ(golden::case_problem(a.c), "") << golden::format_case(a.c);
      const device::Planned p = props::plan_case(a.c, reg, device::DeviceLimits::h200());
      ASSERT_TRUE(p.ok()) << p.status.message << "\n  " << golden::format_case(a.c);
      const props::CoverageKey got{a.c.entry, p.plan.body, props::configuration_of(p.plan)};
      EXPECT_EQ(got, a.target) << golden::format_case(a.c) << " lands in " << props::coverage_key_text(got);
      landed.insert(got);
      // A mask takes away only kernels the module has, and only to get past a tier that goes first.
      std::uint32_t present = 0;
      for (device::KernelId id : device::kAllKernels)
        if (reg.resolve(id)) present |= 1u << static_cast<unsigned>(id);
      EXPECT_EQ(a.c.without & ~present, 0u) << golden::format_case(a.c);
      if (a.c.without != 0) {
        golden::Case plain = a.c;
        plain.without = 0;
        const device::Planned q = props::plan_case(plain, reg, device::DeviceLimits::h200());
        EXPECT_FALSE(q.ok() && q.plan.body == a.target.body && props::configuration_of(q.plan) == a.target.config)
            << "needless without= in " << golden::format_case(a.c);
      }
    }
    EXPECT_EQ(landed.size(), cells.size());
  }
}

// Every aimed every_special case holds all fifteen special classes, so one case per cell fills the
// cell's whole row of the table.
TEST(Coverage, TheAimedEverySpecialCasesHoldEverySpecialClass) {
  const auto plan = props::coverage_plan(device::StaticRegistry::all_present(), device::DeviceLimits::h200(), kEntries,
                                         props::coverage_distributions(false), 7, nullptr);
  const std::uint32_t all = (1u << golden::kSpecialClassCount) - 1;
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> shapes;  // regenerate each shape once
  for (const props::AimedCase& a : plan) {
    if (!shapes.insert({a.c.m, a.c.n, a.c.k}).second) continue;
    golden::CaseInputs in;
    std::string error;
    ASSERT_TRUE(golden::regenerate_inputs(a.c, &in, &error)) << error;
    EXPECT_EQ(golden::special_classes(a.c, in), all) << golden::format_case(a.c);
  }
}

// The configuration a plan runs, at geometry.hpp's thresholds.
TEST(Coverage, ConfigurationsChangeAtTheGeometrysThresholds) {
  const device::StaticRegistry seed = device::StaticRegistry::without_hopper_tier();
  const auto config = [&](EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                          const device::KernelRegistry& reg) {
    const golden::Case c = golden::CaseSpec{}.entry(e).shape(m, n, k);
    const device::Planned p = props::plan_case(c, reg, device::DeviceLimits::h200());
    EXPECT_TRUE(p.ok()) << p.status.message;
    return std::string(device::body_name(p.plan.body)) + ": " + props::configuration_of(p.plan);
  };
  const EntryPoint m32 = EntryPoint::gemm_pipelined_m32;
  EXPECT_EQ(config(m32, 29, 10112, 256, seed), "tc_rows_strip: 64-column strips, 4 row blocks");
  EXPECT_EQ(config(m32, 29, 10113, 256, seed), "tc_rows_strip: 128-column strips, 4 row blocks");
  EXPECT_EQ(config(m32, 5, 8064, 256, seed), "tc_rows_strip: 16-column strips, 1 row block");
  EXPECT_EQ(config(m32, 5, 8065, 256, seed), "tc_rows_strip: 32-column strips, 1 row block");
  EXPECT_EQ(config(m32, 13, 3968, 5120, seed), "m32_skinny: 8-column strips");
  EXPECT_EQ(config(m32, 13, 3969, 5120, seed), "tc_rows_strip: 32-column strips, 2 row blocks");
  const device::StaticRegistry all = device::StaticRegistry::all_present();
  // 64-column units: 132 of them fill the 132 SMs; the 133rd cuts a unit between two CTAs, unless
  // a unit is one step.
  // From 33 rows the tier takes every shape: 64-column units up to 66 128-column units (half the
  // SMs), 128-column ones above.
  EXPECT_EQ(config(m32, 40, 8448, 256, all), "wgmma_units: 48-row tiles, whole units");
  EXPECT_EQ(config(m32, 40, 8449, 256, all), "wgmma_units128: 48-row tiles, whole units");
  props::CaseRegistry only64(all, 1u << static_cast<unsigned>(device::KernelId::wgmma_rows_n128));
  EXPECT_EQ(config(m32, 40, 8448, 256, only64), "wgmma_units: 48-row tiles, whole units");
  EXPECT_EQ(config(m32, 40, 8449, 256, only64), "wgmma_units: 48-row tiles, units cut");
  EXPECT_EQ(config(m32, 40, 8449, 128, only64), "wgmma_units: 48-row tiles, whole units");
  EXPECT_EQ(config(m32, 129, 770, 256, only64), "wgmma_units: 128-row tiles x2+, whole units");
  // The two-CTA symbol: 264 128-column units fill two CTAs on each of 132 SMs.
  EXPECT_EQ(config(m32, 9, 33792, 256, all), "wgmma_units128_x2: 16-row tiles, whole units");
  EXPECT_EQ(config(m32, 9, 33793, 256, all), "wgmma_units128_x2: 16-row tiles, units cut");
}

TEST(Coverage, GapsNameEmptyCellsMissingClassesAndCellsTheListLacks) {
  const props::CoverageKey a{EntryPoint::gemv_batch4_strided, Body::gemv_strip, "8-column strips"};
  const props::CoverageKey b{EntryPoint::gemv_batch16_strided, Body::gemv_strip, "8-column strips"};
  const props::CoverageKey stray{EntryPoint::gemv_batch16_strided, Body::gemv_strip, "9-column strips"};
  props::CoverageTable t;
  t[a] = props::CoverageCell{3, (1u << golden::kSpecialClassCount) - 1 - golden::kSpecialSNan, 0};
  t[stray] = props::CoverageCell{1, 0, 0};
  const std::vector<std::string> gaps = props::coverage_gaps({a, b}, t);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_NE(gaps[0].find("w8a16_gemv_batch4_strided / gemv_strip / 8-column strips x {s_nan}"), std::string::npos)
      << gaps[0];
  EXPECT_NE(gaps[1].find("empty cell: w8a16_gemv_batch16_strided / gemv_strip"), std::string::npos) << gaps[1];
  EXPECT_NE(gaps[2].find("9-column strips, a cell the coverage list does not name"), std::string::npos) << gaps[2];
  t[a].specials_seen = (1u << golden::kSpecialClassCount) - 1;
  t[b] = t[a];
  t.erase(stray);
  EXPECT_TRUE(props::coverage_gaps({a, b}, t).empty());
}

// A cell's case seed comes from its distribution's index in this list: a new one is appended, so
// the cases of every cell and older distribution keep their lines.
TEST(Coverage, TheAimedDistributionsAreInTheirFixedOrder) {
  EXPECT_EQ(props::coverage_distributions(false),
            std::vector<golden::Distribution>{golden::Distribution::every_special});
  EXPECT_EQ(props::coverage_distributions(true),
            (std::vector<golden::Distribution>{golden::Distribution::every_special, golden::Distribution::fold_ties,
                                               golden::Distribution::zero_signs, golden::Distribution::cancelling_steps,
                                               golden::Distribution::nan_codes}));
}

// The campaign runs the aimed cases and tallies the plans they ran: on the simulation, the GEMVs'
// cells (cheap) fill with every class; a case whose launch is refused adds to no cell.
TEST(Coverage, TheCampaignFillsTheTableFromThePlansItRan) {
  const std::vector<EntryPoint> gemvs = {EntryPoint::gemv_batch4_strided, EntryPoint::gemv_batch16_strided};
  device::SimBackend sim;
  props::CampaignOptions opt;
  opt.cases = 0;
  opt.aimed = props::coverage_plan(sim.registry(), sim.limits(), gemvs, props::coverage_distributions(true), 3,
                                   nullptr);
  const std::size_t per_cell = props::coverage_distributions(true).size();  // two cells: one per GEMV
  ASSERT_EQ(opt.aimed.size(), 2 * per_cell);
  const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().why;
  EXPECT_EQ(r.aimed_run, 2 * per_cell);
  EXPECT_TRUE(props::coverage_gaps(props::expected_cells(sim.registry(), gemvs), r.coverage).empty());
  for (const auto& [k, cell] : r.coverage) EXPECT_EQ(cell.cases, per_cell) << props::coverage_key_text(k);
}

}  // namespace

// The gate's plan keeps every cell's every_special case and gives every body every kind of order
// data in some cell, with fewer cases than the full plan.
TEST(Coverage, TheQuickPlanKeepsEveryCellAndGivesEveryBodyEveryKindOfOrderData) {
  const auto dists = props::coverage_distributions(true);
  const auto plan = props::coverage_plan(device::StaticRegistry::all_present(), device::DeviceLimits::h200(), kEntries,
                                         dists, 1, nullptr);
  const auto quick = props::quick_coverage_plan(plan);
  EXPECT_LT(quick.size(), plan.size() / 2);
  std::set<props::CoverageKey> with_specials, all_cells;
  std::map<device::Body, std::set<golden::Distribution>> kinds;
  for (const props::AimedCase& a : plan) all_cells.insert(a.target);
  for (const props::AimedCase& a : quick) {
    if (a.c.dist == golden::Distribution::every_special) with_specials.insert(a.target);
    kinds[a.target.body].insert(a.c.dist);
  }
  EXPECT_EQ(with_specials, all_cells);
  for (const auto& [body, seen] : kinds)
    EXPECT_EQ(seen.size(), dists.size()) << device::body_name(body) << " meets " << seen.size() << " kinds";
  // Cheapest first, as the plan, and each case is the plan's own (same line).
  for (std::size_t i = 1; i < quick.size(); ++i)
    EXPECT_LE(std::uint64_t{quick[i - 1].c.m} * quick[i - 1].c.n * quick[i - 1].c.k,
              std::uint64_t{quick[i].c.m} * quick[i].c.n * quick[i].c.k);
}
