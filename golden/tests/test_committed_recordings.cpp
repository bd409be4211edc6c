// SPDX-License-Identifier: MIT OR Apache-2.0
// The committed hardware recordings (golden/recordings/*.rec) replay on the emulator bit for bit,
// judged by recording.hpp recorded_verdict, the rule `replay --recordings` and the Python audit
// apply. Skips, visibly, only while no recording has ever been committed; a committed recording
// missing from the tree fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/recording.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "cli_run.hpp"  // properties/tests: a command as a process

namespace {
namespace golden = w8a16::golden;
namespace fs = std::filesystem;

const std::string kDir = W8A16_SOURCE_DIR "/golden/recordings";

TEST(CommittedRecordings, EveryTrackedRecordingIsPresent) {
  // git knows which recordings were committed: each must still be in the tree.
  const w8a16::cli_test::CliRun git = w8a16::cli_test::run_process("git -C '" W8A16_SOURCE_DIR
                                                                   "' ls-files -- golden/recordings");
  if (git.exit_status != 0)
    GTEST_SKIP() << "git is not available here, so committed recordings cannot be listed: " << git.output;
  std::size_t start = 0;
  while (start < git.output.size()) {
    std::size_t eol = git.output.find('\n', start);
    if (eol == std::string::npos) eol = git.output.size();
    const std::string path = git.output.substr(start, eol - start);
    start = eol + 1;
    if (path.size() < 4 || path.substr(path.size() - 4) != ".rec") continue;
    EXPECT_TRUE(fs::exists(fs::path(W8A16_SOURCE_DIR) / path)) << path << " is committed but missing from the tree";
  }
}

TEST(CommittedRecordings, ReplayBitForBitOnTheEmulator) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kDir, ec))
    if (e.is_regular_file() && e.path().extension() == ".rec") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "no recordings committed (golden/recordings/*.rec): nothing to replay";
  for (const std::string& f : files) {
    golden::Recording rec;
    std::string error;
    ASSERT_TRUE(golden::read_recording_file(f, &rec, &error)) << error;
    EXPECT_FALSE(rec.outputs.empty()) << f << " holds no case";
    std::size_t agree = 0;
    for (const golden::RecordedOutput& o : rec.outputs) {
      const std::string line = golden::format_case(o.c);
      golden::CaseInputs in;
      ASSERT_TRUE(golden::regenerate_inputs(o.c, &in, &error)) << f << ": " << line << ": " << error;
      // The emulator's output, as replay --recordings computes it (case_runner.hpp).
      const std::vector<std::uint16_t> used = golden::used_outputs(o.c, w8a16::props::expected_output(o.c, in));
      const golden::RecordedVerdict v = golden::recorded_verdict(o, &used);
      EXPECT_TRUE(v.agrees()) << f << ": emulator vs recording: " << golden::recorded_verdict_text(o, &used, v)
                              << "\n  " << line;
      agree += v.agrees();
    }
    EXPECT_EQ(agree, rec.outputs.size()) << f;
  }
}

}  // namespace
