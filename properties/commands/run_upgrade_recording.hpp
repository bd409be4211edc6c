// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check upgrade-recording`: its arguments and the rewrite of a recording.
// The CLI (cli/cmd_upgrade_recording.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <string>

namespace w8a16::cli {
namespace cmd_upgrade_recording {

struct UpgradeArgs {
  std::string in, out;
  bool overwrite = false;
  std::uint64_t cases = 0;  // --cases: the count the version-1 file was recorded with (0: not given)
};

int run_upgrade(const UpgradeArgs& a);

}  // namespace cmd_upgrade_recording
}  // namespace w8a16::cli
