// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check manifest --write DIR...` / `--check DIR...`: the evidence manifests
// (golden/include/w8a16/golden/manifest.hpp), one per folder, written after a real recording and
// checked the way verify checks the data folder's.
#include "run_manifest.hpp"

#include "exit_status.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"

namespace w8a16::cli {
namespace cmd_manifest {

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

}  // namespace cmd_manifest
}  // namespace w8a16::cli
