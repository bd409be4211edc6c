// SPDX-License-Identifier: MIT OR Apache-2.0
// BF16 <-> FP32 on raw bits, with the rounding `cvt.rn.bf16.f32` performs (NUMERICS.md 1.2).
#pragma once
#include <cstdint>

namespace w8a16::ref {

// FP32 bits -> BF16 bits, round to nearest, ties to even, on the raw bits:
//
//   FP32  s eeeeeeee fffffff | gfffffffffffffff      keep the top 16 bits; the low 16 decide:
//                    ^ lsb     ^ g = half an ulp     > half: up; < half: down; == half: to even
//
// Adding 0x7FFF + lsb carries into the kept bits exactly when the rounding goes up, and a carry out
// of the fraction steps the exponent (0x7F7FFFFF rounds to Inf, as RNE says). Subnormals are kept.
// Every NaN becomes 0x7FFF with its sign dropped, as measured on the H200.
constexpr std::uint16_t f32_bits_to_bf16_rne(std::uint32_t x) {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  const std::uint32_t lsb = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7FFFu + lsb) >> 16);
}

// BF16 bits -> FP32 bits: exact (BF16 is the top half of FP32).
constexpr std::uint32_t bf16_bits_to_f32_bits(std::uint16_t b) { return static_cast<std::uint32_t>(b) << 16; }

constexpr bool bf16_is_nan(std::uint16_t b) { return (b & 0x7FFF) > 0x7F80; }

}  // namespace w8a16::ref
