// SPDX-License-Identifier: MIT OR Apache-2.0
// Fixture kernels for the CUDA backend's own tests: stand-ins under two family names that follow
// the documented tile maps (geometry.hpp) and write an integer probe of the operands, so that a
// test can check argument passing, grid, block and the shared-memory opt-in on a real device
// without depending on the real kernels. Not numerics: the values are no GEMM.
#include <cstdint>

#include "w8a16/device/geometry.hpp"

using namespace w8a16::device;

// Reads A, W and S where the pitches say, so a wrong pointer or stride changes the value.
__device__ std::uint16_t probe(const std::uint16_t* a, const std::uint8_t* w, const float* s, std::uint32_t r,
                               std::uint32_t c, std::uint32_t k, std::uint32_t lda) {
  return static_cast<std::uint16_t>(a[r * lda + c % k] + w[c * k + r % k] + static_cast<std::uint16_t>(s[0]));
}

// Every thread of the CTA writes a slice of its rectangle [r0, r1) x [c0, c1), clipped to (m, n).
__device__ void write_rect(const std::uint16_t* a, const std::uint8_t* w, const float* s, std::uint16_t* c_out,
                           std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda, std::uint32_t ldc,
                           std::uint32_t r0, std::uint32_t rows, std::uint32_t c0, std::uint32_t cols) {
  for (std::uint32_t i = threadIdx.x; i < rows * cols; i += blockDim.x) {
    const std::uint32_t r = r0 + i / cols, c = c0 + i % cols;
    if (r < m && c < n) c_out[r * ldc + c] = probe(a, w, s, r, c, k, lda);
  }
}

// The dynamic shared memory the plan declares must be there: touch its last byte.
__device__ void touch_smem(std::uint32_t bytes) {
  extern __shared__ unsigned char smem[];
  if (bytes != 0 && threadIdx.x == 0) smem[bytes - 1] = 1;
  __syncthreads();
}

extern "C" __global__ void w8a16_gemm_pipelined(const std::uint16_t* input, const std::uint8_t* weight,
                                                const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                std::uint32_t c_row_stride) {
  touch_smem(kGemm128SmemBytes);  // 121,856 bytes: launches only with the opt-in
  write_rect(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, blockIdx.y * kGemm128TileRows,
             kGemm128TileRows, blockIdx.x * kGemm128TileCols, kGemm128TileCols);
}

extern "C" __global__ void w8a16_gemm_pipelined_m32(const std::uint16_t* input, const std::uint8_t* weight,
                                                    const float* block_scale, std::uint16_t* output, std::uint32_t m,
                                                    std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                                    std::uint32_t c_row_stride) {
  if (skinny_body_runs(m, k)) {  // the body rule the launch sized the grid by
    touch_smem(skinny_smem_bytes(k));
    write_rect(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, 0, m,
               blockIdx.x * kSkinnyTileCols, kSkinnyTileCols);
  } else {
    touch_smem(kM32SmemBytes);
    write_rect(input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, blockIdx.y * kM32TileRows,
               kM32TileRows, blockIdx.x * kM32TileCols, kM32TileCols);
  }
}
