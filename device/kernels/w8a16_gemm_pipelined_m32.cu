// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_gemm_pipelined_m32: the 32 x 32 twin of the canonical fold (NUMERICS.md 2.1) and its skinny body for M <= 16, K <= 5120.
#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_strip_step.cuh"
#include "w8a16_tile_body.cuh"

namespace {
namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

// 2 x 4 warps of 16 x 8; three stages of 13,824 B = 41,472 B within the seed's 44,032.
using Tile = kn::TileBody<32, 32, 2, 4, 3, false>;
static_assert(Tile::kSmemBytes <= dev::kM32SmemBytes, "seed W8A16_M32_SMEM_BYTES");
static_assert(dev::kM32TileRows == 32 && dev::kM32TileCols == 32, "tile map");
static_assert(dev::kSkinnyTileCols == 8 && dev::kSkinnyMaxK / 128 <= 40, "skinny strip: 8 columns, <= 40 steps");

// The skinny body: CTA x owns columns [8x, 8x + 8) of rows [0, m), m <= 16, k <= 5120. Its 8
// weight rows are staged k + 16 bytes apart (seed PM16_SMEM_BYTES; the 16 bytes of padding put
// consecutive rows 16 bytes apart modulo 128, so fragment loads are conflict-free). Warp w computes
// the partial sums p_s of steps s = w, w + 8, ... (at most 5 each); then the partials go to shared
// memory (over the weights, which are no longer needed: 512 B per step <= 8 (k + 16)), and 128
// threads, one per output, fold them in step order: acc = fma(p_s, S, acc) for s = 0, 1, ...
__device__ void skinny_body(unsigned char* smem, const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                            const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                            uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  constexpr int kMaxStepsPerWarp = dev::kSkinnyMaxK / 128 / 8;  // 5
  const uint32_t n0 = blockIdx.x * dev::kSkinnyTileCols;
  const uint32_t steps = k / 128, pitch = k + 16, chunks = k / 16;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

  for (uint32_t r = 0; r < 8; ++r) {
    const uint32_t col = n0 + r;
    const bool in = col < n;
    const uint8_t* src = weight + static_cast<size_t>(in ? col : 0) * k;
    for (uint32_t c = threadIdx.x; c < chunks; c += 256)
      kn::cp_async_16(smem + r * pitch + c * 16, src + c * 16, in ? 16u : 0u);
  }
  kn::cp_async_commit();
  kn::cp_async_wait<0>();
  __syncthreads();
#if defined(W8A16_PERTURB)
  // A slow reader of the weights: the partials may overwrite them only past the barrier below.
  kn::sync_delay(kn::SyncPoint::read, 0);
#endif

  float p[kMaxStepsPerWarp][1][4];
#pragma unroll
  for (int i = 0; i < kMaxStepsPerWarp; ++i) {
    const uint32_t s = warp + 8 * i;
    if (s < steps) kn::strip_step_partials<1>(p[i], input, m, a_row_stride, s * 128, smem, pitch, s * 128);
  }
  __syncthreads();  // every warp is done with the weights: reuse their space for the partials
  float* partials = reinterpret_cast<float*>(smem);  // [step][q][lane]
#if defined(W8A16_PERTURB)
  // A slow writer of the partials: the fold may read them only past the barrier below.
  kn::sync_delay(kn::SyncPoint::refill, 1);
#endif
#pragma unroll
  for (int i = 0; i < kMaxStepsPerWarp; ++i) {
    const uint32_t s = warp + 8 * i;
    if (s < steps)
#pragma unroll
      for (int q = 0; q < 4; ++q) partials[(s * 4 + q) * 32 + lane] = p[i][0][q];
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    const uint32_t q = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const float* scale_row = block_scale + static_cast<size_t>(n0 / 128) * steps;
    float acc = 0.0f;
    for (uint32_t s = 0; s < steps; ++s) acc = kn::fma_rn(partials[(s * 4 + q) * 32 + lane], __ldg(scale_row + s), acc);
    const uint32_t row = g + (q >> 1) * 8, col = n0 + 2 * t + (q & 1);
    if (row < m && col < n) output[static_cast<size_t>(row) * c_row_stride + col] = kn::f32_to_bf16_rne_bits(acc);
  }
}
}  // namespace

// 4 CTAs per SM (64 registers, no spills): ncu showed 72+ registers capping it at 3 CTAs.
// Tile body: grid (ceil(N/32), ceil(M/32)), 44,032 B of dynamic shared memory. Skinny body (the
// same rule as the launch, geometry.hpp skinny_body_runs): grid (ceil(N/8), 1), 8 (K + 16) B.
// 256 threads either way.
extern "C" __global__ void __launch_bounds__(256, 4)
    w8a16_gemm_pipelined_m32(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                             const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                             uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  if (m <= dev::kSkinnyMaxRows && k <= dev::kSkinnyMaxK)  // geometry.hpp skinny_body_runs (host-only constexpr)
    skinny_body(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
  else Tile::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
