// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check launch-worker` (internal, not listed): the process that launches cases for
// props::IsolatedLauncher (properties/launcher.hpp). It reads case lines on standard input and
// their operands from the launcher's inputs file (--inputs-fd), and answers on standard output in the launcher's protocol; everything else it prints goes to
// standard error, so that nothing but the protocol reaches the pipe.
#include "run_launch_worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::cli {
namespace cmd_launch_worker {

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

}  // namespace cmd_launch_worker
}  // namespace w8a16::cli
