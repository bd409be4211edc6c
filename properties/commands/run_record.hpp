// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check record`: its arguments and the run (run_record.cpp says what it writes).
// The CLI (cli/cmd_record.cpp) only fills the arguments.
#pragma once
#include <string>
#include <vector>

#include "backends.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::cli {
namespace cmd_record {

struct RecordArgs {
  props::DeadlinePolicy deadlines;  // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::vector<std::string> cases;
  std::string out;
  std::string source = "cuda";
  bool overwrite = false;
  bool into_data_dir = false;  // --into-data-dir: let a simulation recording go into the data folder
  bool compare = true;
  std::string module;  // --module
  WorkLimits limits;
  props::ContractChoice contract;  // --contract: what the comparison holds the kernels to (NUMERICS.md 2.4)
};

int run_record(const RecordArgs& a);

}  // namespace cmd_record
}  // namespace w8a16::cli
