// SPDX-License-Identifier: MIT OR Apache-2.0
// A module whose w8a16_gemv_batch4_strided takes two parameters instead of the family's nine: the
// backend must refuse it at load, naming the symbol (docs/KERNEL_ABI.md 1.3), and launch nothing.
#include <cstdint>

extern "C" __global__ void w8a16_gemv_batch4_strided(std::uint16_t* output, std::uint32_t m) {
  if (threadIdx.x < m) output[threadIdx.x] = 0x7FFF;  // would corrupt C if it ever ran
}
