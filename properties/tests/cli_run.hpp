// SPDX-License-Identifier: MIT OR Apache-2.0
// The CLI as a process, for the tests that drive it (W8A16_CLI_PATH: the binary, set by CMake).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace w8a16::cli_test {

struct CliRun {
  int exit_status = -1;  // -1: did not exit normally (a signal, a crash)
  std::string output;    // stdout and stderr together
};

inline CliRun run_cli(const std::string& args) {
  const std::string command = std::string("'") + W8A16_CLI_PATH + "' " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  return r;
}

}  // namespace w8a16::cli_test
