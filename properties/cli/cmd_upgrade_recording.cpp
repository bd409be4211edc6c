// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check upgrade-recording`: its flags; the rewrite is commands/run_upgrade_recording.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_upgrade_recording.hpp"

namespace w8a16::cli {
namespace cmd_upgrade_recording {

void add_upgrade_recording(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "upgrade-recording",
      "Rewrite a recording (.rec) of an older version as the current one, the recorded bytes unchanged and the "
      "trailer added (exit 0: written, 2: usage or input error, nothing written)");
  auto a = std::make_shared<UpgradeArgs>();
  cmd->add_option("IN", a->in, "the recording to read")->required();
  cmd->add_option("--out", a->out, "the recording to write (may be IN itself, with --overwrite)")->required();
  cmd->add_flag("--overwrite", a->overwrite, "replace an existing --out file");
  cmd->add_option("--cases", a->cases,
                  "the number of cases a version-1 IN was recorded with (required unless the evidence manifest beside "
                  "IN lists it; a file that holds another number is refused)")
      ->transform(whole_number(1, UINT64_MAX));
  cmd->callback([a, exit_code] { *exit_code = run_upgrade(*a); });
}

W8A16_COMMAND(100, add_upgrade_recording);

}  // namespace cmd_upgrade_recording
}  // namespace w8a16::cli
