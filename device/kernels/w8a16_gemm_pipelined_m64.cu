// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_gemm_pipelined_m64: the 64 x 32 twin of the canonical fold (NUMERICS.md 2.1), static shared memory only.
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_tile_body.cuh"

namespace {
// 4 x 2 warps of 16 x 16; two stages of 23,040 B = 46,080 B, static: the seed launches this kernel
// with no dynamic shared memory (geometry.hpp kM64SmemBytes), so the whole layout must fit the
// 48 KiB a kernel gets without opting in.
using Body = w8a16::kernels::TileBody<64, 32, 4, 2, 2, false>;
static_assert(Body::kSmemBytes <= 48 * 1024, "static shared memory limit");
static_assert(w8a16::device::kM64SmemBytes == 0, "launched without dynamic shared memory");
static_assert(w8a16::device::kM64TileRows == 64 && w8a16::device::kM64TileCols == 32, "tile map");
}  // namespace

// Grid (ceil(N/32), ceil(M/64)), 256 threads, no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(256)
    w8a16_gemm_pipelined_m64(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                             const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                             uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  __shared__ __align__(16) unsigned char smem[Body::kSmemBytes];
  Body::run(smem, input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
