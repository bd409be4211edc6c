// SPDX-License-Identifier: MIT OR Apache-2.0
// The tensor-core step, written as the numbered rules of NUMERICS.md 1.1. Plain and slow on
// purpose: this is the model; contract_fast.cpp is checked against it.
#include "w8a16/reference/mma.hpp"

#include <cstdlib>

#include "w8a16/reference/fp32.hpp"

namespace w8a16::ref {

bool parse_arch(std::string_view text, Arch* out) {
  if (text == "sm90" || text == "sm_90") {
    *out = Arch::sm90;
    return true;
  }
  if (text == "sm80" || text == "sm_80") {
    *out = Arch::sm80;
    return true;
  }
  return false;
}

namespace {

// A finite nonzero operand as  sig * 2^(exp - frac_bits), sig an integer with the hidden bit.
// A subnormal counts as exponent -126 with no hidden bit (NUMERICS 1.1, rule 1).
struct Unpacked {
  bool negative;
  int exp;            // the unbiased exponent field
  std::uint32_t sig;  // integer significand; 0 means the operand is zero
};

Unpacked unpack_bf16(std::uint16_t b) {
  const unsigned field = (b >> 7) & 0xFF;
  const unsigned frac = b & 0x7F;
  if (field == 0) return {(b >> 15) != 0, -126, frac};  // zero or subnormal
  return {(b >> 15) != 0, static_cast<int>(field) - 127, 0x80u | frac};
}

Unpacked unpack_f32(std::uint32_t x) {
  const unsigned field = (x >> 23) & 0xFF;
  const std::uint32_t frac = x & 0x7FFFFF;
  if (field == 0) return {(x >> 31) != 0, -126, frac};
  return {(x >> 31) != 0, static_cast<int>(field) - 127, 0x800000u | frac};
}

bool bf16_is_inf(std::uint16_t b) { return (b & 0x7FFF) == 0x7F80; }
bool bf16_is_nan(std::uint16_t b) { return (b & 0x7FFF) > 0x7F80; }
bool f32_is_inf(std::uint32_t x) { return (x & 0x7FFFFFFF) == 0x7F800000; }

int bit_length(std::uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

// Rule 5 and 6: |sum| * 2^lsb_exp, normalised once, rounded toward zero to FP32; subnormals kept;
// >= 2^128 is Inf; a zero or a result truncated to zero is +0.
std::uint32_t round_rz_to_f32(bool negative, std::uint64_t mag, int lsb_exp) {
  if (mag == 0) return 0;
  const std::uint32_t sign = negative ? 0x80000000u : 0;
  const int len = bit_length(mag);
  const int lead = len - 1 + lsb_exp;  // exponent of the leading one
  if (lead >= 128) return sign | 0x7F800000u;
  if (lead >= -126) {
    const std::uint64_t sig24 = len > 24 ? mag >> (len - 24) : mag << (24 - len);
    return sign | (static_cast<std::uint32_t>(lead + 127) << 23) | (static_cast<std::uint32_t>(sig24) & 0x7FFFFF);
  }
  // Subnormal: the grid is 2^-149.
  const int shift = lsb_exp + 149;
  std::uint64_t sub;
  if (shift >= 0) sub = mag << shift;  // lead < -126 keeps this below 2^23
  else sub = -shift >= 64 ? 0 : mag >> -shift;
  if (sub == 0) return 0;
  return sign | static_cast<std::uint32_t>(sub);
}

}  // namespace

std::uint32_t mma_fused_step_bits(std::uint32_t c_bits, const std::uint16_t* a, const std::uint16_t* b, int count,
                                  int extra_bits, int min_align_exp) {
  // Rule 7: NaN in, Inf * 0, +Inf + -Inf give the canonical NaN; otherwise an Inf wins.
  bool pos_inf = false, neg_inf = false;
  if (f32_bits_is_nan(c_bits)) return kF32CanonicalNan;
  if (f32_is_inf(c_bits)) ((c_bits >> 31) ? neg_inf : pos_inf) = true;
  for (int k = 0; k < count; ++k) {
    if (bf16_is_nan(a[k]) || bf16_is_nan(b[k])) return kF32CanonicalNan;
    const bool ai = bf16_is_inf(a[k]), bi = bf16_is_inf(b[k]);
    if (ai || bi) {
      const bool a_zero = (a[k] & 0x7FFF) == 0, b_zero = (b[k] & 0x7FFF) == 0;
      if (a_zero || b_zero) return kF32CanonicalNan;  // Inf * 0
      (((a[k] ^ b[k]) >> 15) ? neg_inf : pos_inf) = true;
    }
  }
  if (pos_inf && neg_inf) return kF32CanonicalNan;
  if (pos_inf) return 0x7F800000u;
  if (neg_inf) return 0xFF800000u;

  // Rule 1: exact products sig_a*sig_b * 2^(ea+eb-14), not renormalised.
  struct Term {
    bool negative;
    int exp;
    std::uint64_t sig;
    int frac_bits;
  };
  Term terms[17];
  int n = 0;
  for (int k = 0; k < count; ++k) {
    const Unpacked ua = unpack_bf16(a[k]), ub = unpack_bf16(b[k]);
    if (ua.sig == 0 || ub.sig == 0) continue;  // rule 2: zero products take no part
    terms[n++] = {ua.negative != ub.negative, ua.exp + ub.exp, std::uint64_t{ua.sig} * ub.sig, 14};
  }
  const Unpacked uc = unpack_f32(c_bits);
  if (uc.sig != 0) terms[n++] = {uc.negative, uc.exp, uc.sig, 23};  // rule 2: c = +-0 takes no part
  if (n == 0) return 0;                                             // rule 6: +0

  // Rule 2: E = the largest exponent field among the nonzero terms, clamped below at the policy's
  // floor (measured on sm_90: mma.hpp, kSm90MinAlignExp).
  int e_max = terms[0].exp;
  for (int i = 1; i < n; ++i) e_max = terms[i].exp > e_max ? terms[i].exp : e_max;
  if (e_max < min_align_exp) e_max = min_align_exp;

  // Rules 3 and 4: each term on the grid 2^(E - 23 - extra_bits), magnitude truncated; exact sum.
  const int lsb_exp = e_max - 23 - extra_bits;
  std::int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    // value = sig * 2^(exp - frac_bits); on the grid: sig * 2^(exp - frac_bits - lsb_exp)
    const int shift = terms[i].exp - terms[i].frac_bits - lsb_exp;
    std::uint64_t mag;
    if (shift >= 0) mag = terms[i].sig << shift;
    else mag = -shift >= 64 ? 0 : terms[i].sig >> -shift;
    sum += terms[i].negative ? -static_cast<std::int64_t>(mag) : static_cast<std::int64_t>(mag);
  }
  // Rules 5 and 6.
  const bool negative = sum < 0;
  const std::uint64_t mag = negative ? static_cast<std::uint64_t>(-sum) : static_cast<std::uint64_t>(sum);
  return round_rz_to_f32(negative, mag, lsb_exp);
}

std::uint32_t mma_k16_bits(const MmaPolicy& policy, std::uint32_t c_bits, const std::uint16_t a[16],
                           const std::uint16_t b[16]) {
  const int per_block = 16 / policy.blocks;
  std::uint32_t d = c_bits;
  for (int blk = 0; blk < policy.blocks; ++blk)
    d = mma_fused_step_bits(d, a + blk * per_block, b + blk * per_block, per_block, policy.extra_bits,
                            policy.min_align_exp);
  return d;
}

}  // namespace w8a16::ref
