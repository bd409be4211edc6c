// SPDX-License-Identifier: MIT OR Apache-2.0
// A w8a16_gemv_batch16_strided that never completes, with the family's parameters (docs/KERNEL_ABI.md
// 1.1): linked into the embedded module in place of the real one, it is the kernel a deadlocked
// pipeline presents (an mbarrier waited on with the wrong phase spins the same way). The gate
// must end in bounded time with a HANG that names the case (properties/launcher.hpp).
#include <cstdint>

extern "C" __global__ void w8a16_gemv_batch16_strided(const std::uint16_t*, const std::uint8_t*, const float*,
                                                      std::uint16_t* output, std::uint32_t m, std::uint32_t,
                                                      std::uint32_t, std::uint32_t, std::uint32_t) {
  // The flag is never set; volatile keeps the loop from being proven infinite and removed.
  volatile std::uint32_t* never = reinterpret_cast<volatile std::uint32_t*>(output);
  while (m != 0 && never[0] != 0x5A5A5A5Au) __nanosleep(1000);
}
