// SPDX-License-Identifier: MIT OR Apache-2.0
// main() of the hostile-input catalogue: GoogleTest, then the count of cases per class.
#include <gtest/gtest.h>

#include <cstdio>

#include "hostile_support.hpp"

namespace {

// Printed after the last test: the catalogue's size per class for this run (a filtered run, as
// CTest does one test per process, shows only its own classes).
class PrintCatalogue final : public ::testing::EmptyTestEventListener {
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    int total = 0;
    std::printf("[catalogue] summary, cases per class:\n");
    for (const auto& [cls, n] : w8a16::hostile::catalogue()) {
      std::printf("[catalogue]   %-34s %6d\n", cls.c_str(), n);
      total += n;
    }
    std::printf("[catalogue]   %-34s %6d\n", "total", total);
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new PrintCatalogue);
  return RUN_ALL_TESTS();
}
