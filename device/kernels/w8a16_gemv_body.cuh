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
//
// K is walked in passes of 512 (one chunk per lane). The 8 warps of a CTA read the same A rows, so
// each pass's A slice (m rows x 512 BF16) is staged once per CTA in shared memory with cp.async,
// double-buffered, instead of being read by every warp through L1.
template <int kMaxRows>
__device__ __forceinline__ void gemv_body(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                                          const float* __restrict__ block_scale, uint16_t* __restrict__ output,
                                          uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
                                          uint32_t c_row_stride) {
  constexpr uint32_t kPassK = 32 * 16;
  __shared__ __align__(16) uint16_t a_tile[2][kMaxRows][kPassK];
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t col = blockIdx.x * 8 + (threadIdx.x >> 5);
  const bool active = col < n;  // whole warp; inactive warps still take part in the barriers
  const uint32_t chunks = k / 16, steps = k / 128, passes = (chunks + 31) / 32;
  const uint8_t* w_row = weight + static_cast<size_t>(active ? col : 0) * k;
  const float* scale_row = block_scale + static_cast<size_t>((active ? col : 0) / 128) * steps;

  auto stage = [&](uint32_t pass) {
    const uint32_t k0 = pass * kPassK, len = min(kPassK, k - k0);  // len: a multiple of 128
    const uint32_t rows = min(m, static_cast<uint32_t>(kMaxRows));  // the launch guarantees m <= kMaxRows
    for (uint32_t i = threadIdx.x; i < rows * (kPassK / 8); i += 256) {
      const uint32_t r = i / (kPassK / 8), q = i % (kPassK / 8);
      if (q * 8 < len)
        cp_async_16(&a_tile[pass & 1][r][q * 8], input + static_cast<size_t>(r) * a_row_stride + k0 + q * 8, 16);
    }
  };

  float acc[kMaxRows];
#pragma unroll
  for (int r = 0; r < kMaxRows; ++r) acc[r] = 0.0f;

  stage(0);
  cp_async_commit();
  for (uint32_t pass = 0; pass < passes; ++pass) {
    const uint32_t c = pass * 32 + lane;
    const bool has_chunk = active && c < chunks;
    // The weight load goes out before the wait, so its latency overlaps the A staging.
    const uint4 codes = has_chunk ? __ldg(reinterpret_cast<const uint4*>(w_row + c * 16)) : make_uint4(0, 0, 0, 0);
    if (pass + 1 < passes) {
      stage(pass + 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // this pass's A slice is in shared memory
    if (has_chunk) {
      const uint32_t words[4] = {codes.x, codes.y, codes.z, codes.w};
      float w[16];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        e4m3x2_to_f32x2(static_cast<uint16_t>(words[i] & 0xFFFFu), w[4 * i], w[4 * i + 1]);
        e4m3x2_to_f32x2(static_cast<uint16_t>(words[i] >> 16), w[4 * i + 2], w[4 * i + 3]);
      }
      const float scale = __ldg(scale_row + c / 8);
      // Lanes l and l + 4 read their two 16-byte halves in opposite orders, so each group of 8
      // lanes covers all 32 banks (the order of the loads, not of the arithmetic).
      const uint32_t first = (lane >> 2) & 1;
#pragma unroll
      for (int r = 0; r < kMaxRows; ++r) {
        if (static_cast<uint32_t>(r) < m) {
          const uint4* a_ptr = reinterpret_cast<const uint4*>(&a_tile[pass & 1][r][lane * 16]);
          const uint4 h0 = a_ptr[first], h1 = a_ptr[first ^ 1];
          const uint4 a0 = first ? h1 : h0, a1 = first ? h0 : h1;
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
    __syncthreads();  // every warp is done with this buffer before pass + 2 restages it
  }
  if (!active) return;
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
