// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check vectors FILE...`: replays recorded MMAs (.mmav) against the emulator's policy.
#include <cinttypes>
#include <cstdio>

#include "command.hpp"
#include "options.hpp"
#include "w8a16/properties/mmav_replay.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/reference/mma.hpp"

namespace w8a16::cli {
namespace cmd_vectors {

void add_vectors(CLI::App& app, int* exit_code) {
  // Exit status: 0 every file read and matched; 1 some dot product mismatched; 2 some file could
  // not be read or held nothing to check (takes precedence over 1).
  auto* cmd = app.add_subcommand("vectors",
                                 "Replay recorded tensor-core MMAs (.mmav) against the emulator "
                                 "(exit 0: all match, 1: mismatches, 2: unreadable or empty file)");
  auto files = std::make_shared<std::vector<std::string>>();
  auto arch_name = std::make_shared<std::string>("sm90");
  auto show = std::make_shared<int>(3);
  cmd->add_option("FILE", *files, ".mmav files (format: golden/mma/README.md)")->required();
  cmd->add_option("--arch", *arch_name, "emulator policy: sm90 (verified) or sm80 (unverified)")->capture_default_str();
  cmd->add_option("--show", *show, "mismatches printed in full per file")
      ->transform(whole_number(0, 1000000))
      ->capture_default_str();
  cmd->callback([=] {
    ref::Arch arch;
    if (!ref::parse_arch(*arch_name, &arch)) {
      std::fprintf(stderr, "vectors: unknown --arch %s (sm90, sm80)\n", golden::quote(*arch_name).c_str());
      *exit_code = 2;
      return;
    }
    const ref::MmaPolicy& policy = ref::mma_policy(arch);
    if (!policy.verified)
      std::printf("note: policy %s is UNVERIFIED (%s)\n", std::string(policy.name).c_str(),
                  std::string(policy.evidence).c_str());
    int status = 0;
    for (const std::string& path : *files) {
      golden::MmavFile file;
      std::string error;
      if (!golden::read_mmav_file(path, &file, &error)) {
        const bool folder = golden::path_kind(path) == "a folder";
        std::fprintf(stderr, "%s: error: %s%s\n", golden::shown(path).c_str(), error.c_str(),
                     folder ? " (vectors reads .mmav files: name them, e.g. DIR/*.mmav)" : "");
        status = 2;
        continue;
      }
      if (file.cases.empty()) {
        // A file that checks nothing must not read as a pass.
        std::fprintf(stderr, "%s: error: the file holds no cases: nothing was checked\n", golden::shown(path).c_str());
        status = 2;
        continue;
      }
      const props::MmavReplay r = props::replay_mmav(file, policy, *show);
      std::printf("%s: %" PRIu64 " mismatches of %" PRIu64 " dot products\n", golden::shown(path).c_str(), r.mismatches,
                  r.dot_products);
      for (const std::string& line : r.details) std::printf("  %s\n", line.c_str());
      if (r.mismatches != 0 && status == 0) status = 1;
    }
    *exit_code = status;
  });
}

W8A16_COMMAND(70, add_vectors);

}  // namespace cmd_vectors
}  // namespace w8a16::cli
