// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check replay CASES...`: runs saved cases (files, folders, FILE:LINE or case lines) on a
// backend against the emulator, one verdict per case; `--recordings` checks the emulator (and the
// GPU when present) against outputs recorded on hardware (w8a16/properties/recordings.hpp).
#include "run_replay.hpp"

#include "exit_status.hpp"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backends.hpp"
#include "gpu_identity.hpp"
#include "progress.hpp"
#include "recordings_text.hpp"
#include "w8a16/properties/recordings.hpp"
#include "report_files.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/case_pipeline.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::cli {
namespace cmd_replay {

int usage(const std::string& message) { return usage_error("replay", message); }

// Every argument's cases, read before anything runs; errors make the whole replay exit 2.
LoadedCases load_arguments(const std::vector<std::string>& args) {
  LoadedCases all;
  for (const std::string& a : args) {
    std::error_code ec;
    const bool folder = std::filesystem::is_directory(a, ec);
    LoadedCases one = folder ? load_cases({a}) : load_case_argument(a);
    if (one.cases.empty() && one.errors.empty())
      one.errors.push_back(golden::shown(a) + (folder ? ": this folder holds no .case file: nothing to replay"
                                                      : ": no case found: nothing to replay"));
    all.cases.insert(all.cases.end(), one.cases.begin(), one.cases.end());
    all.sources.insert(all.sources.end(), one.sources.begin(), one.sources.end());
    all.errors.insert(all.errors.end(), one.errors.begin(), one.errors.end());
  }
  return all;
}

int run_replay(const ReplayArgs& a) {
  if (a.cases.empty() && a.recordings.empty()) return usage("give CASES, --recordings, or both");
  if (!a.gpu.empty() && a.recordings.empty()) return usage("--gpu applies to --recordings only");
  // Every case named is read and costed before anything runs, the recordings' too.
  const LoadedCases all = load_arguments(a.cases);
  if (!all.errors.empty()) {
    std::string text;
    for (const std::string& e : all.errors) text += (text.empty() ? "" : "\n") + e;
    return usage(text);
  }
  const std::string over = over_limits(all.cases, all.sources, a.limits);
  if (!over.empty()) return usage(over + "\nnothing was run");
  const props::ContractChoice& contract = a.contract;
  // repro takes the same --contract arguments, so the line it is given shows the same difference.
  std::string contract_flags;
  for (const std::string& spec : contract.given) contract_flags += " --contract " + golden::shown(spec);
  std::string note, error;
  bool no_gpu = false;
  auto backend = make_backend(a.backend, &note, &error, a.module, 0, &no_gpu);
  if (!backend) return backend_refused("replay", error, no_gpu);

  // Each case in a worker process on a GPU (launcher.hpp): a kernel that faults fails its case only.
  const auto launcher = make_launcher(*backend, a.module, 0, false, a.deadlines);
  int rec_status = kExitPass;
  if (!a.recordings.empty()) {
    // A module given must hold what the recorded cases need: every entry point (they span all).
    const std::vector<device::Entry> every(std::begin(device::kAllEntries), std::end(device::kAllEntries));
    if (!check_module(*backend, every, &error)) return usage(error);
    std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
    std::fputs(props::contract_report_text(contract).c_str(), stdout);
    props::RecordingsOptions ro;
    ro.contract = contract;
    ro.gpu = a.gpu;
    ro.limits = a.limits;
    ro.module = a.module;
    // The simulation's values are the emulator's by construction: only a GPU adds a check.
    ro.device = backend->kind() == device::BackendKind::cuda ? launcher.get() : nullptr;
    RecordingsText text(ro);
    ro.listener = &text;
    const props::RecordingsResult rr = props::replay_recordings(a.recordings, ro);
    if (rr.status == kExitUsage) return usage(rr.error);
    rec_status = rr.status;
    if (!rr.hang.empty()) return kExitFail;  // every later launch could hang as long
    if (a.cases.empty()) return rec_status;
  }

  std::vector<device::Entry> entries;
  for (const golden::Case& c : all.cases) entries.push_back(props::to_device_entry(c.entry));
  if (!check_module(*backend, entries, &error)) return usage(error);
  std::printf("backend: %s\n", note.c_str());
  if (a.recordings.empty()) {
    std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
    std::fputs(props::contract_report_text(contract).c_str(), stdout);
  }
  std::size_t failed = 0;
  std::atomic<std::size_t> done{0};
  props::Heartbeat beat("replay", [&] {
    return std::to_string(done.load()) + " of " + std::to_string(all.cases.size()) + " cases done";
  });
  props::PipelineSteps steps;
  if (a.mark_cases)
    steps.before = [&](std::size_t i) {
      std::printf("case: %s\n", golden::format_case(all.cases[i]).c_str());
      std::fflush(stdout);
      return true;
    };
  steps.done = [&](std::size_t i, props::CaseWork& w) {
    const golden::Case& c = w.c;
    const props::Launched& got = w.got;
    bool ok = w.input_error.empty() && w.contract_problem.empty();
    std::string why = !w.input_error.empty() ? w.input_error : w.contract_problem;
    if (!w.contract_problem.empty()) {
      // Nothing ran and nothing was compared (NUMERICS.md 2.4).
    } else if (ok && !got.status.ok()) {
      ok = false;
      why = std::string(got.status.code == device::Errc::launch_timeout ? "HANG: "
                        : got.status.code == device::Errc::context_lost ? "FAULT: "
                                                                        : "") +
            got.status.message + (got.planned ? "\n  " + props::launch_text(got.plan) : "");
    } else if (ok) {
      const props::Comparison cmp = props::compare_output(c, w.expected, got.c_bits, 3);
      ok = cmp.equal();
      why = std::to_string(cmp.mismatches) + " of " + std::to_string(cmp.bytes_compared / 2) + " elements differ" +
            (contract.for_entry(c.entry).same_numerics(ref::canonical_conventions())
                 ? ""
                 : " from the contract " + contract.for_entry(c.entry).name);
      for (const std::string& d : cmp.details) why += "; " + d;
    }
    failed += !ok;
    ++done;
    const bool hung = w.launched && got.status.code == device::Errc::launch_timeout;
    std::printf("%s %s\n  %s\n",
                ok     ? "PASS"
                : hung ? "HANG"
                       : "FAIL",
                all.sources[i].c_str(), golden::format_case(c).c_str());
    if (!ok) {
      std::printf("  %s\n", why.c_str());
      // repro replays the same case on the same backend against the same emulator, so it shows
      // this difference; it takes --module too.
      if (w.contract_problem.empty())
        std::printf("  explain: w8a16check repro --backend %s%s%s '%s'\n", backend->name(),
                    a.module.empty() ? "" : (" --module " + golden::shown(a.module)).c_str(), contract_flags.c_str(),
                    golden::format_case(c).c_str());
    }
    return true;
  };
  props::PipelineOptions po;
  po.contract = contract;
  const props::PipelineResult pr = props::run_case_pipeline(
      all.cases.size(), [&](std::size_t i) { return all.cases[i]; }, launcher.get(), steps, po);
  if (pr.end == props::PipelineEnd::hang) {  // every later launch could hang as long
    std::printf("replay: stopped at the case that hung: %zu cases not run\n", all.cases.size() - pr.handed);
    return kExitFail;
  }
  std::printf("%zu cases, %zu failed\n", all.cases.size(), failed);
  return failed == 0 ? rec_status : kExitFail;
}

}  // namespace cmd_replay
}  // namespace w8a16::cli
