// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check manifest`: its arguments and the manifests written or checked.
// The CLI (cli/cmd_manifest.cpp) only fills the arguments.
#pragma once
#include <string>
#include <vector>

namespace w8a16::cli {
namespace cmd_manifest {

struct ManifestArgs {
  std::vector<std::string> write, check;
  std::string source, from;
};

int run_manifest(const ManifestArgs& a);

}  // namespace cmd_manifest
}  // namespace w8a16::cli
