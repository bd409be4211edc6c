// SPDX-License-Identifier: MIT OR Apache-2.0
// Two freedoms the kernels take with mma.sync that NUMERICS.md 1.1 grants on sm90, checked on the
// model for every kind of BF16 value: the step's result does not depend on which operand carries
// which factor (the row-tile kernel computes C^T = W A^T, weights as the A operand), nor on the order
// of the 16 products (every tensor-core kernel feeds k 4t..4t+3 of a window to the MMA slots 2t,
// 2t+1, 2t+8, 2t+9; w8a16_ptx.cuh). The hardware side of both is the GPU tests, which compare every
// kernel with this model bit for bit. sm80's policy (two chained blocks of 8) does not grant the
// second freedom across the blocks, so these properties are sm90's.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "w8a16/reference/mma.hpp"

namespace {

using w8a16::ref::Arch;

// BF16 bit patterns weighted to every class the step treats apart: zeros of both signs, subnormals,
// normals near the exponent extremes, Inf, NaN, and arbitrary patterns.
rc::Gen<std::uint16_t> bf16_any() {
  return rc::gen::oneOf(
      rc::gen::arbitrary<std::uint16_t>(),
      rc::gen::element<std::uint16_t>(0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFFF, 0x0001, 0x807F, 0x7F7F, 0xFF7F),
      rc::gen::map(rc::gen::inRange<int>(0, 0x80), [](int m) { return static_cast<std::uint16_t>(m); }),  // subnormal
      rc::gen::map(rc::gen::inRange<int>(0x3000, 0x5000), [](int v) { return static_cast<std::uint16_t>(v); }));
}
rc::Gen<std::uint32_t> fp32_c() {
  return rc::gen::oneOf(rc::gen::arbitrary<std::uint32_t>(),
                        rc::gen::element<std::uint32_t>(0x00000000u, 0x80000000u, 0x7F800000u, 0x00000001u,
                                                        0x3F800000u));
}

RC_GTEST_PROP(MmaSm90Freedoms, SwappingTheOperandsGivesTheSameBits, ()) {
  std::array<std::uint16_t, 16> a, b;
  for (auto& x : a) x = *bf16_any();
  for (auto& x : b) x = *bf16_any();
  const std::uint32_t c = *fp32_c();
  RC_ASSERT(w8a16::ref::mma_k16_bits(Arch::sm90, c, a.data(), b.data()) ==
            w8a16::ref::mma_k16_bits(Arch::sm90, c, b.data(), a.data()));
}

RC_GTEST_PROP(MmaSm90Freedoms, PermutingTheProductsGivesTheSameBits, ()) {
  std::array<std::uint16_t, 16> a, b;
  for (auto& x : a) x = *bf16_any();
  for (auto& x : b) x = *bf16_any();
  const std::uint32_t c = *fp32_c();
  std::array<int, 16> perm;
  for (int i = 0; i < 16; ++i) perm[i] = i;
  for (int i = 15; i > 0; --i) std::swap(perm[i], perm[*rc::gen::inRange(0, i + 1)]);
  std::array<std::uint16_t, 16> pa, pb;
  for (int i = 0; i < 16; ++i) {
    pa[i] = a[perm[i]];
    pb[i] = b[perm[i]];
  }
  RC_ASSERT(w8a16::ref::mma_k16_bits(Arch::sm90, c, a.data(), b.data()) ==
            w8a16::ref::mma_k16_bits(Arch::sm90, c, pa.data(), pb.data()));
}

// The kernels' own permutation, written out: slot 2t+j (j = 0, 1) takes k = 4t+j and slot 2t+8+j
// takes k = 4t+2+j, for t = 0..3.
TEST(MmaSm90Freedoms, TheKernelsWindowPermutationIsABijection) {
  std::array<int, 16> slot_of_k{};
  std::array<bool, 16> seen{};
  for (int t = 0; t < 4; ++t)
    for (int j = 0; j < 2; ++j) {
      slot_of_k[4 * t + j] = 2 * t + j;
      slot_of_k[4 * t + 2 + j] = 2 * t + 8 + j;
    }
  for (int k = 0; k < 16; ++k) {
    ASSERT_FALSE(seen[slot_of_k[k]]) << "slot " << slot_of_k[k] << " taken twice";
    seen[slot_of_k[k]] = true;
  }
}

}  // namespace
