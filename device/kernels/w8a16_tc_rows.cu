// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_tc_rows: the row-tile kernel of the canonical fold (NUMERICS.md 2.1): 16-column strips of at most 16 rows, any K.
#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_strip_step.cuh"

// Which shapes it should take (device/launch's tc_rows_takes decides): 1..16 rows where the skinny
// body cannot go, i.e. K > 5120. Like the skinny body it streams every weight byte once (one CTA
// per 16 columns, all rows) instead of once per 32-row tile, and unlike the skinny body it does
// not hold the whole K in shared memory, so it has no K limit: it walks K in rounds of 8 steps
// (1,024 codes per weight row, double-buffered with cp.async). At K <= 5120 the rule leaves those
// rows to the skinny body, although on the H200 at (N, K) = (12288, 2048) this kernel was faster
// (16.2 vs 19.7 us at M = 1, 21.5 vs 28.0 us at M = 16; PERF_NOTES.md): one shape is not enough to
// move the rule, since at small N the skinny body's 8-column strips give twice as many CTAs.
namespace {
namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

constexpr uint32_t kCols = 16;
constexpr uint32_t kRoundSteps = 8;                    // one step per warp per round
constexpr uint32_t kRowPitch = kRoundSteps * 128 + 16;  // bytes; rows 16 B apart mod 128 (no bank conflicts)
constexpr uint32_t kBufBytes = kCols * kRowPitch;      // 16,640
constexpr uint32_t kPartialBytes = kRoundSteps * 2 * 4 * 32 * 4;  // [step][n8 tile][q][lane] floats
constexpr uint32_t kSmemBytes = 2 * kBufBytes + kPartialBytes;     // 41,472
static_assert(kSmemBytes <= dev::kTcRowsSmemBytes, "geometry.hpp's kTcRowsSmemBytes");
static_assert(dev::kTcRowsTileCols == kCols && dev::kTcRowsMaxRows == 16, "tile map");

// Stages round r's codes: for each of the 16 columns, steps [8r, 8r + 8) clipped to k.
__device__ void load_round(unsigned char* buf, const uint8_t* __restrict__ weight, uint32_t n, uint32_t k,
                           uint32_t n0, uint32_t r, uint32_t steps_here) {
  const uint32_t chunks_per_row = steps_here * 8;
  for (uint32_t c = threadIdx.x; c < kCols * 64; c += 256) {
    const uint32_t row = c >> 6, part = c & 63;
    if (part >= chunks_per_row) continue;
    const uint32_t col = n0 + row;
    const bool in = col < n;
    const uint8_t* src = weight + static_cast<size_t>(in ? col : 0) * k + r * (kRoundSteps * 128) + part * 16;
    kn::cp_async_16(buf + row * kRowPitch + part * 16, src, in ? 16u : 0u);
  }
}
}  // namespace

// 4 CTAs per SM (64 registers, no spills): ncu showed 72+ registers capping it at 3 CTAs.
// Grid (ceil(N/16), 1), 256 threads, kTcRowsSmemBytes of dynamic shared memory, m <= 16. Round r:
// warp w computes step 8r + w for both n8 tiles of the strip; then every thread (one per output,
// 16 x 16) folds the round's partials in step order, so acc sees steps 0, 1, 2, ... as in 2.1.
extern "C" __global__ void __launch_bounds__(256, 4)
    w8a16_tc_rows(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                  const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                  uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* partials = reinterpret_cast<float*>(smem + 2 * kBufBytes);
  const uint32_t n0 = blockIdx.x * kCols;
  const uint32_t steps = k / 128, rounds = (steps + kRoundSteps - 1) / kRoundSteps;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // The output this thread folds: C fragment register q of n8 tile `tile`.
  const uint32_t q = (threadIdx.x >> 5) & 3, tile = threadIdx.x >> 7;
  const float* scale_row = block_scale + static_cast<size_t>(n0 / 128) * steps;
  float acc = 0.0f;

  load_round(smem, weight, n, k, n0, 0, min(kRoundSteps, steps));
  kn::cp_async_commit();
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t steps_here = min(kRoundSteps, steps - r * kRoundSteps);
    if (r + 1 < rounds) {
      load_round(smem + ((r + 1) & 1) * kBufBytes, weight, n, k, n0, r + 1,
                 min(kRoundSteps, steps - (r + 1) * kRoundSteps));
      kn::cp_async_commit();
      kn::cp_async_wait<1>();
    } else {
      kn::cp_async_wait<0>();
    }
    __syncthreads();  // round r staged; the previous round's partials are folded
    if (warp < steps_here) {
      const uint32_t s = r * kRoundSteps + warp;
      float p[2][4];
      kn::strip_step_partials<2>(p, input, m, a_row_stride, s * 128, smem + (r & 1) * kBufBytes, kRowPitch,
                                 warp * 128);
#pragma unroll
      for (int c = 0; c < 2; ++c)
#pragma unroll
        for (int i = 0; i < 4; ++i) partials[((warp * 2 + c) * 4 + i) * 32 + lane] = p[c][i];
    }
    __syncthreads();  // partials written; round r's buffer free for round r + 2's loads
    for (uint32_t w = 0; w < steps_here; ++w)
      acc = kn::fma_rn(partials[((w * 2 + tile) * 4 + q) * 32 + lane], __ldg(scale_row + r * kRoundSteps + w), acc);
  }
  const uint32_t g = lane >> 2, t = lane & 3;
  const uint32_t row = g + (q >> 1) * 8, col = n0 + tile * 8 + 2 * t + (q & 1);
  if (row < m && col < n) output[static_cast<size_t>(row) * c_row_stride + col] = kn::f32_to_bf16_rne_bits(acc);
}
