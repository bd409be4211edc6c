// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check verify`: its flags; the run is commands/run_verify.* over properties/verify.hpp.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "run_verify.hpp"

namespace w8a16::cli {
namespace cmd_verify {

void add_verify(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("verify",
                                 "Run the default verification campaign and print a verdict "
                                 "(exit 0: PASS, 1: FAIL, 2: usage or input error, or a report not written)");
  auto a = std::make_shared<VerifyArgs>();
  cmd->add_option("--cases", a->cases, "drawn cases over all shards")
      ->transform(whole_number(0, 1000000000))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "campaign seed (decimal or 0x hex): case i is the same on every machine")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--time-budget", a->time_budget_s,
                  "seconds after which no new drawn case starts (0: none; the saved and coverage cases always run)")
      ->check(finite_number(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto (GPU if present, else simulation), cuda or sim")
      ->capture_default_str();
  cmd->add_option(
      "--entry", a->entries,
      "entry points to verify (repeatable; default all), e.g. gemv_batch4_strided: the drawn, coverage and saved cases, and the recorded cases the device runs");
  cmd->add_option("--dist", a->dists, "input distributions to draw (repeatable; default all)");
  cmd->add_option("--shard", a->shard,
                  "i/n: run the cases with index % n == i (default from GTEST_SHARD_INDEX/"
                  "GTEST_TOTAL_SHARDS, else 0/1)");
  cmd->add_option("--draw-max-macs", a->draw_max_macs,
                  "cap on m*n*k per drawn case (default 2^23 on the CPU, 2^28 on a GPU; never above --max-macs)")
      ->transform(whole_number(1, UINT64_MAX));
  add_limit_options(cmd, &a->limits);
  cmd->add_option("--gpus", a->gpus, "GPUs to spread the cases over on the cuda backend (0: every visible one)")
      ->transform(whole_number(0, 1024))
      ->capture_default_str();
  a->junit->format = ReportFormat::junit;
  add_report_option(cmd, "--junit", a->junit, "write a JUnit XML report");
  add_report_option(cmd, "--json", a->json, "write a JSON report");
  cmd->add_option("--data-dir", a->data_dir,
                  "the data folder (a golden/: mma/, recordings/, cases/, regressions/); default $W8A16_DATA_DIR, else "
                  "<prefix>/share/w8a16check/golden, else the source tree of this binary's build tree");
  cmd->add_option("--mma-dir", a->mma_roots,
                  "folders (or files) of recorded .mmav files to replay (default <data>/mma)");
  cmd->add_option("--recordings-from", a->recordings,
                  ".rec files or folders of GPU recordings to replay (default <data>/recordings)");
  cmd->add_flag("!--no-recordings", a->replay_recordings, "replay no GPU recording");
  cmd->add_option("--cases-from", a->case_paths,
                  "saved .case files or folders to replay first (default <data>/cases and <data>/regressions)");
  cmd->add_flag("!--no-saved", a->saved, "replay no saved case (otherwise none replayed is a FAIL)");
  add_module_option(cmd, &a->module);
  add_contract_option(cmd, &a->contract);
  add_deadline_option(cmd, &a->deadlines);
  cmd->add_flag("--isolate", a->isolate,
                "run the simulation's cases in worker processes, as a GPU's always run (a launch that hangs, "
                "faults or crashes fails its case alone)");
  cmd->add_flag("!--no-save", a->save_failures,
                "do not append failing drawn and coverage cases to golden/regressions/");
  cmd->add_flag("!--no-coverage", a->coverage,
                "run no coverage cases and do not require every cell (entry point x body x configuration x special "
                "class) to be drawn");
  cmd->add_flag("!--no-invariance", a->invariance,
                "run no batch and tier invariance rows at the dispatch edges (the report says they were not run)");
  cmd->add_option("--max-failures", a->max_failures, "start no case after this many have failed (0: no limit)")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_flag("--quick", a->quick,
                "the gate's campaign (README \"The gate\"): the saved cases, the quick coverage plan (every cell "
                "with every special class, every body with every kind of order data) and " +
                    std::to_string(kQuickCases) + " drawn cases unless --cases says otherwise");
  cmd->add_option(
         "--perturb", a->perturb_seed,
         "run the coverage and saved cases of the Hopper tier and the cp.async rings on the perturbed module "
         "(seeded delays at every pipeline hand-over, device/kernels/w8a16_timing.cuh and w8a16_sync_timing.cuh), "
         "each under --perturb-seeds timing seeds "
         "drawn from SEED (default 1); exit 0 PASS, 1 FAIL or INCOMPLETE")
      ->expected(0, 1)
      ->transform(whole_number(0, UINT64_MAX));
  cmd->add_option("--perturb-seeds", a->perturb_seeds, "timing seeds each case of --perturb runs under")
      ->transform(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--sanitize", a->sanitize,
                "after the cases, replay one aimed case per body and configuration cell under compute-sanitizer's "
                "racecheck and synccheck (on a GPU; a hazard or barrier error is a FAIL, a missing tool NOT CHECKED)");
  cmd->add_option("--sanitizer", a->sanitizer,
                  "with --sanitize: the compute-sanitizer to run (default: the toolkit's)");
  cmd->callback([a, exit_code, cmd] {
    a->cases_given = cmd->count("--cases") > 0;
    a->perturb = cmd->count("--perturb") > 0;
    if (cmd->count("--sanitizer") > 0 && !a->sanitize) {
      *exit_code = usage_error("verify", "--sanitizer needs --sanitize");
      return;
    }
    if (cmd->count("--perturb-seeds") > 0 && !a->perturb) {
      *exit_code = usage_error("verify", "--perturb-seeds needs --perturb");
      return;
    }
    *exit_code = run_verify(*a);
  });
}

W8A16_COMMAND(10, add_verify);

}  // namespace cmd_verify
}  // namespace w8a16::cli
