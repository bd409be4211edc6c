// SPDX-License-Identifier: MIT OR Apache-2.0
// Reading saved cases: every case line of the .case files under some paths (golden/README.md,
// the case format: golden/include/w8a16/golden/case.hpp), and the files of a folder by extension.
#pragma once
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"

namespace w8a16::props {

struct LoadedCases {
  std::vector<golden::Case> cases;
  std::vector<std::string> sources;  // "path:line" of each case
  std::vector<std::string> errors;   // "path:line: why" of each line that is not a case
};
// Every case line of every .case file under `paths` (files or folders, recursively, sorted).
// A missing path is not an error (verify checks its paths first); a path or folder entry that is not
// a regular file (a FIFO, a device), a folder that cannot be listed, a file that cannot be read and
// a bad line are, each reported in errors.
LoadedCases load_cases(const std::vector<std::string>& paths);

// The files named `*<extension>` under `root` (a folder, recursively; symbolic links to files are
// followed, to folders not), sorted. An entry with that extension that is not a regular file, and a
// folder that cannot be listed, is a "path: why" line in *errors.
std::vector<std::string> files_under(const std::string& root, const std::string& extension,
                                     std::vector<std::string>* errors);

// One argument of replay/repro: a case line itself (starts with "case/"), or FILE[:LINE].
LoadedCases load_case_argument(const std::string& arg);

}  // namespace w8a16::props
