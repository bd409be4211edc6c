// SPDX-License-Identifier: MIT OR Apache-2.0
// FP32 on raw bits: bit casts and the fused multiply-add of `fma.rn.f32` (NUMERICS.md 1.2).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace w8a16::ref {

inline constexpr std::uint32_t kF32CanonicalNan = 0x7FFFFFFFu;  // what the H200 produces for NaN

inline float f32_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline std::uint32_t f32_to_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
constexpr bool f32_bits_is_nan(std::uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

// fma.rn.f32: a*b + c rounded once, to nearest even; subnormals kept; NaN results 0x7FFFFFFF.
// std::fma is IEEE 754 fusedMultiplyAdd (C99 7.12.13.1); the build never enables fast-math or
// flush-to-zero, so the host computes exactly the IEEE result. Only the NaN encoding is the GPU's.
inline std::uint32_t f32_fma_rne_bits(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const float r = std::fma(f32_from_bits(a), f32_from_bits(b), f32_from_bits(c));
  const std::uint32_t bits = f32_to_bits(r);
  return f32_bits_is_nan(bits) ? kF32CanonicalNan : bits;
}

// fadd.rn.f32 (the GEMV's butterfly), same NaN rule.
inline std::uint32_t f32_add_rne_bits(std::uint32_t a, std::uint32_t b) {
  const float r = f32_from_bits(a) + f32_from_bits(b);
  const std::uint32_t bits = f32_to_bits(r);
  return f32_bits_is_nan(bits) ? kF32CanonicalNan : bits;
}

}  // namespace w8a16::ref
