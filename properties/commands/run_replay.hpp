// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check replay`: its arguments and the run (saved cases and recordings replayed
// on a backend). The CLI (cli/cmd_replay.cpp) only fills the arguments.
#pragma once
#include <string>
#include <vector>

#include "backends.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::cli {
namespace cmd_replay {

struct ReplayArgs {
  props::DeadlinePolicy deadlines;  // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::vector<std::string> cases;
  std::string backend = "auto";
  std::vector<std::string> recordings;
  std::string gpu;
  std::string module;
  WorkLimits limits;
  props::ContractChoice contract;  // --contract: NAME|FILE|ENTRY=NAME|FILE, in order (NUMERICS.md 2.4)
  // --mark-cases: `case: LINE` on the standard output (flushed) before each case is launched, so
  // that a tool that wraps the run (compute-sanitizer, verify --sanitize) can say which case its
  // reports came from.
  bool mark_cases = false;
};

int run_replay(const ReplayArgs& a);

}  // namespace cmd_replay
}  // namespace w8a16::cli
