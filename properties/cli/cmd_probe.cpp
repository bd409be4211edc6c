// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check probe`: its flags; the recording and replay are commands/run_probe.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_probe.hpp"

namespace w8a16::cli {
namespace cmd_probe {

void add_probe(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "probe",
      "Record mma.sync m16n8k16 or wgmma m64n8k16 BF16 on the GPU (10 regimes + targeted cases) as .mmav files under "
      "OUT/<gpu>/, then replay them against the emulator (exit 0: recorded and matching, 1: mismatch "
      "against the verified policy, 2: no GPU or an error; nothing recorded)");
  auto a = std::make_shared<ProbeArgs>();
  cmd->add_option("--out", a->out_root, "parent folder; files go to OUT/<gpu name>/ (default <data>/mma)");
  cmd->add_option("--data-dir", a->data_dir,
                  "the data folder whose mma/ is the default --out (default: as verify finds it)");
  cmd->add_option("--cases", a->cases, "cases (MMAs) per regime, 1..65536 (each 1,792 bytes)")
      ->transform(whole_number(1, 65536))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed_text, "seed of the input generators (decimal or 0x hex)")
      ->check(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--instruction", a->instruction,
                  "mma.sync (m16n8k16) or wgmma (m64n8k16: A from shared memory and from registers, scale-d 1 and 0)")
      ->capture_default_str();
  cmd->add_option("--source", a->source, "cuda (the GPU) or sim (emulator sm90: tests the file handling only)")
      ->capture_default_str();
  cmd->add_flag("--overwrite", a->overwrite, "replace .mmav files already in OUT/<gpu>/");
  cmd->add_flag("--into-data-dir", a->into_data_dir,
                "with --source sim: allow writing into the data folder (its files are never hardware evidence: verify "
                "fails on them)");
  cmd->add_option("--show", a->show, "mismatches printed in full per file")
      ->transform(whole_number(0, 1000000))
      ->capture_default_str();
  cmd->callback([=] { *exit_code = run_probe(*a); });
}

W8A16_COMMAND(60, add_probe);

}  // namespace cmd_probe
}  // namespace w8a16::cli
