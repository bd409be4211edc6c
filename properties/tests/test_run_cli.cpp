// SPDX-License-Identifier: MIT OR Apache-2.0
// How a run reports what it did, as processes on the simulation: a shard says it is one and judges
// no coverage, whatever asked for it (--shard or GoogleTest's variables).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

namespace {
namespace fs = std::filesystem;
using w8a16::cli_test::CliRun;

const fs::path kGolden = fs::path(W8A16_SOURCE_DIR) / "golden";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("w8a16_run_cli_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// verify --quick on the simulation over one entry point, the recorded MMAs of one file, no recordings.
std::string quick_args(const fs::path& dir) {
  return "verify --backend sim --quick --cases 20 --no-save --no-recordings --entry gemv_batch4_strided --mma-dir '" +
         (kGolden / "mma" / "h200" / "h200_10_targeted.mmav").string() + "' --cases-from '" +
         (kGolden / "cases").string() + "' --json '" + (dir / "v.json").string() + "' --junit '" +
         (dir / "v.xml").string() + "'";
}

// The JUnit test case `verify.coverage` (its element, up to its end).
std::string coverage_testcase(const std::string& xml) {
  const std::size_t at = xml.find("classname=\"verify.coverage\"");
  if (at == std::string::npos) return "";
  return xml.substr(at, xml.find("</testcase>", at) - at);
}

void expect_a_shard_that_judges_no_coverage(const CliRun& r, const fs::path& dir, const std::string& shard,
                                            const std::string& from) {
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("shard " + shard + " (a shard, from " + from), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("coverage: not judged: shard " + shard), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gaps not judged"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verdict: PASS (shard " + shard + " only; coverage not judged)"), std::string::npos)
      << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "v.json"));
  EXPECT_FALSE(j["coverage"]["checked"].get<bool>()) << j["coverage"].dump();
  EXPECT_NE(j["coverage"]["why_not_checked"].get<std::string>().find("shard " + shard), std::string::npos);
  EXPECT_TRUE(j["shard"]["is_shard"].get<bool>());
  EXPECT_EQ(j["shard"]["from"].get<std::string>(), from);
  const std::string xml = slurp(dir / "v.xml");
  const std::string cov = coverage_testcase(xml);
  EXPECT_NE(cov.find("<skipped message=\"not judged: shard " + shard), std::string::npos) << cov;
  EXPECT_NE(xml.find("<property name=\"shard\" value=\"" + shard + "\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"shard.from\" value=\"" + from + "\"/>"), std::string::npos) << xml;
}

TEST(RunCli, AShardSaysItIsOneAndJudgesNoCoverage) {
  const fs::path dir = fresh_dir("shard");
  const CliRun r = w8a16::cli_test::run_cli(quick_args(dir) + " --shard 0/4");
  expect_a_shard_that_judges_no_coverage(r, dir, "0/4", "--shard");
}

TEST(RunCli, AShardInheritedFromGoogleTestsVariablesSaysSo) {
  const fs::path dir = fresh_dir("gtest_shard");
  const CliRun r = w8a16::cli_test::run_process("GTEST_TOTAL_SHARDS=300 GTEST_SHARD_INDEX=7 '" W8A16_CLI_PATH "' " +
                                                quick_args(dir));
  expect_a_shard_that_judges_no_coverage(r, dir, "7/300", "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS");
}

TEST(RunCli, TheWholeRunJudgesCoverage) {
  const fs::path dir = fresh_dir("whole");
  const CliRun r = w8a16::cli_test::run_process("env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX '" W8A16_CLI_PATH "' " +
                                                quick_args(dir));
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find(" 0 gaps"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "v.json"));
  EXPECT_TRUE(j["coverage"]["checked"].get<bool>());
  EXPECT_FALSE(j["shard"]["is_shard"].get<bool>());
  EXPECT_EQ(coverage_testcase(slurp(dir / "v.xml")).find("<skipped"), std::string::npos);
}

}  // namespace
