// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check repro`: its flags; the run is commands/run_repro.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_repro.hpp"

namespace w8a16::cli {
namespace cmd_repro {

void add_repro(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("repro",
                                 "Replay one case and explain every difference from the emulator "
                                 "(exit 0: equal, 1: differs, 2: usage or input error)");
  auto a = std::make_shared<ReproArgs>();
  cmd->add_option("CASE", a->arg, "a 'case/1 ...' line, or FILE[:LINE] holding exactly one case")->required();
  cmd->add_option("--backend", a->backend, "auto, cuda or sim")->capture_default_str();
  cmd->add_option("--show", a->show, "differing elements explained in full")
      ->transform(whole_number(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--element", a->element, "also explain C[M][N] (two numbers: M N)")
      ->expected(2)
      ->transform(whole_number(0, 0xFFFFFFFFu));
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  add_limit_options(cmd, &a->limits);
  cmd->callback([a, exit_code] { *exit_code = run_repro(*a); });
}

W8A16_COMMAND(30, add_repro);

}  // namespace cmd_repro
}  // namespace w8a16::cli
