// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16check: the command-line entry point; subcommands register themselves (command.hpp).
#include <cstdio>

#include "command.hpp"
#include "w8a16/version.hpp"

namespace w8a16::cli {
std::vector<CommandRegistrar>& command_registry() {
  static std::vector<CommandRegistrar> registry;
  return registry;
}
}  // namespace w8a16::cli

int main(int argc, char** argv) {
  CLI::App app{"w8a16check: verification harness for block-scaled W8A16 GEMM kernels\n"
               "(BF16 activations x FP8-E4M3 weights, FP32 scales per 128x128 block, BF16 output)."};
  app.set_version_flag("--version", std::string("w8a16check ") + w8a16::kVersion + " (" + w8a16::kBuildInfo + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  for (auto& add : w8a16::cli::command_registry()) add(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
