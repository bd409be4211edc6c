// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check launch-worker`: its arguments and the worker's run (run_launch_worker.cpp
// says what it is). The CLI (cli/cmd_launch_worker.cpp) only fills the arguments.
#pragma once
#include <string>

namespace w8a16::cli {
namespace cmd_launch_worker {

struct WorkerArgs {
  std::string backend = "cuda", module;
  int gpu = 0;
  int inputs_fd = -1;
};
// Serves the launcher until its pipe closes, then ends the process; returns (exit status 2) only
// when it cannot start: no backend, or standard output cannot be set aside for the protocol.
int run_worker(const WorkerArgs& a);

}  // namespace cmd_launch_worker
}  // namespace w8a16::cli
