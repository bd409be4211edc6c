// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16check: the command-line entry point; subcommands register themselves (command.hpp). Every
// way out is one of the documented exit statuses (options.hpp, README "Exit status"): CLI11's own
// codes never leak, and an exception that escapes a command is a message and exit 2, not an abort.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "command.hpp"
#include "options.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/version.hpp"

namespace w8a16::cli {
std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

namespace {

// CLI11's messages repeat what was typed: each word that is not plain printable text, or is long,
// is shown quoted, escaped and cut (golden/files.hpp quote()).
std::string safe_message(const std::string& text) {
  std::string out, word;
  auto flush = [&] {
    bool plain = word.size() <= 200;
    for (const char ch : word)
      plain = plain && static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7F;
    out += plain ? word : golden::quote(word);
    word.clear();
  };
  for (const char ch : text) {
    if (ch == ' ' || ch == '\n') {
      flush();
      out += ch;
    } else {
      word += ch;
    }
  }
  flush();
  return out;
}

bool is_subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return true;
  return false;
}

std::string subcommand_path(const CLI::App& app) {
  std::string s = "w8a16check";
  for (const CLI::App* sub : app.get_subcommands()) s += " " + sub->get_name();
  return s;
}

}  // namespace
}  // namespace w8a16::cli

// Exceptions of the run itself are caught around app.parse below; what runs before it (building the
// option tree, a few KB) can throw only bad_alloc, which then ends the process as it would anyway.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  using namespace w8a16::cli;
  start_run(argc, argv);
  CLI::App app{
      "w8a16check: verification harness for block-scaled W8A16 GEMM kernels\n"
      "(BF16 activations x FP8-E4M3 weights, FP32 scales per 128x128 block, BF16 output).\n"
      "Exit status, every subcommand: 0 pass; 1 a mismatch or a failed check; 2 a usage or input "
      "error (nothing was checked, or a report could not be written); 77 no GPU here for a command that needs one."};
  app.set_version_flag("--version", std::string("w8a16check ") + w8a16::kVersion + " (" + w8a16::kBuildInfo + ")");
  app.require_subcommand(1);
  int exit_code = kExitPass;
  std::stable_sort(command_registry().begin(), command_registry().end(),
                   [](const CommandEntry& x, const CommandEntry& y) { return x.rank < y.rank; });
  for (auto& command : command_registry()) command.add(app, &exit_code);
  refuse_empty_values(&app);

  // CLI11 says only "A subcommand is required" for a misspelt one.
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(app, argv[1])) {
    std::string names;
    for (const CLI::App* sub : static_cast<const CLI::App&>(app).get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    std::fprintf(stderr, "w8a16check: unknown subcommand %s (one of: %s)\nRun 'w8a16check --help' for the options.\n",
                 w8a16::golden::quote(argv[1]).c_str(), names.c_str());
    return kExitUsage;
  }
  std::string stopped;  // why the run ended before a command's verdict, for the ERROR reports
  // A launch of this process past its deadline (properties/launcher.hpp): the HANG is printed and
  // every report asked for is written, naming it, before the process exits with status 1.
  w8a16::props::set_hang_handler([](const w8a16::props::HangReport& h) {
    std::printf("%s\nverdict: FAIL (a launch hung; this process exits, as a hung kernel cannot be cancelled in it)\n",
                h.text.c_str());
    std::fflush(stdout);
    note_error(h.text);
    settle_reports(kExitFail, h.text);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string message = safe_message(e.what());
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", subcommand_path(app).c_str(), message.c_str(),
                 subcommand_path(app).c_str());
    exit_code = kExitUsage;
    stopped = "the command line was refused: " + message;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "%s: out of memory: the work asked for more memory than this machine gives it "
                 "(lower --max-bytes, or run fewer or smaller cases)\n",
                 subcommand_path(app).c_str());
    exit_code = kExitUsage;
    stopped = "out of memory";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", subcommand_path(app).c_str(), safe_message(e.what()).c_str());
    exit_code = kExitUsage;
    stopped = std::string("error: ") + e.what();
  } catch (...) {
    std::fprintf(stderr, "%s: error: an unknown exception\n", subcommand_path(app).c_str());
    exit_code = kExitUsage;
    stopped = "an unknown exception";
  }
  if (exit_code != kExitPass && exit_code != kExitFail && exit_code != kExitUsage && exit_code != kExitNoGpu) {
    std::fprintf(stderr, "%s: internal error: exit status %d is not one of 0, 1, 2, 77\n", subcommand_path(app).c_str(),
                 exit_code);
    exit_code = kExitUsage;
  }
  if (!settle_reports(exit_code, stopped)) exit_code = kExitUsage;
  // What was printed is part of the result: a stdout that cannot take it (a full disk) is an error.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: cannot write to standard output: %s\n", subcommand_path(app).c_str(),
                 std::strerror(errno));
    exit_code = kExitUsage;
  }
  return exit_code;
}
