// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check repro`: its arguments and the run (one case line run and explained).
// The CLI (cli/cmd_repro.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::cli {
namespace cmd_repro {

struct ReproArgs {
  props::DeadlinePolicy deadlines;  // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::string arg;
  std::string backend = "auto";
  std::string module;
  int show = 3;
  std::vector<std::uint32_t> element;
  WorkLimits limits;
  props::ContractChoice contract;  // --contract: NAME|FILE|ENTRY=NAME|FILE, in order (NUMERICS.md 2.4)
};

int run_repro(const ReproArgs& a);

}  // namespace cmd_repro
}  // namespace w8a16::cli
