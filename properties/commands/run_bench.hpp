// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check bench`: its arguments and the run (checks every option, then times the
// entry points on the GPU; run_bench.cpp says how). The CLI (cli/cmd_bench.cpp) only fills the arguments.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "report_files.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
namespace cmd_bench {

struct BenchArgs {
  props::DeadlinePolicy deadlines;  // --launch-deadline, else W8A16_LAUNCH_DEADLINE (launcher.hpp)
  std::vector<std::string> shapes;  // "NxK"
  std::vector<std::uint32_t> ms;
  int reps = 20;     // launches per timed graph (back to back)
  int batches = 15;  // timed replays; the median is reported
  double rotate_mib = 512;
  std::uint64_t check_macs = 1ull << 31;  // M*N*K above which the emulator check subsamples
  int device = 0;
  std::uint64_t seed = 0x9BE7C4;
  bool no_cublas = false;
  bool no_graph = false;
  std::string module;                                                // --module
  std::shared_ptr<Report> json_report = std::make_shared<Report>();  // --json (path in json_report->path)
  WorkLimits limits;  // --max-bytes: the host buffers of the largest shape
};

int run_bench(BenchArgs& a);

}  // namespace cmd_bench
}  // namespace w8a16::cli
