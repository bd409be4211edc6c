// SPDX-License-Identifier: MIT OR Apache-2.0
// identify (properties/identify.hpp) without a GPU: the probes tell every candidate of the family
// apart (each emulated as a device's bytes is named alone, the GEMV's two trees together), planted
// bugs are refused, and on the simulation a body standing in for each field's alternative is named
// exactly, with the skinny body's tier break shown; then the CLI's exit statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/properties/identify.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::props {
namespace {

using golden::EntryPoint;

const EntryProbes& plan_for(EntryPoint e) {
  static std::map<EntryPoint, EntryProbes> plans;
  auto it = plans.find(e);
  if (it == plans.end()) {
    const device::SimBackend sim;
    it = plans.emplace(e, identify_plan(sim.registry(), sim.limits(), {e}, 0x1de7).front()).first;
  }
  return it->second;
}

// A body's probes with their operands, and "device" bytes made by emulating one candidate.
struct Probes {
  std::vector<golden::Case> cases;
  std::vector<golden::CaseInputs> inputs;
};
Probes probes_of(EntryPoint e, device::Body b) {
  Probes p;
  for (const IdentifyProbe& ip : plan_for(e).probes) {
    if (ip.body != b) continue;
    p.cases.push_back(ip.c);
    golden::CaseInputs in;
    std::string why;
    if (ip.inputs) in = *ip.inputs;  // the GEMV split probes' operands, built by the plan
    else EXPECT_TRUE(golden::regenerate_inputs(ip.c, &in, &why)) << why;
    p.inputs.push_back(std::move(in));
  }
  return p;
}

std::vector<std::uint16_t> emulate(const IdentifyCandidate& cand, const golden::Case& c, const golden::CaseInputs& in) {
  std::vector<std::uint16_t> out = golden::guarded_sentinel_output(c);
  const ref::GemmView v = golden::case_view(c, in);
  if (cand.gemv) ref::gemm_conventions(cand.conventions.gemv, v, out.data(), c.c_row_stride, 1);
  else ref::gemm_conventions(cand.conventions.tc, v, ref::Arch::sm90, out.data(), c.c_row_stride, 1);
  return out;
}

BodyMatch match_with(const std::vector<IdentifyCandidate>& cands, const Probes& p,
                     const std::vector<std::vector<std::uint16_t>>& produced) {
  std::vector<ProbeRun> runs;
  for (std::size_t i = 0; i < p.cases.size(); ++i) runs.push_back({p.cases[i], &p.inputs[i], &produced[i]});
  return match_candidates(cands, runs, 0);
}

TEST(Identify, CandidatesAreTheWholeSpaceNamedByTheLibraryWhereTheyEqualIt) {
  // nan 3 x (fma, mul-add, prescale at step; prescale at end) 4 x bias 0..62 x scales 2, per order.
  ASSERT_EQ(tc_candidates().size(), 3u * 4u * 63u * 2u);
  ASSERT_EQ(gemv_candidates().size(), 144u);
  const auto rows = tc_space({ref::find_conventions("seed-rows")->tc.k_order});
  std::vector<std::string> tc_names, gemv_names;
  for (const auto& c : tc_candidates()) tc_names.push_back(c.name);
  for (const auto& c : rows) tc_names.push_back(c.name);
  for (const auto& c : gemv_candidates()) gemv_names.push_back(c.name);
  for (const char* n : {"canonical", "seed-tile", "seed-skinny", "seed-rows"})
    EXPECT_EQ(std::count(tc_names.begin(), tc_names.end(), n), 1) << n;
  EXPECT_EQ(std::count(gemv_names.begin(), gemv_names.end(), "canonical"), 1);
  EXPECT_EQ(std::count(gemv_names.begin(), gemv_names.end(), "seed-tile = seed-skinny = seed-rows"), 1);
  // Every candidate distinct, and every name distinct.
  for (const auto* list : {&tc_names, &gemv_names}) {
    std::vector<std::string> sorted = *list;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
}

// A "device" that keeps one tensor-core part: the emulator's bytes under it, in launch_case's
// layout (guard rows of the sentinel).
ProbeLaunch emulating(const ref::TensorCoreConventions& tc) {
  return [tc](const golden::Case& c, const golden::CaseInputs& in, std::vector<std::uint16_t>* out, std::string*) {
    *out = golden::guarded_sentinel_output(c);
    ref::gemm_conventions(tc, golden::case_view(c, in), ref::Arch::sm90, out->data(), c.c_row_stride, 1);
    return true;
  };
}

std::array<std::uint8_t, 128> windows_of(std::array<std::uint8_t, 128> o) {
  for (unsigned w = 0; w < 8; ++w) std::sort(o.begin() + 16 * w, o.begin() + 16 * w + 16);
  return o;
}

// The order probes find any order's windows, on the shapes identify's bodies run: a shuffled
// order, the seed's row-tile order, two windows swapped, the contiguous order; with few columns
// (a position tested per column) and few rows (a pair per row) too.
TEST(Identify, OrderProbesDetermineTheWindowsOfAnyOrder) {
  std::vector<std::array<std::uint8_t, 128>> orders{ref::TensorCoreConventions::identity_k_order(),
                                                    ref::find_conventions("seed-rows")->tc.k_order};
  auto swapped = ref::TensorCoreConventions::identity_k_order();
  std::swap_ranges(swapped.begin(), swapped.begin() + 16, swapped.begin() + 16);
  orders.push_back(swapped);
  std::uint64_t st = 0x5eed;
  for (int i = 0; i < 4; ++i) {
    auto o = ref::TensorCoreConventions::identity_k_order();
    for (unsigned k = 127; k > 0; --k) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(o[k], o[(st >> 33) % (k + 1)]);
    }
    orders.push_back(o);
  }
  struct Shape {
    std::uint32_t m, n;
  };
  for (const Shape sh : {Shape{13, 100}, Shape{16, 300}, Shape{1, 130}, Shape{4, 40}})
    for (const auto& o : orders) {
      ref::TensorCoreConventions tc;
      tc.k_order = o;
      tc.bias = 60;  // no other field changes the probes' bytes
      tc.fold = ref::Fold::mul_add;
      const golden::Case c = golden::CaseSpec{}
                                 .entry(EntryPoint::gemm_pipelined_m32_strided)
                                 .shape(sh.m, sh.n, 256)
                                 .strides(256, sh.n);
      const OrderFinding f = determine_k_order(c, emulating(tc), 64);
      ASSERT_TRUE(f.determined) << sh.m << "x" << sh.n << ": " << f.why;
      EXPECT_EQ(f.k_order, windows_of(o)) << sh.m << "x" << sh.n;
      EXPECT_LE(f.probes.size(), sh.m >= 13 && sh.n >= 100 ? 4u : 64u) << sh.m << "x" << sh.n;
    }
}

// A body that is not 8 chained windows of 16 K (here: every output +1) is said to be outside the
// model, never given an order.
TEST(Identify, OrderProbesRefuseBytesOutsideTheModel) {
  const golden::Case
      c = golden::CaseSpec{}.entry(EntryPoint::gemm_pipelined_m32_strided).shape(8, 100, 128).strides(128, 100);
  const OrderFinding f = determine_k_order(c, [](const golden::Case& cc, const golden::CaseInputs& in,
                                                 std::vector<std::uint16_t>* out, std::string* w) {
    emulating({})(cc, in, out, w);
    (*out)[0] = 0x3F80;  // 1.0: no count of whole windows
    return true;
  });
  EXPECT_FALSE(f.determined);
  EXPECT_FALSE(f.consistent);
  EXPECT_NE(f.why.find("order probe round 0: row 0"), std::string::npos) << f.why;
}

// Each candidate of a seeded subset (every bias 0..62 once, every other field's values) as a
// device's bytes on a body's probes, the bias ladder and the order probes: identify names that
// candidate and no other. Two bodies: the skinny body (k = 768) and the row-tile strips.
void expect_tc_separated(EntryPoint e, device::Body b) {
  Probes p = probes_of(e, b);
  ASSERT_GE(p.cases.size(), 5u);
  golden::Case ladder = p.cases.front();
  p.cases.push_back(ladder);
  p.inputs.push_back(bias_ladder_inputs(ladder));
  if (ladder.k >= 256) {
    p.cases.push_back(ladder);
    p.inputs.push_back(fold_probe_inputs(ladder, 0x666f6c64));
  }
  const auto& cands = tc_candidates();
  // A stride prime to 2 and to 63: biases and both scale precisions spread over the sample (every
  // bias is named from a stand-in on the simulation, IdentifySim.EachTensorCoreFieldsAlternative...).
  for (std::size_t x = b == device::Body::m32_skinny ? 0 : 48; x < cands.size(); x += 97) {
    Probes q = p;
    std::vector<std::vector<std::uint16_t>> produced;
    const OrderFinding f = determine_k_order(p.cases.front(), [&](const golden::Case& c, const golden::CaseInputs& in,
                                                                  std::vector<std::uint16_t>* out, std::string* w) {
      emulating(cands[x].conventions.tc)(c, in, out, w);
      q.cases.push_back(c);
      q.inputs.push_back(in);
      return true;
    });
    ASSERT_TRUE(f.determined) << f.why;
    for (std::size_t i = 0; i < q.cases.size(); ++i) produced.push_back(emulate(cands[x], q.cases[i], q.inputs[i]));
    const BodyMatch m = match_with(cands, q, produced);
    ASSERT_EQ(m.keeps, std::vector<std::size_t>{x}) << device::body_name(b) << ": " << cands[x].name;
  }
}
TEST(Identify, ProbesTellTheTensorCoreSpaceApartOnTheSkinnyBody) {
  expect_tc_separated(EntryPoint::gemm_pipelined_m32, device::Body::m32_skinny);
}
TEST(Identify, ProbesTellTheTensorCoreSpaceApartOnTheRowTileStrips) {
  expect_tc_separated(EntryPoint::gemm_pipelined_m32_strided, device::Body::tc_rows_strip);
}

// The candidates identify must name together for x: x and its twin of the other tree.
std::vector<std::size_t> twins_of(std::size_t x) {
  const auto& cands = gemv_candidates();
  std::vector<std::size_t> want;
  for (std::size_t y = 0; y < cands.size(); ++y)
    if (always_equal(cands[x], cands[y])) want.push_back(y);
  return want;
}

// A seeded subset of the GEMV candidates that holds every value of every field.
std::vector<std::size_t> gemv_subset() {
  const auto& cands = gemv_candidates();
  std::vector<std::size_t> pick;
  std::uint64_t st = 0x5eed;
  for (std::size_t i = 0; i < 12; ++i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    pick.push_back(static_cast<std::size_t>(st >> 33) % cands.size());
  }
  // Every field value once at least: walk the fields and add the first candidate missing one.
  for (std::size_t y = 0; y < cands.size(); ++y) {
    const ref::GemvConventions& g = cands[y].conventions.gemv;
    auto held = [&](auto field) {
      for (std::size_t p : pick)
        if (field(cands[p].conventions.gemv) == field(g)) return true;
      return false;
    };
    if (!held([](const ref::GemvConventions& c) { return static_cast<int>(c.nan); }) ||
        !held([](const ref::GemvConventions& c) { return static_cast<int>(c.lanes); }) ||
        !held([](const ref::GemvConventions& c) { return static_cast<int>(c.chunk); }) ||
        !held([](const ref::GemvConventions& c) { return static_cast<int>(c.scale); }) ||
        !held([](const ref::GemvConventions& c) { return static_cast<int>(c.mac); }) ||
        !held([](const ref::GemvConventions& c) { return static_cast<int>(c.tree); }))
      pick.push_back(y);
  }
  std::sort(pick.begin(), pick.end());
  pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
  return pick;
}

// The GEMV: the plan's probes split every pair of the 144 candidates but the two trees (NUMERICS.md
// 2.4), with nothing left to the split search's budget; and a kernel keeping one candidate of a
// seeded subset that holds every field value is named with its twin and nothing else.
void expect_gemv_separated(EntryPoint e) {
  const Probes p = probes_of(e, device::Body::gemv_strip);
  ASSERT_GE(p.cases.size(), 8u);
  const EntryProbes& ep = plan_for(e);
  ASSERT_EQ(ep.unsplit.size(), ep.bodies.size());
  for (const auto& u : ep.unsplit) EXPECT_TRUE(u.empty());
  const auto& cands = gemv_candidates();
  std::vector<const golden::CaseInputs*> in;
  for (const auto& i : p.inputs) in.push_back(&i);
  const auto groups = candidate_groups(cands, p.cases, in);
  ASSERT_EQ(groups.size(), cands.size() / 2);
  for (const auto& g : groups) EXPECT_EQ(g, twins_of(g.front())) << cands[g.front()].name;
  for (std::size_t x : gemv_subset()) {
    std::vector<std::vector<std::uint16_t>> produced;
    for (std::size_t i = 0; i < p.cases.size(); ++i) produced.push_back(emulate(cands[x], p.cases[i], p.inputs[i]));
    const BodyMatch m = match_with(cands, p, produced);
    EXPECT_EQ(m.keeps, twins_of(x)) << cands[x].name;
  }
}
TEST(Identify, ProbesTellEveryGemvCandidateApartButTheTwoTreesAtBatch4) {
  expect_gemv_separated(EntryPoint::gemv_batch4_strided);
}
TEST(Identify, ProbesTellEveryGemvCandidateApartButTheTwoTreesAtBatch16) {
  expect_gemv_separated(EntryPoint::gemv_batch16_strided);
}

// The split operands are a function of the shape and seed (a run replays), and with no probe that
// splits a group the search reports the group rather than naming one of it.
TEST(Identify, GemvSplitOperandsReplayAndAnUnsplitGroupIsReported) {
  const golden::Case c = probes_of(EntryPoint::gemv_batch4_strided, device::Body::gemv_strip).cases.back();
  const golden::CaseInputs x = gemv_split_inputs(c, 7), y = gemv_split_inputs(c, 7), z = gemv_split_inputs(c, 8);
  EXPECT_EQ(x.a_bits, y.a_bits);
  EXPECT_EQ(x.w_e4m3, y.w_e4m3);
  EXPECT_NE(x.a_bits, z.a_bits);
  const EntryProbes& a = plan_for(EntryPoint::gemv_batch4_strided);
  const device::SimBackend sim;
  const EntryProbes b = identify_plan(sim.registry(), sim.limits(), {EntryPoint::gemv_batch4_strided}, 0x1de7).front();
  ASSERT_EQ(a.probes.size(), b.probes.size());
  for (std::size_t i = 0; i < a.probes.size(); ++i) {
    EXPECT_EQ(a.probes[i].c, b.probes[i].c);
    EXPECT_EQ(a.probes[i].data, b.probes[i].data);
  }
  // The distributions' probes alone leave groups (the gap the split probes close), and the text
  // names a group left by a spent budget as one the probes could not tell apart.
  Probes fixed;
  for (const IdentifyProbe& ip : a.probes)
    if (!ip.inputs) {
      fixed.cases.push_back(ip.c);
      golden::CaseInputs in;
      std::string why;
      ASSERT_TRUE(golden::regenerate_inputs(ip.c, &in, &why)) << why;
      fixed.inputs.push_back(std::move(in));
    }
  std::vector<const golden::CaseInputs*> in;
  for (const auto& i : fixed.inputs) in.push_back(&i);
  EXPECT_LT(candidate_groups(gemv_candidates(), fixed.cases, in).size(), gemv_candidates().size() / 2);
  EntryVerdict ev;
  BodyVerdict bv;
  bv.body = device::Body::gemv_strip;
  bv.gemv = true;
  bv.candidates = gemv_candidates();
  bv.keeps = {gemv_candidates()[0].name, gemv_candidates()[1].name, gemv_candidates()[2].name};
  bv.match.keeps = {0, 1, 2};
  bv.match.elements = {1};
  bv.unsplit = {{0, 1, 2, 3}};
  ev.bodies.push_back(bv);
  const std::string text = identify_text({ev});
  EXPECT_NE(text.find("the probes could not tell these apart"), std::string::npos) << text;
  EXPECT_NE(text.find("budget ran out"), std::string::npos) << text;
}

TEST(Identify, APlantedBugIsNamedNoCandidateAndTheNearestCountsItsElements) {
  const Probes p = probes_of(EntryPoint::gemm_pipelined_m32, device::Body::m32_skinny);
  const auto& cands = tc_candidates();
  const std::size_t canonical = 0;
  ASSERT_EQ(cands[canonical].name, "canonical");
  std::vector<std::vector<std::uint16_t>> produced;
  for (std::size_t i = 0; i < p.cases.size(); ++i)
    produced.push_back(emulate(cands[canonical], p.cases[i], p.inputs[i]));
  // One bit of one element of the third probe.
  produced[2][5] ^= 1u;
  BodyMatch m = match_with(cands, p, produced);
  EXPECT_TRUE(m.keeps.empty());
  EXPECT_EQ(m.nearest, canonical);
  EXPECT_EQ(m.nearest_total, 1u);
  EXPECT_EQ(m.nearest_differ[2], 1u);
  // A write into a guard row: every candidate differs there.
  produced[2][5] ^= 1u;
  produced[0][std::size_t{p.cases[0].m} * p.cases[0].c_row_stride] = 0;
  m = match_with(cands, p, produced);
  EXPECT_TRUE(m.keeps.empty());
  EXPECT_EQ(m.outside[0], 1u);
  EXPECT_EQ(m.nearest, canonical);
}

// ---- the simulation's stand-ins ----------------------------------------------------------------

std::vector<EntryVerdict> identify_on_sim(const std::string& stand_ins, EntryPoint e,
                                          const std::vector<device::Body>& bodies) {
  device::SimBackend sim;
  std::vector<device::BodyStandIn> si;
  std::string why;
  EXPECT_TRUE(device::parse_stand_ins(stand_ins, &si, &why)) << why;
  sim.stand_in(si);
  EntryProbes ep = plan_for(e);
  keep_bodies(&ep, bodies);
  InProcessLauncher launcher(sim);
  return identify(launcher, {ep}, 0);
}

std::string conv_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/identify_" + name + ".contract";
  std::ofstream(path) << text;
  return path;
}

TEST(IdentifySim, EachTensorCoreFieldsAlternativeIsNamedExactly) {
  const struct {
    const char* text;
    const char* name;
  } alts[] = {
      {"tc.nan = zero", "seed-tile"},  // the seed's tile differs from canonical by its NaN decode alone
      {"tc.nan = finite", "nan=finite fold=fma period=step k-order=contiguous"},
      {"tc.fold = mul-add", "nan=propagate fold=mul-add period=step k-order=contiguous"},
      {"tc.fold = prescale", "nan=propagate fold=prescale period=step k-order=contiguous"},
      {"tc.bias = 60", "nan=propagate fold=fma period=step bias=60 k-order=contiguous"},
      // Biases the old sample of {0, 60} named as one of those two.
      {"tc.bias = 1", "nan=propagate fold=fma period=step bias=1 k-order=contiguous"},
      {"tc.bias = 10", "nan=propagate fold=fma period=step bias=10 k-order=contiguous"},
      {"tc.bias = 59", "nan=propagate fold=fma period=step bias=59 k-order=contiguous"},
      {"tc.bias = 61", "nan=propagate fold=fma period=step bias=61 k-order=contiguous"},
      {"tc.bias = 62", "nan=propagate fold=fma period=step bias=62 k-order=contiguous"},
      // One MMA chain over all of K with W prescaled by BF16-rounded scales.
      {"tc.fold = prescale\ntc.period = end\ntc.scales = bf16",
       "nan=propagate fold=prescale period=end scales=bf16 k-order=contiguous"},
      {"tc.scales = bf16", "nan=propagate fold=fma period=step scales=bf16 k-order=contiguous"},
  };
  for (const auto& alt : alts) {
    const std::string file = conv_file("alt", std::string(alt.text) + "\n");
    const auto v = identify_on_sim("m32_skinny=" + file, EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
    ASSERT_EQ(v.size(), 1u);
    ASSERT_EQ(v[0].bodies.size(), 1u);
    EXPECT_EQ(v[0].bodies[0].keeps, std::vector<std::string>{alt.name}) << alt.text;
    EXPECT_TRUE(v[0].ok());
  }
  // The permuted K order alone, and the library values.
  for (const char* name : {"canonical", "seed-tile", "seed-skinny", "seed-rows"}) {
    const auto v = identify_on_sim(std::string("m32_skinny=") + name, EntryPoint::gemm_pipelined_m32,
                                   {device::Body::m32_skinny});
    EXPECT_EQ(v[0].bodies[0].keeps, std::vector<std::string>{name});
  }
  ref::Conventions rows_order = ref::canonical_conventions();
  rows_order.tc.k_order = ref::find_conventions("seed-rows")->tc.k_order;
  rows_order.name.clear();
  std::string text = ref::format_conventions(rows_order);
  const auto v = identify_on_sim("m32_skinny=" + conv_file("order", text), EntryPoint::gemm_pipelined_m32,
                                 {device::Body::m32_skinny});
  EXPECT_EQ(v[0].bodies[0].keeps, std::vector<std::string>{ref::describe(rows_order.tc)});
  // Two MMA windows of a step swapped: named with its windows, never as the contiguous order.
  ref::Conventions swapped = ref::canonical_conventions();
  std::swap_ranges(swapped.tc.k_order.begin(), swapped.tc.k_order.begin() + 16, swapped.tc.k_order.begin() + 16);
  swapped.name.clear();
  const auto w = identify_on_sim("m32_skinny=" + conv_file("swapped", ref::format_conventions(swapped)),
                                 EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
  ASSERT_EQ(w[0].bodies[0].keeps.size(), 1u);
  EXPECT_TRUE(w[0].bodies[0].order.determined);
  EXPECT_EQ(w[0].bodies[0].order.k_order, swapped.tc.k_order);
  EXPECT_NE(w[0].bodies[0].keeps[0], "canonical");
}

// A body whose bytes change with M keeps what the probes saw at their M only: the confirmation at
// other M names the case and the element that refute it.
TEST(IdentifySim, TheConfirmationRefutesABodyWhoseBytesChangeWithM) {
  const auto v = identify_on_sim("m32_skinny=split-k-by-m", EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
  ASSERT_EQ(v[0].bodies.size(), 1u);
  EXPECT_TRUE(v[0].bodies[0].keeps.empty());
  EXPECT_FALSE(v[0].ok());
  EXPECT_NE(v[0].bodies[0].confirm_failure.find("case/1 "), std::string::npos) << v[0].bodies[0].confirm_failure;
  EXPECT_NE(identify_text(v).find("fails the confirmation"), std::string::npos) << identify_text(v);
  // A canonical body is confirmed at several M, each case twice.
  const auto c = identify_on_sim("", EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
  EXPECT_TRUE(c[0].ok());
  EXPECT_GE(c[0].bodies[0].confirm_cases, 3u);
  EXPECT_TRUE(c[0].bodies[0].confirm_failure.empty());
}

// --write-contract's text: the determined value per part; a tier break writes the plurality and
// names the bodies that keep another; a body that keeps none writes nothing.
TEST(IdentifySim, TheDeterminedContractParsesBackAndSaysWhatItCannotHold) {
  auto v = identify_on_sim("m32_skinny=seed-rows", EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
  std::string text, why;
  ASSERT_TRUE(determined_contract(v, &text, &why)) << why;
  ref::Conventions back;
  ASSERT_TRUE(ref::parse_conventions(text, &back, &why)) << why << "\n" << text;
  EXPECT_EQ(back.tc.nan, ref::NanCodes::finite);
  EXPECT_EQ(back.tc.bias, 60u);
  v = identify_on_sim("m32_skinny=seed-skinny,m32_tile=seed-tile,tc_rows_strip=seed-tile",
                      EntryPoint::gemm_pipelined_m32,
                      {device::Body::m32_skinny, device::Body::m32_tile, device::Body::tc_rows_strip});
  ASSERT_TRUE(determined_contract(v, &text, &why)) << why;
  EXPECT_NE(text.find("TIER BREAK: w8a16_gemm_pipelined_m32 / m32_skinny"), std::string::npos) << text;
  ASSERT_TRUE(ref::parse_conventions(text, &back, &why)) << why;
  EXPECT_EQ(back.tc, ref::find_conventions("seed-tile")->tc);
  v = identify_on_sim("m32_skinny=bug:flip@3:7", EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
  text.clear();
  EXPECT_FALSE(determined_contract(v, &text, &why));
  EXPECT_TRUE(text.empty());
  EXPECT_NE(why.find("keeps no contract"), std::string::npos) << why;
}

TEST(IdentifySim, EachGemvFieldsAlternativeIsNamedWithItsTwinTree) {
  for (const char* text : {"gemv.nan = zero", "gemv.nan = finite", "gemv.lanes = 64", "gemv.chunk = 8",
                           "gemv.chunk = 32", "gemv.scale = element", "gemv.mac = mul-add", "gemv.tree = down"}) {
    ref::Conventions c = ref::canonical_conventions();
    std::string why;
    ASSERT_TRUE(ref::parse_conventions(text, &c, &why)) << why;
    const auto v = identify_on_sim("gemv_strip=" + conv_file("gemv", std::string(text) + "\n"),
                                   EntryPoint::gemv_batch4_strided, {device::Body::gemv_strip});
    ASSERT_EQ(v[0].bodies.size(), 1u);
    ref::GemvConventions xor_tree = c.gemv, down_tree = c.gemv;
    xor_tree.tree = ref::GemvTree::xor_butterfly;
    down_tree.tree = ref::GemvTree::shfl_down;
    const std::string x = ref::describe(xor_tree), d = ref::describe(down_tree);
    const std::vector<std::string> want = x == ref::describe(ref::canonical_conventions().gemv)
                                              ? std::vector<std::string>{"canonical", d}
                                              : std::vector<std::string>{x, d};
    // Both trees named, and nothing else: the split probes tell every other pair apart.
    EXPECT_EQ(v[0].bodies[0].keeps, want) << text;
    EXPECT_TRUE(v[0].bodies[0].unsplit.empty()) << text;
  }
  const auto v = identify_on_sim("gemv_strip=seed-tile", EntryPoint::gemv_batch16_strided, {device::Body::gemv_strip});
  ASSERT_EQ(v[0].bodies[0].keeps.size(), 2u);
  EXPECT_EQ(v[0].bodies[0].keeps[1], "seed-tile = seed-skinny = seed-rows");
}

// GEMVs outside the plan's 144 candidates (lanes past 64, chunks of 1, 2, 4, 64, 128): the
// adaptive split probes over the whole space name each with its tree twin alone.
TEST(IdentifySim, GemvsOutsideThePlansCandidatesAreNamedOverTheWholeSpace) {
  for (const char* text :
       {"gemv.lanes = 128\ngemv.chunk = 4\n", "gemv.lanes = 96\ngemv.chunk = 1\ngemv.mac = mul-add\n",
        "gemv.lanes = 32\ngemv.chunk = 64\ngemv.scale = element\n"}) {
    ref::Conventions want;
    std::string why;
    ASSERT_TRUE(ref::parse_conventions(text, &want, &why)) << why;
    const auto v = identify_on_sim("gemv_strip=" + conv_file("wide", text), EntryPoint::gemv_batch16_strided,
                                   {device::Body::gemv_strip});
    ASSERT_EQ(v[0].bodies.size(), 1u);
    const BodyVerdict& bv = v[0].bodies[0];
    ASSERT_EQ(bv.match.keeps.size(), 2u) << text << identify_text(v);
    for (std::size_t i : bv.match.keeps) {
      ref::GemvConventions g = bv.candidates[i].conventions.gemv;
      g.tree = want.gemv.tree;
      EXPECT_EQ(g, want.gemv) << text;
    }
    EXPECT_TRUE(v[0].ok()) << identify_text(v);
  }
}

// A stand-in keeping each GEMV candidate of a seeded subset holding every field value: identify on
// the simulation names it with its twin tree and nothing else, through the launcher and the plan.
TEST(IdentifySim, EveryGemvCandidateOfASeededSubsetIsNamedExactly) {
  const auto& cands = gemv_candidates();
  for (std::size_t x : gemv_subset()) {
    ref::Conventions c = cands[x].conventions;
    c.name.clear();
    const auto v = identify_on_sim("gemv_strip=" + conv_file("cand", ref::format_conventions(c)),
                                   EntryPoint::gemv_batch4_strided, {device::Body::gemv_strip});
    ASSERT_EQ(v[0].bodies.size(), 1u);
    std::vector<std::string> want;
    for (std::size_t y : twins_of(x)) want.push_back(cands[y].name);
    EXPECT_EQ(v[0].bodies[0].keeps, want) << cands[x].name;
    EXPECT_TRUE(v[0].ok());
  }
}

TEST(IdentifySim, TheSkinnyBodysTierBreakIsNamed) {
  const auto v = identify_on_sim("m32_skinny=seed-skinny,m32_tile=seed-tile", EntryPoint::gemm_pipelined_m32,
                                 {device::Body::m32_tile, device::Body::m32_skinny});
  ASSERT_EQ(v[0].bodies.size(), 2u);
  EXPECT_EQ(v[0].bodies[0].keeps, std::vector<std::string>{"seed-tile"});
  EXPECT_EQ(v[0].bodies[1].keeps, std::vector<std::string>{"seed-skinny"});
  EXPECT_TRUE(v[0].tier_break());
  EXPECT_FALSE(v[0].ok());
  const std::string text = identify_text(v);
  EXPECT_NE(text.find("TIER BREAK"), std::string::npos) << text;
  EXPECT_NE(text.find("m32_tile keeps seed-tile"), std::string::npos) << text;
  EXPECT_NE(text.find("m32_skinny keeps seed-skinny"), std::string::npos) << text;
}

TEST(IdentifySim, PlantedBugsAreRefused) {
  for (const char* bug : {"m32_skinny=bug:flip@3:7", "m32_skinny=bug:swap-k@3:40", "m32_skinny=seed-skinny+bug:flip"}) {
    const auto v = identify_on_sim(bug, EntryPoint::gemm_pipelined_m32, {device::Body::m32_skinny});
    ASSERT_EQ(v[0].bodies.size(), 1u);
    EXPECT_TRUE(v[0].bodies[0].keeps.empty()) << bug;
    EXPECT_FALSE(v[0].ok());
    EXPECT_NE(identify_text(v).find("KEEPS NONE (nearest: "), std::string::npos);
  }
  const auto v = identify_on_sim("m32_skinny=seed-skinny+bug:flip", EntryPoint::gemm_pipelined_m32,
                                 {device::Body::m32_skinny});
  const auto& near = v[0].bodies[0].candidates[v[0].bodies[0].match.nearest];
  EXPECT_EQ(near.name, "seed-skinny");
  EXPECT_EQ(v[0].bodies[0].match.nearest_total, std::uint64_t{v[0].bodies[0].probes.size()});  // C[0][0] of each
  // The report names the first probe's flipped element, and lists every probe that differs.
  const BodyVerdict& bv = v[0].bodies[0];
  EXPECT_EQ(bv.nearest_first.rfind(golden::format_case(bv.probes[0]) + ": C[0][0] is 0x", 0), 0u) << bv.nearest_first;
  const std::string text = identify_text(v);
  EXPECT_NE(text.find("    first difference: " + bv.nearest_first + "\n"), std::string::npos) << text;
  std::size_t listed = 0;
  for (std::size_t at = text.find(" differ on "); at != std::string::npos; at = text.find(" differ on ", at + 1))
    ++listed;
  EXPECT_EQ(listed, bv.probes.size()) << text;
}

TEST(IdentifySim, StandInsThatCannotBeReadAreErrors) {
  std::vector<device::BodyStandIn> si;
  std::string why;
  for (const char* bad : {"nobody=canonical", "m32_skinny", "m32_skinny=", "m32_skinny=no-such-contract",
                          "m32_skinny=bug:flop", "m32_skinny=bug:swap-k", "m32_skinny=bug:swap-k@3:3",
                          "m32_skinny=canonical,m32_skinny=seed-tile", "m32_skinny=bug:flip@x:1"}) {
    why.clear();
    EXPECT_FALSE(device::parse_stand_ins(bad, &si, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  EXPECT_TRUE(device::parse_stand_ins("m32_skinny=seed-skinny,gemv_strip=bug:flip@0:1", &si, &why)) << why;
  ASSERT_EQ(si.size(), 2u);
  EXPECT_EQ(si[1].bug, device::PlantedBug::flip);
  EXPECT_EQ(si[1].y, 1u);
  for (const char* bad :
       {"tc_rows_packed=bug:early-nan", "tc_rows_packed=bug:early-nan@0", "tc_rows_packed=bug:early-nan@x"}) {
    why.clear();
    EXPECT_FALSE(device::parse_stand_ins(bad, &si, &why)) << bad;
    EXPECT_NE(why.find("bug:early-nan takes @L"), std::string::npos) << why;
  }
  EXPECT_TRUE(device::parse_stand_ins("tc_rows_packed=bug:early-nan@32", &si, &why)) << why;
  ASSERT_EQ(si.size(), 1u);
  EXPECT_EQ(si[0].bug, device::PlantedBug::early_nan);
  EXPECT_EQ(si[0].x, 32u);
}

// ---- the CLI ----------------------------------------------------------------------------------

using cli_test::run_cli;
using cli_test::run_process;

TEST(IdentifyCli, BadArgumentsExit2AndRunNothing) {
  for (const char* args :
       {"--entry nosuch", "--body nosuch", "--backend nosuch", "--backend sim --module /nonexistent.cubin", "--seed -1",
        "--entry gemv_batch4_strided --body m32_skinny"}) {
    const auto r = run_cli(std::string("identify --backend sim ") + args);
    EXPECT_EQ(r.exit_status, 2) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("probing"), std::string::npos) << args << "\n" << r.output;
  }
  const auto r = run_process(std::string("W8A16_SIM_CONVENTIONS=m32_skinny=bug:flop '") + W8A16_CLI_PATH +
                             "' identify --backend sim --entry gemm_pipelined_m32");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("W8A16_SIM_CONVENTIONS"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("probing"), std::string::npos) << r.output;
}

TEST(IdentifyCli, CanonicalSimulationPassesAndATierBreakFails) {
  const std::string json = ::testing::TempDir() + "/identify.json";
  auto r = run_cli(
      "identify --backend sim --entry gemv_batch4_strided --entry gemm_pipelined_m32 --body m32_skinny "
      "--body m32_tile --body gemv_strip --json " +
      json);
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("every body keeps canonical"), std::string::npos) << r.output;
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["verdict"], "PASS");
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][1]["keeps"], nlohmann::json::array({"canonical"}));

  r = run_process(std::string("W8A16_SIM_CONVENTIONS=m32_skinny=seed-skinny,m32_tile=seed-tile '") + W8A16_CLI_PATH +
                  "' identify --backend sim --entry gemm_pipelined_m32 --body m32_skinny --body m32_tile --json " +
                  json);
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("TIER BREAK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m32_tile keeps seed-tile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m32_skinny keeps seed-skinny"), std::string::npos) << r.output;
  std::ifstream g(json);
  const nlohmann::json k = nlohmann::json::parse(g);
  EXPECT_EQ(k["verdict"], "FAIL");
  EXPECT_EQ(k["entries"][0]["tier_break"], true);

  r = run_process(std::string("W8A16_SIM_CONVENTIONS=gemv_strip=bug:flip '") + W8A16_CLI_PATH +
                  "' identify --backend sim --entry gemv_batch4_strided");
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("KEEPS NONE (nearest: canonical"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace w8a16::props
