// SPDX-License-Identifier: MIT OR Apache-2.0
// The driver's version and the CUDA version as text, for recording headers.
#include "gpu_identity.hpp"

#include <fstream>
#include <sstream>

namespace w8a16::cli {

std::string nvidia_driver_version() {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Thu ...": the token after "Module".
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "unknown";
  std::istringstream words(line);
  std::string w, prev;
  while (words >> w) {
    if (prev == "Module" && !w.empty() && w[0] >= '0' && w[0] <= '9') return w;
    prev = w;
  }
  return "unknown";
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace w8a16::cli
