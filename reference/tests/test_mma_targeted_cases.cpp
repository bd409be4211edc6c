// SPDX-License-Identifier: MIT OR Apache-2.0
// The targeted tensor-core cases of NUMERICS.md 1.1, one test each, on the sm90 policy.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "w8a16/reference/mma.hpp"

namespace {

using w8a16::ref::Arch;

// BF16 bits of +-2^e for a normal exponent e.
constexpr std::uint16_t pow2_bf16(int e, bool negative = false) {
  return static_cast<std::uint16_t>((negative ? 0x8000 : 0) | ((e + 127) << 7));
}

struct Dot {
  std::array<std::uint16_t, 16> a{};  // +0 unless set
  std::array<std::uint16_t, 16> b{};
  std::uint32_t c = 0;
  std::uint32_t run() const { return w8a16::ref::mma_k16_bits(Arch::sm90, c, a.data(), b.data()); }
};

TEST(MmaSm90Targeted, ZeroTimesTwoToThe127DoesNotRaiseTheAlignmentExponent) {
  Dot d;
  d.a[0] = 0x0000;
  d.b[0] = pow2_bf16(127);  // 0 * 2^127: a zero product (rule 2)
  d.a[1] = pow2_bf16(0);
  d.b[1] = pow2_bf16(0);  // 1 * 1 would truncate to 0 if E were 127
  EXPECT_EQ(d.run(), 0x3F800000u);
}

TEST(MmaSm90Targeted, PlusZeroAccumulatorDoesNotJoinTheAlignmentExponent) {
  Dot d;  // c = +0; with E = -126 from c, each 2^-152 would truncate to 0 on a 2^-151 grid
  for (int k = 0; k < 8; ++k) {
    d.a[k] = pow2_bf16(-76);
    d.b[k] = pow2_bf16(-76);
  }
  EXPECT_EQ(d.run(), 0x00000001u);
}

TEST(MmaSm90Targeted, NegativeTwoToTheMinus150PlusZeroIsPlusZero) {
  Dot d;
  d.a[0] = pow2_bf16(-75, true);
  d.b[0] = pow2_bf16(-75);  // -2^-150 truncates to zero: +0 (rule 6)
  EXPECT_EQ(d.run(), 0x00000000u);
}

TEST(MmaSm90Targeted, TwoToThe127PlusTwoToThe127IsPlusInfinity) {
  Dot d;
  d.a[0] = pow2_bf16(127);
  d.b[0] = pow2_bf16(0);
  d.a[1] = pow2_bf16(127);
  d.b[1] = pow2_bf16(0);
  EXPECT_EQ(d.run(), 0x7F800000u);
}

TEST(MmaSm90Targeted, OnePlusSixteenProductsOfTwoToTheMinus25IsExact) {
  Dot d;
  d.c = 0x3F800000u;  // 1.0: E = 0, grid 2^-25 holds each product exactly
  for (int k = 0; k < 16; ++k) {
    d.a[k] = pow2_bf16(-25);
    d.b[k] = pow2_bf16(0);
  }
  EXPECT_EQ(d.run(), 0x3F800004u);
}

TEST(MmaSm90Targeted, NanInfTimesZeroAndInfMinusInfGiveTheCanonicalNan) {
  Dot nan_a;
  nan_a.a[3] = 0x7FC1;
  nan_a.b[3] = pow2_bf16(0);
  EXPECT_EQ(nan_a.run(), 0x7FFFFFFFu);
  Dot nan_c;
  nan_c.c = 0xFFC00000u;
  EXPECT_EQ(nan_c.run(), 0x7FFFFFFFu);
  Dot inf_times_zero;
  inf_times_zero.a[0] = 0x7F80;
  inf_times_zero.b[0] = 0x8000;
  EXPECT_EQ(inf_times_zero.run(), 0x7FFFFFFFu);
  Dot inf_minus_inf;
  inf_minus_inf.a[0] = 0x7F80;
  inf_minus_inf.b[0] = pow2_bf16(0);
  inf_minus_inf.a[1] = 0xFF80;
  inf_minus_inf.b[1] = pow2_bf16(0);
  EXPECT_EQ(inf_minus_inf.run(), 0x7FFFFFFFu);
  Dot inf_product_minus_inf_c;
  inf_product_minus_inf_c.a[0] = 0x7F80;
  inf_product_minus_inf_c.b[0] = pow2_bf16(-3);
  inf_product_minus_inf_c.c = 0xFF800000u;
  EXPECT_EQ(inf_product_minus_inf_c.run(), 0x7FFFFFFFu);
}

TEST(MmaSm90Targeted, AnInfinityWithoutConflictGivesThatInfinity) {
  Dot d;
  d.a[0] = 0xFF80;
  d.b[0] = pow2_bf16(5);
  d.a[1] = pow2_bf16(100);
  d.b[1] = pow2_bf16(20);
  EXPECT_EQ(d.run(), 0xFF800000u);
}

TEST(MmaSm90Targeted, AllNegativeZeroInputsGivePlusZero) {
  Dot d;
  d.a.fill(0x8000);
  d.b.fill(0x8000);
  d.c = 0x80000000u;
  EXPECT_EQ(d.run(), 0x00000000u);
  d.b.fill(0x0000);  // -0 * +0 = -0 products too
  EXPECT_EQ(d.run(), 0x00000000u);
}

}  // namespace
