// SPDX-License-Identifier: MIT OR Apache-2.0
// Operand bundles and run-operands outputs (operands.hpp): what the writers write reads back bit for
// bit, and every rule of the format is refused with its message, the output left unchanged.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "w8a16/golden/files.hpp"
#include "w8a16/golden/operands.hpp"

namespace {
using namespace w8a16::golden;

BundleSource patched_source() {
  BundleSource s;
  s.entry = "gemm_pipelined_m32_strided";
  s.m = 3;
  s.n = 130;
  s.k = 256;
  s.a_row_stride = 260;
  s.c_row_stride = 131;
  s.launches = 2;
  s.patches_per_row = 2;
  s.base.resize(s.a_row_stride);
  for (std::size_t i = 0; i < s.base.size(); ++i) s.base[i] = static_cast<std::uint16_t>(0x3F80 + i);
  for (std::uint32_t r = 0; r < s.launches * s.m; ++r) {
    s.patch_cols.push_back(r);
    s.patch_bits.push_back(static_cast<std::uint16_t>(0x8000 | r));
    s.patch_cols.push_back(259 - r);  // inside the pitch padding: a row's whole pitch is data
    s.patch_bits.push_back(0x7FC0);
  }
  s.w.resize(std::size_t{s.n} * s.k);
  for (std::size_t i = 0; i < s.w.size(); ++i) s.w[i] = static_cast<std::uint8_t>(i * 37);
  s.s.assign(2 * 2, 0.0f);
  for (std::size_t i = 0; i < s.s.size(); ++i) s.s[i] = 0.5f + static_cast<float>(i);
  return s;
}

std::string bytes_of(const BundleSource& s) {
  std::string b, error;
  EXPECT_TRUE(format_bundle(s, &b, &error)) << error;
  return b;
}
void put(std::string* b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<char>(v >> (8 * i));
}
std::string refused(const std::string& b) {
  OperandBundle out;
  out.header.launches = 12345;  // a marker: a refusal leaves *out as it was
  std::string error;
  EXPECT_FALSE(parse_bundle(b, &out, &error));
  EXPECT_EQ(out.header.launches, 12345u);
  return error;
}

TEST(OperandBundle, PatchedRoundTripExpandsEveryRow) {
  const BundleSource s = patched_source();
  const std::string b = bytes_of(s);
  // 80 header + 2 * 260 base + 8 * 6 * 2 patches + 130 * 256 W + 4 * 4 S.
  EXPECT_EQ(b.size(), 80u + 520u + 96u + 33280u + 16u);
  EXPECT_EQ(b.substr(0, 8), "W8A16OPB");
  OperandBundle got;
  std::string error;
  ASSERT_TRUE(parse_bundle(b, &got, &error)) << error;
  EXPECT_EQ(got.header.entry, "gemm_pipelined_m32_strided");
  EXPECT_EQ(got.header.shape.entry, EntryPoint::gemm_pipelined_m32_strided);
  EXPECT_EQ(got.header.launches, 2u);
  EXPECT_EQ(got.header.encoding, 1u);
  ASSERT_EQ(got.a.size(), 6u * 260u);
  for (std::uint32_t r = 0; r < 6; ++r)
    for (std::uint32_t i = 0; i < 260; ++i) {
      std::uint16_t want = s.base[i];
      if (i == r) want = static_cast<std::uint16_t>(0x8000 | r);
      if (i == 259 - r) want = 0x7FC0;
      ASSERT_EQ(got.a[r * 260 + i], want) << "row " << r << " column " << i;
    }
  EXPECT_EQ(got.w, s.w);
  ASSERT_EQ(got.s.size(), s.s.size());
  EXPECT_EQ(std::memcmp(got.s.data(), s.s.data(), 4 * s.s.size()), 0);
}

TEST(OperandBundle, AnEntryNameMayFillItsField) {
  BundleSource s = patched_source();
  s.entry = "w8a16_gemm_pipelined_m64_strided";  // 32 bytes, no NUL after it
  ASSERT_EQ(s.entry.size(), 32u);
  OperandBundle got;
  std::string error;
  ASSERT_TRUE(parse_bundle(bytes_of(s), &got, &error)) << error;
  EXPECT_EQ(got.header.entry, "gemm_pipelined_m64_strided");
}

TEST(OperandBundle, DenseRoundTripAndPrefixedEntry) {
  BundleSource s = patched_source();
  s.entry = "w8a16_gemm_pipelined_m32";  // contiguous: pitches are k and n
  s.m = 4;
  s.launches = 1;
  s.a_row_stride = s.k;
  s.c_row_stride = s.n;
  s.patches_per_row = 0;
  s.a_dense.resize(std::size_t{s.m} * s.k);
  for (std::size_t i = 0; i < s.a_dense.size(); ++i) s.a_dense[i] = static_cast<std::uint16_t>(i * 7919);
  OperandBundle got;
  std::string error;
  ASSERT_TRUE(parse_bundle(bytes_of(s), &got, &error)) << error;
  EXPECT_EQ(got.header.entry, "gemm_pipelined_m32");
  EXPECT_EQ(got.header.encoding, 0u);
  EXPECT_EQ(got.a, s.a_dense);
}

TEST(OperandBundle, EveryHeaderRuleIsRefusedWithItsMessage) {
  const std::string good = bytes_of(patched_source());
  struct Bad {
    std::size_t at;
    std::uint32_t value;
    const char* message;
  };
  const Bad cases[] = {
      {8, 2, "version 2: only version 1 is read"},
      {44, 0, "m, n and k must be at least 1"},
      {56, 255, "a_row_stride < k"},
      {60, 129, "c_row_stride < n"},
      {64, 0, "launches must be at least 1"},
      {68, 2, "a_encoding 2: must be 0 (dense) or 1 (patched)"},
      {72, 65, "patches_per_row must be 1..64 for patched A"},
      {76, 1, "reserved header field at byte 76 must be 0"},
      {52, 200, "k=200: must be a multiple of 128 (one scale per 128-K block)"},
      {64, 0x80000000u, "launches * m larger than 2^31 rows"},
  };
  for (const Bad& c : cases) {
    std::string b = good;
    put(&b, c.at, c.value);
    const std::string error = refused(b);
    EXPECT_EQ(error, c.message) << "byte " << c.at;
  }
  std::string dense_with_patches = good;
  put(&dense_with_patches, 68, 0);
  EXPECT_EQ(refused(dense_with_patches), "patches_per_row must be 0 for dense A");
}

TEST(OperandBundle, MagicEntrySizeAndPatchRefusals) {
  const std::string good = bytes_of(patched_source());
  EXPECT_EQ(refused(good.substr(0, 79)), "shorter than the 80-byte header (79 bytes)");
  std::string b = good;
  b[7] = 'C';
  EXPECT_EQ(refused(b), "not an operand bundle (magic is not W8A16OPB)");
  b = good;
  const std::string unknown = std::string("no_such_entry") + std::string(19, '\0');  // the whole 32-byte field
  std::memcpy(&b[12], unknown.data(), 32);
  EXPECT_EQ(refused(b), "unknown entry point 'no_such_entry'");
  b = good;
  b[12] = '\n';
  EXPECT_EQ(refused(b), "entry name holds a byte that is not printable ASCII");
  b = good;
  b[43] = 'x';
  EXPECT_EQ(refused(b), "entry name is not NUL-padded");
  b = good;
  std::memcpy(&b[12], "gemm_pipelined_m32\0\0\0\0\0\0\0\0", 26);
  EXPECT_EQ(refused(b), "gemm_pipelined_m32 is contiguous: a_row_stride must be k and c_row_stride must be n");
  EXPECT_EQ(refused(good + '\0'), "size " + std::to_string(good.size() + 1) + " bytes, the header implies " +
                                      std::to_string(good.size()) + " (truncated, or trailing bytes)");
  EXPECT_EQ(refused(good.substr(0, good.size() - 1)), "size " + std::to_string(good.size() - 1) +
                                                          " bytes, the header implies " + std::to_string(good.size()) +
                                                          " (truncated, or trailing bytes)");
  // The first patch of row 1 (after the base row and row 0's two patches): a column outside the row,
  // then non-zero padding.
  const std::size_t patch = 80 + 520 + 2 * 8;
  b = good;
  put(&b, patch, 260);
  EXPECT_EQ(refused(b), "row 1 patch 0: column 260 is outside the row, or its padding is not 0");
  b = good;
  b[patch + 7] = 1;
  EXPECT_EQ(refused(b), "row 1 patch 0: column 1 is outside the row, or its padding is not 0");
}

TEST(OperandBundle, TheWriterRefusesWhatTheReaderWould) {
  std::string bytes = "unchanged", error;
  BundleSource s = patched_source();
  s.w.pop_back();
  EXPECT_FALSE(format_bundle(s, &bytes, &error));
  EXPECT_EQ(error, "W holds 33279 bytes, n * k is 33280");
  s = patched_source();
  s.patch_cols[3] = 260;
  EXPECT_FALSE(format_bundle(s, &bytes, &error));
  EXPECT_EQ(error,
            "the bundle would be refused: row 1 patch 1: column 260 is outside the row, or its padding is not 0");
  s = patched_source();
  s.entry = "gemm_pipelined_m32_strided_and_then_some_more";
  EXPECT_FALSE(format_bundle(s, &bytes, &error));
  EXPECT_NE(error.find("is longer than its 32-byte field"), std::string::npos) << error;
  s = patched_source();
  s.k = 200;
  EXPECT_FALSE(format_bundle(s, &bytes, &error));
  EXPECT_EQ(bytes, "unchanged");
}

OperandOutput sample_output() {
  OperandOutput o;
  o.entry = "gemv_batch16_strided";
  o.kernel = "w8a16_gemv_batch16_kernel";
  o.body = "gemv_rows";
  o.contract = 1;
  o.m = 2;
  o.n = 3;
  o.c_row_stride = 5;
  o.launches = 3;
  o.backend = "sim";
  o.c.resize(3 * 2 * 5);
  for (std::size_t i = 0; i < o.c.size(); ++i) o.c[i] = static_cast<std::uint16_t>(0xFFFF - 3 * i);
  return o;
}

TEST(OperandOutputFile, RoundTripThroughAFile) {
  const OperandOutput o = sample_output();
  const std::string path = (std::filesystem::temp_directory_path() / "w8a16_operands_test.out").string();
  std::string error;
  ASSERT_TRUE(write_operand_output_file(path, o, &error)) << error;
  OperandOutput got;
  ASSERT_TRUE(read_operand_output_file(path, &got, &error)) << error;
  std::filesystem::remove(path);
  EXPECT_EQ(got.entry, o.entry);
  EXPECT_EQ(got.kernel, o.kernel);
  EXPECT_EQ(got.body, o.body);
  EXPECT_EQ(got.contract, 1u);
  EXPECT_EQ(got.m, 2u);
  EXPECT_EQ(got.n, 3u);
  EXPECT_EQ(got.c_row_stride, 5u);
  EXPECT_EQ(got.launches, 3u);
  EXPECT_EQ(got.backend, "sim");
  EXPECT_EQ(got.c, o.c);
}

TEST(OperandOutputFile, RefusalsLeaveTheOutputUnchanged) {
  std::string good, error;
  ASSERT_TRUE(format_operand_output(sample_output(), &good, &error)) << error;
  EXPECT_EQ(good.size(), 160u + 2 * 30u);
  auto refused_output = [](const std::string& b) {
    OperandOutput out;
    out.m = 777;
    std::string why;
    EXPECT_FALSE(parse_operand_output(b, &out, &why));
    EXPECT_EQ(out.m, 777u);
    return why;
  };
  EXPECT_EQ(refused_output(good.substr(0, 100)), "shorter than the 160-byte header (100 bytes)");
  std::string b = good;
  b[7] = 'B';
  EXPECT_EQ(refused_output(b), "not a run-operands output (magic is not W8A16OPC)");
  b = good;
  put(&b, 8, 3);
  EXPECT_EQ(refused_output(b), "version 3: only version 1 is read");
  b = good;
  put(&b, 124, 2);
  EXPECT_EQ(refused_output(b), "contract 2: must be 0 (canonical) or 1 (gemv)");
  b = good;
  b[159] = 'x';
  EXPECT_EQ(refused_output(b), "backend name is not NUL-padded");
  b = good;
  b[44] = '\x01';
  EXPECT_EQ(refused_output(b), "kernel name holds a byte that is not printable ASCII");
  b = good;
  put(&b, 136, 2);
  EXPECT_EQ(refused_output(b), "c_row_stride < n");
  EXPECT_EQ(refused_output(good + "xx"), "size 222 bytes, the header implies 220 (truncated, or trailing bytes)");
  // An empty C (no launch, no row): the header alone, which run-operands never writes.
  for (std::size_t field : {std::size_t{128}, std::size_t{132}, std::size_t{140}}) {
    b = good.substr(0, 160);
    put(&b, field, 0);
    EXPECT_EQ(refused_output(b), "m, n and launches must be at least 1") << field;
  }
  OperandOutput o = sample_output();
  o.c.pop_back();
  std::string bytes = "unchanged";
  EXPECT_FALSE(format_operand_output(o, &bytes, &error));
  EXPECT_EQ(error, "C holds 29 elements, launches * m * c_row_stride is 30");
  EXPECT_EQ(bytes, "unchanged");
}

}  // namespace
