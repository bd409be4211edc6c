// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16_gemv_batch16_strided: the scalar GEMV (NUMERICS.md 2.2) for at most 16 rows, strided A and C.
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16_gemv_body.cuh"

static_assert(w8a16::device::kGemvBatch16MaxRows == 16 && w8a16::device::kGemvColsPerCta == 8, "tile map");

// Grid (ceil(N/8), 1), 256 threads (one warp per column), no shared memory, m <= 16.
extern "C" __global__ void __launch_bounds__(256)
    w8a16_gemv_batch16_strided(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                               const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                               uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  w8a16::kernels::gemv_body<16>(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
