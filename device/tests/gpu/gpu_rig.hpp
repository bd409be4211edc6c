// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU tests' rig: a case through props::launch_case on the CUDA backend (verify's launch path),
// against props::expected_output (verify's expected bytes), and what a failure leaves behind.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_cases.hpp"
#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::gputest {

struct GpuRun {
  bool ok = false;
  std::string error;             // the launch layer's or the driver's message when !ok
  device::Plan plan;             // what the entry point dispatched to (when planned)
  std::vector<std::uint16_t> c;  // all of C with its guard rows (golden::kOutputGuardRows), as the GPU left it
};

class GpuRig {
 public:
  // nullptr with the reason in *why when there is no usable GPU (no driver, no device). With
  // W8A16_GPU_MODULE set, the kernels come from that cubin or fatbin (a mutant's module:
  // tools/gpu-mutants) instead of the embedded module.
  static std::unique_ptr<GpuRig> create(std::string* why);
  // Over a backend made elsewhere (a module loaded from a file: test_module_file.cpp).
  static std::unique_ptr<GpuRig> over(std::unique_ptr<device::CudaBackend> backend);
  device::CudaBackend& backend() { return *backend_; }
  // The module's kernels as a without= mask (bit i: golden::kKernelSymbols[i] is present).
  std::uint32_t present() const { return present_; }
  // Uploads the inputs, launches the case exactly as `w8a16check verify` does (props::launch_case:
  // planned over the module less the case's without= kernels, C with guard rows and pitch padding
  // as the sentinel), synchronizes, downloads all of C.
  GpuRun run(const golden::Case& c, const golden::CaseInputs& in);

 private:
  std::unique_ptr<device::CudaBackend> backend_;
  std::uint32_t present_ = 0;
};

// The inputs of a case line (golden::regenerate_inputs); aborts the test binary on an invalid line,
// which would be a bug in gpu_cases.cpp.
golden::CaseInputs inputs_of(const golden::Case& c);

// Where a failing case is saved: $W8A16_REGRESSIONS_DIR, else golden/regressions of the source tree
// this binary was built from if that tree is here, else ./golden/regressions if ./golden exists
// (the GPU machine runs in a copy of the working tree); empty when none is.
std::string regressions_default_dir();
// Appends the failing case to <dir>/<test>.case (props::save_regression) and returns the text a
// failure prints: the case line, the command that replays it, and where it was saved.
std::string keep_failure(const std::string& test, const golden::Case& c, const std::string& why);

}  // namespace w8a16::gputest
