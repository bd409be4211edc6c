// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check record --cases PATH... --out FILE.rec`: runs saved cases on the GPU and stores what
// the kernels produced (golden/include/w8a16/golden/recording.hpp), so every later replay, on any
// machine, checks the emulator against this hardware.
#include "run_record.hpp"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backends.hpp"
#include "data_dir.hpp"
#include "gpu_identity.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/version.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif

namespace w8a16::cli {
namespace cmd_record {
namespace fs = std::filesystem;

int usage(const std::string& message) { return usage_error("record", message); }

// The cases to record, read and checked: every path exists, every line is a case, no case is given
// twice, none is over the limits. Any problem here leaves every file as it was. A usage error's
// exit status, or 0.
int load_record_cases(const RecordArgs& a, LoadedCases* out) {
  std::error_code ec;
  for (const std::string& p : a.cases)
    if (!fs::exists(p, ec)) return usage("--cases " + golden::shown(p) + ": no such file or folder");
  *out = load_cases(a.cases);
  const LoadedCases& loaded = *out;
  if (!loaded.errors.empty()) {
    std::string text;
    for (const std::string& e : loaded.errors) text += e + "\n";
    return usage(text + std::to_string(loaded.errors.size()) + " case file errors: nothing was recorded");
  }
  if (loaded.cases.empty()) return usage("no case found under the --cases paths: nothing to record");
  {
    // A recording holds each case once (its reader refuses a case recorded twice): refused before
    // anything runs, naming both lines.
    std::map<std::string, std::size_t> first;
    std::string twice;
    std::size_t dups = 0;
    for (std::size_t i = 0; i < loaded.cases.size(); ++i) {
      const auto [at, fresh] = first.emplace(golden::format_case(loaded.cases[i]), i);
      if (fresh) continue;
      if (++dups <= 5)
        twice += loaded.sources[i] + ": the same case as " + loaded.sources[at->second] +
                 (loaded.sources[i] == loaded.sources[at->second] ? " (a file named twice in --cases)" : "") + "\n";
    }
    if (dups > 5) twice += "... and " + std::to_string(dups - 5) + " more\n";
    if (dups)
      return usage(twice + std::to_string(dups) + (dups == 1 ? " case" : " cases") +
                   " given twice: a recording holds each case once (its readers "
                   "refuse one recorded twice); nothing was recorded");
  }
  const std::string over = over_limits(loaded.cases, loaded.sources, a.limits);
  if (!over.empty()) return usage(over + "\nnothing was run");
  return 0;
}

// --out can take the recording: a file (or nothing yet), replaced only with --overwrite. A usage
// error's exit status, or 0.
int check_out(const RecordArgs& a) {
  std::error_code ec;
  if (a.out.empty()) return usage("--out FILE.rec is required");
  const std::string kind = golden::path_kind(a.out);
  if (kind != "does not exist" && kind != "")
    return usage("--out " + golden::shown(a.out) + ": is " + kind + ", not a file");
  if (kind == "" && !a.overwrite) return usage(golden::shown(a.out) + " exists; pass --overwrite to replace it");
  {
    // The folder is made at the end (only a finished recording creates anything); if it exists now,
    // it must take the file.
    const fs::path parent = fs::path(a.out).parent_path();
    std::string why;
    if ((parent.empty() || fs::is_directory(parent, ec)) && !golden::check_writable(a.out, &why))
      return usage("--out " + golden::shown(a.out) + ": " + why);
  }
  return 0;
}

// The backend the cases run on, and the identity the recording's header names; a usage or input
// error's exit status, or 0.
int open_backend(const RecordArgs& a, [[maybe_unused]] const LoadedCases& loaded,
                 std::unique_ptr<device::Backend>* backend, GpuIdentity* id) {
  if (a.source == "sim" && !a.module.empty())
    return usage("--module runs the module's kernels on a GPU: it needs --source cuda");
  if (a.source == "sim") {
    // Its header says simulation (manifest.hpp is_simulation_identity) and verify fails on it in the
    // data folder: it goes there only when asked.
    const std::string why = simulation_output_refusal(a.out, "", a.into_data_dir);
    if (!why.empty()) return usage("--out " + why + "; nothing was recorded");
    *backend = std::make_unique<device::SimBackend>();
    *id = {"simulation (emulator, not hardware)", "none", "none", "none"};
  } else if (a.source == "cuda") {
#if W8A16_HAVE_CUDA
    device::Status st;
    auto gpu = a.module.empty() ? device::CudaBackend::create(0, &st)
                                : device::CudaBackend::create_from_file(0, a.module, &st);
    if (!gpu) {
      if (st.code == device::Errc::no_device)
        return backend_refused("record", st.message + "; nothing was recorded", true);
      std::fprintf(stderr, "record: no GPU: %s\nrecord: nothing was recorded\n", st.message.c_str());
      return 2;
    }
    std::vector<device::Entry> entries;
    for (const golden::Case& c : loaded.cases) entries.push_back(props::to_device_entry(c.entry));
    std::string why;
    if (!check_module(*gpu, entries, &why)) {
      std::fprintf(stderr, "record: %s\nrecord: nothing was recorded\n", why.c_str());
      return 2;
    }
    const device::CudaDeviceInfo info = gpu->device_info();
    *id = {info.name, std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor), nvidia_driver_version(),
           cuda_version_text(info.driver_cuda_version)};
    *backend = std::move(gpu);
#else
    std::fprintf(stderr,
                 "record: no GPU: this build has no CUDA backend (configure with the cuda preset)%s\n"
                 "record: nothing was recorded\n",
                 a.module.empty() ? "" : " (--module needs one)");
    return 2;
#endif
  } else {
    return usage("--source " + golden::quote(a.source) + " must be cuda or sim");
  }
  return 0;
}

// Each case run once, its used outputs recorded, and (unless --no-compare) compared with the
// emulator; the count that differ in *differ. An input error's exit status (nothing is written),
// or 0.
int record_cases(const RecordArgs& a, const props::ContractChoice& contract, const LoadedCases& loaded,
                 device::Backend& backend, golden::Recording* rec, std::size_t* differ) {
  for (std::size_t i = 0; i < loaded.cases.size(); ++i) {
    const golden::Case& c = loaded.cases[i];
    golden::CaseInputs in;
    std::string why;
    if (!golden::regenerate_inputs(c, &in, &why)) {
      std::fprintf(stderr, "record: %s: %s\nrecord: nothing was written\n", loaded.sources[i].c_str(), why.c_str());
      return 2;
    }
    const props::Launched got = props::InProcessLauncher(backend, a.deadlines).launch(c, in);
    if (!got.status.ok()) {
      std::fprintf(stderr, "record: %s: the launch failed: %s\nrecord: nothing was written\n",
                   loaded.sources[i].c_str(), got.status.message.c_str());
      return 2;
    }
    rec->outputs.push_back(golden::make_recorded_output(c, golden::used_outputs(c, got.c_bits)));
    std::string verdict = "not compared";
    const std::string undefined = a.compare ? props::contract_case_problem(c, in, contract) : "";
    if (!undefined.empty()) {
      // Recorded as produced, but never compared and never counted equal (NUMERICS.md 2.4).
      verdict = "NOT COMPARED: " + undefined;
      ++*differ;
    } else if (a.compare) {
      const props::Comparison cmp = props::compare_output(c, props::expected_output(c, in, 0, contract), got.c_bits, 1);
      verdict = cmp.equal() ? "= emulator"
                            : "DIFFERS from the emulator: " + std::to_string(cmp.mismatches) + " elements";
      if (!cmp.equal() && !cmp.details.empty()) verdict += " (" + cmp.details[0] + ")";
      *differ += !cmp.equal();
    }
    std::printf("  [%zu/%zu] 0x%016" PRIx64 " %s  %s\n", i + 1, loaded.cases.size(), rec->outputs.back().digest,
                verdict.c_str(), loaded.sources[i].c_str());
  }
  return 0;
}

int run_record(const RecordArgs& a) {
  LoadedCases loaded;
  const props::ContractChoice& contract = a.contract;
  if (!a.compare && !contract.given.empty())
    return usage("--contract says what the comparison holds the kernels to; it does not go with --no-compare");
  if (const int bad = load_record_cases(a, &loaded)) return bad;
  if (const int bad = check_out(a)) return bad;
  std::unique_ptr<device::Backend> backend;
  GpuIdentity id;
  if (const int bad = open_backend(a, loaded, &backend, &id)) return bad;
  std::printf("record: %zu cases on %s (compute capability %s, driver %s, CUDA %s)\n", loaded.cases.size(),
              id.name.c_str(), id.compute_capability.c_str(), id.driver.c_str(), id.cuda.c_str());
  std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
  // The recording holds the device's bytes whatever the contract; the contract is what this run
  // compares them with.
  if (a.compare) std::fputs(props::contract_report_text(contract).c_str(), stdout);

  golden::Recording rec;
  rec.header.gpu = id.name;
  rec.header.compute_capability = id.compute_capability;
  rec.header.driver = id.driver;
  rec.header.cuda = id.cuda;
  rec.header.commit = kGitCommit;
  {
    // The header must read back too (no empty value, no control byte), before hours of launches.
    golden::Recording back;
    std::string why;
    if (!golden::parse_recording(golden::format_recording(rec), golden::shown(a.out), &back, &why))
      return usage("the recording's header would not read back: " + why + "; nothing was recorded");
  }
  std::size_t differ = 0;
  if (const int bad = record_cases(a, contract, loaded, *backend, &rec, &differ)) return bad;
  std::error_code ec;
  const fs::path parent = fs::path(a.out).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::string error;
  if (!golden::write_recording_file(a.out, rec, &error)) return usage(error + "\nrecord: nothing was written");
  std::printf("record: wrote %zu outputs to %s\n", rec.outputs.size(), golden::shown(a.out).c_str());
  {
    const fs::path folder = parent.empty() ? fs::path(".") : parent;
    if (fs::exists(folder / std::string(golden::kManifestFileName), ec))
      std::printf(
          "record: %s does not list this recording yet (verify fails until it does): after checking it, "
          "`w8a16check manifest --write %s`\n",
          golden::shown((folder / std::string(golden::kManifestFileName)).string()).c_str(),
          golden::shown(folder.string()).c_str());
  }
  if (a.compare)
    std::printf("record: %zu of %zu cases differ from the emulator%s%s\n", differ, rec.outputs.size(),
                contract.is_canonical() && contract.per_entry.empty()
                    ? ""
                    : (" under the contract " + contract.describe()).c_str(),
                differ ? " (the recording keeps what the device produced)" : "");
  return differ == 0 ? 0 : 1;
}

}  // namespace cmd_record
}  // namespace w8a16::cli
