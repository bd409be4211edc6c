// SPDX-License-Identifier: MIT OR Apache-2.0
// The driver's version and the CUDA version as text, for recording headers.
#include "gpu_identity.hpp"

#include <dlfcn.h>

#include <fstream>
#include <sstream>

namespace w8a16::cli {
namespace {

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Thu ...": the token after "Module".
std::string from_proc() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::istringstream words(line);
  std::string w, prev;
  while (words >> w) {
    if (prev == "Module" && !w.empty() && w[0] >= '0' && w[0] <= '9') return w;
    prev = w;
  }
  return "";
}

// NVML, which the driver installs beside libcuda: where /proc/driver/nvidia is not mounted (a
// container), nvmlSystemGetDriverVersion still answers ("580.159.04"). Loaded at run time, like
// libcuda, so the binaries need nothing extra to start.
std::string from_nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "";
  using Init = int (*)();
  using Version = int (*)(char*, unsigned);
  const auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  const auto version = reinterpret_cast<Version>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  const auto shutdown = reinterpret_cast<Init>(dlsym(lib, "nvmlShutdown"));
  std::string out;
  if (init && version && init() == 0) {  // NVML_SUCCESS
    char buf[96] = {};
    if (version(buf, sizeof buf) == 0) out = buf;
    if (shutdown) shutdown();
  }
  dlclose(lib);
  return out;
}

}  // namespace

std::string nvidia_driver_version() {
  if (std::string v = from_proc(); !v.empty()) return v;
  if (std::string v = from_nvml(); !v.empty()) return v;
  return "unknown";
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace w8a16::cli
