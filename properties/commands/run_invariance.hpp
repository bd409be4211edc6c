// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check invariance`: its arguments and the run (the sweep of
// properties/invariance.hpp on a backend, the text report and --json). The CLI
// (cli/cmd_invariance.cpp) only fills the arguments.
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
namespace cmd_invariance {

struct InvarianceArgs {
  props::DeadlinePolicy deadlines;    // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::vector<std::string> shapes;    // "NxK"; default 136x512
  std::vector<std::string> entries;   // default: every entry point the module holds
  std::vector<std::string> ms;        // "A..B" or "M"; default: 1 .. past the tile and the edges, and each edge +-1
  std::vector<std::string> needles;   // distributions; default fold_ties, cancelling_steps, wide_exponents, nan_codes
  std::vector<std::string> verdicts;  // run-to-run, batch, tier, contract; default all
  bool edges_only = false;            // --edges-only: M = 1 and each edge -1, 0, +1
  bool no_permutations = false;       // --no-permutations: the front, back and seeded positions only
  std::string backend = "auto";
  std::string module;
  std::string save_dir = "w8a16check-invariance";
  std::uint64_t seed = 0x1a7a;
  unsigned threads = 0;
  props::ContractChoice contract;
  std::shared_ptr<Report> json = std::make_shared<Report>();
};

int run_invariance(const InvarianceArgs& a);

}  // namespace cmd_invariance
}  // namespace w8a16::cli
