// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check record`: its flags; the recording is commands/run_record.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_record.hpp"

namespace w8a16::cli {
namespace cmd_record {

void add_record(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "record",
      "Run saved cases on the GPU and store digests (and small outputs in full) of what the kernels "
      "produced, as a .rec file (exit 0: written and equal to the emulator, 1: written but some case "
      "differs from the emulator, 2: error, nothing written)");
  auto a = std::make_shared<RecordArgs>();
  cmd->add_option("--cases", a->cases, ".case files or folders of them")->required();
  cmd->add_option("--out", a->out, "the recording to write (e.g. golden/recordings/h200.rec)")->required();
  cmd->add_option("--source", a->source, "cuda (the GPU) or sim (the simulation: tests the file handling only)")
      ->capture_default_str();
  cmd->add_flag("--overwrite", a->overwrite, "replace an existing --out file");
  cmd->add_flag("--into-data-dir", a->into_data_dir,
                "with --source sim: allow --out inside the data folder (a simulation recording is never hardware "
                "evidence: verify fails on it)");
  cmd->add_flag("!--no-compare", a->compare, "do not compare each case with the emulator while recording");
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  add_limit_options(cmd, &a->limits);
  cmd->callback([=] { *exit_code = run_record(*a); });
}

W8A16_COMMAND(50, add_record);

}  // namespace cmd_record
}  // namespace w8a16::cli
