// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check launch-worker` (internal, not listed): the process that launches cases for
// props::IsolatedLauncher (properties/launcher.hpp). It reads case lines on standard input and
// their operands from the launcher's inputs file (--inputs-fd), and answers on standard output in the launcher's protocol; everything else it prints goes to
// standard error, so that nothing but the protocol reaches the pipe.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends.hpp"
#include "command.hpp"
#include "options.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
namespace cmd_launch_worker {

struct WorkerArgs {
  std::string backend = "cuda", module;
  int gpu = 0;
  int inputs_fd = -1;
};

int run_worker(const WorkerArgs& a) {
  const int out = ::dup(1);
  if (out < 0 || ::dup2(2, 1) < 0) return kExitUsage;
  std::string note, error;
  auto backend = make_backend(a.backend, &note, &error, a.module, a.gpu);
  if (!backend) {
    const std::string line = "error " + error + "\n";
    if (::write(out, line.data(), line.size()) < 0) return kExitUsage;
    return kExitUsage;
  }
  const int rc = props::serve_cases(*backend, 0, out, a.inputs_fd);
  std::fflush(stdout);
  std::fflush(stderr);
  // After a sticky error the context is unusable: no destructor may wait on it.
  std::_Exit(rc == 0 ? kExitPass : kExitUsage);
}

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
