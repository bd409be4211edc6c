// SPDX-License-Identifier: MIT OR Apache-2.0
// gemm_canonical and gemm_gemv (the SIMD paths) give the model's bytes (canonical_element_bf16,
// gemv_element_bf16) for every element, over awkward shapes, strided A, every data regime and
// sprinkled special values; and the same bytes on one thread as on all.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "gemm_case.hpp"
#include "w8a16/reference/contract.hpp"

namespace {

namespace ref = w8a16::ref;
using ref::Arch;
using w8a16::test::GemmCase;

// Operand magnitudes that reach every branch of the step: ordinary, wide, subnormal products and
// outputs, sums crossing 2^128, and near-total cancellation.
enum class Regime { moderate, wide, tiny, huge, cancelling };

GemmCase random_case(std::uint32_t max_m, std::uint32_t max_n, std::uint32_t max_steps) {
  const std::uint32_t m = *rc::gen::inRange(1u, max_m + 1), n = *rc::gen::inRange(1u, max_n + 1);
  const std::uint32_t k = 128 * *rc::gen::inRange(1u, max_steps + 1);
  const std::size_t stride = k + *rc::gen::element<std::size_t>(0, 8, 24, 136);
  GemmCase c(m, n, k, stride);
  const Regime regime = *rc::gen::element(Regime::moderate, Regime::wide, Regime::tiny, Regime::huge,
                                          Regime::cancelling);
  const int special_odds = *rc::gen::element(0, 0, 20, 200);
  RC_CLASSIFY(special_odds != 0, "specials");
  RC_CLASSIFY(n % 16 != 0, "partial column block");
  switch (regime) {
    case Regime::moderate: w8a16::test::fill_random(c, special_odds); break;
    case Regime::wide: w8a16::test::fill_random(c, special_odds, -126, 127); break;
    case Regime::tiny: w8a16::test::fill_random(c, special_odds, -127, -110); break;
    case Regime::huge: w8a16::test::fill_random(c, special_odds, 110, 127); break;
    case Regime::cancelling:
      w8a16::test::fill_random(c, special_odds, -4, 4);
      // The second half of each 16-K window negates the first's activations against equal weights.
      for (std::uint32_t row = 0; row < c.n; ++row)
        for (std::uint32_t kk = 0; kk < c.k; kk += 16)
          for (int t = 0; t < 8; ++t) c.w_at(row, kk + 8 + t) = c.w_at(row, kk + t);
      for (std::uint32_t mi = 0; mi < c.m; ++mi)
        for (std::uint32_t kk = 0; kk < c.k; kk += 16)
          for (int t = 0; t < 8; ++t)
            if (*rc::gen::inRange(0, 4) != 0) c.a_at(mi, kk + 8 + t) = c.a_at(mi, kk + t) ^ 0x8000;
      break;
  }
  if (*rc::gen::inRange(0, 8) == 0)  // subnormal A values sprinkled into any regime
    for (int i = 0; i < 20; ++i)
      c.a_at(*rc::gen::inRange(0u, c.m),
             *rc::gen::inRange(0u, c.k)) = static_cast<std::uint16_t>(*rc::gen::inRange(1, 0x80) |
                                                                      (*rc::gen::inRange(0, 2) << 15));
  return c;
}

RC_GTEST_PROP(FastCanonical, EqualsTheModelForEveryElement, ()) {
  const GemmCase c = random_case(40, 300, 3);
  const std::size_t c_stride = c.n + 5;
  std::vector<std::uint16_t> out(c.m * c_stride, 0xABCD);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c_stride);
  for (std::uint32_t m = 0; m < c.m; ++m) {
    for (std::uint32_t n = 0; n < c.n; ++n) {
      const std::uint16_t want = ref::canonical_element_bf16(c.view(), Arch::sm90, m, n);
      if (out[m * c_stride + n] != want)
        RC_FAIL("m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " fast=" + std::to_string(out[m * c_stride + n]) + " model=" + std::to_string(want));
    }
    for (std::size_t n = c.n; n < c_stride; ++n) RC_ASSERT(out[m * c_stride + n] == 0xABCD);  // padding untouched
  }
}

// A first MMA whose sum lies just below a power of two (2^25 - 1 .. 2^28 - 1 grid units): if
// normalising it rounded the bit length up, the carried c would have an exponent one too high;
// the second MMA's E and grid would then be coarser, and the third MMA, subtracting the big part
// again, exposes the difference in the BF16 output. Random data rarely reaches this.
TEST(FastCanonical, SumsJustBelowAPowerOfTwoNormaliseLikeTheModel) {
  int compared = 0, nonzero = 0;
  for (int big : {1, 2, 4, 8, 3, 15}) {
    for (std::uint16_t small : {0xB300, 0xB280, 0xB340, 0xB2C0, 0xB3FF, 0xB37F}) {  // -2^-25, -2^-26, ...
      GemmCase c(1, 17, 128);
      for (std::uint32_t n = 0; n < c.n; ++n) {
        for (int t = 0; t < big; ++t) {
          c.a_at(0, t) = 0x3F80;
          c.w_at(n, t) = 0x38;  // MMA 0: big * (1 * 1)
          c.a_at(0, 32 + t) = 0xBF80;
          c.w_at(n, 32 + t) = 0x38;  // MMA 2: minus the same
        }
        c.a_at(0, 15) = small;
        c.w_at(n, 15) = static_cast<std::uint8_t>(0x38 + n % 8);  // times 1 .. 1.875
        // MMA 1: big * 2^-24, one last place of the true c.
        c.a_at(0, 16) = static_cast<std::uint16_t>(0x3380 + ((31 - __builtin_clz(static_cast<unsigned>(big))) << 7));
        c.w_at(n, 16) = 0x38;
      }
      std::vector<std::uint16_t> out(c.n);
      ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
      for (std::uint32_t n = 0; n < c.n; ++n, ++compared) {
        const std::uint16_t want = ref::canonical_element_bf16(c.view(), Arch::sm90, 0, n);
        nonzero += want != 0;
        EXPECT_EQ(out[n], want) << "big=" << big << " small=" << small << " n=" << n;
      }
    }
  }
  EXPECT_EQ(compared, 6 * 6 * 17);
  EXPECT_GT(nonzero, 0);
}

// With K = 65536 at most 64 rows of A are unpacked at a time, so 70 rows take two slabs.
TEST(FastCanonical, RowsBeyondOneUnpackedSlabMatchTheModel) {
  GemmCase c(70, 2, 65536);
  std::uint32_t x = 12345;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return x >> 8;
  };
  for (auto& a : c.a) a = static_cast<std::uint16_t>((0x3C00 + next() % 0x800) | (next() & 1) << 15);
  for (auto& w : c.w) {
    w = static_cast<std::uint8_t>(next());
    if ((w & 0x7F) == 0x7F) w = 0x30;
  }
  for (auto& s : c.s) s = 0.0078125f * static_cast<float>(1 + next() % 8);
  std::vector<std::uint16_t> out(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n)
      EXPECT_EQ(out[m * c.n + n], ref::canonical_element_bf16(c.view(), Arch::sm90, m, n)) << m << " " << n;
}

// Subnormal activations times the smallest weights (2^-9, 2^-8, 1.5 * 2^-8): every product has
// ea + eb of -135 or -134, below the sm90 policy's alignment floor of -133, which the model applies
// and the SIMD path does not need to (contract_fast.cpp, rule 2).
RC_GTEST_PROP(FastCanonical, ProductsBelowTheAlignmentFloorMatchTheModel, ()) {
  GemmCase c(*rc::gen::inRange(1u, 4u), *rc::gen::inRange(1u, 40u), 128 * *rc::gen::inRange(1u, 3u));
  for (auto& a : c.a) a = static_cast<std::uint16_t>(*rc::gen::inRange(0, 128) | (*rc::gen::inRange(0, 2) << 15));
  for (auto& w : c.w) w = *rc::gen::element<std::uint8_t>(0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83);
  for (auto& s : c.s) s = *rc::gen::element(1.0f, -3.0f, 0.5f);
  std::vector<std::uint16_t> out(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
  int nonzero = 0;
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n) {
      const std::uint16_t want = ref::canonical_element_bf16(c.view(), Arch::sm90, m, n);
      nonzero += (want & 0x7FFF) != 0;
      RC_ASSERT(out[m * c.n + n] == want);
    }
  RC_CLASSIFY(nonzero > 0, "some output nonzero");
}

RC_GTEST_PROP(FastCanonical, Sm80FallsBackToTheModel, ()) {
  const GemmCase c = random_case(4, 40, 2);
  std::vector<std::uint16_t> out(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm80, out.data(), c.n);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n)
      RC_ASSERT(out[m * c.n + n] == ref::canonical_element_bf16(c.view(), Arch::sm80, m, n));
}

RC_GTEST_PROP(FastGemv, EqualsTheModelForEveryElement, ()) {
  const GemmCase c = random_case(20, 200, 5);
  const std::size_t c_stride = c.n + 3;
  std::vector<std::uint16_t> out(c.m * c_stride, 0xABCD);
  ref::gemm_gemv(c.view(), out.data(), c_stride);
  for (std::uint32_t m = 0; m < c.m; ++m) {
    for (std::uint32_t n = 0; n < c.n; ++n) {
      const std::uint16_t want = ref::gemv_element_bf16(c.view(), m, n);
      if (out[m * c_stride + n] != want)
        RC_FAIL("m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " fast=" + std::to_string(out[m * c_stride + n]) + " model=" + std::to_string(want));
    }
    for (std::size_t n = c.n; n < c_stride; ++n) RC_ASSERT(out[m * c_stride + n] == 0xABCD);
  }
}

RC_GTEST_PROP(FastPaths, GiveTheSameBytesOnOneThreadAsOnAll, ()) {
  const GemmCase c = random_case(70, 300, 2);                  // more than one 64-row tile of A
  const unsigned threads = *rc::gen::element(0u, 2u, 3u, 7u);  // 0: every core
  std::vector<std::uint16_t> one(c.m * c.n), many(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, one.data(), c.n, 1);
  ref::gemm_canonical(c.view(), Arch::sm90, many.data(), c.n, threads);
  RC_ASSERT(one == many);
  ref::gemm_gemv(c.view(), one.data(), c.n, 1);
  ref::gemm_gemv(c.view(), many.data(), c.n, threads);
  RC_ASSERT(one == many);
}

}  // namespace
