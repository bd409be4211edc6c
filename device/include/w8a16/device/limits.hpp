// SPDX-License-Identifier: MIT OR Apache-2.0
// What the device allows a launch: checked by the planner before anything runs. The CUDA backend
// reads these from the device; the simulation and recording backends default to the H200's.
#pragma once
#include <cstdint>

namespace w8a16::device {

struct DeviceLimits {
  // cudaDevAttrMaxSharedMemoryPerBlockOptin: the most dynamic shared memory a kernel may opt in
  // to (H200: 227 KiB = 232,448 bytes). Above 48 KiB a launch must opt in (cuFuncSetAttribute).
  std::uint32_t max_dynamic_smem_per_block = 232448;
  std::uint32_t max_grid_x = 2147483647u;  // 2^31 - 1
  std::uint32_t max_grid_y = 65535;
  std::uint32_t max_grid_z = 65535;
  // cudaDevAttrMultiProcessorCount: the persistent Hopper tier launches at most one CTA per SM.
  std::uint32_t multiprocessors = 132;

  static constexpr DeviceLimits h200() { return DeviceLimits{}; }
};

// Dynamic shared memory a launch may use without opting in (CUDA's default per-block limit).
inline constexpr std::uint32_t kSmemWithoutOptIn = 48 * 1024;

}  // namespace w8a16::device
