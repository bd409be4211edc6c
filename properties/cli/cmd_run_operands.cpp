// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check run-operands`: its flags; the run is commands/run_operands.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_operands.hpp"

namespace w8a16::cli {
namespace cmd_run_operands {

void add_run_operands(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run-operands",
                                 "Run an operand bundle (raw A, W, S bits) through one entry point; write C's bits");
  auto a = std::make_shared<RunOperandsArgs>();
  cmd->add_option("--backend", a->backend_kind, "sim or cuda (no auto: the caller says which it measures)")->required();
  cmd->add_option("--entry", a->entry, "the entry point; must be the one the bundle names")->required();
  cmd->add_option("--in", a->in, "operand bundle (format: golden/include/w8a16/golden/operands.hpp)")->required();
  cmd->add_option("--out", a->out, "output file: header and C's bits")->required();
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  cmd->add_flag("--without-hopper-tier", a->without_hopper,
                "plan as if the module lacked the Hopper tier's symbols (the seed's bodies and the row-tile kernel)");
  cmd->add_flag("--check", a->check,
                "also compare C with the emulator's contract for the entry, bit for bit (exit 1 when a byte differs)");
  cmd->add_option("--columns", a->columns,
                  "keep only these columns of C in the output (increasing, comma-separated); C is then held "
                  "for one launch at a time")
      ->delimiter(',');
  add_limit_options(cmd, &a->limits);
  cmd->callback([a, exit_code] { *exit_code = run_operands(*a); });
}

W8A16_COMMAND(40, add_run_operands);

}  // namespace cmd_run_operands
}  // namespace w8a16::cli
