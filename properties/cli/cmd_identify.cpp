// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check identify`: its flags; the run is commands/run_identify.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "run_identify.hpp"

namespace w8a16::cli {
namespace cmd_identify {

void add_identify(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "identify",
      "Say which contract of the family (NUMERICS.md 2.4) each entry point and each body it dispatches keeps "
      "bit for bit, from probes built to tell the conventions apart (exit 0: every body keeps a contract and "
      "the bodies of each entry point keep a common one, 1: a body keeps none or a tier break, 2: usage or "
      "input error, 77: no GPU where one was asked for)");
  auto a = std::make_shared<IdentifyArgs>();
  cmd->add_option("--entry", a->entries,
                  "entry points to identify (repeatable; default every one the module holds), e.g. "
                  "gemm_pipelined_m32_strided");
  cmd->add_option("--body", a->bodies,
                  "bodies to identify (repeatable; default every body each entry point dispatches), e.g. m32_skinny");
  cmd->add_option("--backend", a->backend,
                  "auto (GPU if present, else simulation), cuda or sim (the simulation's bodies keep canonical "
                  "unless W8A16_SIM_CONVENTIONS=BODY=NAME|FILE|bug:...,... makes stand-ins of them)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the probes' data")->transform(whole_number(0, UINT64_MAX));
  cmd->add_option("--threads", a->threads, "threads that emulate the candidates (0: every core)")
      ->transform(whole_number(0, 1024));
  add_module_option(cmd, &a->module);
  add_deadline_option(cmd, &a->deadlines);
  cmd->add_option("--write-contract", a->write_contract,
                  "write the contract identify determined, in the text form `verify --contract FILE` takes "
                  "(nothing is written, and the run says why, when a body keeps none or a field is undetermined)");
  add_report_option(cmd, "--json", a->json, "write a JSON report: per entry point and body, what it keeps");
  cmd->callback([a, exit_code] { *exit_code = run_identify(*a); });
}

W8A16_COMMAND(25, add_identify);

}  // namespace cmd_identify
}  // namespace w8a16::cli
