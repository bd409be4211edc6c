// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_gemm_pipelined: the 128 x 64 tile of the canonical fold (NUMERICS.md 2.1), weights decoded once per step in shared memory.
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_tile_body.cuh"

#if defined(W8A16_PERTURB)
// The cp.async bodies' timing seed (w8a16_sync_timing.cuh), defined once for the relocatable
// objects that read it; the host writes it by this name before each launch.
extern "C" __device__ unsigned long long w8a16_sync_timing_seed = 0;
#endif

namespace {
// 4 x 2 warps of 32 x 32; two stages (2 x 46,080 B) plus the decoded step (18,432 B) = 110,592 B,
// so two CTAs fit on an SM (228 KiB) and each keeps one step in flight while it computes another.
using Body = w8a16::kernels::TileBody<128, 64, 4, 2, 2, true>;
static_assert(Body::kSmemBytes <= w8a16::device::kGemm128SmemBytes, "geometry.hpp's kGemm128SmemBytes");
static_assert(w8a16::device::kGemm128TileRows == 128 && w8a16::device::kGemm128TileCols == 64, "tile map");
}  // namespace

// Grid (ceil(N/64), ceil(M/128)), 256 threads, kGemm128SmemBytes of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(256)
    w8a16_gemm_pipelined(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                         const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m, uint32_t n,
                         uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  extern __shared__ __align__(16) unsigned char smem[];
  Body::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
