// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check vectors` run as a process on crafted files: malformed input gives a clear message
// and exit status 2 (never a crash); a recorded file replays with 0 mismatches; a corrupted
// device result is reported as a mismatch with exit status 1.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "w8a16/golden/mmav.hpp"

namespace {

using w8a16::cli_test::CliRun;

CliRun run_vectors(const std::string& args) { return w8a16::cli_test::run_cli("vectors " + args); }

std::string write_file(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const std::string path = ::testing::TempDir() + "w8a16_cli_" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<std::uint8_t> one_case_bytes() {
  w8a16::golden::MmavFile f;
  f.cases.resize(1);
  f.cases[0].a.fill(0x3F80);
  f.cases[0].bt.fill(0x3F80);
  f.cases[0].c.fill(0);
  f.cases[0].d.fill(0x41800000u);  // 16 products of 1 * 1
  return w8a16::golden::serialize_mmav(f);
}

void expect_clear_error(const CliRun& r, const std::string& phrase) {
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(phrase), std::string::npos) << r.output;
}

TEST(VectorsCli, BadMagicExitsWithTwoAndSaysWhy) {
  auto bytes = one_case_bytes();
  bytes[0] = 'X';
  expect_clear_error(run_vectors(write_file("bad_magic.mmav", bytes)), "bad magic");
}

TEST(VectorsCli, TruncatedFilesExitWithTwoAndSayWhy) {
  const auto bytes = one_case_bytes();
  expect_clear_error(run_vectors(write_file("trunc_header.mmav", {bytes.begin(), bytes.begin() + 10})),
                     "truncated header");
  expect_clear_error(run_vectors(write_file("trunc_case.mmav", {bytes.begin(), bytes.end() - 100})), "size mismatch");
}

TEST(VectorsCli, UnknownKindExitsWithTwoAndSaysWhy) {
  auto bytes = one_case_bytes();
  bytes[12] = 9;
  expect_clear_error(run_vectors(write_file("bad_kind.mmav", bytes)), "unknown kind 9");
}

TEST(VectorsCli, CountMismatchExitsWithTwoAndSaysWhy) {
  auto bytes = one_case_bytes();
  bytes[8] = 5;
  expect_clear_error(run_vectors(write_file("bad_count.mmav", bytes)), "size mismatch");
}

TEST(VectorsCli, AFileWithNoCasesIsNotCountedAsAPass) {
  expect_clear_error(run_vectors(write_file("empty.mmav", w8a16::golden::serialize_mmav({}))), "no cases");
}

TEST(VectorsCli, AMissingFileExitsWithTwo) {
  expect_clear_error(run_vectors("/nonexistent/none.mmav"), "no such file");
}

TEST(VectorsCli, OneBadFileAmongGoodOnesStillFailsTheRun) {
  auto bad = one_case_bytes();
  bad[0] = 'X';
  const CliRun r = run_vectors(write_file("good.mmav", one_case_bytes()) + " " + write_file("bad.mmav", bad));
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("0 mismatches of 128 dot products"), std::string::npos) << r.output;
}

TEST(VectorsCli, ACraftedCorrectFilePassesAndAFlippedBitIsAMismatch) {
  const CliRun good = run_vectors(write_file("ones.mmav", one_case_bytes()));
  EXPECT_EQ(good.exit_status, 0) << good.output;
  EXPECT_NE(good.output.find("0 mismatches of 128 dot products"), std::string::npos) << good.output;
  auto bytes = one_case_bytes();
  bytes[16 + 1280 + 4 * 37] ^= 1;  // D[4][5] off by one ulp
  const CliRun bad = run_vectors(write_file("ones_flipped.mmav", bytes));
  EXPECT_EQ(bad.exit_status, 1) << bad.output;
  EXPECT_NE(bad.output.find("1 mismatches of 128 dot products"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("case 0 m=4 n=5"), std::string::npos) << bad.output;
}

TEST(VectorsCli, UnknownArchExitsWithTwo) {
  const CliRun r = run_vectors("--arch sm99 " + write_file("ones_arch.mmav", one_case_bytes()));
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown --arch"), std::string::npos) << r.output;
}

}  // namespace
