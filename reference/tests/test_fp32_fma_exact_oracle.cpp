// SPDX-License-Identifier: MIT OR Apache-2.0
// fma.rn.f32 (NUMERICS.md 1.2) against a naive exact oracle: a*b + c formed digit by digit in
// binary, rounded once to nearest even; random and edge bit patterns.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <sstream>

#include "w8a16/reference/fp32.hpp"

namespace {

using w8a16::ref::f32_fma_rne_bits;

// An exact binary number: one binary digit per position, weight 2^(i - kBias). a*b reaches
// 2^-298 at the bottom and c + a*b stays below 2^257 at the top.
constexpr int kBias = 320;
constexpr int kDigits = 640;
using Digits = std::array<std::uint8_t, kDigits>;

struct Exact {
  bool negative = false;
  Digits mag{};  // magnitude
};

struct Fields {
  bool negative;
  int exp;
  std::uint32_t sig;
};  // value sig * 2^(exp - 23)
Fields fields(std::uint32_t x) {
  const int e = (x >> 23) & 0xFF;
  const std::uint32_t f = x & 0x7FFFFF;
  return e == 0 ? Fields{(x >> 31) != 0, -126, f} : Fields{(x >> 31) != 0, e - 127, f | 0x800000u};
}

// Adds integer v * 2^lsb_exp to the digits.
void add_integer(Digits& d, unsigned __int128 v, int lsb_exp) {
  int carry = 0;
  for (int i = lsb_exp + kBias; i < kDigits; ++i) {
    const int bit = (i - lsb_exp - kBias) < 128 ? static_cast<int>((v >> (i - lsb_exp - kBias)) & 1) : 0;
    const int s = d[i] + bit + carry;
    d[i] = static_cast<std::uint8_t>(s & 1);
    carry = s >> 1;
  }
}

int compare(const Digits& x, const Digits& y) {
  for (int i = kDigits - 1; i >= 0; --i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

Digits subtract(const Digits& big, const Digits& small) {  // big >= small
  Digits r{};
  int borrow = 0;
  for (int i = 0; i < kDigits; ++i) {
    int s = big[i] - small[i] - borrow;
    borrow = s < 0;
    r[i] = static_cast<std::uint8_t>(s & 1);
  }
  return r;
}

// IEEE 754 a*b + c with one rounding to nearest even, on finite inputs. A zero result: the sign
// rules of IEEE 754 6.3 (an exact zero sum of opposite signs is +0; -0 + -0 is -0).
std::uint32_t oracle_fma_finite(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const Fields fa = fields(a), fb = fields(b), fc = fields(c);
  const bool p_negative = fa.negative != fb.negative;
  Exact p, q;
  p.negative = p_negative;
  add_integer(p.mag, static_cast<unsigned __int128>(fa.sig) * fb.sig, fa.exp + fb.exp - 46);
  q.negative = fc.negative;
  add_integer(q.mag, fc.sig, fc.exp - 23);
  Exact sum;
  if (p.negative == q.negative) {
    sum.negative = p.negative;
    sum.mag = p.mag;
    int carry = 0;
    for (int i = 0; i < kDigits; ++i) {
      const int s = sum.mag[i] + q.mag[i] + carry;
      sum.mag[i] = static_cast<std::uint8_t>(s & 1);
      carry = s >> 1;
    }
  } else {
    const int cmp = compare(p.mag, q.mag);
    if (cmp == 0) return 0u;  // an exact zero sum of opposite signs is +0 (zeros included)
    sum.negative = cmp > 0 ? p.negative : q.negative;
    sum.mag = cmp > 0 ? subtract(p.mag, q.mag) : subtract(q.mag, p.mag);
  }
  const std::uint32_t sign = sum.negative ? 0x80000000u : 0u;
  int top = kDigits - 1;
  while (top >= 0 && sum.mag[top] == 0) --top;
  if (top < 0) return sign;  // both zero, same sign: -0 + -0 = -0, +0 + +0 = +0
  const int top_exp = top - kBias;
  const int q_exp = std::max(top_exp - 23, -149);  // weight of the result's last bit
  std::uint64_t kept = 0;
  for (int i = top; i >= q_exp + kBias; --i) kept = kept * 2 + sum.mag[i];
  const int half = q_exp - 1 + kBias >= 0 ? sum.mag[q_exp - 1 + kBias] : 0;
  bool sticky = false;
  for (int i = q_exp - 2 + kBias; i >= 0; --i) sticky = sticky || sum.mag[i];
  if (half && (sticky || (kept & 1))) ++kept;
  // kept * 2^q_exp; renormalise a carry out of 24 bits.
  int e = q_exp;
  if (kept >= (1u << 24)) {
    kept >>= 1;
    ++e;
  }
  if (kept == 0) return sign;
  if (kept < (1u << 23)) return sign | static_cast<std::uint32_t>(kept);  // subnormal (e == -149)
  if (e + 23 > 127) return sign | 0x7F800000u;                            // overflow: RNE goes to Inf
  return sign | (static_cast<std::uint32_t>(e + 23 + 127) << 23) | (static_cast<std::uint32_t>(kept) & 0x7FFFFF);
}

bool is_nan(std::uint32_t x) { return (x & 0x7FFFFFFF) > 0x7F800000; }
bool is_inf(std::uint32_t x) { return (x & 0x7FFFFFFF) == 0x7F800000; }
bool is_zero(std::uint32_t x) { return (x & 0x7FFFFFFF) == 0; }

// IEEE special cases, then the finite oracle; NaN results are the GPU's 0x7FFFFFFF.
std::uint32_t oracle_fma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  if (is_nan(a) || is_nan(b) || is_nan(c)) return 0x7FFFFFFF;
  if ((is_inf(a) && is_zero(b)) || (is_zero(a) && is_inf(b))) return 0x7FFFFFFF;
  if (is_inf(a) || is_inf(b)) {
    const std::uint32_t p_sign = (a ^ b) & 0x80000000u;
    if (is_inf(c) && (c & 0x80000000u) != p_sign) return 0x7FFFFFFF;
    return p_sign | 0x7F800000u;
  }
  if (is_inf(c)) return c;
  return oracle_fma_finite(a, b, c);
}

// Bit patterns that reach the edges: exponent fields 0, 1, 2, 126..128, 253, 254, 255, and
// significands with few or all bits set.
std::uint32_t edge_pattern(std::mt19937_64& rng) {
  static const int kExps[] = {0, 0, 1, 2, 23, 24, 25, 100, 126, 127, 128, 150, 200, 253, 254, 255};
  static const std::uint32_t kSigs[] = {0, 1, 2, 0x400000, 0x7FFFFF, 0x7FFFFE, 0x000001, 0x555555, 0x200001};
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1) << 31;
  const std::uint32_t e = static_cast<std::uint32_t>(kExps[rng() % 16]);
  const std::uint32_t f = rng() % 3 == 0 ? static_cast<std::uint32_t>(rng()) & 0x7FFFFF : kSigs[rng() % 9];
  return sign | e << 23 | f;
}

std::string hex3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::ostringstream s;
  s << std::hex << "a=0x" << a << " b=0x" << b << " c=0x" << c;
  return s.str();
}

void expect_matches(std::uint32_t a, std::uint32_t b, std::uint32_t c, int* failures) {
  const std::uint32_t want = oracle_fma(a, b, c), got = f32_fma_rne_bits(a, b, c);
  if (want != got && ++*failures <= 10)
    ADD_FAILURE() << hex3(a, b, c) << std::hex << " oracle=0x" << want << " emulator=0x" << got;
}

TEST(Fp32FmaRne, RandomBitPatternsMatchTheExactOracle) {
  std::mt19937_64 rng(20261130);
  int failures = 0;
  for (int i = 0; i < 100000; ++i)
    expect_matches(static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()),
                   static_cast<std::uint32_t>(rng()), &failures);
  EXPECT_EQ(failures, 0);
}

TEST(Fp32FmaRne, EdgeBitPatternsMatchTheExactOracle) {
  std::mt19937_64 rng(7);
  int failures = 0;
  for (int i = 0; i < 100000; ++i) expect_matches(edge_pattern(rng), edge_pattern(rng), edge_pattern(rng), &failures);
  EXPECT_EQ(failures, 0);
}

// c close to -a*b: massive cancellation, where the low bits of the exact product decide everything.
TEST(Fp32FmaRne, NearCancellationMatchesTheExactOracle) {
  std::mt19937_64 rng(11);
  int failures = 0;
  for (int i = 0; i < 50000; ++i) {
    const std::uint32_t a = static_cast<std::uint32_t>(rng()) & 0xBFFFFFFFu;  // exponent fields < 128
    const std::uint32_t b = (static_cast<std::uint32_t>(rng()) & 0x807FFFFFu) |
                            (static_cast<std::uint32_t>(100 + rng() % 40) << 23);
    const float p = w8a16::ref::f32_from_bits(a) * w8a16::ref::f32_from_bits(b);
    std::uint32_t c = w8a16::ref::f32_to_bits(-p) + static_cast<std::uint32_t>(rng() % 5) - 2;
    expect_matches(a, b, c, &failures);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Fp32FmaRne, TiesOverflowSignedZerosAndNanFollowIeeeAndTheGpuNan) {
  // 1 + 2^-24 is a tie: to even (1). 1 + 3 * 2^-24 rounds up to 1 + 2^-22.
  EXPECT_EQ(f32_fma_rne_bits(0x3F800000u, 0x33800000u, 0x3F800000u), 0x3F800000u);
  EXPECT_EQ(f32_fma_rne_bits(0x40400000u, 0x33800000u, 0x3F800000u), 0x3F800002u);
  EXPECT_EQ(f32_fma_rne_bits(0x7F7FFFFFu, 0x40000000u, 0u), 0x7F800000u);           // overflow to +Inf
  EXPECT_EQ(f32_fma_rne_bits(0x3F800000u, 0x3F800000u, 0xBF800000u), 0u);           // 1*1 - 1 = +0
  EXPECT_EQ(f32_fma_rne_bits(0x80000000u, 0x3F800000u, 0x80000000u), 0x80000000u);  // -0 + -0 = -0
  EXPECT_EQ(f32_fma_rne_bits(0x00000001u, 0x3F000000u, 0u), 0u);                    // 2^-150: tie to even 0
  EXPECT_EQ(f32_fma_rne_bits(0x00000003u, 0x3F000000u, 0u), 0x00000002u);           // 1.5 ulp: tie to even 2
  EXPECT_EQ(f32_fma_rne_bits(0x7F800000u, 0u, 0x3F800000u), 0x7FFFFFFFu);           // Inf * 0
  EXPECT_EQ(f32_fma_rne_bits(0x7F800000u, 0x3F800000u, 0xFF800000u), 0x7FFFFFFFu);  // Inf - Inf
  EXPECT_EQ(f32_fma_rne_bits(0xFFC00001u, 0x3F800000u, 0u), 0x7FFFFFFFu);           // NaN in
  int failures = 0;
  for (std::uint32_t x : {0x00000001u, 0x00000003u, 0x7F7FFFFFu, 0x80000000u, 0x7F800000u, 0xFFC00001u})
    for (std::uint32_t y : {0x3F000000u, 0x3F800000u, 0x40000000u, 0u, 0x80000000u})
      for (std::uint32_t z : {0u, 0x80000000u, 0x3F800000u, 0xFF800000u, 0x00000001u})
        expect_matches(x, y, z, &failures);
  EXPECT_EQ(failures, 0);
}

}  // namespace
