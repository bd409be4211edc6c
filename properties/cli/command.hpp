// SPDX-License-Identifier: MIT OR Apache-2.0
// Subcommand registration for the w8a16check CLI: each command lives in its own file and
// registers itself with W8A16_COMMAND, so adding one touches only its file and the CMake list.
// Each command file keeps its helpers in a namespace named after the file (cmd_replay, ...), not an
// anonymous one: the CLI compiles as a unity build (properties/CMakeLists.txt), where several files
// share one translation unit and so one anonymous namespace.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace w8a16::cli {

// Adds a subcommand to `app`. The command's callback stores its exit status in *exit_code.
using CommandRegistrar = std::function<void(CLI::App& app, int* exit_code)>;

// A command's place in --help: the order C++ runs the files' registrations in is not defined (it
// follows the link, and the unity build's batches), so each command names its own.
struct CommandEntry {
  int rank = 0;
  CommandRegistrar add;
};
std::vector<CommandEntry>& command_registry();

struct RegisterCommand {
  RegisterCommand(int rank, CommandRegistrar r) { command_registry().push_back({rank, std::move(r)}); }
};

}  // namespace w8a16::cli

#define W8A16_CLI_CONCAT2(a, b) a##b
#define W8A16_CLI_CONCAT(a, b) W8A16_CLI_CONCAT2(a, b)
#define W8A16_COMMAND(rank, fn) \
  static const ::w8a16::cli::RegisterCommand W8A16_CLI_CONCAT(w8a16_command_, __COUNTER__) { rank, fn }
