// SPDX-License-Identifier: MIT OR Apache-2.0
// The scalar GEMV body (NUMERICS.md 2.2) in the order reference/include/w8a16/reference/gemv.hpp documents.
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16_ptx.cuh"

namespace w8a16::kernels {

// CTA x, warp w computes column n = 8x + w for rows [0, m), m <= kMaxRows. Lane l owns the 16-wide
// chunks c = l, l + 32, ... in increasing c; per chunk and row: p = +0, a 16-term fma.rn chain in k
// order, then acc = fma.rn(p, S[n/128][c/8], acc); then an xor butterfly of add.rn over offsets
// 16, 8, 4, 2, 1. No tensor cores, and no instruction the order does not name.
template <int kMaxRows>
__device__ __forceinline__ void gemv_body(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                                          const float* __restrict__ block_scale, uint16_t* __restrict__ output,
                                          uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
                                          uint32_t c_row_stride) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t col = blockIdx.x * 8 + (threadIdx.x >> 5);
  if (col >= n) return;  // whole warp: no barrier or shuffle below involves another warp
  const uint32_t chunks = k / 16, steps = k / 128;
  const uint8_t* w_row = weight + static_cast<size_t>(col) * k;
  const float* scale_row = block_scale + static_cast<size_t>(col / 128) * steps;

  float acc[kMaxRows];
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) acc[r] = 0.0f;

  for (uint32_t c = lane; c < chunks; c += 32) {
    const uint4 codes = __ldg(reinterpret_cast<const uint4*>(w_row + c * 16));
    const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
    float w[16];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      e4m3x2_to_f32x2(static_cast<uint16_t>(words[i] & 0xFFFFu), w[4 * i], w[4 * i + 1]);
      e4m3x2_to_f32x2(static_cast<uint16_t>(words[i] >> 16), w[4 * i + 2], w[4 * i + 3]);
    }
    const float scale = __ldg(scale_row + c / 8);
#pragma unroll
    for (int r = 0; r < kMaxRows; ++r) {
      if (static_cast<uint32_t>(r) < m) {
        const uint4* a_ptr = reinterpret_cast<const uint4*>(input + static_cast<size_t>(r) * a_row_stride + c * 16);
        const uint4 a0 = __ldg(a_ptr), a1 = __ldg(a_ptr + 1);
        const uint32_t a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        float p = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          p = fma_rn(bf16_bits_to_f32(a[j] & 0xFFFFu), w[2 * j], p);
          p = fma_rn(bf16_bits_to_f32(a[j] >> 16), w[2 * j + 1], p);
        }
        acc[r] = fma_rn(p, scale, acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) {
#pragma unroll
    for (int off = 16; off >= 1; off /= 2) acc[r] = add_rn(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], off));
  }
  // Every lane holds every row's result; lane r stores row r.
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r)
    if (static_cast<uint32_t>(r) < m && lane == static_cast<uint32_t>(r))
      output[static_cast<size_t>(r) * c_row_stride + col] = f32_to_bf16_rne_bits(acc[r]);
}

}  // namespace w8a16::kernels
