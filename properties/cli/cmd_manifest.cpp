// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check manifest`: its flags; the work is commands/run_manifest.*.
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "run_manifest.hpp"

namespace w8a16::cli {
namespace cmd_manifest {

void add_manifest(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "manifest",
      "Write or check the evidence manifests (evidence-manifest.txt, one per folder: each file's size, SHA-256, "
      "count and provenance) that verify holds the data folder to (exit 0: written / all agree, 1: a check "
      "found problems, 2: usage or input error)");
  auto a = std::make_shared<ManifestArgs>();
  cmd->add_option("--write", a->write, "folders whose manifests to (re)write, with every folder below them");
  cmd->add_option("--check", a->check, "folders to check against their manifests, with every folder they list");
  cmd->add_option("--source", a->source,
                  "with --write: hardware or simulation, for recorded files whose format, probe MANIFEST*.txt or "
                  "current manifest entry does not say (e.g. .mmav files handed over from elsewhere)");
  cmd->add_option("--from", a->from, "with --source: where those files came from (GPU, driver, binaries), one line");
  cmd->callback([a, exit_code] { *exit_code = run_manifest(*a); });
}

W8A16_COMMAND(90, add_manifest);

}  // namespace cmd_manifest
}  // namespace w8a16::cli
