// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check run-operands`: its arguments and the run (run_operands.cpp says what it is for).
// The CLI (cli/cmd_run_operands.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::cli {
namespace cmd_run_operands {

struct RunOperandsArgs {
  props::DeadlinePolicy deadlines;  // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::string backend_kind, entry, in, out, module;
  bool without_hopper = false;         // --without-hopper-tier
  bool check = false;                  // --check: C against the emulator's contract for the entry
  std::vector<std::uint32_t> columns;  // --columns: the columns of C the output keeps (empty: all)
  WorkLimits limits;
  props::ContractChoice contract;  // --contract: what --check holds the entry to (NUMERICS.md 2.4)
};

int run_operands(const RunOperandsArgs& args);

}  // namespace cmd_run_operands
}  // namespace w8a16::cli
