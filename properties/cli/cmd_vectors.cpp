// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check vectors FILE...`: its flags; the replay is commands/run_vectors.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_vectors.hpp"

namespace w8a16::cli {
namespace cmd_vectors {

void add_vectors(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("vectors",
                                 "Replay recorded tensor-core MMAs (.mmav) against the emulator "
                                 "(exit 0: all match, 1: mismatches, 2: unreadable or empty file)");
  auto a = std::make_shared<VectorsArgs>();
  cmd->add_option("FILE", a->files, ".mmav files (format: golden/mma/README.md)")->required();
  cmd->add_option("--arch", a->arch_name, "emulator policy: sm90 (verified) or sm80 (unverified)")
      ->capture_default_str();
  cmd->add_option("--show", a->show, "mismatches printed in full per file")
      ->transform(whole_number(0, 1000000))
      ->capture_default_str();
  cmd->callback([a, exit_code] { *exit_code = run_vectors(*a); });
}

W8A16_COMMAND(70, add_vectors);

}  // namespace cmd_vectors
}  // namespace w8a16::cli
