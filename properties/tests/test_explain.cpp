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

TEST(Explain, showsTheFoldStepByStepEndingInTheExpectedBits) {
  const Fixture f = make();
  const std::string text = props::explain_element(f.c, f.in, f.expected, nullptr, 1, 4);
  EXPECT_TRUE(has(text, "step   3:")) << text;
  char want[48];
  std::snprintf(want, sizeof want, "bf16_rne(acc) = 0x%04x", f.expected[1 * 9 + 4]);
  EXPECT_TRUE(has(text, want)) << text;
}

TEST(Explain, namesAnUnwrittenElement) {
  const Fixture f = make();
  std::vector<std::uint16_t> got = f.expected;
  got[2 * 9 + 7] = golden::kOutputSentinelBits;
  EXPECT_TRUE(has(props::explain_element(f.c, f.in, f.expected, &got, 2, 7), "no launch wrote this element"));
}

TEST(Explain, namesTheOtherContractsValue) {
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

TEST(Explain, namesAValueThatBelongsToAnotherColumn) {
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
