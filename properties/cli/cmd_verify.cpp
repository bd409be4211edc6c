// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check verify`: the default verification campaign and its verdict. It runs every check
// that exists on the best backend present; see README "The main job".
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"
#include "vectors_replay.hpp"
#include "w8a16/golden/mmav.hpp"

namespace w8a16::cli {
namespace {

namespace fs = std::filesystem;

// Recorded MMAs the campaign replays: the project's own (golden/mma/) and the specification's.
std::vector<fs::path> recorded_mma_files(const std::vector<std::string>& roots) {
  std::vector<fs::path> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".mmav") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void add_verify(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("verify", "Run the default verification campaign and print a verdict");
  auto roots = std::make_shared<std::vector<std::string>>(
      std::vector<std::string>{W8A16_SOURCE_DIR "/golden/mma", W8A16_SOURCE_DIR "/../shared/vectors"});
  cmd->add_option("--mma-dir", *roots, "folders of recorded .mmav files to replay")->capture_default_str();
  cmd->callback([=] {
    std::uint64_t dots = 0, bad = 0, errors = 0;
    const auto files = recorded_mma_files(*roots);
    for (const fs::path& f : files) {
      golden::MmavFile file;
      std::string error;
      if (!golden::read_mmav_file(f.string(), &file, &error)) {
        std::printf("  %s: error: %s\n", f.string().c_str(), error.c_str());
        ++errors;
        continue;
      }
      const VectorsReplay r = replay_mmav(file, ref::kMmaSm90, 3);
      std::printf("  %-60s %8llu dot products, %llu mismatches\n", f.filename().string().c_str(),
                  static_cast<unsigned long long>(r.dot_products), static_cast<unsigned long long>(r.mismatches));
      for (const std::string& line : r.details) std::printf("    %s\n", line.c_str());
      dots += r.dot_products;
      bad += r.mismatches;
    }
    std::printf("recorded MMAs (sm90 model vs hardware): %zu files, %llu dot products, %llu mismatches, %llu "
                "unreadable\n",
                files.size(), static_cast<unsigned long long>(dots), static_cast<unsigned long long>(bad),
                static_cast<unsigned long long>(errors));
    const bool ok = !files.empty() && bad == 0 && errors == 0;
    if (files.empty()) std::printf("no recorded MMA files found: nothing was checked\n");
    std::printf("verdict: %s\n", ok ? "PASS" : "FAIL");
    *exit_code = ok ? 0 : 1;
  });
}

W8A16_COMMAND(add_verify);

}  // namespace
}  // namespace w8a16::cli
