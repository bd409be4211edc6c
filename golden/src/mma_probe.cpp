// SPDX-License-Identifier: MIT OR Apache-2.0
// The probe's input generators (mma_probe.hpp): values built as bit patterns from integer draws.
#include "w8a16/golden/mma_probe.hpp"

#include "w8a16/golden/case_rng.hpp"
#include "w8a16/reference/e4m3fn.hpp"

namespace w8a16::golden {
namespace {

using Rng = Xoshiro256ss;

// BF16 s|e8|m7 and FP32 s|e8|m23 from a sign, an unbiased exponent of a normal number and a fraction.
std::uint16_t bf16_of(bool neg, int e, std::uint32_t frac) {
  return static_cast<std::uint16_t>((neg ? 0x8000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 7) | (frac & 0x7Fu));
}
std::uint32_t f32_of(bool neg, int e, std::uint32_t frac) {
  return (neg ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 23) | (frac & 0x7FFFFFu);
}
int draw(Rng& r, int lo, int hi) { return static_cast<int>(r.in_range(lo, hi)); }
std::uint16_t bf16_rand(Rng& r, int elo, int ehi) {
  const bool neg = r.chance(1, 2);
  const int e = draw(r, elo, ehi);
  return bf16_of(neg, e, static_cast<std::uint32_t>(r.below(128)));
}
std::uint32_t f32_rand(Rng& r, int elo, int ehi) {
  const bool neg = r.chance(1, 2);
  const int e = draw(r, elo, ehi);
  return f32_of(neg, e, static_cast<std::uint32_t>(r.below(1u << 23)));
}
std::uint16_t bf16_subnormal(Rng& r) {
  return static_cast<std::uint16_t>((r.chance(1, 2) ? 0x8000u : 0u) | (1u + r.below(127)));
}
std::uint32_t f32_subnormal(Rng& r) {
  return (r.chance(1, 2) ? 0x80000000u : 0u) | static_cast<std::uint32_t>(1u + r.below((1u << 23) - 1));
}

// Element accessors of one case.
std::uint16_t& A(MmavCase& c, int m, int k) { return c.a[m * 16 + k]; }
std::uint16_t& B(MmavCase& c, int n, int k) { return c.bt[n * 16 + k]; }
std::uint32_t& C(MmavCase& c, int m, int n) { return c.c[m * 8 + n]; }

MmavCase empty_case() {
  MmavCase c;
  c.a.fill(0);
  c.bt.fill(0);
  c.c.fill(0);
  c.d.fill(0);
  return c;
}

void fill_ab(MmavCase& c, Rng& r, int elo, int ehi) {
  for (auto& v : c.a) v = bf16_rand(r, elo, ehi);
  for (auto& v : c.bt) v = bf16_rand(r, elo, ehi);
}

std::uint16_t special_bf16(Rng& r) {
  static constexpr std::uint16_t kSpecials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
                                                0x7F81, 0x7FFF, 0x7F7F, 0xFF7F, 0x0080, 0x8080};
  if (r.chance(1, 4)) return bf16_subnormal(r);
  return kSpecials[r.below(std::size(kSpecials))];
}
std::uint32_t special_f32(Rng& r) {
  static constexpr std::uint32_t kSpecials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                                0xFFC00001, 0x7F800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000};
  if (r.chance(1, 4)) return f32_subnormal(r);
  return kSpecials[r.below(std::size(kSpecials))];
}

MmavCase draw_case(ProbeRegime regime, Rng& r) {
  MmavCase c = empty_case();
  switch (regime) {
    case ProbeRegime::uniform:
      fill_ab(c, r, -3, 3);
      for (auto& v : c.c) v = r.chance(1, 4) ? 0u : f32_rand(r, -3, 3);
      break;
    case ProbeRegime::wide_exponents:
      fill_ab(c, r, -30, 30);
      for (auto& v : c.c) v = r.chance(1, 8) ? 0u : f32_rand(r, -60, 60);
      break;
    case ProbeRegime::cancellation:
      // a[2j+1] = -a[2j] and b[2j+1] = b[2j], each off by one in the last fraction bit half the
      // time: every row x column pair of products cancels exactly or to its last bits.
      for (int m = 0; m < 16; ++m)
        for (int j = 0; j < 8; ++j) {
          const std::uint16_t x = bf16_rand(r, -3, 3);
          A(c, m, 2 * j) = x;
          A(c, m, 2 * j + 1) = static_cast<std::uint16_t>((x ^ 0x8000u) ^ (r.chance(1, 2) ? 1u : 0u));
        }
      for (int n = 0; n < 8; ++n)
        for (int j = 0; j < 8; ++j) {
          const std::uint16_t y = bf16_rand(r, -3, 3);
          B(c, n, 2 * j) = y;
          B(c, n, 2 * j + 1) = static_cast<std::uint16_t>(y ^ (r.chance(1, 2) ? 1u : 0u));
        }
      for (auto& v : c.c) v = r.chance(1, 2) ? 0u : f32_rand(r, -14, -3);
      break;
    case ProbeRegime::w8a16_realistic:
      // Activations mostly 2^-4..2^1 with rare outliers; every non-NaN E4M3 code decoded exactly
      // (NUMERICS.md 1.2); C a partial sum of earlier k16 steps.
      for (auto& v : c.a) v = r.chance(1, 32) ? bf16_rand(r, 2, 6) : bf16_rand(r, -4, 1);
      for (auto& v : c.bt) {
        std::uint8_t code;
        do code = static_cast<std::uint8_t>(r.below(256));
        while (ref::e4m3fn_is_nan(code));
        v = ref::e4m3fn_to_bf16_bits(code);
      }
      for (auto& v : c.c) v = r.chance(1, 8) ? 0u : f32_rand(r, -2, 8);
      break;
    case ProbeRegime::specials:
      fill_ab(c, r, -3, 3);
      for (auto& v : c.a)
        if (r.chance(1, 8)) v = special_bf16(r);
      for (auto& v : c.bt)
        if (r.chance(1, 8)) v = special_bf16(r);
      for (auto& v : c.c) v = r.chance(1, 6) ? special_f32(r) : f32_rand(r, -3, 3);
      if (r.chance(1, 2)) {  // a row of BF16 max: its sums overflow (and meet Inf, NaN in B)
        const int m = draw(r, 0, 15);
        for (int k = 0; k < 16; ++k) A(c, m, k) = r.chance(3, 4) ? 0x7F7F : 0xFF7F;
      }
      break;
    case ProbeRegime::rounding: {
      // C dominant with exponent E0; products 2^(E0-30)..2^(E0-20): they land below C's last bits
      // and the final truncation toward zero decides the result (NUMERICS.md 1.1 steps 3 and 5).
      const int e0 = draw(r, -10, 10);
      const int h = e0 >= 0 ? e0 / 2 : -((1 - e0) / 2);
      for (auto& v : c.a) v = bf16_rand(r, h - 15, h - 10);
      for (auto& v : c.bt) v = bf16_rand(r, e0 - h - 15, e0 - h - 10);
      for (auto& v : c.c) v = f32_rand(r, e0, e0);
      break;
    }
    case ProbeRegime::exact_ties: {
      // Two-bit significands: sums are exact, and with C 2^14..2^24 above them the products sit on
      // or halfway between C's grid points.
      auto short_bf16 = [&](int elo, int ehi) {
        return bf16_of(r.chance(1, 2), draw(r, elo, ehi), static_cast<std::uint32_t>(r.below(4)) << 5);
      };
      for (auto& v : c.a) v = short_bf16(-4, 4);
      for (auto& v : c.bt) v = short_bf16(-4, 4);
      const bool big_c = r.chance(1, 2);
      for (auto& v : c.c)
        v = big_c ? f32_of(r.chance(1, 2), draw(r, 14, 24), static_cast<std::uint32_t>(r.below(8)) << 20)
                  : (r.chance(1, 2)
                         ? 0u
                         : f32_of(r.chance(1, 2), draw(r, -4, 4), static_cast<std::uint32_t>(r.below(8)) << 20));
      break;
    }
    case ProbeRegime::subnormal_outputs:
      if (r.chance(1, 2)) {
        fill_ab(c, r, -80, -60);  // products 2^-160..2^-118: mostly below FP32's normal range
      } else {
        for (auto& v : c.a) v = bf16_subnormal(r);  // subnormal BF16 operands, not flushed
        for (auto& v : c.bt) v = bf16_rand(r, -30, -5);
      }
      for (auto& v : c.c) v = r.chance(1, 2) ? (r.chance(1, 2) ? 0x80000000u : 0u) : f32_subnormal(r);
      break;
    case ProbeRegime::signed_zeros:
      // a[2j+1] = a[2j], b[2j+1] = -b[2j]: every pair cancels exactly; zeros of both signs in A,
      // B and C; some rows of A and of Bt entirely -0 (NUMERICS.md 1.1 step 6: the result is +0).
      for (int m = 0; m < 16; ++m) {
        const bool all_neg_zero = r.chance(1, 4);
        for (int j = 0; j < 8; ++j) {
          const std::uint16_t x = all_neg_zero
                                      ? 0x8000
                                      : (r.chance(1, 3) ? (r.chance(1, 2) ? 0x8000 : 0x0000) : bf16_rand(r, -3, 3));
          A(c, m, 2 * j) = x;
          A(c, m, 2 * j + 1) = x;
        }
      }
      for (int n = 0; n < 8; ++n) {
        const bool all_neg_zero = r.chance(1, 4);
        for (int j = 0; j < 8; ++j) {
          const std::uint16_t y = all_neg_zero
                                      ? 0x8000
                                      : (r.chance(1, 3) ? (r.chance(1, 2) ? 0x8000 : 0x0000) : bf16_rand(r, -3, 3));
          B(c, n, 2 * j) = y;
          B(c, n, 2 * j + 1) = all_neg_zero ? y : static_cast<std::uint16_t>(y ^ 0x8000u);
        }
      }
      for (auto& v : c.c) {
        const std::uint64_t pick = r.below(8);
        v = pick < 3 ? 0x80000000u : pick < 6 ? 0u : f32_rand(r, -3, 3);
      }
      break;
    case ProbeRegime::near_overflow:
      // Products 2^120..2^129, mostly positive, C up to FP32 max: sums cross 2^128 (-> +-Inf even
      // though the rounding is toward zero, NUMERICS.md 1.1 step 5).
      for (auto& v : c.a) v = bf16_of(r.chance(1, 4), draw(r, 60, 64), static_cast<std::uint32_t>(r.below(128)));
      for (auto& v : c.bt) v = bf16_of(r.chance(1, 4), draw(r, 60, 63), static_cast<std::uint32_t>(r.below(128)));
      for (auto& v : c.c) v = r.chance(1, 4) ? 0u : f32_rand(r, 124, 127);
      break;
    case ProbeRegime::targeted: break;
  }
  return c;
}

// BF16 constants for the targets.
constexpr std::uint16_t kOne = 0x3F80, kMinusOne = 0xBF80, kPlusInf = 0x7F80, kMinusInf = 0xFF80;
constexpr std::uint16_t k2p127 = 0x7F00;  // 2^127

ProbeTarget target(std::string_view what, std::uint32_t c, std::initializer_list<std::uint16_t> a,
                   std::initializer_list<std::uint16_t> b, std::uint32_t d) {
  ProbeTarget t{what, c, {}, {}, d};
  int i = 0;
  for (std::uint16_t v : a) t.a[i++] = v;
  i = 0;
  for (std::uint16_t v : b) t.b[i++] = v;
  return t;
}

std::vector<ProbeTarget> make_targets() {
  const std::uint16_t p2m76 = 0x1980, p2m75 = 0x1A00;   // 2^-76, 2^-75
  const std::uint16_t p2m12 = 0x3980, p2m13 = 0x3900;   // 2^-12, 2^-13
  const std::uint16_t p2m15 = 0x3800, p2p100 = 0x7180;  // 2^-15, 2^100
  std::vector<ProbeTarget> t;
  t.push_back(target("zero product +0 x 2^127 does not raise E: 2^-20 + 1 -> 1 + 2^-20", 0x35800000, {0x0000, kOne},
                     {k2p127, kOne}, 0x3F800008));
  t.push_back(target("zero product 2^127 x -0 does not raise E: 2^-20 + 1 -> 1 + 2^-20", 0x35800000, {k2p127, kOne},
                     {0x8000, kOne}, 0x3F800008));
  t.push_back(target("c = +0 does not join E: 8 x 2^-152 -> 0x00000001", 0x00000000,
                     {p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76},
                     {p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76}, 0x00000001));
  t.push_back(target("c = -0 does not join E: 8 x 2^-152 -> 0x00000001", 0x80000000,
                     {p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76},
                     {p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76, p2m76}, 0x00000001));
  t.push_back(target("signed zero: -2^-150 + 0 truncates to +0", 0x00000000,
                     {static_cast<std::uint16_t>(p2m75 | 0x8000)}, {p2m75}, 0x00000000));
  t.push_back(target("signed zero: all -0 products, c = -0 -> +0", 0x80000000,
                     {0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000,
                      0x8000, 0x8000, 0x8000, 0x8000},
                     {}, 0x00000000));
  t.push_back(target("signed zero: -0 x -0 (= +0) products, c = -0 -> +0", 0x80000000, {0x8000, 0x8000, 0x8000, 0x8000},
                     {0x8000, 0x8000, 0x8000, 0x8000}, 0x00000000));
  t.push_back(target("signed zero: x - x + (-0) -> +0", 0x80000000, {kOne, kOne}, {kOne, kMinusOne}, 0x00000000));
  t.push_back(target("truncation to zero: 1 - 2^-30 -> 1 (the term truncates toward zero)", 0x3F800000,
                     {static_cast<std::uint16_t>(p2m15 | 0x8000)}, {p2m15}, 0x3F800000));
  t.push_back(target("truncation to zero: 1 + 2^-30 -> 1", 0x3F800000, {p2m15}, {p2m15}, 0x3F800000));
  t.push_back(target("overflow: 2^127 + 2^127 -> +Inf", 0x00000000, {k2p127, k2p127}, {kOne, kOne}, 0x7F800000));
  t.push_back(target("overflow: -2^127 - 2^127 -> -Inf", 0x00000000, {0xFF00, 0xFF00}, {kOne, kOne}, 0xFF800000));
  t.push_back(target("overflow: c = 2^127 plus product 2^127 -> +Inf", 0x7F000000, {k2p127}, {kOne}, 0x7F800000));
  t.push_back(target(
      "c = 1 + 16 x 2^-25 -> 0x3F800004", 0x3F800000,
      {p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12, p2m12},
      {p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13, p2m13},
      0x3F800004));
  t.push_back(target("NaN in A -> 0x7FFFFFFF", 0x3F800000, {0x7FC0, kOne}, {kOne, kOne}, 0x7FFFFFFF));
  t.push_back(target("NaN in B (negative, payload) -> 0x7FFFFFFF", 0x3F800000, {kOne, kOne}, {0xFFC1, kOne},
                     0x7FFFFFFF));
  t.push_back(target("NaN in C -> 0x7FFFFFFF", 0x7FC00000, {kOne}, {kOne}, 0x7FFFFFFF));
  t.push_back(target("negative signaling NaN in C -> 0x7FFFFFFF", 0xFF800001, {kOne}, {kOne}, 0x7FFFFFFF));
  t.push_back(target("Inf in A -> +Inf", 0x3F800000, {kPlusInf, kOne}, {kOne, kOne}, 0x7F800000));
  t.push_back(target("-Inf product -> -Inf", 0x3F800000, {kPlusInf}, {kMinusOne}, 0xFF800000));
  t.push_back(target("c = -Inf with finite products -> -Inf", 0xFF800000, {kOne, kOne}, {kOne, kOne}, 0xFF800000));
  t.push_back(target("Inf x 0 -> 0x7FFFFFFF", 0x3F800000, {kPlusInf, kOne}, {0x0000, kOne}, 0x7FFFFFFF));
  t.push_back(target("-0 x -Inf -> 0x7FFFFFFF", 0x00000000, {0x8000}, {kMinusInf}, 0x7FFFFFFF));
  t.push_back(target("Inf - Inf among products -> 0x7FFFFFFF", 0x00000000, {kPlusInf, kPlusInf}, {kOne, kMinusOne},
                     0x7FFFFFFF));
  t.push_back(target("+Inf product + c = -Inf -> 0x7FFFFFFF", 0xFF800000, {kPlusInf}, {kOne}, 0x7FFFFFFF));
  t.push_back(target("subnormal BF16 operand is not flushed: 2^-133 x 2^100 -> 2^-33", 0x00000000, {0x0001}, {p2p100},
                     0x2F000000));
  t.push_back(target("subnormal c is not flushed: 2^-149 + zero products -> 0x00000001", 0x00000001, {}, {},
                     0x00000001));
  return t;
}

}  // namespace

std::string_view probe_regime_name(ProbeRegime r) {
  switch (r) {
    case ProbeRegime::uniform: return "uniform";
    case ProbeRegime::wide_exponents: return "wide_exponents";
    case ProbeRegime::cancellation: return "cancellation";
    case ProbeRegime::w8a16_realistic: return "w8a16_realistic";
    case ProbeRegime::specials: return "specials";
    case ProbeRegime::rounding: return "rounding";
    case ProbeRegime::exact_ties: return "exact_ties";
    case ProbeRegime::subnormal_outputs: return "subnormal_outputs";
    case ProbeRegime::signed_zeros: return "signed_zeros";
    case ProbeRegime::near_overflow: return "near_overflow";
    case ProbeRegime::targeted: return "targeted";
  }
  return "?";
}

std::vector<MmavCase> probe_regime_cases(ProbeRegime regime, std::uint32_t count, std::uint64_t seed) {
  if (regime == ProbeRegime::targeted) return probe_targeted_cases();
  // One stream per regime, drawn case after case: the first N cases do not depend on the count.
  Rng r(derive_seed(seed, 0x70726F6265000000ull + static_cast<std::uint64_t>(regime)));
  std::vector<MmavCase> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) out.push_back(draw_case(regime, r));
  return out;
}

const std::vector<ProbeTarget>& probe_targets() {
  static const std::vector<ProbeTarget> targets = make_targets();
  return targets;
}

std::vector<MmavCase> probe_targeted_cases() {
  std::vector<MmavCase> out;
  for (const ProbeTarget& t : probe_targets()) {
    MmavCase c = empty_case();
    for (int m = 0; m < 16; ++m)
      for (int k = 0; k < 16; ++k) A(c, m, k) = t.a[k];
    for (int n = 0; n < 8; ++n)
      for (int k = 0; k < 16; ++k) B(c, n, k) = t.b[k];
    c.c.fill(t.c);
    out.push_back(c);
  }
  return out;
}

}  // namespace w8a16::golden
