// SPDX-License-Identifier: MIT OR Apache-2.0
// How a run reports what it did, as processes on the simulation: a shard says it is one and judges
// no coverage, whatever asked for it (--shard or GoogleTest's variables); every launch has one
// launch's deadline, in range, and the environment's is read only by commands that launch.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include <thread>

#include "cli_run.hpp"

namespace {
namespace fs = std::filesystem;
using w8a16::cli_test::CliRun;
using w8a16::cli_test::slurp;

const fs::path kGolden = fs::path(W8A16_SOURCE_DIR) / "golden";

fs::path fresh_dir(const std::string& name) { return w8a16::cli_test::fresh_dir("w8a16_run_cli_", name); }

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

// ---- deadlines --------------------------------------------------------------------------------

// An operand bundle (golden/include/w8a16/golden/operands.hpp, version 1, dense) of zeros.
std::string bundle_bytes(const std::string& entry, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                         std::uint32_t launches) {
  auto u32 = [](std::uint32_t v) {
    std::string b(4, '\0');
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return b;
  };
  std::string h = "W8A16OPB" + u32(1) + entry + std::string(32 - entry.size(), '\0');
  for (std::uint32_t v : {m, n, k, k, n, launches, 0u, 0u, 0u}) h += u32(v);
  const std::uint64_t body = 2ull * launches * m * k + std::uint64_t{n} * k + 4ull * ((n + 127) / 128) * (k / 128);
  return h + std::string(body, '\0');
}

void spit(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

TEST(RunCli, RunOperandsHoldsEachLaunchToOneLaunchsDeadline) {
  const fs::path dir = fresh_dir("per_launch");
  spit(dir / "many.bundle", bundle_bytes("gemv_batch4_strided", 1, 8, 128, 5000));
  // A hang in the first of 5,000 launches is named within one deadline, not 5,000 of them.
  const auto start = std::chrono::steady_clock::now();
  const CliRun hung = w8a16::cli_test::run_process(
      "W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided '" W8A16_CLI_PATH
      "' run-operands --backend sim --entry gemv_batch4_strided --launch-deadline 2 --in '" +
      (dir / "many.bundle").string() + "' --out '" + (dir / "o.out").string() + "'");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hung.exit_status, 1) << hung.output;
  EXPECT_LT(seconds, 2 + 30) << hung.output;
  EXPECT_NE(hung.output.find("launch 1 of 5000"), std::string::npos) << hung.output;
  EXPECT_NE(hung.output.find("no completion within 2.0 s of the launch"), std::string::npos) << hung.output;
  EXPECT_FALSE(fs::exists(dir / "o.out"));
  // The longest deadline times 5,000 launches is past what the clock holds (about 9.2e9 s): a
  // healthy kernel still runs to its end, never an instant HANG.
  const CliRun healthy = w8a16::cli_test::run_cli(
      "run-operands --backend sim --entry gemv_batch4_strided "
      "--launch-deadline 1000000 --check --in '" +
      (dir / "many.bundle").string() + "' --out '" + (dir / "o.out").string() + "'");
  EXPECT_EQ(healthy.exit_status, 0) << healthy.output;
  EXPECT_EQ(healthy.output.find("HANG"), std::string::npos) << healthy.output;
}

TEST(RunCli, DeadlinesOutsideTheirRangeAreRefusedAndTheEnvironmentOnlyWhereItIsUsed) {
  for (const char* d : {"1e-9", "0.5", "0", "1000001", "1e10", "nan", "inf"}) {
    const CliRun r = w8a16::cli_test::run_cli(std::string("verify --backend sim --cases 0 --launch-deadline '") + d +
                                              "'");
    EXPECT_EQ(r.exit_status, 2) << d << ": " << r.output;
    EXPECT_NE(r.output.find("from 1 to 1000000"), std::string::npos) << d << ": " << r.output;
  }
  // A bad W8A16_LAUNCH_DEADLINE fails the commands that launch, not --version nor one that launches
  // nothing; --launch-deadline replaces it.
  const std::string bad = "W8A16_LAUNCH_DEADLINE=1e-9 '" W8A16_CLI_PATH "' ";
  const CliRun version = w8a16::cli_test::run_process(bad + "--version");
  EXPECT_EQ(version.exit_status, 0) << version.output;
  const CliRun vectors = w8a16::cli_test::run_process(bad + "vectors '" +
                                                      (kGolden / "mma" / "h200" / "h200_10_targeted.mmav").string() +
                                                      "'");
  EXPECT_EQ(vectors.exit_status, 0) << vectors.output;
  const CliRun verify = w8a16::cli_test::run_process(bad + "verify --backend sim --cases 0");
  EXPECT_EQ(verify.exit_status, 2) << verify.output;
  EXPECT_NE(verify.output.find("W8A16_LAUNCH_DEADLINE: launch deadline '1e-9'"), std::string::npos) << verify.output;
  const CliRun replaced = w8a16::cli_test::run_process(bad + "replay --backend sim --launch-deadline 60 '" +
                                                       (kGolden / "cases" / "boundaries.case").string() + "'");
  EXPECT_EQ(replaced.exit_status, 0) << replaced.output;
}

// ---- operand bundles of the packed entry point ----------------------------------------------------

TEST(RunCli, RunOperandsPacksWForThePackedEntryPointAndSaysSo) {
  const fs::path dir = fresh_dir("packed");
  spit(dir / "packed.bundle", bundle_bytes("gemm_packed_strided", 4, 256, 256, 2));
  const CliRun r = w8a16::cli_test::run_cli("run-operands --backend sim --entry gemm_packed_strided --check --in '" +
                                            (dir / "packed.bundle").string() + "' --out '" + (dir / "o.out").string() +
                                            "'");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("the bundle's 256 x 256 codes were packed by the launch layer (NUMERICS.md 2.3) into "
                          "65540 bytes"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("kernel w8a16_tc_rows_packed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verdict: PASS"), std::string::npos) << r.output;
}

// ---- report paths ---------------------------------------------------------------------------------

// A small verify on the simulation: one saved case, one recorded-MMA file.
std::string small_args() {
  return "verify --backend sim --no-save --no-coverage --cases 2 --no-recordings --entry gemv_batch4_strided "
         "--mma-dir '" +
         (kGolden / "mma" / "h200" / "h200_10_targeted.mmav").string() + "' --cases-from '" +
         (kGolden / "cases").string() + "'";
}

TEST(RunCli, OneFileNamedByTwoReportsIsRefusedAndLeftAsItWas) {
  const fs::path dir = fresh_dir("same_file");
  spit(dir / "r", "an earlier report\n");
  const CliRun r = w8a16::cli_test::run_cli(small_args() + " --json '" + (dir / "r").string() + "' --junit '" +
                                            (dir / "." / "r").string() + "'");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("names the same file; each report needs a file of its own"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(dir / "r"), "an earlier report\n");
}

TEST(RunCli, ASymlinkedReportPathIsRefusedAndTheLinkKept) {
  const fs::path dir = fresh_dir("symlink");
  spit(dir / "target.json", "an earlier report\n");
  fs::create_symlink("target.json", dir / "link.json");
  const CliRun r = w8a16::cli_test::run_cli(small_args() + " --json '" + (dir / "link.json").string() + "'");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("is a symbolic link"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(slurp(dir / "target.json"), "an earlier report\n");
}

TEST(RunCli, ASecondRunOnAReportPathAnotherRunIsWritingIsRefused) {
  const fs::path dir = fresh_dir("two_runs");
  const fs::path report = dir / "v.json";
  // The first run hangs in its launch (the simulation's injected hang) with its placeholder held.
  const std::string first = "W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided '" W8A16_CLI_PATH "' " + small_args() +
                            " --launch-deadline 20 --json '" + report.string() + "' > /dev/null 2>&1 & echo $!";
  const CliRun started = w8a16::cli_test::run_process(first);
  const int pid = std::atoi(started.output.c_str());
  ASSERT_GT(pid, 0) << started.output;
  std::string placeholder;
  for (int i = 0; i < 200 && placeholder.find("INCOMPLETE") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    placeholder = slurp(report);
  }
  ASSERT_NE(placeholder.find("INCOMPLETE"), std::string::npos) << placeholder;
  const CliRun second = w8a16::cli_test::run_cli(small_args() + " --json '" + report.string() + "'");
  EXPECT_EQ(second.exit_status, 2) << second.output;
  EXPECT_NE(second.output.find("another run is writing this report now"), std::string::npos) << second.output;
  EXPECT_EQ(slurp(report), placeholder);  // the first run's, untouched
  w8a16::cli_test::run_process("kill " + std::to_string(pid));
}

}  // namespace
