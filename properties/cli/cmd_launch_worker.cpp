// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check launch-worker` (internal, not listed): its flags; the worker is
// commands/run_launch_worker.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_launch_worker.hpp"

namespace w8a16::cli {
namespace cmd_launch_worker {

void add_launch_worker(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("launch-worker",
                                 "internal: launches cases for verify and replay in a process of its own");
  cmd->group("");  // not listed in --help: only the launcher starts it
  auto a = std::make_shared<WorkerArgs>();
  cmd->add_option("--backend", a->backend, "cuda or sim");
  cmd->add_option("--module", a->module, "the module file");
  cmd->add_option("--gpu", a->gpu, "the GPU's ordinal");
  cmd->add_option("--inputs-fd", a->inputs_fd, "the descriptor of the launcher's inputs file")->required();
  cmd->callback([a, exit_code] { *exit_code = run_worker(*a); });
}

W8A16_COMMAND(110, add_launch_worker);

}  // namespace cmd_launch_worker
}  // namespace w8a16::cli
