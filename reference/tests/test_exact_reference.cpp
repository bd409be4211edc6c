// SPDX-License-Identifier: MIT OR Apache-2.0
// The exact reference (exact.hpp) against a second, naive implementation on small cases, and on
// cancellation across its whole range, rounding ties decided 290 bits down, overflow and specials.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gemm_case.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/exact.hpp"

namespace {

namespace ref = w8a16::ref;
using ref::ExactKind;
using ref::ExactOutput;
using w8a16::test::GemmCase;

float bf16_value(std::uint16_t b) { return w8a16::test::f32_of_bits(std::uint32_t{b} << 16); }
std::uint64_t bits_of(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The naive oracle, for operands whose A exponents lie in [-6, 6] and scales in [-6, 6] (or are
// 0 or special): a step's sum is exact in double (products need 38 bits, 128 of them 45), so
// double arithmetic gives its value and IEEE class; the finite total is an __int128 count of
// 2^-51 (step sums are multiples of 2^-22, scales of 2^-29).
ExactOutput naive_exact(const GemmCase& c, std::uint32_t m, std::uint32_t n) {
  double total_class = 0.0;  // carries only NaN/Inf classes faithfully
  __int128 units = 0;        // the finite value in units of 2^-51
  for (std::uint32_t s = 0; s < c.k / 128; ++s) {
    double step = 0.0;
    for (std::uint32_t k = 128 * s; k < 128 * (s + 1); ++k)
      step += static_cast<double>(bf16_value(c.a[m * c.a_row_stride + k])) *
              static_cast<double>(ref::e4m3fn_to_f32(c.w[static_cast<std::size_t>(n) * c.k + k]));
    const double scale = c.s[(n / 128) * (c.k / 128) + s];
    total_class += scale * step;
    if (std::isfinite(step) && std::isfinite(scale))
      units += static_cast<__int128>(static_cast<std::int64_t>(std::ldexp(step, 22))) *
               static_cast<std::int64_t>(std::ldexp(scale, 29));
  }
  ExactOutput out;
  if (std::isnan(total_class)) {
    out.kind = ExactKind::nan;
    out.bf16_rne_bits = 0x7FFF;
    return out;
  }
  if (std::isinf(total_class)) {
    out.kind = total_class > 0 ? ExactKind::pos_inf : ExactKind::neg_inf;
    out.bf16_rne_bits = total_class > 0 ? 0x7F80 : 0xFF80;
    out.value_rn = total_class;
    return out;
  }
  out.value_rn = std::ldexp(static_cast<double>(units), -51);  // __int128 -> double rounds once, RNE
  if (units == 0) return out;
  const bool negative = units < 0;
  unsigned __int128 mag = negative ? -static_cast<unsigned __int128>(units) : static_cast<unsigned __int128>(units);
  int top = 127;
  while (((mag >> top) & 1) == 0) --top;
  int drop = top - 7 > 0 ? top - 7 : 0;  // BF16 keeps 8 significant bits
  const unsigned __int128 ulp = static_cast<unsigned __int128>(1) << drop;
  unsigned __int128 q = mag / ulp;
  const unsigned __int128 r = mag % ulp;
  if (2 * r > ulp || (2 * r == ulp && (q & 1))) ++q;
  const float value = std::ldexp(static_cast<float>(static_cast<std::uint32_t>(q)), drop - 51);
  out.bf16_rne_bits = static_cast<std::uint16_t>(bits_of(negative ? -value : value) >> 16);
  return out;
}

void fill_naive_range(GemmCase& c, bool specials) {
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t k = 0; k < c.k; ++k)
      c.a_at(m, k) = specials && *rc::gen::inRange(0, 24) == 0
                         ? *rc::gen::element<std::uint16_t>(0x7FC0, 0x7F80, 0xFF80, 0x8000)
                         : w8a16::test::gen_bf16_finite(-6, 6);
  for (auto& x : c.w)
    x = specials && *rc::gen::inRange(0, 40) == 0 ? *rc::gen::element<std::uint8_t>(0x7F, 0x80, 0x00)
                                                  : w8a16::test::gen_e4m3_finite();
  for (auto& x : c.s) {
    if (*rc::gen::inRange(0, 6) == 0) {
      x = specials ? w8a16::test::f32_of_bits(*rc::gen::element<std::uint32_t>(0u, 0x80000000u, 0x7F800000u,
                                                                               0xFF800000u, 0x7FC00000u))
                   : 0.0f;
      continue;
    }
    const int e = *rc::gen::inRange(-6, 7);
    x = std::ldexp(static_cast<float>(*rc::gen::inRange(1 << 23, 1 << 24)), e - 23) *
        (*rc::gen::arbitrary<bool>() ? -1.0f : 1.0f);
  }
}

void expect_same(const ExactOutput& got, const ExactOutput& want) {
  RC_ASSERT(got.kind == want.kind);
  RC_ASSERT(got.bf16_rne_bits == want.bf16_rne_bits);
  if (want.kind != ExactKind::nan) RC_ASSERT(bits_of(got.value_rn) == bits_of(want.value_rn));
  else RC_ASSERT(std::isnan(got.value_rn));
}

RC_GTEST_PROP(ExactReference, MatchesANaiveSecondImplementationOnSmallCases, ()) {
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 200u), 128 * *rc::gen::inRange(1u, 4u));
  const bool specials = *rc::gen::arbitrary<bool>();
  RC_CLASSIFY(specials, "specials");
  fill_naive_range(c, specials);
  std::vector<ExactOutput> out(c.m * c.n);
  ref::gemm_exact(c.view(), out.data(), c.n);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n) expect_same(out[m * c.n + n], naive_exact(c, m, n));
}

// A second naive oracle for finite operands over the whole exponent range: every product
// a * w * S (at most 40 significant bits) added term by term into base-2^16 digits from 2^-304,
// then turned into a plain array of bits and rounded by scanning it.
ExactOutput naive_exact_wide(const GemmCase& c, std::uint32_t m, std::uint32_t n) {
  constexpr int kLsb = -304, kDigits = 48;  // 2^-304 .. 2^464
  std::vector<std::int64_t> d(kDigits, 0);
  for (std::uint32_t k = 0; k < c.k; ++k) {
    const std::uint32_t a = std::uint32_t{c.a[m * c.a_row_stride + k]} << 16;
    const std::uint32_t w = std::uint32_t{ref::e4m3fn_to_bf16_bits(c.w[static_cast<std::size_t>(n) * c.k + k])} << 16;
    std::uint32_t s;
    std::memcpy(&s, &c.s[(n / 128) * (c.k / 128) + k / 128], 4);
    std::uint64_t sig = 1;
    int exp = 0;
    bool negative = false;
    for (std::uint32_t x : {a, w, s}) {  // each an FP32 pattern: sig * 2^(field - 150)
      const int field = (x >> 23) & 0xFF;
      std::uint64_t factor = field == 0 ? (x & 0x7FFFFF) : ((x & 0x7FFFFF) | 0x800000);
      exp += (field == 0 ? 1 : field) - 150;
      // Trailing zeros off each factor: BF16 and E4M3 significands then have 8 and 4 bits, so the
      // product has at most 36 and its exponent is at least -291.
      while (factor != 0 && (factor & 1) == 0) {
        factor >>= 1;
        ++exp;
      }
      sig *= factor;
      negative ^= (x >> 31) != 0;
    }
    if (sig == 0) continue;
    const int pos = exp - kLsb;
    for (int chunk = 0; sig >> (16 * chunk) != 0 || chunk == 0; ++chunk) {
      const int bit = pos + 16 * chunk;
      const std::int64_t part = static_cast<std::int64_t>((sig >> (16 * chunk)) & 0xFFFF) << (bit % 16);
      d[bit / 16] += negative ? -part : part;
      if (chunk == 3) break;
    }
  }
  for (int i = 0; i + 1 < kDigits; ++i) {  // carries, base 2^16, floor division
    const std::int64_t carry = d[i] >= 0 ? d[i] / 65536 : -((-d[i] + 65535) / 65536);
    d[i] -= carry * 65536;
    d[i + 1] += carry;
  }
  const bool negative = d[kDigits - 1] < 0;
  if (negative) {  // negate: every digit of -x, then carries again
    for (auto& x : d) x = -x;
    for (int i = 0; i + 1 < kDigits; ++i) {
      const std::int64_t carry = d[i] >= 0 ? d[i] / 65536 : -((-d[i] + 65535) / 65536);
      d[i] -= carry * 65536;
      d[i + 1] += carry;
    }
  }
  std::vector<int> bits(16 * kDigits);
  for (int i = 0; i < 16 * kDigits; ++i) bits[i] = static_cast<int>((d[i / 16] >> (i % 16)) & 1);
  ExactOutput out;
  int top = 16 * kDigits - 1;
  while (top >= 0 && bits[top] == 0) --top;
  if (top < 0) return out;
  auto round = [&](int precision, int min_q, std::uint64_t* kept, int* q) {
    *q = std::max(top + kLsb - (precision - 1), min_q);
    const int qb = *q - kLsb;
    *kept = 0;
    for (int i = top; i >= qb; --i) *kept = *kept * 2 + static_cast<std::uint64_t>(i >= 0 ? bits[i] : 0);
    const bool half = qb - 1 >= 0 && bits[qb - 1];
    bool sticky = false;
    for (int i = qb - 2; i >= 0; --i) sticky = sticky || bits[i];
    if (half && (sticky || (*kept & 1))) ++*kept;
  };
  std::uint64_t kept;
  int q;
  round(53, -1074, &kept, &q);
  out.value_rn = std::ldexp(static_cast<double>(kept), q) * (negative ? -1.0 : 1.0);
  round(8, -133, &kept, &q);
  const float magnitude = std::ldexp(static_cast<float>(kept), q);  // Inf past FLT_MAX, subnormal kept
  std::uint32_t f = bits_of(magnitude);
  // kept * 2^q is a BF16 value or at least 2^128, so the FP32 bits end in 16 zeros; >= 2^128: Inf.
  if (std::isinf(magnitude) || (f >> 16) > 0x7F7F) f = 0x7F800000u;
  out.bf16_rne_bits = static_cast<std::uint16_t>((f >> 16) | (negative ? 0x8000 : 0));
  return out;
}

RC_GTEST_PROP(ExactReference, MatchesABitByBitOracleOverTheWholeExponentRange, ()) {
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 20u), 128 * *rc::gen::inRange(1u, 4u));
  const int lo = *rc::gen::inRange(-133, 0), hi = *rc::gen::inRange(0, 128);
  w8a16::test::fill_random(c, 0, std::max(lo, -126), hi);
  if (*rc::gen::arbitrary<bool>())  // subnormal activations
    for (int i = 0; i < 10; ++i)
      c.a_at(*rc::gen::inRange(0u, c.m),
             *rc::gen::inRange(0u, c.k)) = static_cast<std::uint16_t>(*rc::gen::inRange(1, 128));
  for (auto& x : c.s)  // scales over FP32's whole finite range, subnormals and zero included
    x = w8a16::test::f32_of_bits(*rc::gen::inRange(0u, 0x7F800000u) | (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u));
  RC_CLASSIFY(hi - lo > 100, "a step spans more than 100 bits");
  std::vector<ExactOutput> out(c.m * c.n);
  ref::gemm_exact(c.view(), out.data(), c.n);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t n = 0; n < c.n; ++n) expect_same(out[m * c.n + n], naive_exact_wide(c, m, n));
}

TEST(ExactReference, CancelsAcrossTheWholeRangeInsideOneStep) {
  GemmCase c(1, 1, 128);
  c.a_at(0, 0) = 0x7F7F;
  c.w_at(0, 0) = 0x7E;  // (2^128 - 2^120) * 448
  c.a_at(0, 1) = 0xFF7F;
  c.w_at(0, 1) = 0x7E;  // minus the same
  c.a_at(0, 2) = 0x0001;
  c.w_at(0, 2) = 0x01;                                   // 2^-133 * 2^-9 = 2^-142
  c.s_at(0, 0) = w8a16::test::f32_of_bits(0x00000001u);  // 2^-149
  const ExactOutput r = ref::exact_element(c.view(), 0, 0);
  EXPECT_EQ(r.kind, ExactKind::finite);
  EXPECT_EQ(bits_of(r.value_rn), bits_of(std::ldexp(1.0, -291)));
  c.s_at(0, 0) = w8a16::test::f32_of_bits(0x7F800000u);  // the step sum is 2^-142, not 0: Inf
  EXPECT_EQ(ref::exact_element(c.view(), 0, 0).kind, ExactKind::pos_inf);
  c.a_at(0, 2) = 0;  // now exactly 0 times Inf: NaN
  EXPECT_EQ(ref::exact_element(c.view(), 0, 0).kind, ExactKind::nan);
}

RC_GTEST_PROP(ExactReference, GivesTheSameBytesOnOneThreadAndOnAll, ()) {
  GemmCase c(*rc::gen::inRange(1u, 5u), *rc::gen::inRange(1u, 300u), 128 * *rc::gen::inRange(1u, 3u));
  w8a16::test::fill_random(c, 24, -100, 100);
  std::vector<ExactOutput> one(c.m * c.n), all(c.m * c.n);
  ref::gemm_exact(c.view(), one.data(), c.n, 1);
  ref::gemm_exact(c.view(), all.data(), c.n, *rc::gen::element(0u, 2u, 3u, 7u));  // 0: every core
  for (std::size_t i = 0; i < one.size(); ++i) {
    RC_ASSERT(one[i].kind == all[i].kind);
    RC_ASSERT(one[i].bf16_rne_bits == all[i].bf16_rne_bits);
    RC_ASSERT(bits_of(one[i].value_rn) == bits_of(all[i].value_rn));
  }
}

// One output row, three steps, each holding a single product in its first element.
struct ThreeSteps {
  GemmCase c{1, 1, 384};
  void term(std::uint32_t step, std::uint16_t a_bits, std::uint8_t w_code, std::uint32_t s_bits,
            std::uint32_t slot = 0) {
    c.a_at(0, 128 * step + slot) = a_bits;
    c.w_at(0, 128 * step + slot) = w_code;
    c.s_at(0, step) = w8a16::test::f32_of_bits(s_bits);
  }
  ExactOutput run() const { return ref::exact_element(c.view(), 0, 0); }
};

TEST(ExactReference, CancelsTwoTo263ExactlyAndKeepsTheSmallestTermTwoToMinus291) {
  ThreeSteps t;
  t.term(0, 0x7F00, 0x7E, 0x7F000000u);  // 2^127 * 448 * 2^127
  t.term(1, 0xFF00, 0x7E, 0x7F000000u);  // its negation
  t.term(2, 0x0001, 0x01, 0x00000001u);  // 2^-133 * 2^-9 * 2^-149 = 2^-291
  ExactOutput r = t.run();
  EXPECT_EQ(r.kind, ExactKind::finite);
  EXPECT_EQ(bits_of(r.value_rn), bits_of(std::ldexp(1.0, -291)));
  EXPECT_EQ(r.bf16_rne_bits, 0x0000);  // far below BF16's 2^-133: rounds to +0
  t.term(2, 0x8001, 0x01, 0x00000001u);
  r = t.run();
  EXPECT_EQ(bits_of(r.value_rn), bits_of(-std::ldexp(1.0, -291)));
  EXPECT_EQ(r.bf16_rne_bits, 0x8000);  // a negative value that rounds to zero keeps its sign
}

TEST(ExactReference, AnExactZeroIsPlusZero) {
  ThreeSteps t;
  t.term(0, 0x3F80, 0x38, 0xBF800000u);  // 1 * 1 * -1
  t.term(1, 0x3F80, 0x38, 0x3F800000u);  // 1 * 1 * 1
  const ExactOutput r = t.run();
  EXPECT_EQ(r.kind, ExactKind::finite);
  EXPECT_EQ(r.bf16_rne_bits, 0x0000);
  EXPECT_EQ(bits_of(r.value_rn), 0u);
}

TEST(ExactReference, ABf16TieIsDecidedByABitTwoHundredNinetyBitsDown) {
  ThreeSteps t;
  t.term(0, 0x3F80, 0x38, 0x3F800000u);      // 1
  t.term(1, 0x3B80, 0x38, 0x3F800000u);      // 2^-8: 1 + 2^-8 is halfway between two BF16 values
  EXPECT_EQ(t.run().bf16_rne_bits, 0x3F80);  // tie to even
  t.term(2, 0x0001, 0x01, 0x00000001u);      // + 2^-291 breaks the tie upward
  const ExactOutput r = t.run();
  EXPECT_EQ(r.bf16_rne_bits, 0x3F81);
  EXPECT_EQ(bits_of(r.value_rn), bits_of(1.0 + std::ldexp(1.0, -8)));  // double cannot hold 2^-291 here
  t.term(2, 0x8001, 0x01, 0x00000001u);                                // - 2^-291: just below the tie
  EXPECT_EQ(t.run().bf16_rne_bits, 0x3F80);
}

TEST(ExactReference, BeyondTheBf16RangeRoundsToInfinityButTheValueStaysFinite) {
  ThreeSteps t;
  t.term(0, 0x7F00, 0x38, 0x3F800000u);     // 2^127
  t.term(0, 0x7F00, 0x38, 0x3F800000u, 1);  // + 2^127
  const ExactOutput r = t.run();
  EXPECT_EQ(r.kind, ExactKind::finite);
  EXPECT_EQ(r.bf16_rne_bits, 0x7F80);
  EXPECT_EQ(bits_of(r.value_rn), bits_of(std::ldexp(1.0, 128)));
  // BF16 max is 2^128 - 2^120 (odd significand); 2^128 - 2^119 is the tie with 2^128: to even, Inf.
  ThreeSteps tie;
  tie.term(0, 0x7F7F, 0x38, 0x3F800000u);     // 2^128 - 2^120
  tie.term(0, 0x7B00, 0x38, 0x3F800000u, 1);  // + 2^119
  EXPECT_EQ(tie.run().bf16_rne_bits, 0x7F80);
  tie.term(2, 0x8001, 0x01, 0x00000001u);  // - 2^-291: just below the tie, so BF16 max
  EXPECT_EQ(tie.run().bf16_rne_bits, 0x7F7F);
}

TEST(ExactReference, SpecialsFollowIeeeRulesOnTheExactSums) {
  auto kind_of = [](auto setup) {
    ThreeSteps t;
    setup(t);
    return t.run().kind;
  };
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x7FC0, 0x38, 0x3F800000u); }), ExactKind::nan);
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x3F80, 0x7F, 0x3F800000u); }), ExactKind::nan);  // E4M3 NaN
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x7F80, 0x00, 0x3F800000u); }), ExactKind::nan);  // Inf * 0
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x7F80, 0x38, 0x00000000u); }), ExactKind::nan);  // Inf step * 0
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x7F80, 0x38, 0xBF800000u); }), ExactKind::neg_inf);
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0xFF80, 0xB8, 0x3F800000u); }), ExactKind::pos_inf);
  EXPECT_EQ(kind_of([](ThreeSteps& t) {
              t.term(0, 0x7F80, 0x38, 0x3F800000u);
              t.term(1, 0x7F80, 0x38, 0xBF800000u);
            }),
            ExactKind::nan);  // +Inf + -Inf across steps
  EXPECT_EQ(kind_of([](ThreeSteps& t) {
              t.term(0, 0x3F80, 0x38, 0x7F800000u);
              t.term(0, 0xBF80, 0x38, 0x7F800000u, 1);
            }),
            ExactKind::nan);  // a step summing to exactly 0 times Inf
  EXPECT_EQ(kind_of([](ThreeSteps& t) { t.term(0, 0x0001, 0x01, 0xFF800000u); }), ExactKind::neg_inf);
  EXPECT_EQ(kind_of([](ThreeSteps& t) {
              t.term(0, 0x7FC0, 0x38, 0x3F800000u);
              t.term(1, 0x7F80, 0x38, 0x3F800000u);
            }),
            ExactKind::nan);
  ThreeSteps t;
  t.term(0, 0x7FC0, 0x38, 0x3F800000u);
  EXPECT_EQ(t.run().bf16_rne_bits, 0x7FFF);
}

}  // namespace
