// SPDX-License-Identifier: MIT OR Apache-2.0
// GpuRig: one case line on the GPU through verify's launch path, and what a failure keeps.
#include "gpu_rig.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "w8a16/properties/regression.hpp"

namespace w8a16::gputest {

std::unique_ptr<GpuRig> GpuRig::create(std::string* why) {
  device::Status st;
  const char* module = std::getenv("W8A16_GPU_MODULE");
  auto backend = module && *module ? device::CudaBackend::create_from_file(0, module, &st)
                                   : device::CudaBackend::create(0, &st);
  if (!backend) {
    *why = module && *module ? std::string("W8A16_GPU_MODULE=") + module + ": " + st.message
                             : "no usable CUDA device: " + st.message;
    return nullptr;
  }
  return over(std::move(backend));
}

std::unique_ptr<GpuRig> GpuRig::over(std::unique_ptr<device::CudaBackend> backend) {
  auto rig = std::unique_ptr<GpuRig>(new GpuRig());
  rig->backend_ = std::move(backend);
  for (device::KernelId id : device::kAllKernels)
    if (rig->backend_->registry().resolve(id)) rig->present_ |= 1u << static_cast<unsigned>(id);
  return rig;
}

GpuRun GpuRig::run(const golden::Case& c, const golden::CaseInputs& in) {
  GpuRun out;
  props::Launched got = props::launch_case(*backend_, c, in);
  out.plan = got.plan;
  if (!got.status.ok()) {
    out.error = std::string(got.planned ? "launch: " : "plan: ") + got.status.message;
    return out;
  }
  out.c = std::move(got.c_bits);
  out.ok = true;
  return out;
}

golden::CaseInputs inputs_of(const golden::Case& c) {
  golden::CaseInputs in;
  std::string error;
  if (!golden::regenerate_inputs(c, &in, &error)) {
    std::fprintf(stderr, "gpu test: an invalid case line (gpu_cases.cpp): %s: %s\n", golden::format_case(c).c_str(),
                 error.c_str());
    std::abort();
  }
  return in;
}

std::string regressions_default_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(fs::path(W8A16_SOURCE_DIR) / "golden", ec))
    return (fs::path(W8A16_SOURCE_DIR) / "golden" / "regressions").string();
  if (fs::is_directory("golden", ec)) return (fs::current_path(ec) / "golden" / "regressions").string();
  return {};
}

std::string keep_failure(const std::string& test, const golden::Case& c, const std::string& why) {
  std::string where;
  std::string error;
  const std::string dir = regressions_default_dir();
  const std::string path = dir.empty() && !std::getenv("W8A16_REGRESSIONS_DIR")
                               ? std::string()
                               : props::save_regression({c, why}, test, dir, &error);
  if (path.empty() && error.empty()) error = "no golden/ here and no W8A16_REGRESSIONS_DIR";
  const std::string l = golden::format_case(c);
  return "\n  case: " + l + "\n  replay: w8a16check repro '" + l + "'\n  " +
         (path.empty() ? "not saved: " + error : "saved to " + path);
}

}  // namespace w8a16::gputest
