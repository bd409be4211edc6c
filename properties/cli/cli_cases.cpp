// SPDX-License-Identifier: MIT OR Apache-2.0
// Backend choice and case-file reading for the case subcommands.
#include "cli_cases.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "w8a16/device/module_abi.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/device/sim_backend.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif

namespace w8a16::cli {
namespace fs = std::filesystem;

std::unique_ptr<device::Backend> make_backend(const std::string& kind, std::string* note, std::string* error,
                                              const std::string& module, int ordinal) {
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
    if (!module.empty()) *note += ", module " + golden::shown(module) + " (" + std::to_string(gpu->module_bytes()) + " bytes)";
    return gpu;
  }
  const std::string why = st.message;
#else
  const std::string why = module.empty() ? "this build has no CUDA backend (configure with the cuda preset)"
                                         : "--module " + golden::shown(module) + ": this build has no CUDA backend (configure with the cuda preset)";
#endif
  if (kind == "cuda" || !module.empty()) {
    *error = (kind == "cuda" ? "--backend cuda: " : "") + why;
    return nullptr;
  }
  *note = "simulation (CPU; no GPU: " + why + ")";
  return simulation();
}

std::unique_ptr<props::CaseLauncher> make_launcher(device::Backend& backend, const std::string& module, int ordinal,
                                                   bool isolate) {
  const bool gpu = std::string(backend.name()) == "cuda";
  const char* inject = std::getenv("W8A16_SIM_INJECT");
  if (!gpu && !isolate && !(inject && *inject)) return std::make_unique<props::InProcessLauncher>(backend);
  props::WorkerSpec spec;
  spec.backend_name = backend.name();
  spec.argv = {"/proc/self/exe", "launch-worker", "--backend", gpu ? "cuda" : "sim", "--gpu", std::to_string(ordinal)};
  if (!module.empty()) spec.argv.insert(spec.argv.end(), {"--module", module});
  return std::make_unique<props::IsolatedLauncher>(std::move(spec), backend.registry(), backend.limits());
}

void add_deadline_option(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
      "--launch-deadline",
      [](const std::string& v) {
        std::string why;
        if (!props::set_deadline_seconds(v, &why)) throw CLI::ValidationError("--launch-deadline", why);
      },
      "seconds a launch may run before it is a HANG (default: W8A16_LAUNCH_DEADLINE, else 20 s plus 1 ns a "
      "multiply-add on a GPU, 1 us on the simulation)");
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

void add_module_option(CLI::App* cmd, std::string* module) {
  cmd->add_option("--module", *module,
                  "a cubin or fatbin to load instead of the embedded kernels (docs/KERNEL_ABI.md); needs a GPU");
}

bool check_module(const device::Backend& backend, const std::vector<device::Entry>& entries, std::string* error) {
#if W8A16_HAVE_CUDA
  const auto* gpu = dynamic_cast<const device::CudaBackend*>(&backend);
  if (!gpu || gpu->module_source() == "embedded") return true;
  std::printf("module: %s, %zu bytes; parameter layouts %s\n", golden::shown(gpu->module_source()).c_str(), gpu->module_bytes(),
              gpu->abi_checked() ? "checked against docs/KERNEL_ABI.md 1.1"
                                 : "NOT checked (this driver lacks cuFuncGetParamInfo)");
  bool listed = false;
  for (const std::string& name : device::foreign_family_names(gpu->module_functions(&listed)))
    std::printf("module: note: %s is not a kernel of the family (docs/KERNEL_ABI.md 1): ignored\n", name.c_str());
  if (!listed) std::printf("module: note: this driver cannot list the module's functions; names outside the family are not checked\n");
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

namespace {

void load_text(const std::string& path, const std::string& text, long only_line, LoadedCases* out) {
  long line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (only_line > 0 && line_no != only_line) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') {
      if (only_line > 0) out->errors.push_back(path + ":" + std::to_string(line_no) + ": not a case line");
      continue;
    }
    golden::Case c;
    std::string why;
    if (golden::parse_case(line, &c, &why)) {
      out->cases.push_back(c);
      out->sources.push_back(path + ":" + std::to_string(line_no));
    } else {
      out->errors.push_back(path + ":" + std::to_string(line_no) + ": " + why);
    }
  }
  if (only_line > line_no) out->errors.push_back(path + ": has no line " + std::to_string(only_line));
}

void load_file(const std::string& path, long only_line, LoadedCases* out) {
  std::string text, why;
  if (!golden::read_regular_file(path, golden::kMaxInputFileBytes, &text, &why)) {
    out->errors.push_back(golden::shown(path) + ": " + why);
    return;
  }
  load_text(golden::shown(path), text, only_line, out);
}

}  // namespace

std::vector<std::string> files_under(const std::string& root, const std::string& extension,
                                     std::vector<std::string>* errors) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec), end;
  if (ec) {
    errors->push_back(golden::shown(root) + ": cannot list the folder: " + ec.message());
    return files;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      errors->push_back(golden::shown(root) + ": cannot list the folder: " + ec.message());
      break;
    }
    const fs::path& p = it->path();
    if (p.extension() != extension) continue;
    std::error_code kind_ec;
    if (it->is_regular_file(kind_ec)) {
      files.push_back(p.string());
    } else if (!it->is_directory(kind_ec)) {
      errors->push_back(golden::shown(p.string()) + ": is " + golden::path_kind(p.string()) +
                        ", not a regular file");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

LoadedCases load_cases(const std::vector<std::string>& paths) {
  LoadedCases out;
  for (const std::string& root : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(root, ec);
    if (!fs::exists(st)) continue;
    if (fs::is_directory(st)) {
      for (const std::string& f : files_under(root, ".case", &out.errors)) load_file(f, 0, &out);
    } else {
      load_file(root, 0, &out);  // a regular file, or an error naming what it is
    }
  }
  return out;
}

LoadedCases load_case_argument(const std::string& arg) {
  LoadedCases out;
  if (arg.rfind("case/", 0) == 0) {
    load_text("<argument>", arg, 0, &out);
    return out;
  }
  std::string path = arg;
  long line = 0;
  std::error_code ec;
  const std::size_t colon = arg.rfind(':');
  if (colon != std::string::npos && colon + 1 < arg.size() && arg.size() - colon - 1 <= 9 &&
      arg.find_first_not_of("0123456789", colon + 1) == std::string::npos && !fs::exists(arg, ec)) {
    path = arg.substr(0, colon);
    line = std::stol(arg.substr(colon + 1));
    if (line == 0) {
      out.errors.push_back(golden::shown(arg) + ": line numbers start at 1");
      return out;
    }
  }
  if (!fs::exists(path, ec)) {
    out.errors.push_back(golden::shown(path) + ": no such file (and not a case line starting with 'case/')");
    return out;
  }
  load_file(path, line, &out);
  return out;
}

}  // namespace w8a16::cli
