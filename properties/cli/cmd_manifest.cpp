// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check manifest --write DIR...` / `--check DIR...`: the evidence manifests
// (golden/include/w8a16/golden/manifest.hpp), one per folder, written after a real recording and
// checked the way verify checks the data folder's.
#include <cstdio>
#include <string>
#include <vector>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"

namespace w8a16::cli {
namespace cmd_manifest {

struct ManifestArgs {
  std::vector<std::string> write, check;
  std::string source, from;
};

int usage(const std::string& message) { return usage_error("manifest", message); }

int run_manifest(const ManifestArgs& a) {
  if (a.write.empty() == a.check.empty()) return usage("give --write DIR... or --check DIR... (one of them)");
  for (const std::string& d : a.write.empty() ? a.check : a.write)
    if (golden::path_kind(d) != "a folder")
      return usage(golden::shown(d) + ": " + golden::path_kind(d) + ", not a folder");
  if (!a.check.empty()) {
    if (!a.source.empty() || !a.from.empty()) return usage("--source and --from go with --write");
    golden::TreeCheck t;
    for (const std::string& d : a.check) golden::check_tree(d, true, &t);
    for (const std::string& p : t.problems) std::printf("FAIL %s\n", p.c_str());
    std::printf("manifest: %llu folders, %llu manifests, %llu files checked, %zu problems\n",
                static_cast<unsigned long long>(t.folders), static_cast<unsigned long long>(t.manifests),
                static_cast<unsigned long long>(t.files), t.problems.size());
    return t.problems.empty() ? kExitPass : kExitFail;
  }
  golden::ManifestSource fallback;
  if (!a.source.empty() || !a.from.empty()) {
    if (a.source.empty() || a.from.empty()) return usage("--source and --from go together");
    if (!golden::parse_provenance(a.source, &fallback.source) || fallback.source == golden::Provenance::none ||
        fallback.source == golden::Provenance::input)
      return usage("--source " + golden::quote(a.source) + " must be hardware or simulation");
    fallback.has_fallback = true;
    fallback.from = a.from;
  }
  std::vector<std::string> written;
  for (const std::string& d : a.write) {
    std::string error;
    if (!golden::write_manifest_tree(d, fallback, &written, &error))
      return usage(error + " (nothing more was written)");
  }
  for (const std::string& w : written) std::printf("manifest: wrote %s\n", golden::shown(w).c_str());
  return kExitPass;
}

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
