// SPDX-License-Identifier: MIT OR Apache-2.0
// The consumer's own copy of a family kernel (device/kernels/w8a16_gemv_batch4_strided.cu): the
// scalar GEMV (NUMERICS.md 2.2) for at most 4 rows, strided A and C. A kernel team edits its copy;
// the consumer's verify test (CMakeLists.txt, w8a16check_add_verify_test) holds the module built
// from it to the contract. The launch layer's geometry for this symbol (docs/KERNEL_ABI.md 2):
// grid (ceil(N/8), 1), 256 threads (one warp per column), no shared memory, m <= 4.
#include <cstdint>

#include "w8a16_gemv_body.cuh"

extern "C" __global__ void __launch_bounds__(256)
    w8a16_gemv_batch4_strided(const uint16_t* __restrict__ input, const uint8_t* __restrict__ weight,
                              const float* __restrict__ block_scale, uint16_t* __restrict__ output, uint32_t m,
                              uint32_t n, uint32_t k, uint32_t a_row_stride, uint32_t c_row_stride) {
  w8a16::kernels::gemv_body<4>(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride);
}
