// SPDX-License-Identifier: MIT OR Apache-2.0
// Test operands that own their storage (A, W, S) and hand out a GemmView; RapidCheck generators
// for BF16, E4M3 and FP32 bit patterns, with special values sprinkled in on request.
#pragma once
#include <rapidcheck.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "w8a16/reference/contract.hpp"

namespace w8a16::test {

struct GemmCase {
  std::uint32_t m = 0, n = 0, k = 0;
  std::size_t a_row_stride = 0;
  std::vector<std::uint16_t> a;  // [m][a_row_stride]
  std::vector<std::uint8_t> w;   // [n][k]
  std::vector<float> s;          // [ceil(n/128)][k/128]

  GemmCase(std::uint32_t m_, std::uint32_t n_, std::uint32_t k_, std::size_t stride = 0)
      : m(m_),
        n(n_),
        k(k_),
        a_row_stride(stride ? stride : k_),
        a(static_cast<std::size_t>(m_) * a_row_stride, 0),
        w(static_cast<std::size_t>(n_) * k_, 0),
        s(static_cast<std::size_t>((n_ + 127) / 128) * (k_ / 128), 1.0f) {}

  ref::GemmView view() const { return ref::gemm_view(a.data(), a_row_stride, w.data(), s.data(), m, n, k); }
  std::uint16_t& a_at(std::uint32_t mi, std::uint32_t ki) { return a[mi * a_row_stride + ki]; }
  std::uint8_t& w_at(std::uint32_t ni, std::uint32_t ki) { return w[static_cast<std::size_t>(ni) * k + ki]; }
  float& s_at(std::uint32_t block, std::uint32_t step) { return s[static_cast<std::size_t>(block) * (k / 128) + step]; }
};

inline float f32_of_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// A finite BF16 with exponent in [lo, hi] (normal), either sign; zero one time in `zero_odds`.
inline std::uint16_t gen_bf16_finite(int lo, int hi, int zero_odds = 8) {
  if (*rc::gen::inRange(0, zero_odds) == 0) return *rc::gen::element<std::uint16_t>(0x0000, 0x8000);
  const int e = *rc::gen::inRange(lo, hi + 1);
  const unsigned frac = *rc::gen::inRange(0u, 128u);
  const unsigned sign = *rc::gen::inRange(0u, 2u);
  return static_cast<std::uint16_t>(sign << 15 | static_cast<unsigned>(e + 127) << 7 | frac);
}

// A BF16 that is special often: NaN, +-Inf, subnormal, -0, max, or any pattern.
inline std::uint16_t gen_bf16_special() {
  switch (*rc::gen::inRange(0, 8)) {
    case 0: return *rc::gen::element<std::uint16_t>(0x7FC0, 0xFFC1, 0x7F81);
    case 1: return *rc::gen::element<std::uint16_t>(0x7F80, 0xFF80);
    case 2: return static_cast<std::uint16_t>(*rc::gen::inRange(1, 128) | (*rc::gen::inRange(0, 2) << 15));
    case 3: return 0x8000;
    case 4: return *rc::gen::element<std::uint16_t>(0x7F7F, 0xFF7F, 0x0080);
    default: return *rc::gen::arbitrary<std::uint16_t>();
  }
}

inline std::uint8_t gen_e4m3_finite() {
  const std::uint8_t c = *rc::gen::arbitrary<std::uint8_t>();
  return (c & 0x7F) == 0x7F ? static_cast<std::uint8_t>(c - 1) : c;
}

inline std::uint8_t gen_e4m3_special() {
  return *rc::gen::element<std::uint8_t>(0x7F, 0xFF, 0x80, 0x7E, 0xFE, 0x01, 0x00);
}

// An FP32 scale that is special: 0, -0, negative, subnormal, Inf, NaN, huge.
inline float gen_scale_special() {
  return f32_of_bits(*rc::gen::element<std::uint32_t>(0x00000000u, 0x80000000u, 0xBF800000u, 0x00000001u, 0x00400000u,
                                                      0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F7FFFFFu, 0x3E800000u));
}

// Random data with moderate exponents; about one element in `special_odds` special (0 = none).
inline void fill_random(GemmCase& c, int special_odds, int a_lo = -8, int a_hi = 8) {
  for (std::uint32_t mi = 0; mi < c.m; ++mi)
    for (std::uint32_t ki = 0; ki < c.k; ++ki)
      c.a_at(mi, ki) = special_odds && *rc::gen::inRange(0, special_odds) == 0 ? gen_bf16_special()
                                                                               : gen_bf16_finite(a_lo, a_hi);
  // Padding past k in each row holds NaN: a reader that strays past k shows up.
  for (std::uint32_t mi = 0; mi < c.m; ++mi)
    for (std::size_t ki = c.k; ki < c.a_row_stride; ++ki) c.a[mi * c.a_row_stride + ki] = 0x7FC0;
  for (auto& x : c.w)
    x = special_odds && *rc::gen::inRange(0, special_odds) == 0 ? gen_e4m3_special() : gen_e4m3_finite();
  for (auto& x : c.s) {
    if (special_odds && *rc::gen::inRange(0, 4) == 0) {
      x = gen_scale_special();
      continue;
    }
    const int e = *rc::gen::inRange(-8, 9);
    const std::uint32_t frac = *rc::gen::inRange(0u, 1u << 23);
    const std::uint32_t sign = *rc::gen::inRange(0u, 2u);
    x = f32_of_bits(sign << 31 | static_cast<std::uint32_t>(e + 127) << 23 | frac);
  }
}

}  // namespace w8a16::test
