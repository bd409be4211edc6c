// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check bench`: its flags; the timing is commands/run_bench.* over device/bench.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "run_bench.hpp"

namespace w8a16::cli {
namespace cmd_bench {

void add_bench(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("bench", "Time the dispatched entry points against the memory floor and cuBLAS (GPU)");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--shapes", a->shapes, "NxK shapes (default 12288x2048 2048x4096 10240x5120 51200x5120 5120x25600)")
      ->delimiter(',');
  cmd->add_option("--m", a->ms, "rows M (default 1 2 4 8 16 32 48 64 128 512)")
      ->delimiter(',')
      ->transform(whole_number(1, 65536));
  add_report_option(cmd, "--json", a->json_report, "write every number to this JSON file");
  cmd->add_option("--reps", a->reps, "launches back to back per timed graph replay")
      ->transform(whole_number(1, 10000))
      ->capture_default_str();
  cmd->add_option("--batches", a->batches, "timed replays (the median is reported)")
      ->transform(whole_number(1, 10000))
      ->capture_default_str();
  cmd->add_option("--rotate-mib", a->rotate_mib, "MiB of weight copies to rotate over (> L2, so W comes from HBM)")
      ->check(finite_number(0, 65536))
      ->capture_default_str();
  cmd->add_option("--check-macs", a->check_macs, "M*N*K above which the emulator checks a subsample of C")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--device", a->device, "GPU ordinal")->transform(whole_number(0, 1023))->capture_default_str();
  cmd->add_option("--seed", a->seed, "input seed (decimal or 0x hex)")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_flag("--no-cublas", a->no_cublas, "skip the cuBLAS comparison");
  cmd->add_flag("--no-graph", a->no_graph, "time launches issued one by one instead of graph replays");
  add_module_option(cmd, &a->module);
  add_deadline_option(cmd, &a->deadlines);
  cmd->add_option("--max-bytes", a->limits.max_bytes,
                  "refuse shapes whose host buffers need more memory than this (bytes)")
      ->transform(whole_number(1, UINT64_MAX))
      ->capture_default_str();
  cmd->callback([a, exit_code] { *exit_code = run_bench(*a); });
}

W8A16_COMMAND(80, add_bench);

}  // namespace cmd_bench
}  // namespace w8a16::cli
