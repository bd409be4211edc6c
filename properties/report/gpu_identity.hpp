// SPDX-License-Identifier: MIT OR Apache-2.0
// How `probe` and `record` name the hardware they ran on (the header of what they write), and
// what every report says about the run: version, commit, backend, GPU, module, emulator policy.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "w8a16/device/backend.hpp"

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

// What a report ran on and compared against.
struct RunIdentity {
  std::string version, commit;   // w8a16/version.hpp
  std::string backend;           // "cuda" or "sim"
  GpuIdentity gpu;               // for the simulation: name "none (simulation backend)", the rest "none"
  std::string module;            // "embedded", a --module path, or "none" (no kernels run)
  std::string policy;            // the emulator's MMA policy the expected bytes come from ("sm90")
  bool policy_verified = false;  // verified by recordings of THIS device's architecture
  std::string policy_note;       // why, or "NOT VERIFIED for compute capability X.Y: ..."
};
RunIdentity run_identity(const device::Backend& backend);
// Lines for the text report ("w8a16check 0.1.0 (commit ...)", "gpu: ...", "emulator policy: ...").
std::string identity_text(const RunIdentity& id);
// j["w8a16check"], j["gpu"], j["module"], j["emulator_policy"], and which run wrote the report
// (report_files.hpp add_run_json: j["run"], j["report_schema_version"]).
void add_identity_json(nlohmann::json* j, const RunIdentity& id);
// <properties> for a JUnit <testsuite>, the run's among them (report_files.hpp run_junit_properties).
std::string identity_junit_properties(const RunIdentity& id);

}  // namespace w8a16::cli
