// SPDX-License-Identifier: MIT OR Apache-2.0
// The .mmav parser (golden/mma/README.md): round trips, and every malformed input is a clear
// error value, never a crash or a huge allocation.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/golden/mmav.hpp"

namespace {

using w8a16::golden::MmavCase;
using w8a16::golden::MmavFile;
using w8a16::golden::parse_mmav;
using w8a16::golden::serialize_mmav;

MmavFile two_case_file() {
  MmavFile f;
  f.cases.resize(2);
  for (std::size_t i = 0; i < 2; ++i) {
    MmavCase& c = f.cases[i];
    for (std::size_t j = 0; j < c.a.size(); ++j) c.a[j] = static_cast<std::uint16_t>(0x3F80 + j + 1000 * i);
    for (std::size_t j = 0; j < c.bt.size(); ++j) c.bt[j] = static_cast<std::uint16_t>(0xC000 ^ (j * 7 + i));
    for (std::size_t j = 0; j < c.c.size(); ++j) c.c[j] = 0x01020304u * static_cast<std::uint32_t>(j + 1 + i);
    for (std::size_t j = 0; j < c.d.size(); ++j) c.d[j] = 0xA0B0C0D0u ^ static_cast<std::uint32_t>(j << 8 | i);
  }
  return f;
}

void put_u32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::string parse_error(const std::vector<std::uint8_t>& bytes) {
  MmavFile out;
  std::string error;
  EXPECT_FALSE(parse_mmav(bytes.data(), bytes.size(), &out, &error));
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(MmavParser, SerializeThenParseGivesBackEveryField) {
  const MmavFile f = two_case_file();
  const std::vector<std::uint8_t> bytes = serialize_mmav(f);
  ASSERT_EQ(bytes.size(), 16u + 2 * 1792u);
  MmavFile back;
  std::string error;
  ASSERT_TRUE(parse_mmav(bytes.data(), bytes.size(), &back, &error)) << error;
  ASSERT_EQ(back.cases.size(), 2u);
  EXPECT_EQ(back.kind, 1u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.cases[i].a, f.cases[i].a);
    EXPECT_EQ(back.cases[i].bt, f.cases[i].bt);
    EXPECT_EQ(back.cases[i].c, f.cases[i].c);
    EXPECT_EQ(back.cases[i].d, f.cases[i].d);
  }
}

TEST(MmavParser, FieldsSitAtTheDocumentedLittleEndianOffsets) {
  const std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "MMAV0001");
  EXPECT_EQ(bytes[8], 2u);   // count, little-endian
  EXPECT_EQ(bytes[12], 1u);  // kind
  const std::size_t case1 = 16 + 1792;
  EXPECT_EQ(bytes[case1 + 0] | bytes[case1 + 1] << 8, 0x3F80 + 1000);               // A[0][0]
  EXPECT_EQ(bytes[case1 + 512] | bytes[case1 + 513] << 8, 0xC000 ^ 1);              // Bt[0][0]
  EXPECT_EQ(bytes[case1 + 768], 0x04u * 2);                                         // C[0][0] low byte
  EXPECT_EQ(bytes[case1 + 1280 + 4 * 3 + 1], static_cast<std::uint8_t>(0xC0 ^ 3));  // D[0][3] byte 1
}

TEST(MmavParser, AFileWithZeroCasesParsesAsEmpty) {
  MmavFile empty;
  const std::vector<std::uint8_t> bytes = serialize_mmav(empty);
  MmavFile out;
  std::string error;
  ASSERT_TRUE(parse_mmav(bytes.data(), bytes.size(), &out, &error)) << error;
  EXPECT_TRUE(out.cases.empty());
}

TEST(MmavParser, BadMagicIsRejectedByName) {
  std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  bytes[7] = '2';
  EXPECT_NE(parse_error(bytes).find("magic"), std::string::npos);
}

TEST(MmavParser, UnknownKindIsRejectedWithItsNumber) {
  std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  put_u32(bytes, 12, 7);
  const std::string e = parse_error(bytes);
  EXPECT_NE(e.find("kind"), std::string::npos) << e;
  EXPECT_NE(e.find('7'), std::string::npos) << e;
}

TEST(MmavParser, CountDisagreeingWithTheSizeIsRejectedEitherWay) {
  std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  put_u32(bytes, 8, 3);
  EXPECT_NE(parse_error(bytes).find("size mismatch"), std::string::npos);
  put_u32(bytes, 8, 1);
  EXPECT_NE(parse_error(bytes).find("size mismatch"), std::string::npos);
  put_u32(bytes, 8, 0xFFFFFFFFu);  // must not try to allocate 4 G cases
  EXPECT_NE(parse_error(bytes).find("size mismatch"), std::string::npos);
}

TEST(MmavParser, EveryTruncationIsAnErrorNeverACrash) {
  const std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    MmavFile out;
    std::string error;
    EXPECT_FALSE(parse_mmav(bytes.data(), size, &out, &error)) << size;
    EXPECT_FALSE(error.empty()) << size;
  }
  // A prefix holding exactly one whole case still carries count = 2 in its header.
  EXPECT_NE(parse_error({bytes.begin(), bytes.begin() + 16 + 1792}).find("size mismatch"), std::string::npos);
  EXPECT_NE(parse_error({bytes.begin(), bytes.begin() + 5}).find("truncated header"), std::string::npos);
}

TEST(MmavParser, TrailingBytesAfterTheLastCaseAreRejected) {
  std::vector<std::uint8_t> bytes = serialize_mmav(two_case_file());
  bytes.push_back(0);
  EXPECT_NE(parse_error(bytes).find("size mismatch"), std::string::npos);
}

TEST(MmavParser, AMissingFileIsAnErrorThatSaysSo) {
  MmavFile out;
  std::string error;
  EXPECT_FALSE(w8a16::golden::read_mmav_file("/nonexistent/dir/none.mmav", &out, &error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

}  // namespace
