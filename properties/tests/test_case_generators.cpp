// SPDX-License-Identifier: MIT OR Apache-2.0
// The generators draw what they promise: every entry point, boundary shape and special class shows up.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_draw.hpp"
#include "w8a16/properties/generators.hpp"

namespace {

namespace golden = w8a16::golden;
namespace props = w8a16::props;
using golden::Case;
using golden::CaseInputs;
using golden::Distribution;
using golden::EntryPoint;

CaseInputs regenerate_or_die(const Case& c) {
  CaseInputs in;
  std::string error;
  if (!golden::regenerate_inputs(c, &in, &error)) ADD_FAILURE() << golden::format_case(c) << ": " << error;
  return in;
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

RC_GTEST_PROP(CaseGenerator, EveryDrawnCaseIsValidAndWithinItsWorkCap, ()) {
  props::DrawOptions opt;
  opt.max_macs = *rc::gen::inRange<std::uint64_t>(1 << 14, 1 << 26);
  const Case c = *props::gen_case(opt);
  RC_TAG(std::string(golden::entry_point_name(c.entry)));
  RC_ASSERT(golden::case_problem(c) == "");
  RC_ASSERT(std::uint64_t{c.m} * c.n * c.k <= std::max<std::uint64_t>(opt.max_macs, std::uint64_t{c.m} * 128));
}

TEST(CaseGenerator, SeededDrawsAreReproducibleAndIndependentOfEachOther) {
  const props::DrawOptions opt;
  for (std::uint64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(props::draw_case_seeded(7, i, opt), props::draw_case_seeded(7, i, opt));
    EXPECT_NE(props::draw_case_seeded(7, i, opt), props::draw_case_seeded(8, i, opt));
  }
}

// 2,000 seeded draws: every entry point, distribution, boundary row count, skinny-edge K, pitch
// kind, and (with a budget that allows them) every model shape.
TEST(CaseGenerator, SeededDrawsCoverEveryEntryDistributionAndBoundaryShape) {
  props::DrawOptions opt;
  std::set<EntryPoint> entries;
  std::set<Distribution> dists;
  std::set<std::uint32_t> rows, ks;
  bool padded_a = false, padded_c = false, n_not_multiple_of_8 = false;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const Case c = props::draw_case_seeded(1, i, opt);
    entries.insert(c.entry);
    dists.insert(c.dist);
    rows.insert(c.m);
    ks.insert(c.k);
    padded_a |= c.a_row_stride > c.k;
    padded_c |= c.c_row_stride > c.n;
    n_not_multiple_of_8 |= c.n % 8 != 0;
  }
  EXPECT_EQ(entries.size(), std::size(golden::kAllEntryPoints));
  EXPECT_EQ(dists.size(), std::size(golden::kAllDistributions));
  for (std::uint32_t m : props::kBoundaryRows) EXPECT_TRUE(rows.count(m)) << "m=" << m;
  EXPECT_TRUE(ks.count(5120));
  EXPECT_TRUE(ks.count(5248));
  EXPECT_TRUE(ks.count(128));
  EXPECT_TRUE(padded_a && padded_c && n_not_multiple_of_8);

  opt.max_macs = std::uint64_t{2} * 51200 * 5120;
  std::set<std::pair<std::uint32_t, std::uint32_t>> model;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const Case c = props::draw_case_seeded(2, i, opt);
    for (const auto& s : props::kModelShapes)
      if (c.n == s.n && c.k == s.k) model.insert({s.n, s.k});
  }
  EXPECT_EQ(model.size(), std::size(props::kModelShapes));
}

TEST(CaseGenerator, SeededDrawsShowEverySpecialClass) {
  std::uint32_t seen = 0;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const Case c = props::draw_case_seeded(3, i, props::DrawOptions{});
    seen |= golden::special_classes(c, regenerate_or_die(c));
  }
  for (int b = 0; b < golden::kSpecialClassCount; ++b)
    EXPECT_TRUE((seen >> b) & 1u) << golden::special_class_name(b) << " never drawn";
}

// The operand classes the specials distribution's plants leave standing, restated from its rule
// (golden/src/case_inputs.cpp): from the stream of tag 4, A's classes are planted once each in the
// order NaN, NaN, Inf, Inf, subnormal, subnormal, -0, max, max, then m k / 256 more of a drawn
// class, each at a drawn (row, column); then W's NaN, NaN, max, max, -0, subnormal, subnormal and
// n k / 256 more, each at a drawn index. A later plant can land on an earlier one at any size, so
// the classes expected are those of the last plant at each place, replayed from the seed.
std::uint32_t surviving_plant_classes(const Case& c) {
  using golden::kSpecialANan, golden::kSpecialAInf, golden::kSpecialASubnormal, golden::kSpecialANegZero,
      golden::kSpecialAMax, golden::kSpecialWNan, golden::kSpecialWMax, golden::kSpecialWSubnormal,
      golden::kSpecialWNegZero;
  constexpr std::uint32_t kA[] = {kSpecialANan,       kSpecialANan,     kSpecialAInf, kSpecialAInf, kSpecialASubnormal,
                                  kSpecialASubnormal, kSpecialANegZero, kSpecialAMax, kSpecialAMax};
  constexpr std::uint32_t kW[] = {kSpecialWNan,     kSpecialWNan,       kSpecialWMax,      kSpecialWMax,
                                  kSpecialWNegZero, kSpecialWSubnormal, kSpecialWSubnormal};
  golden::Xoshiro256ss r(golden::derive_seed(c.seed, 4));
  std::map<std::uint64_t, std::uint32_t> a, w;  // place -> class of the last plant there
  const std::uint64_t a_count = std::size(kA) + std::uint64_t{c.m} * c.k / 256;
  for (std::uint64_t i = 0; i < a_count; ++i) {
    const std::uint32_t cls = i < std::size(kA) ? kA[i] : kA[r.below(std::size(kA))];
    const std::uint64_t row = r.below(c.m), col = r.below(c.k);
    a[row * c.k + col] = cls;
  }
  const std::uint64_t w_count = std::size(kW) + std::uint64_t{c.n} * c.k / 256;
  for (std::uint64_t i = 0; i < w_count; ++i) {
    const std::uint32_t cls = i < std::size(kW) ? kW[i] : kW[r.below(std::size(kW))];
    w[r.below(std::uint64_t{c.n} * c.k)] = cls;
  }
  std::uint32_t out = 0;
  for (const auto& [place, cls] : a) out |= cls;
  for (const auto& [place, cls] : w) out |= cls;
  return out;
}

RC_GTEST_PROP(CaseDistributions, SpecialsHoldEveryOperandSpecialClass, ()) {
  const Case c = *props::gen_case(props::only_dist(Distribution::specials));
  const std::uint32_t seen = golden::special_classes(c, regenerate_or_die(c));
  const std::uint32_t operand_classes = golden::kSpecialANan | golden::kSpecialAInf | golden::kSpecialASubnormal |
                                        golden::kSpecialANegZero | golden::kSpecialAMax | golden::kSpecialWNan |
                                        golden::kSpecialWMax | golden::kSpecialWSubnormal | golden::kSpecialWNegZero;
  // Every class a plant leaves standing is in the case; most cases keep all nine.
  const std::uint32_t standing = surviving_plant_classes(c);
  RC_CLASSIFY(standing != operand_classes, "a class overwritten by a later plant");
  RC_ASSERT((seen & standing) == standing);
  RC_ASSERT((seen & operand_classes) != 0);
}

// The case that found the size rule the property used before too loose: 32 x 128 codes of W, 46 x
// 128 of A, and A's -0 overwritten by a later plant. The replay says so, and the case lacks it.
TEST(CaseDistributions, ASpecialsPlantOverwrittenIsMissingExactlyAsTheReplaySays) {
  const golden::Case c = golden::CaseSpec{}
                             .entry(EntryPoint::gemm_pipelined_m32_strided)
                             .shape(46, 32, 128)
                             .strides(136, 33)
                             .dist(Distribution::specials)
                             .seed(0x56fb036209a338d1ull);
  const std::uint32_t standing = surviving_plant_classes(c);
  EXPECT_EQ(standing & golden::kSpecialANegZero, 0u);
  EXPECT_EQ(golden::special_classes(c, regenerate_or_die(c)) & golden::kSpecialANegZero, 0u);
  EXPECT_EQ(standing | golden::kSpecialANegZero, 511u);
}

RC_GTEST_PROP(CaseDistributions, OnesPow2ScalesAreAllOnesWithPowerOfTwoScalesDistinctPerRow, ()) {
  const Case c = *props::gen_case(props::only_dist(Distribution::ones_pow2_scales));
  const CaseInputs in = regenerate_or_die(c);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t k = 0; k < c.k; ++k) RC_ASSERT(in.a_bits[std::size_t{r} * c.a_row_stride + k] == 0x3F80);
  for (std::uint8_t w : in.w_e4m3) RC_ASSERT(w == 0x38);
  const std::uint32_t steps = c.k / 128;
  for (std::uint32_t b = 0; b < (c.n + 127) / 128; ++b) {
    std::set<std::uint32_t> row;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t bits = bits_of(in.s_f32[std::size_t{b} * steps + s]);
      RC_ASSERT((bits & 0x807FFFFFu) == 0u);  // positive, significand 1.0
      RC_ASSERT(bits != 0u);
      row.insert(bits);
    }
    if (steps <= 20) RC_ASSERT(row.size() == steps);
  }
}

RC_GTEST_PROP(CaseDistributions, WideExponentsNeverDrawANanWeight, ()) {
  const Case c = *props::gen_case(props::only_dist(Distribution::wide_exponents));
  for (std::uint8_t w : regenerate_or_die(c).w_e4m3) RC_ASSERT((w & 0x7F) != 0x7F);
}

RC_GTEST_PROP(CaseDistributions, CancellationPairsNegateWeightsAndNearlyRepeatActivations, ()) {
  const Case c = *props::gen_case(props::only_dist(Distribution::cancellation));
  const CaseInputs in = regenerate_or_die(c);
  for (std::size_t i = 0; i + 1 < in.w_e4m3.size(); i += 2) RC_ASSERT((in.w_e4m3[i] ^ in.w_e4m3[i + 1]) == 0x80);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t k = 0; k < c.k; k += 2) {
      const std::size_t at = std::size_t{r} * c.a_row_stride + k;
      RC_ASSERT((in.a_bits[at] ^ in.a_bits[at + 1]) <= 3);
    }
}

// lone_specials: the seed's low four bits name the special and its K-step, and the inputs are
// activation_like's with exactly one element changed, to that special at that step
// (find_lone_special reads it back), for ranges of 1 to 41 steps and both kinds of pitch.
TEST(CaseDistributions, LoneSpecialsChangeOneElementToTheSpecialTheSeedNamesAtItsStep) {
  using golden::LoneKind, golden::LoneStep;
  for (std::uint32_t steps : {1u, 2u, 3u, 5u, 33u, 41u})
    for (LoneKind kind : golden::kLoneKinds)
      for (LoneStep step : golden::kLoneSteps)
        for (std::uint64_t base : {0x100ull, 0xabcdef0123456789ull}) {
          const std::uint64_t seed = golden::lone_specials_seed(base, kind, step);
          EXPECT_EQ(seed >> 4, base >> 4);
          const std::uint32_t k = 128 * steps;
          const Case c = golden::CaseSpec{}
                             .entry(EntryPoint::gemm_pipelined_m32_strided)
                             .shape(3, 150, k)
                             .strides(k + 8, 153)
                             .dist(Distribution::lone_specials)
                             .seed(seed);
          Case bulk = c;
          bulk.dist = Distribution::activation_like;
          const CaseInputs in = regenerate_or_die(c), like = regenerate_or_die(bulk);
          const std::string line = golden::format_case(c);
          // Exactly one element differs from activation_like's, and it is of the kind named.
          std::vector<std::uint32_t> steps_changed;
          std::uint32_t changed = 0;
          for (std::uint32_t r = 0; r < c.m; ++r)
            for (std::uint32_t x = 0; x < c.k; ++x) {
              const std::uint16_t v = in.a_bits[std::size_t{r} * c.a_row_stride + x];
              if (v == like.a_bits[std::size_t{r} * c.a_row_stride + x]) continue;
              ++changed, steps_changed.push_back(x / 128);
              EXPECT_EQ(kind, LoneKind::a_nan) << line;
              EXPECT_GT(v & 0x7FFF, 0x7F80) << line;
            }
          for (std::size_t i = 0; i < in.w_e4m3.size(); ++i) {
            if (in.w_e4m3[i] == like.w_e4m3[i]) continue;
            ++changed, steps_changed.push_back(static_cast<std::uint32_t>(i % c.k / 128));
            EXPECT_EQ(kind, LoneKind::w_nan) << line;
            EXPECT_EQ(in.w_e4m3[i] & 0x7F, 0x7F) << line;
          }
          for (std::size_t i = 0; i < in.s_f32.size(); ++i) {
            if (bits_of(in.s_f32[i]) == bits_of(like.s_f32[i])) continue;
            ++changed, steps_changed.push_back(static_cast<std::uint32_t>(i % steps));
            EXPECT_EQ(kind, LoneKind::s_inf_nan) << line;
            EXPECT_GE(bits_of(in.s_f32[i]) & 0x7FFFFFFFu, 0x7F800000u) << line;
          }
          ASSERT_EQ(changed, 1u) << line;
          const std::uint32_t at = steps_changed[0];
          switch (step) {
            case LoneStep::first: EXPECT_EQ(at, 0u) << line; break;
            case LoneStep::last: EXPECT_EQ(at, steps - 1) << line; break;
            case LoneStep::middle:
              if (steps >= 3) EXPECT_TRUE(at > 0 && at + 1 < steps) << line;
              else EXPECT_EQ(at, steps / 2) << line;
          }
          // Read back from the operands alone.
          const golden::LoneSpecial found = golden::find_lone_special(c, in);
          EXPECT_TRUE(found.found) << line;
          EXPECT_EQ(found.kind, kind) << line;
          EXPECT_EQ(found.step, at) << line;
          if (steps >= 3) EXPECT_EQ(found.where, step) << line;
        }
}

// Over many seeds the middle step ranges over the steps strictly inside, and a kind or step of 3
// in the seed's bits is drawn: every kind and every step shows up.
TEST(CaseDistributions, LoneSpecialsDrawTheirMiddleStepAndADrawnKindFromTheSeed) {
  std::set<std::uint32_t> middles, drawn_steps;
  std::set<golden::LoneKind> drawn_kinds;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const Case middle = golden::CaseSpec{}
                            .shape(1, 7, 6 * 128)
                            .dist(Distribution::lone_specials)
                            .seed(golden::lone_specials_seed(i << 4, golden::LoneKind::w_nan,
                                                             golden::LoneStep::middle));
    middles.insert(golden::find_lone_special(middle, regenerate_or_die(middle)).step);
    Case drawn = middle;
    drawn.seed = (i << 4) | 0xF;  // both fields 3: kind and step drawn
    const golden::LoneSpecial d = golden::find_lone_special(drawn, regenerate_or_die(drawn));
    EXPECT_TRUE(d.found) << golden::format_case(drawn);
    drawn_kinds.insert(d.kind);
    drawn_steps.insert(d.step);
  }
  EXPECT_EQ(middles, (std::set<std::uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(drawn_kinds.size(), 3u);
  EXPECT_EQ(drawn_steps.size(), 6u);
}

// find_lone_special finds nothing where there is no special, more than one, or an Inf activation
// (no LoneKind).
TEST(CaseDistributions, FindLoneSpecialNeedsExactlyOneSpecialOfALoneKind) {
  const Case plain = golden::CaseSpec{}.shape(4, 40, 512).dist(Distribution::activation_like).seed(3);
  CaseInputs in = regenerate_or_die(plain);
  EXPECT_FALSE(golden::find_lone_special(plain, in).found);
  in.w_e4m3[5 * 512 + 300] = 0xFF;
  golden::LoneSpecial one = golden::find_lone_special(plain, in);
  EXPECT_TRUE(one.found);
  EXPECT_EQ(one.kind, golden::LoneKind::w_nan);
  EXPECT_EQ(one.step, 2u);
  EXPECT_EQ(one.where, golden::LoneStep::middle);
  in.s_f32[3] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(golden::find_lone_special(plain, in).found);  // two
  in.w_e4m3[5 * 512 + 300] = 0x7E;
  one = golden::find_lone_special(plain, in);
  EXPECT_TRUE(one.found && one.kind == golden::LoneKind::s_inf_nan && one.where == golden::LoneStep::last);
  in.s_f32[3] = 1.0f;
  in.a_bits[2 * 512] = 0xFF80;  // -Inf
  EXPECT_FALSE(golden::find_lone_special(plain, in).found);
  for (Distribution d : {Distribution::every_special, Distribution::nan_codes, Distribution::specials}) {
    const Case c = golden::CaseSpec{}.shape(16, 300, 1024).dist(d).seed(9);
    EXPECT_FALSE(golden::find_lone_special(c, regenerate_or_die(c)).found) << golden::distribution_name(d);
  }
}

RC_GTEST_PROP(CaseDistributions, Pow2ScalesArePowersOfTwo, ()) {
  const Case c = *props::gen_case(props::only_dist(Distribution::pow2_scales));
  for (float s : regenerate_or_die(c).s_f32) {
    const std::uint32_t b = bits_of(s);
    RC_ASSERT((b & 0x007FFFFFu) == 0u);
    RC_ASSERT((b & 0x7F800000u) != 0u);
    RC_ASSERT((b & 0x7F800000u) != 0x7F800000u);
  }
}

}  // namespace
