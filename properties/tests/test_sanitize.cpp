// SPDX-License-Identifier: MIT OR Apache-2.0
// The sanitizer stage (properties/sanitize.hpp) on this machine, which has no GPU and no
// compute-sanitizer: the tools' output read (the report forms of the Compute Sanitizer guide:
// racecheck's analysis reports and summary, synccheck's barrier errors and summary), each report a
// finding with its kernel, SASS offsets and case line; runs through a stand-in program that prints
// what the tool would, so that finding, attributing, the deadline and NOT CHECKED are exercised.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "w8a16/golden/case.hpp"
#include "w8a16/properties/external_tool.hpp"
#include "w8a16/properties/sanitize.hpp"

namespace w8a16::props {
namespace {

const std::string kRace =
    "case: case/1 entry=w8a16_gemm_pipelined m=1 n=8 k=128\n"
    "PASS cases.case:2\n  case/1 entry=w8a16_gemm_pipelined m=1 n=8 k=128\n"
    "case: case/1 entry=w8a16_gemm_pipelined_m32 m=17 n=77 k=256\n"
    "========= Error: Race reported between Write access at w8a16_gemm_pipelined_m32(Args)+0x90 in tile.cuh:41\n"
    "=========     and Read access at w8a16_gemm_pipelined_m32(Args)+0x100 in tile.cuh:51 [508 hazards]\n"
    "=========\n"
    "PASS cases.case:4\n  case/1 entry=w8a16_gemm_pipelined_m32 m=17 n=77 k=256\n"
    "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";

TEST(Sanitize, ARaceReportIsAFindingWithItsKernelOffsetsAndCase) {
  const SanitizerToolRun r = parse_sanitizer_output("racecheck", kRace);
  ASSERT_TRUE(r.ran) << r.why_not;
  EXPECT_EQ(r.reported, 1u);
  ASSERT_EQ(r.findings.size(), 1u);
  const SanitizerFinding& f = r.findings[0];
  EXPECT_EQ(f.kernel, "w8a16_gemm_pipelined_m32(Args)");
  EXPECT_EQ(f.offsets, (std::vector<std::string>{"0x90", "0x100"}));
  EXPECT_EQ(f.case_line, "case/1 entry=w8a16_gemm_pipelined_m32 m=17 n=77 k=256");
  EXPECT_NE(f.text.find("[508 hazards]"), std::string::npos) << f.text;
}

TEST(Sanitize, ACleanRunIsReadAndOneWithoutASummaryIsNotChecked) {
  const SanitizerToolRun clean = parse_sanitizer_output(
      "racecheck", "case: case/1 x\nPASS a\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  EXPECT_TRUE(clean.ran);
  EXPECT_TRUE(clean.findings.empty());
  const SanitizerToolRun cut = parse_sanitizer_output("racecheck", "case: case/1 x\n========= COMPUTE-SANITIZER\n");
  EXPECT_FALSE(cut.ran);
  EXPECT_NE(cut.why_not.find("no summary"), std::string::npos);
  // A summary that counts more than the reports read is a finding of its own.
  const SanitizerToolRun more = parse_sanitizer_output(
      "racecheck", "========= RACECHECK SUMMARY: 3 hazards displayed (1 error, 2 warnings)\n");
  ASSERT_EQ(more.findings.size(), 1u);
  EXPECT_NE(more.findings[0].what.find("3 counted, 0 reports read"), std::string::npos) << more.findings[0].what;
}

TEST(Sanitize, SynccheckErrorsAndBytesThatDifferUnderTheToolAreFindings) {
  const SanitizerToolRun r = parse_sanitizer_output(
      "synccheck",
      "case: case/1 entry=w8a16_gemv_batch4_strided m=4 n=8 k=128\n"
      "========= Barrier error detected. Divergent thread(s) in warp\n"
      "=========     at w8a16_gemv_batch4_strided(Args)+0xf0 in gemv.cuh:79\n"
      "=========     by thread (37,0,0) in block (0,0,0)\n"
      "FAIL cases.case:2\n  case/1 entry=w8a16_gemv_batch4_strided m=4 n=8 k=128\n"
      "========= ERROR SUMMARY: 1 error\n");
  ASSERT_TRUE(r.ran);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kernel, "w8a16_gemv_batch4_strided(Args)");
  EXPECT_EQ(r.findings[0].offsets, std::vector<std::string>{"0xf0"});
  EXPECT_EQ(r.findings[1].tool, "replay");
  EXPECT_EQ(r.findings[1].case_line, "case/1 entry=w8a16_gemv_batch4_strided m=4 n=8 k=128");
}

TEST(Sanitize, OneCasePerCellTheSmallest) {
  std::vector<AimedCase> aimed(3);
  aimed[0].c = golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(9, 64, 256);
  aimed[1].c = golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(9, 8, 128);
  aimed[2].c = golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(40, 8, 128);
  for (AimedCase& a : aimed) a.target.entry = golden::EntryPoint::gemm_pipelined, a.target.config = "128x64 tiles";
  aimed[2].target.config = "other";
  std::vector<std::string> cells;
  const std::vector<golden::Case> cases = sanitize_cases(aimed, &cells);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].n, 8u);
  EXPECT_EQ(cases[1].m, 40u);
  EXPECT_NE(cells[1].find("(other)"), std::string::npos) << cells[1];
}

// A stand-in for compute-sanitizer: prints, per --tool, what the tool prints, or sleeps.
std::string stand_in(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/fake-sanitizer";
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(Sanitize, EachToolRunsOverTheCaseFileAndItsFindingsFailTheStage) {
  const std::string dir = ::testing::TempDir() + "sanitize_run";
  std::filesystem::create_directories(dir);
  // The replay's command line reaches the tool: its last argument is the case file, whose lines
  // the stand-in marks as replay --mark-cases would.
  const std::string fake = stand_in(
      dir,
      "tool=$2; file=$(eval echo \\${$#})\n"
      "grep '^case/' \"$file\" | while read -r l; do echo \"case: $l\"; done\n"
      "if [ \"$tool\" = racecheck ]; then\n"
      "  echo '========= Error: Race reported between Write access at k(A)+0x10 in f.cu:1'\n"
      "  echo '=========     and Read access at k(A)+0x20 in f.cu:2 [2 hazards]'\n"
      "  echo '========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)'\n"
      "else echo '========= ERROR SUMMARY: 0 errors'; fi\n");
  const std::vector<golden::Case> cases{golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(1, 8, 128),
                                        golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(2, 8, 128)};
  SanitizeOptions o;
  o.sanitizer = fake;
  o.self = "/bin/true";
  o.work_dir = dir;
  const SanitizeReport r = run_sanitize(cases, {"a", "b"}, o);
  ASSERT_TRUE(r.checked) << r.why_not;
  EXPECT_EQ(r.findings(), 1u);
  EXPECT_FALSE(r.pass());
  ASSERT_EQ(r.tools.size(), 2u);
  EXPECT_EQ(r.tools[0].findings[0].case_line, golden::format_case(cases[1]));  // the last marker before it
  const std::string text = sanitize_text(r);
  EXPECT_NE(text.find("FAIL [racecheck]"), std::string::npos) << text;
  EXPECT_NE(text.find("[SASS 0x10 0x20]"), std::string::npos) << text;

  // A tool that gives no summary, or passes its deadline, leaves the stage NOT CHECKED.
  o.sanitizer = stand_in(dir, "echo '========= COMPUTE-SANITIZER'\n");
  SanitizeReport none = run_sanitize(cases, {"a", "b"}, o);
  EXPECT_FALSE(none.checked);
  EXPECT_FALSE(none.pass());
  EXPECT_NE(sanitize_text(none).find("NOT CHECKED"), std::string::npos);
  o.sanitizer = stand_in(dir, "sleep 30\n");
  o.timeout_s = 0.5;
  none = run_sanitize(cases, {"a", "b"}, o);
  EXPECT_FALSE(none.checked);
  EXPECT_NE(none.why_not.find("was killed"), std::string::npos) << none.why_not;
}

TEST(Sanitize, WithoutTheToolTheStageIsNotChecked) {
  SanitizeOptions o;
  o.sanitizer = "";
  o.self = "/bin/true";
  std::string looked;
  if (!find_sanitizer(&looked).empty()) GTEST_SKIP() << "a compute-sanitizer is installed here";
  const SanitizeReport r = run_sanitize({golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(1, 8, 128)},
                                        {"a"}, o);
  EXPECT_FALSE(r.checked);
  EXPECT_NE(r.why_not.find("no compute-sanitizer"), std::string::npos) << r.why_not;
  EXPECT_NE(sanitize_text(r).find("NOT CHECKED"), std::string::npos);
}

TEST(ExternalTool, AToolIsRunItsOutputReadAndItsDeadlineKept) {
  const ToolRun echo = run_tool({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 5, true);
  EXPECT_TRUE(echo.started);
  EXPECT_EQ(echo.exit_code, 3);
  EXPECT_EQ(echo.output, "out\nerr\n");
  const ToolRun quiet = run_tool({"/bin/sh", "-c", "echo out; echo err >&2"}, 5, false);
  EXPECT_EQ(quiet.output, "out\n");
  const ToolRun slow = run_tool({"/bin/sh", "-c", "sleep 30"}, 0.3, true);
  EXPECT_TRUE(slow.timed_out);
  // A program that closes its output and goes on running is still held to the deadline.
  const ToolRun closed = run_tool({"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, 0.3, true);
  EXPECT_TRUE(closed.timed_out);
  const ToolRun missing = run_tool({"/nonexistent/tool"}, 5, true);
  EXPECT_FALSE(missing.started && missing.exit_code == 0);
}

}  // namespace
}  // namespace w8a16::props
