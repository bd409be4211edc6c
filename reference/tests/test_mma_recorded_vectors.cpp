// SPDX-License-Identifier: MIT OR Apache-2.0
// The sm90 policy reproduces every MMA recorded on the H200 (golden/mma/h200-vectors/, golden/mma/README.md),
// bit for bit.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "w8a16/golden/mmav.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

namespace fs = std::filesystem;
using w8a16::golden::MmavFile;

const char* const kRegimes[] = {"h200_0_uniform",         "h200_1_wide_exponents",    "h200_2_cancellation",
                                "h200_3_w8a16_realistic", "h200_4_specials",          "h200_5_rounding",
                                "h200_6_exact_ties",      "h200_7_subnormal_outputs", "h200_8_signed_zeros",
                                "h200_9_near_overflow"};

class RecordedH200Vectors : public ::testing::TestWithParam<const char*> {};

TEST_P(RecordedH200Vectors, Sm90PolicyMatchesEveryDotProduct) {
  const fs::path path = fs::path(W8A16_SOURCE_DIR) / "golden" / "mma" / "h200-vectors" /
                        (std::string(GetParam()) + ".mmav");
  MmavFile file;
  std::string error;
  ASSERT_TRUE(w8a16::golden::read_mmav_file(path.string(), &file, &error)) << path << ": " << error;
  ASSERT_EQ(file.cases.size(), 1024u) << path;
  std::size_t mismatches = 0, dots = 0;
  for (std::size_t i = 0; i < file.cases.size(); ++i) {
    const auto& c = file.cases[i];
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n, ++dots) {
        const std::uint32_t got = w8a16::ref::mma_k16_bits(w8a16::ref::Arch::sm90, c.c[m * 8 + n], &c.a[m * 16],
                                                           &c.bt[n * 16]);
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
  // Per instruction form (the file's kind): files, dot products, mismatches.
  std::map<std::uint32_t, std::array<std::size_t, 3>> by_kind;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().extension() != ".mmav") continue;
    MmavFile file;
    std::string error;
    ASSERT_TRUE(w8a16::golden::read_mmav_file(entry.path().string(), &file, &error)) << entry.path() << ": " << error;
    auto& [files, dots, mismatches] = by_kind[file.kind];
    ++files;
    const bool scale_d0 = file.kind == w8a16::golden::kMmavKindWgmmaSsD0 ||
                          file.kind == w8a16::golden::kMmavKindWgmmaRsD0;
    for (const auto& c : file.cases)
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n, ++dots) {
          // scale-d = 0 reads no C: the file records C = +0, which is what the result must equal.
          if (scale_d0) EXPECT_EQ(c.c[m * 8 + n], 0u) << entry.path().filename();
          const std::uint32_t got = w8a16::ref::mma_k16_bits(w8a16::ref::Arch::sm90, c.c[m * 8 + n], &c.a[m * 16],
                                                             &c.bt[n * 16]);
          if (got != c.d[m * 8 + n] && ++mismatches <= 5)
            ADD_FAILURE() << entry.path().filename() << std::hex << " device=" << c.d[m * 8 + n] << " emulator=" << got;
        }
  }
  // mma.sync m16n8k16 and the four wgmma m64n8k16 forms (A from shared memory or registers, scale-d 1
  // or 0), each over the 10 regimes and the targeted cases: what lets the kernels use them
  // (NUMERICS.md 3).
  for (std::uint32_t kind :
       {w8a16::golden::kMmavKindM16n8k16Bf16, w8a16::golden::kMmavKindWgmmaSsD1, w8a16::golden::kMmavKindWgmmaRsD1,
        w8a16::golden::kMmavKindWgmmaSsD0, w8a16::golden::kMmavKindWgmmaRsD0}) {
    const auto& [files, dots, mismatches] = by_kind[kind];
    SCOPED_TRACE(w8a16::golden::mmav_kind_instruction(kind));
    EXPECT_EQ(files, 11u);
    EXPECT_GT(dots, kind == w8a16::golden::kMmavKindM16n8k16Bf16 ? 300000u : 150000u);
    EXPECT_EQ(mismatches, 0u) << "of " << dots << " dot products";
  }
  EXPECT_EQ(by_kind.size(), 5u) << "a recording of an instruction form this test does not know";
}

}  // namespace
