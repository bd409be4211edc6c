// SPDX-License-Identifier: MIT OR Apache-2.0
// Checking the evidence verify counts (evidence.hpp) with the manifests' rules (manifest.hpp).
#include "w8a16/properties/evidence.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "w8a16/properties/case_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"

namespace w8a16::props {
namespace {
namespace fs = std::filesystem;

fs::path canonical_of(const std::string& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

// The evidence folder of `data` that `path` lies in, or "" when none does.
fs::path evidence_folder_of(const fs::path& path, const fs::path& data) {
  for (const char* name : kEvidenceFolders) {
    fs::path root = data / name;  // not const: returned, so moved
    if (path_inside(path.string(), root.string())) return root;
  }
  return {};
}

}  // namespace

bool path_inside(const std::string& path, const std::string& folder) {
  const fs::path p = canonical_of(path), f = canonical_of(folder);
  auto pi = p.begin();
  for (auto fi = f.begin(); fi != f.end(); ++fi, ++pi) {
    if (fi->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *fi) return false;
  }
  return true;
}

EvidenceReport check_evidence(const std::string& data_dir, const std::vector<std::string>& read) {
  EvidenceReport r;
  golden::TreeCheck t;
  std::set<std::string> done;
  const fs::path data = data_dir.empty() ? fs::path() : canonical_of(data_dir);
  for (const std::string& p : read) {
    const fs::path c = canonical_of(p);
    const fs::path root = data.empty() ? fs::path() : evidence_folder_of(c, data);
    if (!root.empty()) {
      r.data_checked = true;
      if (done.insert(root.string()).second) golden::check_tree(root.string(), true, &t);
      continue;
    }
    std::error_code ec;
    if (!data.empty() && path_inside(c.string(), (data / "regressions").string())) {
      // Cases saved by failing runs (golden/README.md, From a failure to a diagnosis): not evidence.
      continue;
    }
    if (fs::is_directory(c, ec)) {
      if (!done.insert(c.string()).second) continue;
      const std::uint64_t before = t.manifests;
      golden::check_tree(c.string(), false, &t);
      r.notes.push_back(golden::shown(p) + ": the user's own (not in the data folder's " +
                        "mma/, recordings/, cases/ or order/): " +
                        (t.manifests > before ? "held to the evidence manifests it has; "
                                              : "no evidence manifest, so not checked against one; ") +
                        "every file checked for what it says of where it came from");
    } else {
      const fs::path folder = c.parent_path();
      const bool has_manifest = fs::exists(folder / std::string(golden::kManifestFileName), ec);
      if (has_manifest) {
        if (done.insert(folder.string()).second) golden::check_tree(folder.string(), false, &t);
      } else {
        golden::check_unlisted_file(c.string(), &t);
      }
      r.notes.push_back(golden::shown(p) + ": the user's own file: " +
                        (has_manifest
                             ? "held to the evidence manifest beside it"
                             : "no evidence manifest beside it; checked for what it says of where it came from"));
    }
  }
  // The order probes (golden/order/README.md) are the data folder's evidence too, though verify
  // replays none of them: the audit does.
  if (r.data_checked) {
    std::error_code ec;
    const fs::path order = data / "order";
    if (fs::is_directory(order, ec) && done.insert(order.string()).second) golden::check_tree(order.string(), true, &t);
  }
  if (r.data_checked && t.manifests == 0)
    r.failures.push_back(golden::shown(data_dir) + ": the data folder holds no evidence manifest (" +
                         std::string(golden::kManifestFileName) +
                         "): nothing says its files are complete, unchanged or recorded on hardware; after a real "
                         "recording, `w8a16check manifest --write` writes them (golden/README.md)");
  r.failures.insert(r.failures.end(), t.problems.begin(), t.problems.end());
  for (const std::string& s : t.simulated) r.simulated.push_back(canonical_of(s).string());
  for (const std::string& s : t.failed) r.failed.push_back(canonical_of(s).string());
  r.folders = t.folders;
  r.manifests = t.manifests;
  r.files = t.files;
  return r;
}

std::vector<std::string> without_failed(const std::vector<std::string>& paths, const std::string& ext,
                                        const EvidenceReport& r) {
  std::vector<std::string> files, kept;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> errors;
      const std::vector<std::string> found = files_under(p, ext, &errors);
      if (!errors.empty()) return paths;  // the reader names them
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  for (const std::string& f : files)
    if (std::find(r.failed.begin(), r.failed.end(), canonical_of(f).string()) == r.failed.end()) kept.push_back(f);
  return kept.size() == files.size() ? paths : kept;
}

}  // namespace w8a16::props
