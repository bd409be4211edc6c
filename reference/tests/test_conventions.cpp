// SPDX-License-Identifier: MIT OR Apache-2.0
// The contract as data (NUMERICS.md 2.4): the canonical value gives contract.hpp's bytes through
// the general emulation too; each field's alternative changes what it says it changes, on data
// built to show it; the text form round-trips and refuses bad files without touching its output.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "gemm_case.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/conventions.hpp"
#include "w8a16/reference/fp32.hpp"

namespace {

namespace ref = w8a16::ref;
using ref::Arch;
using w8a16::test::GemmCase;

// Every field's every value, from a seed: the space identify searches.
ref::Conventions draw_conventions() {
  ref::Conventions c;
  c.name = "drawn";
  c.tc.nan = *rc::gen::element(ref::NanCodes::propagate, ref::NanCodes::zero);
  c.tc.fold = *rc::gen::element(ref::Fold::fma, ref::Fold::mul_add, ref::Fold::prescale);
  c.tc.period = *rc::gen::element(ref::FoldPeriod::step, ref::FoldPeriod::end);
  if (*rc::gen::arbitrary<bool>()) {
    std::vector<std::uint8_t> o(128);
    for (unsigned i = 0; i < 128; ++i) o[i] = static_cast<std::uint8_t>(i);
    for (unsigned i = 127; i > 0; --i) std::swap(o[i], o[*rc::gen::inRange(0u, i + 1)]);
    std::copy(o.begin(), o.end(), c.tc.k_order.begin());
  }
  c.gemv.nan = *rc::gen::element(ref::NanCodes::propagate, ref::NanCodes::zero);
  c.gemv.lanes = 32 * *rc::gen::inRange(1u, 5u);
  c.gemv.chunk = *rc::gen::element(1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u);
  c.gemv.scale = *rc::gen::element(ref::GemvScale::chunk, ref::GemvScale::element);
  c.gemv.tree = *rc::gen::element(ref::GemvTree::xor_butterfly, ref::GemvTree::shfl_down);
  return c;
}

RC_GTEST_PROP(Conventions, TheCanonicalValueTracedGivesTheContractsOwnBytes, ()) {
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 140u), 128 * *rc::gen::inRange(1u, 6u), 0);
  w8a16::test::fill_random(c, *rc::gen::element(0, 16));
  const std::uint32_t m = *rc::gen::inRange(0u, c.m), n = *rc::gen::inRange(0u, c.n);
  const ref::Conventions& canon = ref::canonical_conventions();
  // tc_trace and gemv_trace are the general emulation; the canonical value must not need a special case.
  RC_ASSERT(ref::tc_trace(canon.tc, c.view(), Arch::sm90, m, n).acc ==
            ref::canonical_acc_bits(c.view(), Arch::sm90, m, n, c.k / 128));
  RC_ASSERT(ref::gemv_trace(canon.gemv, c.view(), m, n).acc == ref::gemv_acc_bits(c.view(), m, n));
}

RC_GTEST_PROP(Conventions, EveryCombinationRoundTripsThroughTheTextForm, ()) {
  const ref::Conventions c = draw_conventions();
  ref::Conventions back;
  std::string error;
  RC_ASSERT(ref::parse_conventions(ref::format_conventions(c), &back, &error));
  RC_ASSERT(back.same_numerics(c));
  RC_ASSERT(back.name == c.name);
}

RC_GTEST_PROP(Conventions, WholeOutputsEqualTheElementModelForEveryCombination, ()) {
  ref::Conventions conv = draw_conventions();
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 70u), 128 * *rc::gen::inRange(1u, 4u), 0);
  w8a16::test::fill_random(c, *rc::gen::element(0, 16));
  if (!ref::conventions_view_problem(conv.tc, c.view()).empty()) conv.tc.period = ref::FoldPeriod::step;
  std::vector<std::uint16_t> tc(c.m * c.n), gv(c.m * c.n);
  ref::gemm_conventions(conv.tc, c.view(), Arch::sm90, tc.data(), c.n, 2);
  ref::gemm_conventions(conv.gemv, c.view(), gv.data(), c.n, 2);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n) {
      RC_ASSERT(tc[m * c.n + n] == ref::tc_element_bf16(conv.tc, c.view(), Arch::sm90, m, n));
      RC_ASSERT(gv[m * c.n + n] == ref::gemv_conv_element_bf16(conv.gemv, c.view(), m, n));
    }
}

// One weight row of NaN codes among ones: propagate makes the output NaN, zero drops the terms.
TEST(Conventions, NanCodesZeroDecodesTheCodesAsSignedZeros) {
  EXPECT_EQ(ref::decode_weight_bf16(ref::NanCodes::zero, 0x7F), 0x0000);
  EXPECT_EQ(ref::decode_weight_bf16(ref::NanCodes::zero, 0xFF), 0x8000);
  EXPECT_EQ(ref::decode_weight_bf16(ref::NanCodes::propagate, 0x7F), 0x7FC0);
  for (unsigned code = 0; code < 256; ++code)
    if ((code & 0x7F) != 0x7F)
      EXPECT_EQ(ref::decode_weight_bf16(ref::NanCodes::zero, static_cast<std::uint8_t>(code)),
                ref::decode_weight_bf16(ref::NanCodes::propagate, static_cast<std::uint8_t>(code)));
  GemmCase c(1, 1, 128);
  for (std::uint32_t k = 0; k < 128; ++k) c.a_at(0, k) = 0x3F80, c.w_at(0, k) = 0x38;  // 1 * 1
  c.w_at(0, 5) = 0x7F;
  ref::TensorCoreConventions tc;
  ref::GemvConventions g;
  EXPECT_EQ(ref::tc_element_bf16(tc, c.view(), Arch::sm90, 0, 0), 0x7FFF);
  EXPECT_EQ(ref::gemv_conv_element_bf16(g, c.view(), 0, 0), 0x7FFF);
  tc.nan = g.nan = ref::NanCodes::zero;
  EXPECT_EQ(ref::tc_element_bf16(tc, c.view(), Arch::sm90, 0, 0), ref::f32_bits_to_bf16_rne(ref::f32_to_bits(127.0f)));
  EXPECT_EQ(ref::gemv_conv_element_bf16(g, c.view(), 0, 0), ref::f32_bits_to_bf16_rne(ref::f32_to_bits(127.0f)));
}

// p * s rounded, then added: differs from one fused rounding where p * s is not exact in FP32.
TEST(Conventions, MulAddRoundsTwiceWhereFmaRoundsOnce) {
  ref::TensorCoreConventions fused, two;
  two.fold = ref::Fold::mul_add;
  // acc = -1 after step 0; step 1's p = 1 + 2^-20 meets s = 1 + 2^-20: p*s = 1 + 2^-19 + 2^-40.
  GemmCase d(1, 1, 256);
  d.a_at(0, 0) = 0xBF80, d.w_at(0, 0) = 0x38, d.s_at(0, 0) = 1.0f;  // acc = -1
  d.a_at(0, 128) = 0x3F80, d.w_at(0, 128) = 0x38;
  d.a_at(0, 129) = 0x3580, d.w_at(0, 129) = 0x38;  // p = 1 + 2^-20
  d.s_at(0, 1) = ref::f32_from_bits(0x3F800008u);
  const std::uint32_t f = ref::tc_acc_bits(fused, d.view(), Arch::sm90, 0, 0);
  const std::uint32_t t = ref::tc_acc_bits(two, d.view(), Arch::sm90, 0, 0);
  // fused: -1 + (1 + 2^-19 + 2^-40) = 2^-19 + 2^-40 exactly representable; mul_add loses 2^-40.
  EXPECT_EQ(f, ref::f32_to_bits(std::ldexp(1.0f, -19) + std::ldexp(1.0f, -40)));
  EXPECT_EQ(t, ref::f32_to_bits(std::ldexp(1.0f, -19)));
}

// The order probe of the reference's own tests, for a permutation: +2^40 and -2^40 in one MMA
// window cancel exactly, in two windows the 1s between them truncate away.
TEST(Conventions, AKOrderMovesPositionsBetweenMmaWindows) {
  GemmCase c(1, 1, 128);
  for (std::uint32_t k = 0; k < 128; ++k) c.a_at(0, k) = 0x3F80, c.w_at(0, k) = 0x38;
  c.a_at(0, 0) = 0x5380;  // 2^40
  c.a_at(0, 1) = 0xD380;  // -2^40
  ref::TensorCoreConventions contiguous, split;
  std::swap(split.k_order[1], split.k_order[16]);  // position 1 moves to the second window
  const float one_window = ref::f32_from_bits(ref::tc_acc_bits(contiguous, c.view(), Arch::sm90, 0, 0));
  const float two_windows = ref::f32_from_bits(ref::tc_acc_bits(split, c.view(), Arch::sm90, 0, 0));
  // The pair cancels inside MMA 0, whose 14 ones fall below its 2^(40-25) grid; 7 windows of 16 remain.
  EXPECT_EQ(one_window, 112.0f);
  EXPECT_NE(two_windows, one_window);
}

TEST(Conventions, PeriodEndIsDefinedOnlyForScalesThatDoNotChangeAlongK) {
  GemmCase c(1, 1, 256);
  c.s_at(0, 0) = 2.0f, c.s_at(0, 1) = 2.0f;
  ref::TensorCoreConventions end;
  end.period = ref::FoldPeriod::end;
  EXPECT_EQ(ref::conventions_view_problem(end, c.view()), "");
  c.s_at(0, 1) = 3.0f;
  EXPECT_NE(ref::conventions_view_problem(end, c.view()).find("S[0][0] and S[0][1] differ"), std::string::npos);
  end.fold = ref::Fold::prescale;  // the scale is in the weights: any S
  EXPECT_EQ(ref::conventions_view_problem(end, c.view()), "");
}

TEST(Conventions, ShuffleDownAndButterflyDifferWhereTheTreeMatters) {
  // Lane l's sum is 2^(l % 5 * 10) with signs: the association of 32 such values shows the tree.
  GemmCase c(1, 1, 512);
  for (std::uint32_t k = 0; k < 512; ++k) c.w_at(0, k) = 0x38;
  for (std::uint32_t lane = 0; lane < 32; ++lane) {
    const int e = static_cast<int>(lane % 5) * 6;
    c.a_at(0, 16 * lane) = static_cast<std::uint16_t>(((lane & 1) << 15) | (127 + e) << 7 | 1);
  }
  ref::GemvConventions x, d;
  d.tree = ref::GemvTree::shfl_down;
  const ref::GemvTrace tx = ref::gemv_trace(x, c.view(), 0, 0), td = ref::gemv_trace(d, c.view(), 0, 0);
  EXPECT_EQ(tx.lane_acc, td.lane_acc);
  ASSERT_EQ(tx.tree_level.size(), 5u);
  // Both trees pair lane 0 with lane 16 first: the first level's lane 0 agrees.
  EXPECT_EQ(tx.tree_level[0][0], td.tree_level[0][0]);
  // The butterfly leaves every lane with the sum; shuffle-down only lane 0.
  for (std::uint32_t l = 0; l < 32; ++l) EXPECT_EQ(tx.tree_level[4][l], tx.acc);
  bool other_lanes_differ = false;
  for (std::uint32_t l = 1; l < 32; ++l) other_lanes_differ |= td.tree_level[4][l] != td.acc;
  EXPECT_TRUE(other_lanes_differ);
}

TEST(Conventions, ParseRefusesBadFilesAndLeavesTheOutputAlone) {
  const ref::Conventions before = *ref::find_conventions("seed-skinny");
  const std::string bad[] = {
      "tc.fold = fused",                    // not a value
      "tc.nan = zero\ntc.nan = zero",       // a key twice
      "tc.flod = fma",                      // unknown key
      "base = nonesuch",                    // unknown base
      "gemv.lanes = 48",                    // not a multiple of 32
      "gemv.lanes = 2048",                  // too many
      "gemv.chunk = 3",                     // does not divide 128
      "tc.k-order = 0 1 2",                 // too few positions
      "tc.k-order = contiguous 1",          // not a position list
      "just words",                         // no `=`
      "contract = two words",               // a name is one word
      "contract = canonical\ntc.bias = 3",  // a library name for other fields
      "contract = seed-tile",               // seed-tile's name on canonical's fields
      "tc.scales = fp16",                   // not a value
      std::string("tc.nan = zero\0x", 15),  // not text
  };
  for (const std::string& text : bad) {
    ref::Conventions out = before;
    std::string error;
    EXPECT_FALSE(ref::parse_conventions(text, &out, &error)) << text;
    EXPECT_FALSE(error.empty()) << text;
    EXPECT_TRUE(out.same_numerics(before) && out.name == before.name) << text;
  }
  std::string order;
  for (unsigned i = 0; i < 128; ++i) order += std::to_string(i == 5 ? 6 : i == 6 ? 5 : i) + (i % 2 ? "," : " ");
  ref::Conventions dup;
  std::string error;
  EXPECT_FALSE(ref::parse_conventions("tc.k-order = 0 0" + order.substr(3), &dup, &error));
  EXPECT_TRUE(ref::parse_conventions("# a file\ncontract = mine\nbase = seed-tile\ntc.k-order = " + order, &dup,
                                     &error))
      << error;
  EXPECT_EQ(dup.name, "mine");
  EXPECT_EQ(dup.tc.nan, ref::NanCodes::zero);
  EXPECT_EQ(dup.tc.k_order[5], 6);
}

// A library name is a fact: a file may take one only with that value's every field, and the error
// names the first field that differs; a file that takes the library value as its base may change it
// under a name of its own.
TEST(Conventions, ALibraryNameIsTakenOnlyByItsOwnFields) {
  ref::Conventions c;
  std::string error;
  EXPECT_FALSE(ref::parse_conventions("contract = canonical\ntc.bias = 3\n", &c, &error));
  EXPECT_NE(error.find("tc.bias = 3"), std::string::npos) << error;
  EXPECT_TRUE(ref::parse_conventions("contract = canonical\ntc.bias = 0\n", &c, &error)) << error;
  EXPECT_EQ(c.name, "canonical");
  EXPECT_TRUE(ref::parse_conventions("contract = seed-tile\nbase = seed-tile\n", &c, &error)) << error;
  EXPECT_TRUE(ref::parse_conventions("contract = mine\nbase = seed-tile\ntc.bias = 3\n", &c, &error)) << error;
  // Every library value's own text parses back under its name.
  for (const ref::Conventions& lib : ref::conventions_library()) {
    ASSERT_TRUE(ref::parse_conventions(ref::format_conventions(lib), &c, &error)) << lib.name << ": " << error;
    EXPECT_EQ(c.name, lib.name);
  }
}

// tc.scales = bf16 rounds each scale to BF16 before the fold: a scale with low mantissa bits
// gives other bytes, a BF16-exact one the same.
TEST(Conventions, Bf16ScalesRoundTheScaleBeforeItIsUsed) {
  ref::TensorCoreConventions bf = {};
  bf.scales = ref::ScaleFormat::bf16;
  std::vector<std::uint16_t> a(128, 0x3F80);
  std::vector<std::uint8_t> w(128, 0x38);
  for (const float s : {1.0f + 1.0f / 1024, 3.0f}) {
    const ref::GemmView v = ref::gemm_view(a.data(), 128, w.data(), &s, 1, 1, 128);
    const std::uint32_t f = ref::tc_acc_bits({}, v, ref::Arch::sm90, 0, 0);
    const std::uint32_t b = ref::tc_acc_bits(bf, v, ref::Arch::sm90, 0, 0);
    if (s == 3.0f) EXPECT_EQ(f, b);
    else EXPECT_NE(f, b);  // 128 * (1 + 2^-10) against 128 * 1
  }
  ref::Conventions c;
  std::string error;
  ASSERT_TRUE(ref::parse_conventions("tc.scales = bf16", &c, &error)) << error;
  EXPECT_EQ(c.tc.scales, ref::ScaleFormat::bf16);
  ref::Conventions back;
  ASSERT_TRUE(ref::parse_conventions(ref::format_conventions(c), &back, &error)) << error;
  EXPECT_TRUE(back.same_numerics(c));
}

TEST(Conventions, AFileThatNamesNoContractIsCalledByTheLibraryValueItEquals) {
  ref::Conventions c;
  std::string error;
  ASSERT_TRUE(
      ref::parse_conventions("tc.nan = zero\ngemv.nan = zero\ngemv.lanes = 64\ngemv.scale = element\n"
                             "gemv.mac = mul-add\ngemv.tree = down\n",
                             &c, &error))
      << error;
  EXPECT_EQ(c.name, "seed-tile");
  ASSERT_TRUE(ref::parse_conventions("tc.fold = prescale", &c, &error));
  EXPECT_EQ(c.name, "custom");
  ASSERT_TRUE(ref::parse_conventions("", &c, &error));
  EXPECT_EQ(c.name, "canonical");
}

TEST(Conventions, ANameThatIsNoWordIsWrittenAsACommentSoTheTextParsesBack) {
  ref::Conventions c = *ref::find_conventions("seed-tile");
  c.name = "seed-tile = seed-skinny";
  ref::Conventions back;
  std::string error;
  ASSERT_TRUE(ref::parse_conventions(ref::format_conventions(c), &back, &error)) << error;
  EXPECT_TRUE(back.same_numerics(c));
  EXPECT_EQ(back.name, "custom");
}

TEST(Conventions, TheLibraryStartsWithTheCanonicalValueAndNamesAreUnique) {
  const auto& lib = ref::conventions_library();
  ASSERT_FALSE(lib.empty());
  EXPECT_EQ(lib.front().name, "canonical");
  EXPECT_TRUE(lib.front().tc == ref::TensorCoreConventions{});
  EXPECT_TRUE(lib.front().gemv == ref::GemvConventions{});
  for (std::size_t i = 0; i < lib.size(); ++i)
    for (std::size_t j = i + 1; j < lib.size(); ++j) {
      EXPECT_NE(lib[i].name, lib[j].name);
      EXPECT_FALSE(lib[i].same_numerics(lib[j])) << lib[i].name << " " << lib[j].name;
    }
}

}  // namespace
