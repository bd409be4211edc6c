// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check verify`: its arguments and the run around the library's campaign
// (properties/verify.hpp): the inputs, the stages, the reports. The CLI (cli/cmd_verify.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "report_files.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::cli {
namespace cmd_verify {

// `--quick`'s drawn cases: with the saved cases and the quick coverage plan they caught every
// planted kernel bug of tools/gpu-mutants (docs/JOURNAL.md).
constexpr std::uint64_t kQuickCases = 200;

struct VerifyArgs {
  props::DeadlinePolicy deadlines;      // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::string data_dir;                 // --data-dir; else found (data_dir.hpp)
  std::vector<std::string> mma_roots;   // --mma-dir; default <data>/mma
  std::vector<std::string> case_paths;  // --cases-from; default <data>/cases and <data>/regressions
  std::vector<std::string> recordings;  // --recordings-from; default <data>/recordings
  bool saved = true;                    // --no-saved: replay no saved case
  bool replay_recordings = true;        // --no-recordings
  std::string module;                   // --module
  std::uint64_t cases = 1000;
  bool quick = false;        // --quick: the gate's campaign (the quick coverage plan, kQuickCases drawn)
  bool cases_given = false;  // --cases was given (it then wins over --quick's count)
  std::uint64_t seed = 1;
  double time_budget_s = 0;
  std::string backend = "auto";
  std::vector<std::string> entries, dists;
  std::string shard;
  std::uint64_t draw_max_macs = 0;  // 0: by backend
  WorkLimits limits;                // --max-macs / --max-bytes: no case above them runs
  std::uint32_t gpus = 0;           // 0: every visible GPU
  std::shared_ptr<Report> junit = std::make_shared<Report>(), json = std::make_shared<Report>();
  bool save_failures = true;
  bool coverage = true;            // --no-coverage: no coverage cases, no coverage verdict
  bool invariance = true;          // --no-invariance: no batch and tier rows at the dispatch edges
  std::uint64_t max_failures = 0;  // --max-failures
  bool isolate = false;            // --isolate: the simulation's cases in worker processes too
  props::ContractChoice contract;  // --contract: NAME|FILE|ENTRY=NAME|FILE, in order (NUMERICS.md 2.4)
  bool perturb = false;            // --perturb [SEED]: the perturbed campaign (properties/perturb.hpp)
  std::uint64_t perturb_seed = 1;
  std::uint32_t perturb_seeds = 4;  // --perturb-seeds: timing seeds a case
  bool sanitize = false;            // --sanitize: the sanitizer stage (properties/sanitize.hpp)
  std::string sanitizer;            // --sanitizer PATH: the compute-sanitizer to run
};
// --perturb's time budget unless --time-budget says otherwise: no case starts after it.
inline constexpr double kPerturbBudgetSeconds = 100;

int run_verify(const VerifyArgs& a);

}  // namespace cmd_verify
}  // namespace w8a16::cli
