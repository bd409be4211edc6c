// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check invariance`: its flags; the run is commands/run_invariance.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "run_invariance.hpp"

namespace w8a16::cli {
namespace cmd_invariance {

void add_invariance(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "invariance",
      "Check that a row's bytes depend on the row alone (NUMERICS.md 2.1): a needle row at every M, position, "
      "row order, pitch and view, on every body and entry point, every run, against its M = 1 bytes and the "
      "contract's; verdicts run-to-run, batch, tier and contract (exit 0: every asked verdict passes, 1: one "
      "fails, 2: usage or input error, 77: no GPU where one was asked for)");
  auto a = std::make_shared<InvarianceArgs>();
  cmd->add_option("--shape", a->shapes, "N x K shapes, e.g. 136x512 (repeatable; default 136x512)");
  cmd->add_option("--entry", a->entries,
                  "entry points (repeatable; default every one the module holds), e.g. gemm_pipelined_m32");
  cmd->add_option("--m", a->ms,
                  "row counts: M or A..B (repeatable; default every M from 1 past the 128-row tile and every "
                  "dispatch edge, and each edge -1, 0, +1)");
  cmd->add_flag("--edges-only", a->edges_only, "sweep only M = 1 and each dispatch edge -1, 0, +1");
  cmd->add_option("--needle", a->needles,
                  "the needle rows' data, a golden distribution (repeatable; default fold_ties, cancelling_steps, "
                  "wide_exponents, nan_codes)");
  cmd->add_option("--verdict", a->verdicts, "verdicts to give: run-to-run, batch, tier, contract (default all)");
  cmd->add_flag(
      "--no-permutations", a->no_permutations,
      "batch: only the rows of one call (front, back, seeded, and every row in turn at M <= 8; no reversed or interleaved order, pitches or views)");
  cmd->add_option("--backend", a->backend,
                  "auto (GPU if present, else simulation), cuda or sim (W8A16_SIM_CONVENTIONS=BODY=split-k-by-m|"
                  "row-order|nondeterministic|NAME makes a simulated body break invariance on purpose)")
      ->capture_default_str();
  cmd->add_option("--save-dir", a->save_dir, "where failing launches are saved (operand bundles, case lines)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the needles and the filler rows")->transform(whole_number(0, UINT64_MAX));
  cmd->add_option("--threads", a->threads, "emulation threads (0: every core)")->transform(whole_number(0, 1024));
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  add_report_option(cmd, "--json", a->json, "write a JSON report: per shape and entry point, dispatch and verdicts");
  cmd->callback([a, exit_code] { *exit_code = run_invariance(*a); });
}

W8A16_COMMAND(26, add_invariance);

}  // namespace cmd_invariance
}  // namespace w8a16::cli
