// SPDX-License-Identifier: MIT OR Apache-2.0
// What the case subcommands (verify, replay, repro) share: choosing a backend and its launcher.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exit_status.hpp"
#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_files.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::cli {

// "auto": the CUDA backend when this build has it and a GPU answers, else the simulation;
// "cuda": the CUDA backend or an error; "sim": the simulation. nullptr with *error on failure.
// *note says what was chosen and, for auto, why. A non-empty `module` (--module FILE) loads that
// cubin or fatbin instead of the embedded module; it needs the CUDA backend: with "sim", without a
// GPU, or when the file does not load, it is an error, never a fall-back to the simulation.
// The simulation takes its injected faults from W8A16_SIM_INJECT (sim_backend.hpp: KIND:SYMBOL[:m=N],
// ...); a value it cannot read is an error. *no_gpu (when given) is set when the error is that this
// machine has no GPU (device::Errc::no_device) for a GPU the command asked for: see backend_refused.
std::unique_ptr<device::Backend> make_backend(const std::string& kind, std::string* note, std::string* error,
                                              const std::string& module = "", int ordinal = 0, bool* no_gpu = nullptr);

// The exit status for a make_backend failure: kExitNoGpu (77, printed as SKIPPED with the reason) when
// the command asked for a GPU and this machine has none, else the usage error (2) naming it.
int backend_refused(const std::string& command, const std::string& error, bool no_gpu);

// The entry points named by --entry, with or without the "w8a16_" prefix, each once in the order
// given; false with *error ("unknown --entry ...") for a name that is none.
bool parse_entry_args(const std::vector<std::string>& names, std::vector<golden::EntryPoint>* entries,
                      std::string* error);

// Every entry point whose kernels the registry holds, in kAllEntryPoints' order; each one left out
// is noted on stdout ("COMMAND: note: ... left out: the module lacks its kernels"): a module without
// an sm_90a cubin lacks the packed entry's symbols (docs/KERNEL_ABI.md 1.2).
std::vector<golden::EntryPoint> entries_the_module_holds(const device::KernelRegistry& registry,
                                                         const std::string& command);

// What the case subcommands launch cases through (properties/launcher.hpp). On a GPU: a worker
// process of this binary per GPU (`launch-worker`), so that a kernel that hangs, faults or
// crashes is its case's failure and nothing else; on the simulation this process, unless
// `isolate` or W8A16_SIM_INJECT asks for workers, as the tests of that path do. `backend` is
// this process's backend for GPU `ordinal` (its registry and limits plan what the worker runs).
std::unique_ptr<props::CaseLauncher> make_launcher(device::Backend& backend, const std::string& module, int ordinal,
                                                   bool isolate, const props::DeadlinePolicy& deadlines);

// The CUDA backends of GPUs 1, 2, ... (GPU 0 is make_backend's), up to `max_total` GPUs in all
// (0: every visible one), over the same module. Empty without CUDA.
std::vector<std::unique_ptr<device::Backend>> more_gpu_backends(std::uint32_t max_total,
                                                                const std::string& module = "");

// For a backend over a --module file: prints what was loaded, the optional symbols it lacks and the
// w8a16_* names outside the family it holds; false with *error naming every required symbol it
// lacks for `entries` (docs/KERNEL_ABI.md 1.2). True at once for any other backend.
bool check_module(const device::Backend& backend, const std::vector<device::Entry>& entries, std::string* error);

// Case files are read by the library (case_files.hpp); the subcommands name them as their own.
using props::files_under;
using props::load_case_argument;
using props::load_cases;
using props::LoadedCases;
// So are the work limits (work_limits.hpp).
using props::case_cost;
using props::CaseCost;
using props::count_text;
using props::over_limits;
using props::WorkLimits;

}  // namespace w8a16::cli
