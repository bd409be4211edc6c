// SPDX-License-Identifier: MIT OR Apache-2.0
// main() of the property binaries: GoogleTest plus a listener that saves a failed test's shrunk case.
#include <gtest/gtest.h>

#include <cstdio>

#include "w8a16/golden/case.hpp"
#include "w8a16/properties/regression.hpp"

namespace {

// A property that fails notes its cases (regression.hpp); the last note is RapidCheck's shrunk
// counterexample. On failure it is printed as one case line and appended to golden/regressions/;
// a passing test's notes (none, unless a property notes and then recovers) are dropped.
class SaveFailingCase final : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { w8a16::props::take_noted_failure(); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const auto noted = w8a16::props::take_noted_failure();
    if (!noted || !info.result()->Failed()) return;
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    std::string error;
    const std::string path = w8a16::props::save_regression(*noted, name, W8A16_SOURCE_DIR "/golden/regressions",
                                                           &error);
    std::printf(
        "failing case: %s\n  why: %s\n  %s\n  (RapidCheck prints RC_PARAMS=\"reproduce=...\" at exit to "
        "replay the shrink)\n",
        w8a16::golden::format_case(noted->c).c_str(), noted->why.c_str(),
        path.empty() ? ("NOT saved: " + error).c_str() : ("saved to " + path).c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new SaveFailingCase);
  return RUN_ALL_TESTS();
}
