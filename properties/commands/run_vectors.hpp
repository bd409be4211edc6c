// SPDX-License-Identifier: MIT OR Apache-2.0
// The work of `w8a16check vectors`: its arguments and the replay of .mmav files against the
// emulator. The CLI (cli/cmd_vectors.cpp) only fills the arguments.
#pragma once
#include <string>
#include <vector>

namespace w8a16::cli {
namespace cmd_vectors {

struct VectorsArgs {
  std::vector<std::string> files;
  std::string arch_name = "sm90";
  int show = 3;
};
// Exit status: 0 every file read and matched; 1 some dot product mismatched; 2 some file could
// not be read or held nothing to check (takes precedence over 1).
int run_vectors(const VectorsArgs& a);

}  // namespace cmd_vectors
}  // namespace w8a16::cli
