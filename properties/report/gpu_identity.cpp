// SPDX-License-Identifier: MIT OR Apache-2.0
// The driver's version and the CUDA version as text, for recording headers.
#include "gpu_identity.hpp"

#include <dlfcn.h>

#include <fstream>
#include <sstream>

#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/reference/mma.hpp"
#include "w8a16/version.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif

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

RunIdentity run_identity(const device::Backend& backend) {
  RunIdentity id;
  id.version = kVersion;
  id.commit = kGitCommit;
  id.backend = backend.name();
  id.gpu = {"none (simulation backend)", "none", "none", "none"};
  id.module = "none";
  id.policy = std::string(ref::kMmaSm90.name);
#if W8A16_HAVE_CUDA
  if (const auto* gpu = dynamic_cast<const device::CudaBackend*>(&backend)) {
    const device::CudaDeviceInfo i = gpu->device_info();
    id.gpu = {i.name, std::to_string(i.cc_major) + "." + std::to_string(i.cc_minor), nvidia_driver_version(),
              cuda_version_text(i.driver_cuda_version)};
    id.module = gpu->module_source();
  }
#endif
  // Only the sm_90 policy is verified, by H200 recordings (docs/NUMERICS.md 1.1, 3). The simulation
  // produces the emulator's own values: its comparisons against recorded hardware are sm_90's.
  if (id.backend != "cuda" || id.gpu.compute_capability == "9.0") {
    id.policy_verified = true;
    id.policy_note = std::string("verified: ") + std::string(ref::kMmaSm90.evidence);
  } else {
    id.policy_note = "NOT VERIFIED for compute capability " + id.gpu.compute_capability +
                     ": no probe of this project recorded that architecture (docs/NUMERICS.md 3.2), so a "
                     "mismatch there may be the model's rather than the kernel's";
  }
  return id;
}

std::string identity_text(const RunIdentity& id) {
  return "w8a16check " + id.version + " (commit " + id.commit + ")\ngpu: " + id.gpu.name +
         (id.backend == "cuda" ? " (compute capability " + id.gpu.compute_capability + ", driver " + id.gpu.driver +
                                     ", CUDA " + id.gpu.cuda + "), module " + golden::shown(id.module)
                               : std::string()) +
         "\nemulator policy: " + id.policy + ", " + id.policy_note + "\n";
}

void add_identity_json(nlohmann::json* j, const RunIdentity& id) {
  (*j)["w8a16check"] = {{"version", id.version}, {"commit", id.commit}};
  (*j)["gpu"] = {{"name", id.gpu.name},
                 {"compute_capability", id.gpu.compute_capability},
                 {"driver", id.gpu.driver},
                 {"cuda", id.gpu.cuda}};
  (*j)["module"] = id.module;
  (*j)["emulator_policy"] = {
      {"name", id.policy}, {"verified_for_this_device", id.policy_verified}, {"note", id.policy_note}};
  add_run_json(j);
}

std::string identity_junit_properties(const RunIdentity& id) {
  const std::pair<const char*, std::string> props[] = {
      {"w8a16check.version", id.version},
      {"w8a16check.commit", id.commit},
      {"backend", id.backend},
      {"gpu.name", id.gpu.name},
      {"gpu.compute_capability", id.gpu.compute_capability},
      {"gpu.driver", id.gpu.driver},
      {"gpu.cuda", id.gpu.cuda},
      {"module", id.module},
      {"emulator_policy", id.policy},
      {"emulator_policy.verified_for_this_device", id.policy_verified ? "true" : "false"},
      {"emulator_policy.note", id.policy_note}};
  std::string s = "  <properties>\n";
  for (const auto& [k, v] : props)
    s += std::string("    <property name=\"") + k + "\" value=\"" + xml_text(v) + "\"/>\n";
  return s + run_junit_properties() + "  </properties>\n";
}

}  // namespace w8a16::cli
