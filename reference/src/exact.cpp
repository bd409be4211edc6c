// SPDX-License-Identifier: MIT OR Apache-2.0
// The exact reference (exact.hpp): Kulisch-style fixed-point accumulators wide enough that no
// product and no sum is ever rounded, and one rounding at the end.
#include "w8a16/reference/exact.hpp"

#include <cmath>
#include <cstring>

#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::ref {
namespace {

// A signed fixed-point number held as base-2^32 digits in int64 (carry-save): digit i weighs
// 2^(kLsb + 32 i). Each digit takes 2^31 additions of 32-bit chunks before it could overflow;
// normalise() propagates carries so that digits 0..kDigits-2 lie in [0, 2^32) and the top digit
// carries the sign (two's complement over the whole array).
template <int kLsb, int kDigits>
struct FixedSum {
  std::int64_t d[kDigits] = {};

  // Adds (negative ? -1 : 1) * sig * 2^exp, sig < 2^56, exp >= kLsb.
  void add(std::uint64_t sig, int exp, bool negative) {
    const int pos = exp - kLsb;
    const int i = pos >> 5, sh = pos & 31;
    const unsigned __int128 v = static_cast<unsigned __int128>(sig) << sh;  // < 2^87: three digits
    const std::int64_t c0 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v));
    const std::int64_t c1 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 32));
    const std::int64_t c2 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 64));
    if (negative) {
      d[i] -= c0;
      d[i + 1] -= c1;
      d[i + 2] -= c2;
    } else {
      d[i] += c0;
      d[i + 1] += c1;
      d[i + 2] += c2;
    }
  }

  void normalise() {
    for (int i = 0; i + 1 < kDigits; ++i) {
      const std::int64_t carry = d[i] >> 32;  // floor division by 2^32
      d[i] -= carry * (std::int64_t{1} << 32);
      d[i + 1] += carry;
    }
  }

  bool is_zero() const {
    for (std::int64_t x : d)
      if (x != 0) return false;
    return true;
  }

  // After normalise(): the sign, and the magnitude as unsigned base-2^32 digits.
  bool magnitude(std::uint32_t* mag) const {
    const bool negative = d[kDigits - 1] < 0;
    std::uint64_t borrow = negative ? 1 : 0;  // magnitude = ~x + 1 when negative
    for (int i = 0; i < kDigits; ++i) {
      std::uint64_t x = static_cast<std::uint32_t>(d[i]);
      if (negative) {
        x = (~x & 0xFFFFFFFFu) + borrow;
        borrow = x >> 32;
      }
      mag[i] = static_cast<std::uint32_t>(x);
    }
    return negative;
  }
};

// Inner sums: a product of a BF16 (lsb >= 2^-133) and an E4M3 (lsb >= 2^-9) weighs at least
// 2^-142; |a*w| < 2^128 * 2^9 and 2^25 of them stay below 2^162 < 2^(-160 + 32 * 11).
using InnerSum = FixedSum<-160, 12>;
// The whole output: the step sum (lsb >= 2^-142) times a scale (lsb >= 2^-149) weighs at least
// 2^-291; |step sum * S| < 2^162 * 2^128 and 2^25 steps stay below 2^320 = 2^(-320 + 32 * 20).
using OuterSum = FixedSum<-320, 22>;

// BF16 as sig * 2^exp (exp of the last bit): the value of a finite nonzero operand.
struct Term {
  std::uint32_t sig;
  int exp;
  bool negative;
};
Term bf16_term(std::uint16_t b) {
  const int field = (b >> 7) & 0xFF;
  const std::uint32_t frac = b & 0x7F;
  if (field == 0) return {frac, -126 - 7, (b >> 15) != 0};
  return {0x80u | frac, field - 127 - 7, (b >> 15) != 0};
}
Term f32_term(std::uint32_t x) {
  const int field = static_cast<int>((x >> 23) & 0xFF);
  const std::uint32_t frac = x & 0x7FFFFF;
  if (field == 0) return {frac, -126 - 23, (x >> 31) != 0};
  return {0x800000u | frac, field - 127 - 23, (x >> 31) != 0};
}

// IEEE class bookkeeping of a sum of signed terms.
struct SpecialSum {
  bool nan = false, pos_inf = false, neg_inf = false;
  void add_inf(bool negative) { (negative ? neg_inf : pos_inf) = true; }
  bool finite() const { return !nan && !pos_inf && !neg_inf; }
  ExactKind kind() const {
    if (nan || (pos_inf && neg_inf)) return ExactKind::nan;
    if (pos_inf) return ExactKind::pos_inf;
    if (neg_inf) return ExactKind::neg_inf;
    return ExactKind::finite;
  }
};

// Bits [lo, lo + count) of a magnitude (count <= 64; bits below 0 read as 0).
template <int kDigits>
std::uint64_t bits_at(const std::uint32_t* mag, int lo, int count) {
  std::uint64_t r = 0;
  for (int i = count - 1; i >= 0; --i) {
    const int b = lo + i;
    const int bit = b < 0 || b >= 32 * kDigits ? 0 : (mag[b >> 5] >> (b & 31)) & 1;
    r = r << 1 | static_cast<std::uint64_t>(bit);
  }
  return r;
}

template <int kDigits>
bool any_bit_below(const std::uint32_t* mag, int b) {
  for (int i = 0; i < kDigits && 32 * i < b; ++i) {
    const int width = b - 32 * i;
    const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1);
    if (mag[i] & mask) return true;
  }
  return false;
}

// Rounds a nonzero magnitude (bit j weighs 2^(lsb + j)) once, nearest even, to `precision`
// significant bits with the smallest last-bit exponent `min_q` (subnormals). Returns the kept
// integer and the exponent of its last bit; kept may reach 2^precision only after renormalising.
template <int kDigits>
void round_rne(const std::uint32_t* mag, int lsb, int precision, int min_q, std::uint64_t* kept, int* q_out) {
  int top = 32 * kDigits - 1;
  while (((mag[top >> 5] >> (top & 31)) & 1) == 0) --top;
  int q = top + lsb - (precision - 1);
  if (q < min_q) q = min_q;
  const int qb = q - lsb;  // bit index of the last kept bit
  std::uint64_t k = bits_at<kDigits>(mag, qb, top - qb + 1 > 0 ? top - qb + 1 : 0);
  const bool half = qb - 1 >= 0 && ((mag[(qb - 1) >> 5] >> ((qb - 1) & 31)) & 1);
  const bool sticky = qb - 1 > 0 && any_bit_below<kDigits>(mag, qb - 1);
  if (half && (sticky || (k & 1))) ++k;
  if (k >> precision) {
    k >>= 1;
    ++q;
  }
  *kept = k;
  *q_out = q;
}

// The E4M3 codes' BF16 decodes as terms (NaN codes unused).
struct WeightTerms {
  Term t[256];
  WeightTerms() {
    for (int c = 0; c < 256; ++c) t[c] = bf16_term(e4m3fn_to_bf16_bits(static_cast<std::uint8_t>(c)));
  }
};
const WeightTerms kWeightTerms;

// One step's exact sum sum_k a*w as a sign and magnitude digits (digit i weighs 2^(lsb + 32 i)).
struct StepSum {
  bool negative = false, zero = true;
  int lsb = 0, digits = 0;
  std::uint32_t mag[12] = {};
};

// The step's finite products. When their exponents span at most 100 bits (the usual case), an
// __int128 holds the sum exactly: a product is below 2^16, 128 of them add 7 bits, 16 + 7 + 100
// < 127. Otherwise the wide fixed-point accumulator takes them one by one.
StepSum exact_step_sum(const std::uint32_t* sig, const int* exp, const bool* negative, int count, int e_min,
                       int e_max) {
  StepSum r;
  if (count == 0) return r;
  if (e_max - e_min <= 100) {
    __int128 acc = 0;
    for (int i = 0; i < count; ++i) {
      const __int128 t = static_cast<__int128>(sig[i]) << (exp[i] - e_min);
      const __int128 sign = -static_cast<__int128>(negative[i]);  // 0 or -1: no branch on random signs
      acc += (t ^ sign) - sign;
    }
    if (acc == 0) return r;
    r.zero = false;
    r.negative = acc < 0;
    const unsigned __int128 mag = r.negative ? -static_cast<unsigned __int128>(acc)
                                             : static_cast<unsigned __int128>(acc);
    r.lsb = e_min;
    r.digits = 4;
    for (int i = 0; i < 4; ++i) r.mag[i] = static_cast<std::uint32_t>(mag >> (32 * i));
    return r;
  }
  InnerSum inner;
  for (int i = 0; i < count; ++i) inner.add(sig[i], exp[i], negative[i]);
  inner.normalise();
  if (inner.is_zero()) return r;
  r.zero = false;
  r.negative = inner.magnitude(r.mag);
  r.lsb = -160;
  r.digits = 12;
  return r;
}

}  // namespace

ExactOutput exact_element(const GemmView& v, std::uint32_t m, std::uint32_t n) {
  const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
  const std::uint8_t* w_row = v.w + static_cast<std::size_t>(n) * v.k;
  SpecialSum total;
  OuterSum outer;
  std::uint32_t term_sig[kKStep];
  int term_exp[kKStep];
  bool term_negative[kKStep];
  for (std::uint32_t s = 0; s < v.k_steps(); ++s) {
    SpecialSum step;
    int count = 0, e_min = 1 << 20, e_max = -(1 << 20);
    for (std::uint32_t k = s * kKStep; k < (s + 1) * kKStep; ++k) {
      const std::uint16_t a = a_row[k];
      const std::uint8_t code = w_row[k];  // decoded to BF16 exactly (NUMERICS.md 1.2)
      const bool a_nan = (a & 0x7FFF) > 0x7F80, a_inf = (a & 0x7FFF) == 0x7F80;
      if (a_nan || e4m3fn_is_nan(code)) {
        step.nan = true;
        continue;
      }
      const bool w_zero = (code & 0x7F) == 0;
      if (a_inf) {  // E4M3 has no Inf, so only A can bring one
        if (w_zero) step.nan = true;
        else step.add_inf(((a >> 15) ^ (code >> 7)) != 0);
        continue;
      }
      if (w_zero || (a & 0x7FFF) == 0) continue;
      const Term ta = bf16_term(a), tw = kWeightTerms.t[code];
      term_sig[count] = ta.sig * tw.sig;
      term_exp[count] = ta.exp + tw.exp;
      term_negative[count] = ta.negative != tw.negative;
      e_min = term_exp[count] < e_min ? term_exp[count] : e_min;
      e_max = term_exp[count] > e_max ? term_exp[count] : e_max;
      ++count;
    }
    const std::uint32_t s_bits = [&] {
      std::uint32_t b;
      const float f = v.scale(n, s);
      std::memcpy(&b, &f, 4);
      return b;
    }();
    const bool s_nan = (s_bits & 0x7FFFFFFF) > 0x7F800000, s_inf = (s_bits & 0x7FFFFFFF) == 0x7F800000;
    const bool s_zero = (s_bits & 0x7FFFFFFF) == 0, s_negative = (s_bits >> 31) != 0;
    const ExactKind step_kind = step.kind();
    if (s_nan || step_kind == ExactKind::nan) {
      total.nan = true;
      continue;
    }
    if (step_kind != ExactKind::finite) {  // +-Inf times the scale
      if (s_zero) total.nan = true;
      else total.add_inf((step_kind == ExactKind::neg_inf) != s_negative);
      continue;
    }
    const StepSum sum = exact_step_sum(term_sig, term_exp, term_negative, count, e_min, e_max);
    if (s_inf) {  // a finite step sum times Inf: NaN when the sum is exactly 0
      if (sum.zero) total.nan = true;
      else total.add_inf(sum.negative != s_negative);
      continue;
    }
    if (s_zero || sum.zero) continue;
    // outer += sum * S, digit by digit: each digit times the scale's 24-bit significand.
    const Term ts = f32_term(s_bits);
    for (int i = 0; i < sum.digits; ++i)
      if (sum.mag[i])
        outer.add(std::uint64_t{sum.mag[i]} * ts.sig, sum.lsb + 32 * i + ts.exp, sum.negative != ts.negative);
  }

  ExactOutput out;
  out.kind = total.kind();
  switch (out.kind) {
    case ExactKind::nan:
      out.bf16_rne_bits = 0x7FFF;
      out.value_rn = std::nan("");
      return out;
    case ExactKind::pos_inf:
      out.bf16_rne_bits = 0x7F80;
      out.value_rn = HUGE_VAL;
      return out;
    case ExactKind::neg_inf:
      out.bf16_rne_bits = 0xFF80;
      out.value_rn = -HUGE_VAL;
      return out;
    case ExactKind::finite: break;
  }
  outer.normalise();
  if (outer.is_zero()) return out;  // +0 both ways
  std::uint32_t mag[22];
  const bool negative = outer.magnitude(mag);
  // BF16: 8 significant bits, smallest last bit 2^-133; a last bit beyond 2^120 means >= 2^128.
  std::uint64_t kept;
  int q;
  round_rne<22>(mag, -320, 8, -133, &kept, &q);
  std::uint16_t bits;
  if (q > 120) bits = 0x7F80;
  else if (kept < 0x80) bits = static_cast<std::uint16_t>(kept);  // subnormal (q == -133), or 0
  else bits = static_cast<std::uint16_t>((q + 7 + 127) << 7 | (kept & 0x7F));
  out.bf16_rne_bits = static_cast<std::uint16_t>(bits | (negative ? 0x8000 : 0));  // tiny negatives: -0
  // double: 53 bits; every value here lies in [2^-291, 2^320), inside double's normal range.
  round_rne<22>(mag, -320, 53, -1074, &kept, &q);
  out.value_rn = std::ldexp(static_cast<double>(kept), q) * (negative ? -1.0 : 1.0);
  return out;
}

void gemm_exact(const GemmView& v, ExactOutput* out, std::size_t out_row_stride, unsigned threads) {
  constexpr std::uint32_t kColumnsPerTask = 64;
  const std::uint32_t tiles = (v.n + kColumnsPerTask - 1) / kColumnsPerTask;
  parallel_for(v.m * tiles, threads, [&](std::uint32_t task) {
    const std::uint32_t m = task / tiles, n0 = task % tiles * kColumnsPerTask;
    const std::uint32_t n1 = n0 + kColumnsPerTask < v.n ? n0 + kColumnsPerTask : v.n;
    for (std::uint32_t n = n0; n < n1; ++n) out[m * out_row_stride + n] = exact_element(v, m, n);
  });
}

}  // namespace w8a16::ref
