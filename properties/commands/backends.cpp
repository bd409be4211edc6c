// SPDX-License-Identifier: MIT OR Apache-2.0
// Backend choice for the case subcommands.
#include "backends.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "report_files.hpp"
#include "w8a16/device/module_abi.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/device/sim_backend.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif

namespace w8a16::cli {
namespace fs = std::filesystem;

std::unique_ptr<device::Backend> make_backend(const std::string& kind, std::string* note, std::string* error,
                                              const std::string& module, int ordinal, bool* no_gpu) {
  if (no_gpu) *no_gpu = false;
  if (kind != "auto" && kind != "cuda" && kind != "sim") {
    *error = "--backend " + golden::quote(kind) + " must be auto, cuda or sim";
    return nullptr;
  }
  if (!module.empty() && kind == "sim") {
    *error = "--module runs the module's kernels on a GPU: it needs --backend cuda (or auto), not sim";
    return nullptr;
  }
  auto simulation = [&]() -> std::unique_ptr<device::Backend> {
    auto sim = std::make_unique<device::SimBackend>();
    if (const char* inject = std::getenv("W8A16_SIM_INJECT"); inject && *inject) {
      std::vector<device::Injection> faults;
      std::string why;
      if (!device::parse_injections(inject, &faults, &why)) {
        *error = "W8A16_SIM_INJECT: " + golden::escaped(why);
        return nullptr;
      }
      sim->inject(std::move(faults));
      *note += "; injected faults (W8A16_SIM_INJECT=" + golden::escaped(inject) + ")";
    }
    // Stand-ins for identify (sim_backend.hpp parse_stand_ins): bodies with other conventions or a
    // planted bug. A value it cannot read is an error, as W8A16_SIM_INJECT's.
    if (const char* conv = std::getenv("W8A16_SIM_CONVENTIONS"); conv && *conv) {
      std::vector<device::BodyStandIn> stand_ins;
      std::string why;
      if (!device::parse_stand_ins(conv, &stand_ins, &why)) {
        *error = "W8A16_SIM_CONVENTIONS: " + golden::escaped(why);
        return nullptr;
      }
      sim->stand_in(std::move(stand_ins));
      *note += "; stand-in bodies (W8A16_SIM_CONVENTIONS=" + golden::escaped(conv) + ")";
    }
    return sim;
  };
  if (kind == "sim") {
    *note = "simulation (CPU; values from the emulator, geometry checked)";
    return simulation();
  }
#if W8A16_HAVE_CUDA
  device::Status st;
  auto gpu = module.empty() ? device::CudaBackend::create(ordinal, &st)
                            : device::CudaBackend::create_from_file(ordinal, module, &st);
  if (gpu) {
    *note = "cuda (GPU " + std::to_string(ordinal) + ")";
    if (!module.empty())
      *note += ", module " + golden::shown(module) + " (" + std::to_string(gpu->module_bytes()) + " bytes)";
    return gpu;
  }
  const std::string why = st.message;
  const bool absent = st.code == device::Errc::no_device;
#else
  const bool absent = false;  // a build without the backend is a build problem, not a machine without a GPU
  const std::string why = module.empty() ? "this build has no CUDA backend (configure with the cuda preset)"
                                         : "--module " + golden::shown(module) +
                                               ": this build has no CUDA backend (configure with the cuda preset)";
#endif
  if (kind == "cuda" || !module.empty()) {
    *error = (kind == "cuda" ? "--backend cuda: " : "") + why;
    if (no_gpu) *no_gpu = absent;
    return nullptr;
  }
  *note = "simulation (CPU; no GPU: " + why + ")";
  return simulation();
}

int backend_refused(const std::string& command, const std::string& error, bool no_gpu) {
  if (!no_gpu) return usage_error(command, error);
  std::fprintf(stderr, "%s: %s\n%s: SKIPPED: no GPU on this machine; nothing was checked (exit status %d)\n",
               command.c_str(), error.c_str(), command.c_str(), kExitNoGpu);
  std::fputs(verdict_line("SKIPPED", "no GPU here: " + error).c_str(), stdout);
  note_error(error);
  return kExitNoGpu;
}

std::unique_ptr<props::CaseLauncher> make_launcher(device::Backend& backend, const std::string& module, int ordinal,
                                                   bool isolate, const props::DeadlinePolicy& deadlines) {
  const bool gpu = backend.kind() == device::BackendKind::cuda;
  const char* inject = std::getenv("W8A16_SIM_INJECT");
  if (!gpu && !isolate && !(inject && *inject)) return std::make_unique<props::InProcessLauncher>(backend, deadlines);
  props::WorkerSpec spec;
  spec.backend_name = backend.name();
  spec.backend_kind = backend.kind();
  spec.argv = {"/proc/self/exe", "launch-worker", "--backend", gpu ? "cuda" : "sim", "--gpu", std::to_string(ordinal)};
  if (!module.empty()) spec.argv.insert(spec.argv.end(), {"--module", module});
  return std::make_unique<props::IsolatedLauncher>(std::move(spec), backend.registry(), backend.limits(), deadlines);
}

std::vector<std::unique_ptr<device::Backend>> more_gpu_backends(std::uint32_t max_total, const std::string& module) {
  std::vector<std::unique_ptr<device::Backend>> out;
#if W8A16_HAVE_CUDA
  for (int ordinal = 1; max_total == 0 || static_cast<std::uint32_t>(ordinal) < max_total; ++ordinal) {
    device::Status st;
    auto gpu = module.empty() ? device::CudaBackend::create(ordinal, &st)
                              : device::CudaBackend::create_from_file(ordinal, module, &st);
    if (!gpu) break;  // no GPU with this ordinal: the visible ones are counted
    out.push_back(std::move(gpu));
  }
#else
  (void)max_total;
  (void)module;
#endif
  return out;
}

bool check_module(const device::Backend& backend, const std::vector<device::Entry>& entries, std::string* error) {
#if W8A16_HAVE_CUDA
  const auto* gpu = dynamic_cast<const device::CudaBackend*>(&backend);
  if (!gpu || gpu->module_source() == "embedded") return true;
  std::printf("module: %s, %zu bytes; parameter layouts %s\n", golden::shown(gpu->module_source()).c_str(),
              gpu->module_bytes(),
              gpu->abi_checked() ? "checked against docs/KERNEL_ABI.md 1.1"
                                 : "NOT checked (this driver lacks cuFuncGetParamInfo)");
  bool listed = false;
  for (const std::string& name : device::foreign_family_names(gpu->module_functions(&listed)))
    std::printf("module: note: %s is not a kernel of the family (docs/KERNEL_ABI.md 1): ignored\n", name.c_str());
  if (!listed)
    std::printf(
        "module: note: this driver cannot list the module's functions; names outside the family are not checked\n");
  const device::ModuleCoverage c = device::module_coverage(backend.registry(), entries);
  const std::string optional = device::missing_optional_text(c);
  for (std::size_t pos = 0; pos < optional.size();) {
    const std::size_t eol = optional.find('\n', pos);
    std::printf("module: note: %s\n", optional.substr(pos, eol - pos).c_str());
    pos = eol + 1;
  }
  if (c.ok()) return true;
  *error = device::missing_required_text(c) + "nothing was launched";
  return false;
#else
  (void)backend;
  (void)entries;
  (void)error;
  return true;
#endif
}

bool parse_entry_args(const std::vector<std::string>& names, std::vector<golden::EntryPoint>* entries,
                      std::string* error) {
  entries->clear();
  for (const std::string& name : names) {
    golden::EntryPoint e;
    const std::string full = name.rfind("w8a16_", 0) == 0 ? name : "w8a16_" + name;
    if (!golden::parse_entry_point(full, &e)) {
      *error = "unknown --entry " + golden::quote(name) + " (e.g. gemm_pipelined_m32_strided)";
      return false;
    }
    if (std::find(entries->begin(), entries->end(), e) == entries->end()) entries->push_back(e);
  }
  return true;
}

std::vector<golden::EntryPoint> entries_the_module_holds(const device::KernelRegistry& registry,
                                                         const std::string& command) {
  std::vector<golden::EntryPoint> held;
  for (golden::EntryPoint e : golden::kAllEntryPoints) {
    bool present = true;
    for (device::KernelId id : device::required_kernels(props::to_device_entry(e)))
      present = present && registry.resolve(id);
    if (present) held.push_back(e);
    else
      std::printf("%s: note: %s left out: the module lacks its kernels\n", command.c_str(),
                  std::string(golden::entry_point_name(e)).c_str());
  }
  return held;
}

}  // namespace w8a16::cli
