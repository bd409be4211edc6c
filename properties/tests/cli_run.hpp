// SPDX-License-Identifier: MIT OR Apache-2.0
// A command as a process, for the tests that drive the CLI (run_cli: W8A16_CLI_PATH, the binary, set
// by CMake) or another tool (run_process).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace w8a16::cli_test {

struct CliRun {
  int exit_status = -1;  // -1: did not exit normally (a signal, a crash)
  std::string output;    // stdout and stderr together
};

// `command` through the shell, its stderr folded into its stdout.
inline CliRun run_process(const std::string& command) {
  CliRun r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  return r;
}

#ifdef W8A16_CLI_PATH
inline CliRun run_cli(const std::string& args) { return run_process(std::string("'") + W8A16_CLI_PATH + "' " + args); }
#endif

}  // namespace w8a16::cli_test
