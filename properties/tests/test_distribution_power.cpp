// SPDX-License-Identifier: MIT OR Apache-2.0
// How many outputs each distribution changes when the order, a rounding or a zero sign is wrong:
// planted wrong models of the two contracts (NUMERICS.md 2.1 and 2.2), written here from the
// emulator's primitives, against the emulator, on every distribution. The distributions built to
// show the order (fold_ties, zero_signs, cancelling_steps) must change most outputs of the bugs
// they aim at; the table of every pair is printed (properties/README.md keeps a run of it).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/gemv.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

namespace golden = w8a16::golden;
namespace ref = w8a16::ref;
using golden::Distribution;

constexpr std::uint32_t kNegZero = 0x80000000u;
std::uint32_t mul(std::uint32_t a, std::uint32_t b) {
  return ref::f32_fma_rne_bits(a, b, kNegZero);
}  // a*b rounded once
std::uint32_t add(std::uint32_t a, std::uint32_t b) { return ref::f32_add_rne_bits(a, b); }
std::uint32_t fma(std::uint32_t a, std::uint32_t b, std::uint32_t c) { return ref::f32_fma_rne_bits(a, b, c); }

// One element's ingredients: the step partials (NUMERICS.md 2.1: 8 chained k16 MMAs from +0), the
// eight window results of each step taken alone (for the wrong chain), and the scales.
struct Element {
  std::vector<std::uint32_t> p, s;
  std::vector<std::array<std::uint32_t, 8>> windows;
};

Element element(const ref::GemmView& v, std::uint32_t m, std::uint32_t n) {
  Element e;
  for (std::uint32_t st = 0; st < v.k_steps(); ++st) {
    e.p.push_back(ref::canonical_step_partial_bits(v, ref::Arch::sm90, m, n, st));
    e.s.push_back(ref::f32_to_bits(v.scale(n, st)));
    std::array<std::uint32_t, 8> w{};
    for (int j = 0; j < 8; ++j) {
      std::uint16_t a[16], b[16];
      for (int t = 0; t < 16; ++t) {
        const std::uint32_t k = 128 * st + 16 * j + t;
        a[t] = v.a[std::size_t{m} * v.a_row_stride + k];
        b[t] = ref::e4m3fn_to_bf16_bits(v.w[std::size_t{n} * v.k + k]);
      }
      w[j] = ref::mma_k16_bits(ref::Arch::sm90, 0, a, b);
    }
    e.windows.push_back(w);
  }
  return e;
}

using CanonicalModel = std::function<std::uint32_t(const Element&)>;

std::uint32_t fold_in_order(const Element& e, std::uint32_t start, std::size_t from, std::size_t to) {
  std::uint32_t acc = start;
  for (std::size_t i = from; i < to; ++i) acc = fma(e.p[i], e.s[i], acc);
  return acc;
}

// The contract, and wrong models a kernel bug would be: each returns FP32 acc.
const std::vector<std::pair<std::string, CanonicalModel>>& canonical_models() {
  static const std::vector<std::pair<std::string, CanonicalModel>> models = {
      {"as specified", [](const Element& e) { return fold_in_order(e, 0, 0, e.p.size()); }},
      {"fold rounded twice",
       [](const Element& e) {
         std::uint32_t acc = 0;
         for (std::size_t i = 0; i < e.p.size(); ++i) acc = add(mul(e.p[i], e.s[i]), acc);
         return acc;
       }},
      {"fold from -0", [](const Element& e) { return fold_in_order(e, kNegZero, 0, e.p.size()); }},
      {"steps folded in reverse",
       [](const Element& e) {
         std::uint32_t acc = 0;
         for (std::size_t i = e.p.size(); i-- > 0;) acc = fma(e.p[i], e.s[i], acc);
         return acc;
       }},
      {"K cut in two, halves added",
       [](const Element& e) {
         const std::size_t h = e.p.size() / 2;
         return add(fold_in_order(e, 0, 0, h), fold_in_order(e, 0, h, e.p.size()));
       }},
      {"steps summed as a tree",
       [](const Element& e) {
         std::vector<std::uint32_t> t;
         for (std::size_t i = 0; i < e.p.size(); ++i) t.push_back(mul(e.p[i], e.s[i]));
         while (t.size() > 1) {
           std::vector<std::uint32_t> next;
           for (std::size_t i = 0; i < t.size(); i += 2) next.push_back(i + 1 < t.size() ? add(t[i], t[i + 1]) : t[i]);
           t = next;
         }
         return t.empty() ? 0u : t[0];
       }},
      {"windows of a step added, not chained",
       [](const Element& e) {
         std::uint32_t acc = 0;
         for (std::size_t i = 0; i < e.p.size(); ++i) {
           std::uint32_t p = 0;
           for (std::uint32_t w : e.windows[i]) p = add(p, w);
           acc = fma(p, e.s[i], acc);
         }
         return acc;
       }},
  };
  return models;
}

// The GEMV order (reference/gemv.hpp) with one thing changed at a time.
struct GemvChange {
  bool butterfly_reversed = false, negative_zero_start = false, fold_rounded_twice = false;
};
std::uint32_t gemv_acc(const ref::GemmView& v, std::uint32_t m, std::uint32_t n, GemvChange ch) {
  const std::uint32_t chunks = v.k / ref::kGemvChunk;
  std::uint32_t acc[ref::kGemvLanes];
  for (std::uint32_t lane = 0; lane < ref::kGemvLanes; ++lane) {
    std::uint32_t a_l = ch.negative_zero_start ? kNegZero : 0;
    for (std::uint32_t c = lane; c < chunks; c += ref::kGemvLanes) {
      std::uint32_t p = 0;
      for (std::uint32_t j = 0; j < ref::kGemvChunk; ++j) {
        const std::uint32_t k = c * ref::kGemvChunk + j;
        p = fma(ref::bf16_bits_to_f32_bits(v.a[std::size_t{m} * v.a_row_stride + k]),
                ref::bf16_bits_to_f32_bits(ref::e4m3fn_to_bf16_bits(v.w[std::size_t{n} * v.k + k])), p);
      }
      const std::uint32_t s = ref::f32_to_bits(v.scale(n, c * ref::kGemvChunk / ref::kKStep));
      a_l = ch.fold_rounded_twice ? add(mul(p, s), a_l) : fma(p, s, a_l);
    }
    acc[lane] = a_l;
  }
  for (std::uint32_t i = 0; i < 5; ++i) {
    const std::uint32_t off = ch.butterfly_reversed ? 1u << i : 16u >> i;
    std::uint32_t next[ref::kGemvLanes];
    for (std::uint32_t lane = 0; lane < ref::kGemvLanes; ++lane) next[lane] = add(acc[lane], acc[lane ^ off]);
    for (std::uint32_t lane = 0; lane < ref::kGemvLanes; ++lane) acc[lane] = next[lane];
  }
  return acc[0];
}
const std::vector<std::pair<std::string, GemvChange>>& gemv_models() {
  static const std::vector<std::pair<std::string, GemvChange>> models = {
      {"as specified", {}},
      {"GEMV butterfly 1,2,..,16", {true, false, false}},
      {"GEMV lanes from -0", {false, true, false}},
      {"GEMV fold rounded twice", {false, false, true}},
  };
  return models;
}

golden::Case shape(Distribution d, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint64_t seed) {
  return golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined_m32_strided).shape(m, n, k).dist(d).seed(seed);
}

// Share of outputs (over a few shapes) each wrong model changes, per distribution; the "as
// specified" models must change none (they check the harness against the emulator itself).
struct Power {
  std::map<std::string, std::map<std::string, double>> share;  // model -> dist -> share of outputs changed
};

const Power& measured() {
  static const Power power = [] {
    Power pw;
    struct S {
      std::uint32_t m, n, k;
    };
    const S shapes[] = {{6, 40, 256}, {4, 33, 512}, {5, 36, 1024}, {3, 20, 2048}};
    for (Distribution d : golden::kAllDistributions) {
      std::map<std::string, std::uint64_t> changed;
      std::uint64_t total = 0;
      std::uint64_t seed = 1;
      for (const S& sh : shapes) {
        // cancelling_steps has its groups of four steps from K = 512 (what the coverage cases use).
        if (d == Distribution::cancelling_steps && sh.k < 512) continue;
        const golden::Case c = shape(d, sh.m, sh.n, sh.k, seed++);
        golden::CaseInputs in;
        std::string error;
        EXPECT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
        const ref::GemmView v = golden::case_view(c, in);
        for (std::uint32_t m = 0; m < c.m; ++m)
          for (std::uint32_t n = 0; n < c.n; ++n) {
            ++total;
            const std::uint16_t want = ref::canonical_element_bf16(v, ref::Arch::sm90, m, n);
            const Element e = element(v, m, n);
            for (const auto& [name, model] : canonical_models())
              changed[name] += ref::f32_bits_to_bf16_rne(model(e)) != want;
            const std::uint16_t want_gemv = ref::gemv_element_bf16(v, m, n);
            for (const auto& [name, ch] : gemv_models())
              changed[name == "as specified" ? "GEMV as specified" : name] += ref::f32_bits_to_bf16_rne(
                                                                                  gemv_acc(v, m, n, ch)) != want_gemv;
          }
      }
      for (const auto& [name, count] : changed)
        pw.share[name][std::string(golden::distribution_name(d))] = static_cast<double>(count) /
                                                                    static_cast<double>(total);
    }
    return pw;
  }();
  return power;
}

TEST(DistributionPower, TheHarnessModelsAreTheEmulatorsContracts) {
  for (const char* exact : {"as specified", "GEMV as specified"})
    for (const auto& [dist, share] : measured().share.at(exact)) EXPECT_EQ(share, 0.0) << exact << " on " << dist;
}

TEST(DistributionPower, PrintsTheShareOfOutputsEachWrongModelChanges) {
  const Power& p = measured();
  const std::pair<const char*, const char*> columns[] = {
      {"fold x2", "fold rounded twice"},        {"-0", "fold from -0"},
      {"reverse", "steps folded in reverse"},   {"K cut", "K cut in two, halves added"},
      {"tree", "steps summed as a tree"},       {"windows", "windows of a step added, not chained"},
      {"G fold x2", "GEMV fold rounded twice"}, {"G -0", "GEMV lanes from -0"},
      {"G bfly", "GEMV butterfly 1,2,..,16"}};
  std::printf(
      "share of outputs a wrong model changes (M x N x K = 6x40x256, 4x33x512, 5x36x1024, 3x20x2048, one "
      "seed each; cancelling_steps from K = 512):\n%-20s",
      "distribution");
  for (const auto& c : columns) std::printf(" %9s", c.first);
  std::printf("\n");
  for (Distribution d : golden::kAllDistributions) {
    const std::string name(golden::distribution_name(d));
    std::printf("%-20s", name.c_str());
    for (const auto& c : columns) std::printf(" %8.1f%%", 100.0 * p.share.at(c.second).at(name));
    std::printf("\n");
  }
  std::printf("(columns: ");
  for (const auto& c : columns) std::printf("%s = %s; ", c.first, c.second);
  std::printf("G = the GEMV order, the others the canonical fold)\n");
}

// Each distribution built to show the order changes most outputs under the bug it is built for.
TEST(DistributionPower, OrderDataChangesMostOutputsOfTheBugsItIsBuiltFor) {
  const auto& s = measured().share;
  EXPECT_GE(s.at("fold rounded twice").at("fold_ties"), 0.9);
  EXPECT_GE(s.at("steps folded in reverse").at("fold_ties"), 0.9);
  EXPECT_GE(s.at("GEMV fold rounded twice").at("fold_ties"), 0.25);  // the shapes with 8 steps or more (one lane)
  EXPECT_GE(s.at("fold from -0").at("zero_signs"), 0.5);
  EXPECT_GE(s.at("GEMV lanes from -0").at("zero_signs"), 0.5);
  EXPECT_GE(s.at("steps folded in reverse").at("cancelling_steps"), 0.5);
  EXPECT_GE(s.at("K cut in two, halves added").at("cancelling_steps"), 0.5);
  EXPECT_GE(s.at("steps summed as a tree").at("cancelling_steps"), 0.5);
  EXPECT_GE(s.at("windows of a step added, not chained").at("cancelling_steps"), 0.3);
  EXPECT_GE(s.at("GEMV butterfly 1,2,..,16").at("cancelling_steps"), 0.5);
}

// verify's own coverage cases (the GPU's set, with the data that shows the order): for every body,
// its cheapest fold_ties case differs from a fold rounded twice, and its cheapest zero_signs case
// from a -0 start, in at least 10 elements (of the first 4096 checked), the bar a device mutant of
// each kind must clear (tools/gpu-mutants). The GEMVs are held to their own order (2.2).
TEST(DistributionPower, EveryBodysCoverageCasesShowAFoldRoundedTwiceAndAMinusZeroStartByTenElements) {
  const std::vector<golden::EntryPoint> entries(std::begin(golden::kAllEntryPoints), std::end(golden::kAllEntryPoints));
  const auto plan = w8a16::props::coverage_plan(w8a16::device::StaticRegistry::all_present(),
                                                w8a16::device::DeviceLimits::h200(), entries,
                                                w8a16::props::coverage_distributions(true), 1, nullptr);
  std::map<std::pair<int, Distribution>, const w8a16::props::AimedCase*>
      cheapest;  // (body, dist), plan is cheapest first
  for (const auto& a : plan)
    if (a.c.dist == Distribution::fold_ties || a.c.dist == Distribution::zero_signs)
      cheapest.emplace(std::pair{static_cast<int>(a.target.body), a.c.dist}, &a);
  EXPECT_EQ(cheapest.size(), 2 * w8a16::device::kBodyCount);
  for (const auto& [key, a] : cheapest) {
    const golden::Case& c = a->c;
    golden::CaseInputs in;
    std::string error;
    ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
    const ref::GemmView v = golden::case_view(c, in);
    const bool gemv = golden::entry_point_is_gemv(c.entry);
    const bool fold = c.dist == Distribution::fold_ties;
    int differ = 0, checked = 0;
    for (std::uint32_t m = 0; m < c.m && checked < 4096; ++m)
      for (std::uint32_t n = 0; n < c.n && checked < 4096; ++n, ++checked) {
        std::uint32_t want, wrong;
        if (gemv) {
          want = gemv_acc(v, m, n, {});
          wrong = gemv_acc(v, m, n, fold ? GemvChange{false, false, true} : GemvChange{false, true, false});
        } else {
          const Element e = element(v, m, n);
          want = canonical_models()[0].second(e);
          wrong = canonical_models()[fold ? 1 : 2].second(e);
        }
        differ += ref::f32_bits_to_bf16_rne(want) != ref::f32_bits_to_bf16_rne(wrong);
      }
    std::printf("%-18s %-10s %5d of %5d outputs differ  %s\n", w8a16::device::body_name(a->target.body),
                fold ? "fold x2" : "-0 start", differ, checked, golden::format_case(c).c_str());
    EXPECT_GE(differ, 10) << golden::format_case(c);
  }
}

// The same bar for a kernel's NaN path: in every body's cheapest nan_codes coverage case, a decode
// that turns the NaN codes 0x7F and 0xFF into a number (here the largest finite code of that sign;
// the kernels' integer decode gives +-480) changes at least 10 of the first 4096 outputs, the bar
// of tools/gpu-mutants' NaN-path mutant.
TEST(DistributionPower, EveryBodysCoverageCasesShowANanCodeDecodedAsANumberByTenElements) {
  const std::vector<golden::EntryPoint> entries(std::begin(golden::kAllEntryPoints), std::end(golden::kAllEntryPoints));
  const auto plan = w8a16::props::coverage_plan(w8a16::device::StaticRegistry::all_present(),
                                                w8a16::device::DeviceLimits::h200(), entries,
                                                w8a16::props::coverage_distributions(true), 1, nullptr);
  std::map<int, const w8a16::props::AimedCase*> cheapest;  // by body; plan is cheapest first
  for (const auto& a : plan)
    if (a.c.dist == Distribution::nan_codes) cheapest.emplace(static_cast<int>(a.target.body), &a);
  EXPECT_EQ(cheapest.size(), w8a16::device::kBodyCount);
  for (const auto& [body, a] : cheapest) {
    const golden::Case& c = a->c;
    golden::CaseInputs in, finite;
    std::string error;
    ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
    finite = in;
    int codes = 0;
    for (std::uint8_t& w : finite.w_e4m3)
      if ((w & 0x7F) == 0x7F) w = static_cast<std::uint8_t>(w - 1), ++codes;  // 0x7F -> 0x7E (448), 0xFF -> 0xFE
    ASSERT_GT(codes, 0) << golden::format_case(c);
    const ref::GemmView v = golden::case_view(c, in), vf = golden::case_view(c, finite);
    const bool gemv = golden::entry_point_is_gemv(c.entry);
    int differ = 0, checked = 0;
    for (std::uint32_t m = 0; m < c.m && checked < 4096; ++m)
      for (std::uint32_t n = 0; n < c.n && checked < 4096; ++n, ++checked) {
        const std::uint32_t want = gemv ? gemv_acc(v, m, n, {}) : canonical_models()[0].second(element(v, m, n));
        const std::uint32_t wrong = gemv ? gemv_acc(vf, m, n, {}) : canonical_models()[0].second(element(vf, m, n));
        differ += ref::f32_bits_to_bf16_rne(want) != ref::f32_bits_to_bf16_rne(wrong);
      }
    std::printf("%-18s %-10s %5d of %5d outputs differ  %s\n", w8a16::device::body_name(a->target.body), "NaN code",
                differ, checked, golden::format_case(c).c_str());
    EXPECT_GE(differ, 10) << golden::format_case(c);
  }
}

}  // namespace
