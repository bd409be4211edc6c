// SPDX-License-Identifier: MIT OR Apache-2.0
// The two GEMV kernels, with the family's parameters (docs/KERNEL_ABI.md 1.1), each faulting its
// own way: w8a16_gemv_batch4_strided stores far outside C (CUDA_ERROR_ILLEGAL_ADDRESS, as an
// epilogue index gone wrong), w8a16_gemv_batch16_strided makes a misaligned 8-byte store
// (CUDA_ERROR_MISALIGNED_ADDRESS). Linked into the embedded module in place of the real ones:
// every GEMV case must fail with its error, alone, and every other case must still run and pass.
#include <cstdint>

extern "C" __global__ void w8a16_gemv_batch4_strided(const std::uint16_t*, const std::uint8_t*, const float*,
                                                     std::uint16_t* output, std::uint32_t m, std::uint32_t,
                                                     std::uint32_t, std::uint32_t, std::uint32_t) {
  if (threadIdx.x == 0 && m != 0) output[std::size_t{1} << 40] = 0x7FC0;  // 2 TiB past C
}

extern "C" __global__ void w8a16_gemv_batch16_strided(const std::uint16_t*, const std::uint8_t*, const float*,
                                                      std::uint16_t* output, std::uint32_t m, std::uint32_t,
                                                      std::uint32_t, std::uint32_t, std::uint32_t) {
  if (threadIdx.x == 0 && m != 0)
    *reinterpret_cast<volatile std::uint64_t*>(reinterpret_cast<char*>(output) + 2) = 0;  // 8 bytes at a 2-byte offset
}
