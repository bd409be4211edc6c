// SPDX-License-Identifier: MIT OR Apache-2.0
// Coverage by construction (coverage.hpp): every cell has a case whose plan lands in it, with every
// special class; the configurations follow geometry.hpp's thresholds; a gap is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "w8a16/device/bodies.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/verify.hpp"

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
  t[a] = props::CoverageCell{3, (1u << golden::kSpecialClassCount) - 1 - golden::kSpecialSNan, 0, props::kAllLoneBits};
  t[stray] = props::CoverageCell{1, 0, 0, 0};
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

// The lone cells are the body's, filled through any of its cells (here the two GEMV entry
// points'); one left empty is a gap that names the body, the special and the step.
TEST(Coverage, GapsNameEachLoneCellNoCaseFilled) {
  const props::CoverageKey a{EntryPoint::gemv_batch4_strided, Body::gemv_strip, "8-column strips"};
  const props::CoverageKey b{EntryPoint::gemv_batch16_strided, Body::gemv_strip, "8-column strips"};
  const std::uint32_t all_classes = (1u << golden::kSpecialClassCount) - 1;
  using golden::LoneKind, golden::LoneStep;
  props::CoverageTable t;
  t[a] = props::CoverageCell{2, all_classes, 0,
                             props::kAllLoneBits & ~props::lone_bit(LoneKind::w_nan, LoneStep::first)};
  t[b] = props::CoverageCell{2, all_classes, 0, 0};
  std::vector<std::string> gaps = props::coverage_gaps({a, b}, t);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].find("empty cells: gemv_strip x {w_nan at the first K-step} (no case of more than 4 K-steps"),
            std::string::npos)
      << gaps[0];
  t[b].lone_seen = props::lone_bit(LoneKind::w_nan, LoneStep::first);
  EXPECT_TRUE(props::coverage_gaps({a, b}, t).empty());
  t[a].lone_seen = props::lone_bit(LoneKind::s_inf_nan, LoneStep::middle);
  gaps = props::coverage_gaps({a, b}, t);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].find("gemv_strip x {w_nan at the middle K-step, w_nan at the last K-step, a_nan at the first "
                         "K-step, a_nan at the middle K-step, a_nan at the last K-step, s_inf_nan at the first K-step, "
                         "s_inf_nan at the last K-step}"),
            std::string::npos)
      << gaps[0];
  EXPECT_EQ(props::expected_lone_cells({a, b}).size(), 9u);
  EXPECT_EQ(props::lone_cell_text(props::expected_lone_cells({a, b})[1]), "gemv_strip x w_nan at the middle K-step");
}

// verify's verdict: a lone cell no case filled is a coverage FAIL whose details name it.
TEST(Coverage, AnEmptyLoneCellFailsTheVerdict) {
  const props::CoverageKey a{EntryPoint::gemv_batch4_strided, Body::gemv_strip, "8-column strips"};
  props::VerifyResult v;
  v.coverage.checked = true;
  v.coverage.expected = {a};
  v.campaign.coverage[a] = props::CoverageCell{
      5, (1u << golden::kSpecialClassCount) - 1, 0,
      props::kAllLoneBits & ~props::lone_bit(golden::LoneKind::s_inf_nan, golden::LoneStep::last)};
  props::judge_coverage(&v);
  bool named = false;
  for (const props::Reason& r : props::verdict_reasons(v))
    for (const std::string& d : r.details)
      named |= r.group == "coverage" && d.find("gemv_strip x {s_inf_nan at the last K-step}") != std::string::npos;
  EXPECT_TRUE(named);
}

// A case fills a lone cell only with one special over a range longer than the body's stride.
TEST(Coverage, ACaseFillsALoneCellOnlyOverARangeLongerThanTheBodysStride) {
  golden::LoneSpecial one;
  one.found = true;
  one.kind = golden::LoneKind::a_nan;
  one.where = golden::LoneStep::last;
  const std::uint32_t packed = device::body_info(Body::wgmma_packed128).long_range().stride_steps;
  const std::uint32_t gemv = device::body_info(Body::gemv_strip).long_range().stride_steps;
  EXPECT_EQ(packed, 32u);  // the NaN table's 32 lanes
  EXPECT_EQ(gemv, 4u);     // 32 lanes of 16 K
  golden::Case c = golden::CaseSpec{}.shape(3, 100, packed * 128);
  EXPECT_EQ(props::lone_bits(c, one, Body::wgmma_packed128), 0u);
  EXPECT_EQ(props::lone_bits(c, one, Body::gemv_strip),
            props::lone_bit(golden::LoneKind::a_nan, golden::LoneStep::last));
  c.k += 128;
  EXPECT_EQ(props::lone_bits(c, one, Body::wgmma_packed128),
            props::lone_bit(golden::LoneKind::a_nan, golden::LoneStep::last));
  one.found = false;
  EXPECT_EQ(props::lone_bits(c, one, Body::wgmma_packed128), 0u);
}

// Every body of the module gets its nine lone cases (kind x step) at a long-range shape of its
// own: more steps than its longest stride, planned into the body at one of its expected cells, the
// kind and step in the seed; for each module kind.
TEST(Coverage, EveryBodyHasALoneSpecialCasePerKindAndStepOverALongRange) {
  device::StaticRegistry no_rows = device::StaticRegistry::without_hopper_tier();
  no_rows.set_present(device::KernelId::tc_rows, false).set_present(device::KernelId::tc_rows_m64, false);
  for (const device::StaticRegistry& reg :
       {device::StaticRegistry::all_present(), device::StaticRegistry::without_hopper_tier(), no_rows}) {
    const auto cells = props::expected_cells(reg, kEntries);
    std::vector<Body> unreached;
    const auto plan = props::lone_specials_plan(reg, device::DeviceLimits::h200(), kEntries, 5, &unreached);
    for (Body b : unreached) ADD_FAILURE() << "no long-range shape reaches " << device::body_name(b);
    EXPECT_EQ(plan.size(), props::expected_lone_cells(cells).size());
    std::map<Body, std::uint32_t> asked;
    std::set<std::uint64_t> seeds;
    for (const props::AimedCase& a : plan) {
      const std::string line = golden::format_case(a.c);
      EXPECT_EQ(a.c.dist, golden::Distribution::lone_specials) << line;
      EXPECT_EQ(golden::case_problem(a.c), "") << line;
      EXPECT_GT(a.c.k / 128, device::body_info(a.target.body).long_range().stride_steps) << line;
      EXPECT_NE(std::find(cells.begin(), cells.end(), a.target), cells.end()) << line;
      const device::Planned p = props::plan_case(a.c, reg, device::DeviceLimits::h200());
      ASSERT_TRUE(p.ok()) << p.status.message << "\n  " << line;
      EXPECT_EQ((props::CoverageKey{a.c.entry, p.plan.body, props::configuration_of(p.plan)}), a.target) << line;
      const auto kind = static_cast<golden::LoneKind>(a.c.seed & 3);
      const auto step = static_cast<golden::LoneStep>((a.c.seed >> 2) & 3);
      asked[a.target.body] |= props::lone_bit(kind, step);
      seeds.insert(a.c.seed);
    }
    EXPECT_EQ(seeds.size(), plan.size());
    for (const auto& [body, bits] : asked) EXPECT_EQ(bits, props::kAllLoneBits) << device::body_name(body);
    std::set<Body> bodies;
    for (const auto& k : cells) bodies.insert(k.body);
    EXPECT_EQ(asked.size(), bodies.size());
    for (std::size_t i = 1; i < plan.size(); ++i)
      EXPECT_LE(std::uint64_t{plan[i - 1].c.m} * plan[i - 1].c.n * plan[i - 1].c.k,
                std::uint64_t{plan[i].c.m} * plan[i].c.n * plan[i].c.k);
  }
  // Every long-range shape of every body is longer than the body's stride.
  for (Body b : device::kAllBodies) {
    const device::LongRange& r = device::body_info(b).long_range();
    EXPECT_GT(r.stride_steps, 0u) << device::body_name(b);
    EXPECT_FALSE(r.shapes.empty()) << device::body_name(b);
    for (const device::BodyShapeMNK& s : r.shapes)
      EXPECT_TRUE(s.k % 128 == 0 && s.k / 128 > r.stride_steps) << device::body_name(b) << " k=" << s.k;
  }
  // Through the GEMVs alone, only the GEMV strip's; a body no chosen entry point reaches has none.
  const auto gemv = props::lone_specials_plan(device::StaticRegistry::all_present(), device::DeviceLimits::h200(),
                                              {EntryPoint::gemv_batch16_strided}, 5, nullptr);
  ASSERT_EQ(gemv.size(), 9u);
  for (const props::AimedCase& a : gemv) EXPECT_EQ(a.c.entry, EntryPoint::gemv_batch16_strided);
}

// The campaign fills every lone cell of every body from the inputs its cases really hold (the
// simulation runs every long-range case: each case's operands read back by find_lone_special).
TEST(Coverage, TheCampaignFillsEveryLoneCellOfEveryBody) {
  device::SimBackend sim;
  props::CampaignOptions opt;
  opt.cases = 0;
  opt.aimed = props::lone_specials_plan(sim.registry(), sim.limits(), kEntries, 11, nullptr);
  const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().why;
  std::map<Body, std::uint32_t> seen;
  for (const auto& [k, cell] : r.coverage) seen[k.body] |= cell.lone_seen;
  EXPECT_EQ(seen.size(), device::kBodyCount);
  for (const auto& [body, bits] : seen) EXPECT_EQ(bits, props::kAllLoneBits) << device::body_name(body);
  // The gaps left are the cells' own (no every_special case ran), none of them a lone cell's.
  for (const std::string& g : props::coverage_gaps(props::expected_cells(sim.registry(), kEntries), r.coverage))
    EXPECT_EQ(g.find("K-step"), std::string::npos) << g;
}

// A slip that loses the NaN codes a 32-lane scan reads before its last pass (the simulation's
// early-nan stand-in, sim_backend.hpp) in one body: its lone NaN-code case at the first step fails,
// with an output per row of the column; the cases of the other kinds pass, and the body's cells'
// coverage cases (the quick plan's on a GPU: every special class and the order data) pass too,
// their ranges too short for a second pass. Here the row-tile kernel's packed strips, the
// cheapest body to run every coverage case of.
TEST(Coverage, AnEarlyNanSlipFailsTheLoneNanCodeAtTheFirstStepAndNoCoverageCaseBefore) {
  const std::vector<EntryPoint> packed = {EntryPoint::gemm_packed_strided};
  device::SimBackend sim;
  device::BodyStandIn slip;
  slip.body = Body::tc_rows_packed;
  slip.bug = device::PlantedBug::early_nan;
  slip.x = 32;
  slip.text = "tc_rows_packed=bug:early-nan@32";
  sim.stand_in({slip});
  props::CampaignOptions opt;
  opt.cases = 0;
  for (const props::AimedCase& a :
       props::quick_coverage_plan(props::coverage_plan(sim.registry(), sim.limits(), packed,
                                                       props::coverage_distributions(true), 1, nullptr)))
    if (a.target.body == Body::tc_rows_packed) opt.aimed.push_back(a);
  ASSERT_GE(opt.aimed.size(), 3u);
  EXPECT_TRUE(props::run_campaign(sim, opt, nullptr).failures.empty());
  opt.aimed.clear();
  for (const props::AimedCase& a : props::lone_specials_plan(sim.registry(), sim.limits(), packed, 1, nullptr))
    if (a.target.body == Body::tc_rows_packed) opt.aimed.push_back(a);
  ASSERT_EQ(opt.aimed.size(), 9u);
  const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
  ASSERT_EQ(r.failures.size(), 1u);
  const golden::Case& failed = r.failures[0].c;
  EXPECT_EQ(failed.seed & 0xF, 0u) << golden::format_case(failed);  // w_nan at the first step
  EXPECT_EQ(r.failures[0].mismatched_elements, failed.m) << r.failures[0].why;
}

// The same slip in any body, its scan as long as the body's stride: the body's lone NaN code at
// the first step (a range longer than that stride) fails, with an output per row of its column.
TEST(Coverage, AnEarlyNanSlipInAnyBodyFailsItsLoneNanCodeAtTheFirstStep) {
  device::SimBackend plain;
  for (const props::AimedCase& a : props::lone_specials_plan(plain.registry(), plain.limits(), kEntries, 2, nullptr)) {
    if ((a.c.seed & 0xF) != 0) continue;  // w_nan at the first step
    device::SimBackend sim;
    device::BodyStandIn slip;
    slip.body = a.target.body;
    slip.bug = device::PlantedBug::early_nan;
    slip.x = device::body_info(a.target.body).long_range().stride_steps;
    sim.stand_in({slip});
    props::CampaignOptions opt;
    opt.cases = 0;
    opt.aimed = {a};
    const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
    ASSERT_EQ(r.failures.size(), 1u) << device::body_name(a.target.body);
    EXPECT_EQ(r.failures[0].mismatched_elements, a.c.m)
        << device::body_name(a.target.body) << ": " << r.failures[0].why;
  }
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
  // The GEMV strip's nine lone cases, through the first GEMV's cell.
  const auto lone = props::lone_specials_plan(sim.registry(), sim.limits(), gemvs, 3, nullptr);
  ASSERT_EQ(lone.size(), 9u);
  opt.aimed = props::merged_plans(opt.aimed, lone);
  const props::CampaignResult r = props::run_campaign(sim, opt, nullptr);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().why;
  EXPECT_EQ(r.aimed_run, 2 * per_cell + 9);
  EXPECT_TRUE(props::coverage_gaps(props::expected_cells(sim.registry(), gemvs), r.coverage).empty());
  for (const auto& [k, cell] : r.coverage)
    EXPECT_EQ(cell.cases, per_cell + (k.entry == EntryPoint::gemv_batch4_strided ? 9 : 0))
        << props::coverage_key_text(k);
  // Without the lone cases, the lone cells are the gaps.
  opt.aimed.erase(std::remove_if(opt.aimed.begin(), opt.aimed.end(),
                                 [](const props::AimedCase& a) {
                                   return a.c.dist == golden::Distribution::lone_specials;
                                 }),
                  opt.aimed.end());
  const auto gaps = props::coverage_gaps(props::expected_cells(sim.registry(), gemvs),
                                         props::run_campaign(sim, opt, nullptr).coverage);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].find("empty cells: gemv_strip x {w_nan at the first K-step, "), std::string::npos) << gaps[0];
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

// verify's plan, the coverage cases and the lone specials' merged: its quick share keeps every lone
// case and chooses among the others exactly as without them.
TEST(Coverage, TheQuickPlanKeepsEveryLoneSpecialCaseAndTheRestAsBefore) {
  const device::StaticRegistry reg = device::StaticRegistry::all_present();
  const auto plan = props::coverage_plan(reg, device::DeviceLimits::h200(), kEntries,
                                         props::coverage_distributions(true), 1, nullptr);
  const auto lone = props::lone_specials_plan(reg, device::DeviceLimits::h200(), kEntries, 1, nullptr);
  const auto quick = props::quick_coverage_plan(props::merged_plans(plan, lone));
  std::vector<golden::Case> lone_kept, rest_kept, rest_alone;
  for (const props::AimedCase& a : quick)
    (a.c.dist == golden::Distribution::lone_specials ? lone_kept : rest_kept).push_back(a.c);
  for (const props::AimedCase& a : props::quick_coverage_plan(plan)) rest_alone.push_back(a.c);
  EXPECT_EQ(lone_kept.size(), lone.size());
  EXPECT_EQ(lone_kept.size(), 9 * device::kBodyCount);
  EXPECT_EQ(rest_kept, rest_alone);
  for (std::size_t i = 1; i < quick.size(); ++i)
    EXPECT_LE(std::uint64_t{quick[i - 1].c.m} * quick[i - 1].c.n * quick[i - 1].c.k,
              std::uint64_t{quick[i].c.m} * quick[i].c.n * quick[i].c.k);
}
