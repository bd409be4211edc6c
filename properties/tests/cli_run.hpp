// SPDX-License-Identifier: MIT OR Apache-2.0
// A command as a process, for the tests that drive the CLI (run_cli: W8A16_CLI_PATH, the binary, set
// by CMake) or another tool (run_process), and what those tests share around it: a fresh folder of
// their own, a file's bytes, a substring test.
#pragma once
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
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

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// An empty folder under the test's temporary folder, named prefix + name (each suite its prefix,
// so that suites running at once never share one).
inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / (prefix + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

#ifdef W8A16_CLI_PATH
inline CliRun run_cli(const std::string& args) { return run_process(std::string("'") + W8A16_CLI_PATH + "' " + args); }
#endif

}  // namespace w8a16::cli_test
