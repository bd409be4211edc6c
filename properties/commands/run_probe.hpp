// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check probe`: its arguments and the run (records the MMA instructions on the GPU as
// .mmav files and replays them; run_probe.cpp says how). The CLI (cli/cmd_probe.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <string>

namespace w8a16::cli {
namespace cmd_probe {

struct ProbeArgs {
  std::string out_root;  // --out; default <data>/mma (data_dir.hpp)
  std::string data_dir;  // --data-dir
  std::uint32_t cases = 256;
  std::string seed_text = "0x5eed000000000001";
  std::string source = "cuda";
  std::string instruction = "mma.sync";
  bool overwrite = false;
  bool into_data_dir = false;  // --into-data-dir: let the simulation's files go into the data folder
  int show = 3;
};

int run_probe(const ProbeArgs& a);

}  // namespace cmd_probe
}  // namespace w8a16::cli
