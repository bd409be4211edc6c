// SPDX-License-Identifier: MIT OR Apache-2.0
// What verify may count as hardware evidence (golden/include/w8a16/golden/manifest.hpp): the data
// folder's evidence folders checked against their manifests, and the user's own files checked for
// what they say of themselves.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::props {

// The data folder's evidence folders, each with a manifest per folder (golden/README.md).
inline constexpr const char* kEvidenceFolders[] = {"mma", "recordings", "cases", "order"};

struct EvidenceReport {
  std::vector<std::string> failures;   // one line each, naming the file or folder
  std::vector<std::string> notes;      // paths taken as the user's own, and how they were checked
  std::vector<std::string> simulated;  // files made by the simulation (weakly canonical paths)
  std::vector<std::string> failed;     // files cut, changed, not listed or of unverified length (the same)
  std::uint64_t folders = 0, manifests = 0, files = 0;
  bool data_checked = false;  // some path read lies in the data folder's evidence folders
};

// `read`: every file or folder verify reads (recorded MMAs, recordings, saved cases). A path inside
// one of the data folder's kEvidenceFolders has that whole evidence folder checked, each of its
// folders needing a manifest, and a data folder with none at all is one more failure. Any other
// path (outside the data folder, or in its regressions/, examples/ or corpus/) is the user's own:
// a folder of it with a manifest is held to it, and every file is checked for what it says
// itself (made by the simulation; a version-1 recording that no manifest lists).
EvidenceReport check_evidence(const std::string& data_dir, const std::vector<std::string>& read);

// The files with extension `ext` under `paths` (folders expanded, sorted) less those the evidence
// check failed, when it failed any of them; otherwise `paths` as they are. So a cut or changed
// file is named once by the evidence check, not read a second time as evidence.
std::vector<std::string> without_failed(const std::vector<std::string>& paths, const std::string& ext,
                                        const EvidenceReport& r);

// Whether `path` (existing or not) lies in `folder` or is it, by weakly canonical paths.
bool path_inside(const std::string& path, const std::string& folder);

}  // namespace w8a16::props
