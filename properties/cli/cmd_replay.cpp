// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check replay`: its flags; the replay is commands/run_replay.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_replay.hpp"

namespace w8a16::cli {
namespace cmd_replay {

void add_replay(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("replay",
                                 "Replay saved cases (.case files, folders, FILE:LINE or case lines) "
                                 "(exit 0: every case equal, 1: some differ, 2: usage or input error)");
  auto a = std::make_shared<ReplayArgs>();
  cmd->add_option("CASES", a->cases, "case files, folders of .case files, FILE:LINE, or 'case/1 ...' lines");
  cmd->add_option("--backend", a->backend, "auto, cuda or sim")->capture_default_str();
  cmd->add_option(
      "--recordings", a->recordings,
      ".rec files or folders: the emulator, and the GPU when the backend is cuda, against recorded outputs");
  cmd->add_option("--gpu", a->gpu, "with --recordings: every recording must be from this GPU (e.g. h200)");
  cmd->add_flag("--mark-cases", a->mark_cases,
                "print 'case: LINE' (flushed) before each case is launched, for tools that wrap the run");
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  add_limit_options(cmd, &a->limits);
  cmd->callback([a, exit_code] { *exit_code = run_replay(*a); });
}

W8A16_COMMAND(20, add_replay);

}  // namespace cmd_replay
}  // namespace w8a16::cli
