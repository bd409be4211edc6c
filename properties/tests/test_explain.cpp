// SPDX-License-Identifier: MIT OR Apache-2.0
// repro's explanation reads wrong bits correctly: never written, the other contract, a misplaced write.
#include <gtest/gtest.h>

#include <cstdio>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/explain.hpp"
#include "w8a16/reference/contract.hpp"

namespace {

namespace golden = w8a16::golden;
namespace props = w8a16::props;

struct Fixture {
  golden::Case c;
  golden::CaseInputs in;
  std::vector<std::uint16_t> expected;
  w8a16::ref::GemmView view() const { return golden::case_view(c, in); }
};

Fixture make() {
  Fixture f;
  f.c = golden::CaseSpec{}
            .entry(golden::EntryPoint::gemm_pipelined_m32_strided)
            .shape(3, 9, 512)
            .dist(golden::Distribution::wide_exponents)
            .seed(11);
  std::string error;
  EXPECT_TRUE(golden::regenerate_inputs(f.c, &f.in, &error)) << error;
  f.expected = props::expected_output(f.c, f.in);
  return f;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Explain, ShowsTheFoldStepByStepEndingInTheExpectedBits) {
  const Fixture f = make();
  const std::string text = props::explain_element(f.c, f.in, f.expected, nullptr, 1, 4);
  EXPECT_TRUE(has(text, "step   3:")) << text;
  char want[48];
  std::snprintf(want, sizeof want, "bf16_rne(acc) = 0x%04x", f.expected[1 * 9 + 4]);
  EXPECT_TRUE(has(text, want)) << text;
}

TEST(Explain, NamesAnUnwrittenElement) {
  const Fixture f = make();
  std::vector<std::uint16_t> got = f.expected;
  got[2 * 9 + 7] = golden::kOutputSentinelBits;
  EXPECT_TRUE(has(props::explain_element(f.c, f.in, f.expected, &got, 2, 7), "no launch wrote this element"));
}

TEST(Explain, NamesTheOtherContractsValue) {
  const Fixture f = make();
  const w8a16::ref::GemmView v = f.view();
  bool found = false;
  for (std::uint32_t m = 0; m < f.c.m && !found; ++m)
    for (std::uint32_t n = 0; n < f.c.n && !found; ++n) {
      const std::uint16_t gemv = w8a16::ref::gemv_element_bf16(v, m, n);
      if (gemv == f.expected[m * 9 + n]) continue;
      found = true;
      std::vector<std::uint16_t> got = f.expected;
      got[m * 9 + n] = gemv;
      const std::string text = props::explain_element(f.c, f.in, f.expected, &got, m, n);
      EXPECT_TRUE(has(text, "produced matches the GEMV order")) << text;
    }
  ASSERT_TRUE(found) << "no element where the two contracts differ: pick another seed";
}

TEST(Explain, NamesAValueThatBelongsToAnotherColumn) {
  const Fixture f = make();
  std::uint32_t other = 0;
  while (other < f.c.n && f.expected[other] == f.expected[5]) ++other;
  ASSERT_LT(other, f.c.n);
  std::vector<std::uint16_t> got = f.expected;
  got[5] = f.expected[other];
  const std::string text = props::explain_element(f.c, f.in, f.expected, &got, 0, 5);
  EXPECT_TRUE(has(text, "a write landed in the wrong column")) << text;
}

}  // namespace

// ---- the explanation in a contract's terms (NUMERICS.md 2.4) -------------------------------------

namespace ref = w8a16::ref;

Fixture make_case(golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k, golden::Distribution d,
                  std::uint64_t seed) {
  Fixture f;
  f.c = golden::CaseSpec{}.entry(e).shape(m, n, k).dist(d).seed(seed);
  std::string error;
  EXPECT_TRUE(golden::regenerate_inputs(f.c, &f.in, &error)) << error;
  f.expected = props::expected_output(f.c, f.in, 1);
  return f;
}

// All of C as the emulator gives it under `conv` (a stand-in for a device that keeps it).
std::vector<std::uint16_t> output_under(const golden::Case& c, const golden::CaseInputs& in,
                                        const ref::Conventions& conv) {
  props::ContractChoice choice;
  choice.all = conv;
  return props::expected_output(c, in, 1, choice);
}

// The first element of rows [0, m), columns [0, n) where the two outputs differ; false if none.
bool first_difference(const golden::Case& c, const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                      std::uint32_t* m, std::uint32_t* n) {
  for (std::uint32_t i = 0; i < c.m; ++i)
    for (std::uint32_t j = 0; j < c.n; ++j)
      if (a[std::size_t{i} * c.c_row_stride + j] != b[std::size_t{i} * c.c_row_stride + j]) {
        *m = i, *n = j;
        return true;
      }
  return false;
}

TEST(ExplainContract, NamesTheFoldVariationThatGivesTheProducedBitsAndTheFirstFoldPointWhereItPartsWays) {
  // fold_ties: each row has two steps whose fold lands on a BF16 midpoint only if rounded once.
  const Fixture f = make_case(golden::EntryPoint::gemm_pipelined_m32_strided, 3, 9, 512,
                              golden::Distribution::fold_ties, 11);
  ref::Conventions mul_add = ref::canonical_conventions();
  mul_add.tc.fold = ref::Fold::mul_add;
  const std::vector<std::uint16_t> got = output_under(f.c, f.in, mul_add);
  std::uint32_t m = 0, n = 0;
  ASSERT_TRUE(first_difference(f.c, f.expected, got, &m, &n)) << "fold=mul-add changes no element: pick another seed";
  // Where the two traces part ways, from the traces themselves: the windows are the same (the
  // fold is the only change), the first differing accumulator is the fold point to be named.
  const ref::GemmView v = f.view();
  const ref::TcTrace a = ref::tc_trace(ref::canonical_conventions().tc, v, ref::Arch::sm90, m, n),
                     b = ref::tc_trace(mul_add.tc, v, ref::Arch::sm90, m, n);
  ASSERT_EQ(a.window_partials, b.window_partials);
  std::size_t step = 0;
  while (a.fold_acc[step] == b.fold_acc[step]) ++step;
  const std::string text = props::explain_element(f.c, f.in, f.expected, &got, m, n);
  EXPECT_TRUE(has(text, "the produced value is what tc.fold = mul-add gives")) << text;
  EXPECT_TRUE(has(text, "every window's partial is the same")) << text;
  EXPECT_TRUE(has(text, "the first fold point where the two differ is step " + std::to_string(step) + " ")) << text;
  EXPECT_FALSE(has(text, "no other library contract")) << text;
}

TEST(ExplainContract, UnderAnotherContractShowsItsFoldPointsAndNamesTheNanVariation) {
  // A case with NaN codes held to seed-tile (NaN codes read as zeros), produced by canonical
  // kernels (NaN codes propagate): the explanation shows seed-tile's fold points and names both
  // the one-field variation and the library value that give the produced bits.
  // nan_codes: a NaN code in one W row in eight.
  Fixture f = make_case(golden::EntryPoint::gemm_pipelined, 2, 32, 384, golden::Distribution::nan_codes, 5);
  const ref::Conventions& seed_tile = *ref::find_conventions("seed-tile");
  f.expected = output_under(f.c, f.in, seed_tile);
  const std::vector<std::uint16_t> got = props::expected_output(f.c, f.in, 1);
  std::uint32_t m = 0, n = 0;
  ASSERT_TRUE(first_difference(f.c, f.expected, got, &m, &n)) << "no NaN code reached an output: pick another seed";
  props::ContractChoice choice;
  choice.all = seed_tile;
  const std::string text = props::explain_element(f.c, f.in, f.expected, &got, m, n, choice);
  EXPECT_TRUE(has(text, "contract seed-tile (tc: nan=zero")) << text;
  EXPECT_TRUE(has(text, "step   2:")) << text;
  EXPECT_TRUE(has(text, "the produced value is what tc.nan = propagate gives (seed-tile otherwise)")) << text;
  EXPECT_TRUE(has(text, "the produced value is what the contract canonical gives")) << text;
  EXPECT_TRUE(has(text, "the first window where the two differ is step ")) << text;
}

TEST(ExplainContract, NamesTheGemvLaneWhereAMultiplyAddVariationPartsWays) {
  // fold_ties: a fold that lands on a BF16 midpoint only if rounded once, as the GEMV's chunk
  // scale is under fma and is not under mul.rn then add.rn.
  const Fixture f = make_case(golden::EntryPoint::gemv_batch4_strided, 2, 32, 1024, golden::Distribution::fold_ties, 3);
  ref::Conventions mul_add = ref::canonical_conventions();
  mul_add.gemv.mac = ref::Mac::mul_add;
  const std::vector<std::uint16_t> got = output_under(f.c, f.in, mul_add);
  std::uint32_t m = 0, n = 0;
  ASSERT_TRUE(first_difference(f.c, f.expected, got, &m, &n)) << "mac=mul-add changes no element: pick another seed";
  const ref::GemmView v = f.view();
  const ref::GemvTrace a = ref::gemv_trace(ref::canonical_conventions().gemv, v, m, n),
                       b = ref::gemv_trace(mul_add.gemv, v, m, n);
  std::size_t lane = 0;
  while (a.lane_acc[lane] == b.lane_acc[lane]) ++lane;
  const std::string text = props::explain_element(f.c, f.in, f.expected, &got, m, n);
  EXPECT_TRUE(has(text, "contract canonical (gemv: nan=propagate lanes=32")) << text;
  EXPECT_TRUE(has(text, "the produced value is what gemv.mac = mul-add gives")) << text;
  EXPECT_TRUE(has(text, "the first lane whose sum differs is lane " + std::to_string(lane) + " ")) << text;
}

TEST(ExplainContract, SaysSoWhenNoConventionGivesTheProducedBits) {
  const Fixture f = make();
  std::vector<std::uint16_t> got = f.expected;
  // The smallest positive subnormal: no element of this case is near it under any convention
  // (checked below, so that the test cannot pass by accident).
  got[1 * 9 + 4] = 0x0001;
  ASSERT_NE(f.expected[1 * 9 + 4], 0x0001);
  for (const ref::Conventions& lib : ref::conventions_library())
    ASSERT_NE(ref::tc_element_bf16(lib.tc, f.view(), ref::Arch::sm90, 1, 4), 0x0001);
  const std::string text = props::explain_element(f.c, f.in, f.expected, &got, 1, 4);
  EXPECT_TRUE(has(text, "no other library contract and no single-field variation of canonical gives the produced bits"))
      << text;
  EXPECT_FALSE(has(text, "the produced value is what")) << text;
}
