// SPDX-License-Identifier: MIT OR Apache-2.0
// The saved cases (golden/cases/, golden/regressions/) parse, and each still replays bit for bit on
// the simulation backend against the emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace {

namespace fs = std::filesystem;
namespace golden = w8a16::golden;
namespace props = w8a16::props;

std::vector<std::string> case_files() {
  std::vector<std::string> files;
  for (const char* dir : {W8A16_SOURCE_DIR "/golden/cases", W8A16_SOURCE_DIR "/golden/regressions"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_regular_file() && e.path().extension() == ".case") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SavedCases, EverySavedCaseParsesAndReplaysBitForBitOnTheSimulation) {
  const std::vector<std::string> files = case_files();
  if (files.empty()) GTEST_SKIP() << "no .case file under golden/cases or golden/regressions";
  std::size_t replayed = 0;
  for (const std::string& f : files) {
    std::vector<golden::Case> cases;
    std::string error;
    ASSERT_TRUE(golden::read_case_file(f, &cases, &error)) << error;
    for (const golden::Case& c : cases) {
      golden::CaseInputs in;
      ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << f << ": " << error;
      w8a16::device::SimBackend sim;
      const props::Launched got = props::launch_case(sim, c, in);
      ASSERT_TRUE(got.status.ok()) << f << ": " << golden::format_case(c) << ": " << got.status.message;
      const props::Comparison cmp = props::compare_output(c, props::expected_output(c, in), got.c_bits);
      EXPECT_TRUE(cmp.equal()) << f << ": " << golden::format_case(c) << ": " << cmp.mismatches << " mismatches, first "
                               << (cmp.details.empty() ? "" : cmp.details.front());
      ++replayed;
    }
  }
  std::printf("replayed %zu saved cases from %zu files\n", replayed, files.size());
}

}  // namespace
