// SPDX-License-Identifier: MIT OR Apache-2.0
// How `probe` and `record` name the hardware they ran on (the header of what they write).
#pragma once
#include <string>

namespace w8a16::cli {

struct GpuIdentity {
  std::string name;                // "NVIDIA H200"; for the simulation a name saying it is not hardware
  std::string compute_capability;  // "9.0"
  std::string driver;              // kernel driver version from /proc/driver/nvidia/version, or "unknown"
  std::string cuda;                // the CUDA version the driver supports ("13.0"), or "none"
};

// The NVIDIA kernel module's version ("580.159") read from /proc/driver/nvidia/version (the driver
// API only reports the CUDA version it supports), or "unknown" when that file is absent or unreadable.
std::string nvidia_driver_version();
// cuDriverGetVersion's 13000 -> "13.0".
std::string cuda_version_text(int driver_cuda_version);

}  // namespace w8a16::cli
