// SPDX-License-Identifier: MIT OR Apache-2.0
// Subcommand registration for the w8a16check CLI: each command lives in its own file and
// registers itself with W8A16_COMMAND, so adding one touches only its file and the CMake list.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace w8a16::cli {

// Adds a subcommand to `app`. The command's callback stores its exit status in *exit_code.
using CommandRegistrar = std::function<void(CLI::App& app, int* exit_code)>;

std::vector<CommandRegistrar>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(CommandRegistrar r) { command_registry().push_back(std::move(r)); }
};

}  // namespace w8a16::cli

#define W8A16_CLI_CONCAT2(a, b) a##b
#define W8A16_CLI_CONCAT(a, b) W8A16_CLI_CONCAT2(a, b)
#define W8A16_COMMAND(fn) \
  static const ::w8a16::cli::RegisterCommand W8A16_CLI_CONCAT(w8a16_command_, __LINE__){fn}
