// SPDX-License-Identifier: MIT OR Apache-2.0
// The sm90 policy reproduces every MMA recorded on the H200 (golden/mma/h200-vectors/, golden/mma/README.md),
// bit for bit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "w8a16/golden/mmav.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

namespace fs = std::filesystem;
using w8a16::golden::MmavFile;

const char* const kRegimes[] = {"h200_0_uniform",        "h200_1_wide_exponents", "h200_2_cancellation",
                                "h200_3_w8a16_realistic", "h200_4_specials",       "h200_5_rounding",
                                "h200_6_exact_ties",     "h200_7_subnormal_outputs", "h200_8_signed_zeros",
                                "h200_9_near_overflow"};

class RecordedH200Vectors : public ::testing::TestWithParam<const char*> {};

TEST_P(RecordedH200Vectors, Sm90PolicyMatchesEveryDotProduct) {
  const fs::path path =
      fs::path(W8A16_SOURCE_DIR) / "golden" / "mma" / "h200-vectors" / (std::string(GetParam()) + ".mmav");
  MmavFile file;
  std::string error;
  ASSERT_TRUE(w8a16::golden::read_mmav_file(path.string(), &file, &error)) << path << ": " << error;
  ASSERT_EQ(file.cases.size(), 1024u) << path;
  std::size_t mismatches = 0, dots = 0;
  for (std::size_t i = 0; i < file.cases.size(); ++i) {
    const auto& c = file.cases[i];
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n, ++dots) {
        const std::uint32_t got = w8a16::ref::mma_k16_bits(w8a16::ref::Arch::sm90, c.c[m * 8 + n], &c.a[m * 16], &c.bt[n * 16]);
        if (got != c.d[m * 8 + n] && ++mismatches <= 5)
          ADD_FAILURE() << "case " << i << " m=" << m << " n=" << n << std::hex << " device=" << c.d[m * 8 + n]
                        << " emulator=" << got;
      }
  }
  EXPECT_EQ(dots, 131072u);
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllRegimes, RecordedH200Vectors, ::testing::ValuesIn(kRegimes));

}  // namespace

namespace {

// The project's own probe recordings (golden/mma/<gpu>/, `w8a16check probe`): every committed file
// of a GPU whose policy is verified replays with 0 mismatches. These cover corners the
// h200-vectors regimes do not (mma.hpp, kSm90MinAlignExp).
TEST(ProjectMmaRecordings, Sm90MatchesEveryCommittedH200File) {
  const fs::path root = fs::path(W8A16_SOURCE_DIR) / "golden" / "mma" / "h200";
  ASSERT_TRUE(fs::is_directory(root)) << root << " is missing: the H200 probe recordings are committed there";
  std::size_t files = 0, dots = 0, mismatches = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().extension() != ".mmav") continue;
    MmavFile file;
    std::string error;
    ASSERT_TRUE(w8a16::golden::read_mmav_file(entry.path().string(), &file, &error)) << entry.path() << ": " << error;
    ++files;
    for (const auto& c : file.cases)
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n, ++dots) {
          const std::uint32_t got =
              w8a16::ref::mma_k16_bits(w8a16::ref::Arch::sm90, c.c[m * 8 + n], &c.a[m * 16], &c.bt[n * 16]);
          if (got != c.d[m * 8 + n] && ++mismatches <= 5)
            ADD_FAILURE() << entry.path().filename() << std::hex << " device=" << c.d[m * 8 + n] << " emulator=" << got;
        }
  }
  EXPECT_EQ(files, 11u);
  EXPECT_GT(dots, 300000u);
  EXPECT_EQ(mismatches, 0u) << "of " << dots << " dot products";
}

}  // namespace
