// SPDX-License-Identifier: MIT OR Apache-2.0
// One 128-K step's partial sums for a strip of at most 16 rows (the skinny body and w8a16_tc_rows).
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16_ptx.cuh"

namespace w8a16::kernels {

// p[c] = the step's 8 chained k16 MMAs from +0 (NUMERICS.md 2.1) for rows [0, 16) and the n8 tile
// c whose 8 weight rows start at w_tile + c * 8 * w_pitch in shared memory, `w_k` being the byte
// offset of the step's first code within a row. A comes straight from global memory (a strip has
// at most 16 rows, all CTAs read the same rows, and L1/L2 serve them); rows >= m read as zero and
// are never written. `k0` is the step's first k (128 s). Operand layout: mma_bf16_16816.
template <int kNt>
__device__ __forceinline__ void strip_step_partials(float (&p)[kNt][4], const uint16_t* __restrict__ input, uint32_t m,
                                                    uint32_t a_row_stride, uint32_t k0, const unsigned char* w_tile,
                                                    uint32_t w_pitch, uint32_t w_k) {
  const uint32_t lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const bool lo_in = g < m, hi_in = g + 8 < m;
  const uint16_t* a_lo = input + static_cast<size_t>(lo_in ? g : 0) * a_row_stride + k0 + 4 * t;
  const uint16_t* a_hi = input + static_cast<size_t>(hi_in ? g + 8 : 0) * a_row_stride + k0 + 4 * t;
  uint2 alo[8], ahi[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {  // every load of the step before the chain starts
    alo[j] = lo_in ? __ldg(reinterpret_cast<const uint2*>(a_lo + 16 * j)) : make_uint2(0, 0);
    ahi[j] = hi_in ? __ldg(reinterpret_cast<const uint2*>(a_hi + 16 * j)) : make_uint2(0, 0);
  }
#pragma unroll
  for (int c = 0; c < kNt; ++c)
#pragma unroll
    for (int q = 0; q < 4; ++q) p[c][q] = 0.0f;  // the chain starts from +0
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const uint32_t a[4] = {alo[j].x, ahi[j].x, alo[j].y, ahi[j].y};
#pragma unroll
    for (int c = 0; c < kNt; ++c) {
      const uint32_t codes = *reinterpret_cast<const uint32_t*>(w_tile + (c * 8 + g) * w_pitch + w_k + 16 * j + 4 * t);
      uint32_t b[2];
      e4m3x4_to_bf16_frag(codes, b);
      mma_bf16_16816(p[c], a, b);
    }
  }
}

}  // namespace w8a16::kernels
