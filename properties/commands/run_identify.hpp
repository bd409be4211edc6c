// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check identify`: its arguments and the run (each entry point's bodies on the
// probes of properties/identify.hpp, the text report and --json). The CLI (cli/cmd_identify.cpp)
// only fills the arguments.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "report_files.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
namespace cmd_identify {

struct IdentifyArgs {
  props::DeadlinePolicy deadlines;   // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::vector<std::string> entries;  // default: every entry point the module holds
  std::vector<std::string> bodies;   // default: every body each entry point dispatches
  std::string backend = "auto";
  std::string module;
  std::uint64_t seed = 0x1de7;  // the probes' data (identify.hpp): any seed gives probes of the same kinds
  unsigned threads = 0;         // emulation threads (0: every core)
  std::shared_ptr<Report> json = std::make_shared<Report>();
  std::string write_contract;  // --write-contract FILE: the contract determined, in the text form
};

int run_identify(const IdentifyArgs& a);

}  // namespace cmd_identify
}  // namespace w8a16::cli
