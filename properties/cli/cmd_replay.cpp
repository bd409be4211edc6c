// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check replay CASES...`: runs saved cases (files, folders, FILE:LINE or case lines) on a
// backend against the emulator, one verdict per case; `--recordings` checks the emulator (and the
// GPU when present) against outputs recorded on hardware (recordings_replay.hpp).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_cases.hpp"
#include "command.hpp"
#include "gpu_identity.hpp"
#include "recordings_replay.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::cli {
namespace {

void add_replay(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("replay", "Replay saved cases (.case files, folders, FILE:LINE or case lines)");
  auto args = std::make_shared<std::vector<std::string>>();
  auto backend_kind = std::make_shared<std::string>("auto");
  auto recordings = std::make_shared<std::vector<std::string>>();
  auto gpu = std::make_shared<std::string>();
  auto module = std::make_shared<std::string>();
  cmd->add_option("CASES", *args, "case files, folders of .case files, FILE:LINE, or 'case/1 ...' lines");
  cmd->add_option("--backend", *backend_kind, "auto, cuda or sim")->capture_default_str();
  cmd->add_option("--recordings", *recordings,
                  ".rec files or folders: the emulator, and the GPU when the backend is cuda, against recorded outputs");
  cmd->add_option("--gpu", *gpu, "with --recordings: every recording must be from this GPU (e.g. h200)");
  add_module_option(cmd, module.get());
  cmd->callback([=] {
    if (args->empty() && recordings->empty()) {
      std::fprintf(stderr, "replay: give CASES, --recordings, or both\n");
      *exit_code = 2;
      return;
    }
    if (!gpu->empty() && recordings->empty()) {
      std::fprintf(stderr, "replay: --gpu applies to --recordings only\n");
      *exit_code = 2;
      return;
    }
    int rec_status = 0;
    if (!recordings->empty()) {
      std::string note, error;
      auto backend = make_backend(*backend_kind, &note, &error, *module);
      if (!backend) {
        std::fprintf(stderr, "replay: %s\n", error.c_str());
        *exit_code = 2;
        return;
      }
      // A module given must hold what the recorded cases need: every entry point (they span all).
      std::vector<device::Entry> every;
      for (int e = 0; e <= static_cast<int>(device::Entry::gemv_batch16_strided); ++e)
        every.push_back(static_cast<device::Entry>(e));
      if (!check_module(*backend, every, &error)) {
        std::fprintf(stderr, "replay: %s\n", error.c_str());
        *exit_code = 2;
        return;
      }
      std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
      // The simulation's values are the emulator's by construction: only a GPU adds a check.
      const bool is_gpu = std::string(backend->name()) == "cuda";
      rec_status = replay_recordings(*recordings, *gpu, is_gpu ? backend.get() : nullptr);
      if (args->empty() || rec_status == 2) {
        *exit_code = rec_status;
        return;
      }
    }
    LoadedCases all;
    for (const std::string& a : *args) {
      std::error_code ec;
      LoadedCases one = std::filesystem::is_directory(a, ec) ? load_cases({a}) : load_case_argument(a);
      if (one.cases.empty() && one.errors.empty()) one.errors.push_back(a + ": no case found");
      all.cases.insert(all.cases.end(), one.cases.begin(), one.cases.end());
      all.sources.insert(all.sources.end(), one.sources.begin(), one.sources.end());
      all.errors.insert(all.errors.end(), one.errors.begin(), one.errors.end());
    }
    for (const std::string& e : all.errors) std::fprintf(stderr, "replay: %s\n", e.c_str());
    if (!all.errors.empty()) {
      *exit_code = 2;
      return;
    }
    std::string note, error;
    auto backend = make_backend(*backend_kind, &note, &error, *module);
    if (!backend) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      *exit_code = 2;
      return;
    }
    std::vector<device::Entry> entries;
    for (const golden::Case& c : all.cases) entries.push_back(props::to_device_entry(c.entry));
    if (!check_module(*backend, entries, &error)) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      *exit_code = 2;
      return;
    }
    std::printf("backend: %s\n", note.c_str());
    std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < all.cases.size(); ++i) {
      const golden::Case& c = all.cases[i];
      golden::CaseInputs in;
      std::string why;
      bool ok = golden::regenerate_inputs(c, &in, &why);
      if (ok) {
        const props::Launched got = props::launch_case(*backend, c, in);
        if (!got.status.ok()) {
          ok = false;
          why = got.status.message;
        } else {
          const props::Comparison cmp = props::compare_output(c, props::expected_output(c, in), got.c_bits, 3);
          ok = cmp.equal();
          why = std::to_string(cmp.mismatches) + " of " + std::to_string(cmp.bytes_compared / 2) + " elements differ";
          for (const std::string& d : cmp.details) why += "; " + d;
        }
      }
      failed += !ok;
      std::printf("%s %s\n  %s\n", ok ? "PASS" : "FAIL", all.sources[i].c_str(), golden::format_case(c).c_str());
      if (!ok) std::printf("  %s\n  explain: w8a16check repro '%s'\n", why.c_str(), golden::format_case(c).c_str());
    }
    std::printf("%zu cases, %zu failed\n", all.cases.size(), failed);
    *exit_code = failed == 0 ? rec_status : 1;
  });
}

W8A16_COMMAND(add_replay);

}  // namespace
}  // namespace w8a16::cli
