// SPDX-License-Identifier: MIT OR Apache-2.0
// verify's reports over one result (report/verify_report.hpp) for a `verify --perturb` run: the
// perturbed stage and the protocol check are its stages, each failing launch a JUnit test case
// with its timing seed a property and an entry of the JSON, and the stages that did not run say so
// in every report, never a pass. A campaign run's JUnit says the perturbed stage did not run.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "verify_report.hpp"
#include "w8a16/golden/case.hpp"

namespace w8a16::cli {
namespace {

props::VerifyResult perturbed_run(bool with_failure) {
  props::VerifyResult v;
  v.on_gpu = true;
  v.perturb_run = true;
  v.perturb_seed = 7;
  v.perturb_seeds_per_case = 4;
  v.perturb.cases = v.perturb.cases_run = 3;
  v.perturb.launches = 12;
  v.protocol_run = true;
  v.protocol.checked = true;
  if (with_failure) {
    props::PerturbFailure f;
    f.c = golden::CaseSpec{}.entry(golden::EntryPoint::gemm_pipelined).shape(48, 1024, 2048).seed(3);
    f.case_index = 1;
    f.timing_seed = 0x1234;
    f.body = "wgmma_units";
    f.mismatches = 1273;
    f.detail = "C[0][5]: got 0x4000, want 0x4001";
    v.perturb.failures.push_back(f);
  }
  return v;
}

VerifyReportContext context() { return VerifyReportContext{"cuda", {}, "", {}}; }

TEST(VerifyReports, APerturbedRunsFailingLaunchIsAJunitCaseWithItsSeedAndAJsonEntry) {
  const props::VerifyResult v = perturbed_run(true);
  const auto j = nlohmann::json::parse(verify_json_report(v, context()));
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["mode"], "perturb");
  ASSERT_EQ(j["perturb"]["failures"].size(), 1u);
  EXPECT_EQ(j["perturb"]["failures"][0]["perturb_seed"], 0x1234);
  EXPECT_EQ(j["perturb"]["failures"][0]["body"], "wgmma_units");
  EXPECT_EQ(j["perturb"]["seed"], 7);
  EXPECT_NE(j["why_not_pass"][0].get<std::string>().find("1 failing launches under timing seeds"), std::string::npos);
  const std::string x = verify_junit_report(v, context());
  EXPECT_NE(x.find("classname=\"verify.perturb.launch\""), std::string::npos) << x;
  EXPECT_NE(x.find("<property name=\"perturb_seed\" value=\"0x0000000000001234\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("perturb-seed=0x0000000000001234"), std::string::npos) << x;
  // The stages a perturbed run does not run are skipped, never passed.
  EXPECT_NE(x.find("not run: verify --perturb runs the perturbed stage and the protocol check"), std::string::npos)
      << x;
}

TEST(VerifyReports, APerturbedRunThatPassesSaysSoAndOneCutShortDoesNot) {
  props::VerifyResult v = perturbed_run(false);
  EXPECT_EQ(nlohmann::json::parse(verify_json_report(v, context()))["verdict"], "PASS");
  EXPECT_TRUE(props::verdict_reasons(v).empty());
  v.perturb.complete = false;
  v.perturb.cases_run = 1;
  const auto j = nlohmann::json::parse(verify_json_report(v, context()));
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_NE(j["why_not_pass"][0].get<std::string>().find("INCOMPLETE"), std::string::npos) << j.dump(1);
  v.perturb.complete = true;
  v.perturb.cases_run = 0;
  EXPECT_EQ(nlohmann::json::parse(verify_json_report(v, context()))["verdict"], "FAIL");
  // A protocol finding fails the run as a failing launch does.
  v = perturbed_run(false);
  v.protocol.findings.push_back({"w8a16_wgmma_rows", "release", "SYNCS.ARRIVE at 0x1230 after HGMMA at 0x1200"});
  EXPECT_EQ(nlohmann::json::parse(verify_json_report(v, context()))["verdict"], "FAIL");
}

TEST(VerifyReports, ACampaignRunSaysThePerturbedStageDidNotRun) {
  props::VerifyResult v;
  const std::string x = verify_junit_report(v, context());
  EXPECT_NE(x.find("name=\"pipelined_cases_under_timing_seeds\""), std::string::npos) << x;
  EXPECT_NE(x.find("not run (no --perturb)"), std::string::npos) << x;
  EXPECT_EQ(nlohmann::json::parse(verify_json_report(v, context()))["perturb"]["run"], false);
}

// The sanitizer stage's rows: a finding fails the run and names its kernel, offsets and case; a
// stage NOT CHECKED, not run or not asked is skipped in the JUnit, never passed, and fails nothing.
TEST(VerifyReports, TheSanitizerStagesFindingsFailTheRunAndItsAbsenceIsSkipped) {
  props::VerifyResult v;
  v.on_gpu = true;
  v.sanitize_asked = v.sanitize_run = true;
  v.sanitize.checked = true;
  v.sanitize.cases = {"case/1 entry=w8a16_gemm_pipelined_m32 m=17 n=77 k=256"};
  props::SanitizerToolRun t;
  t.tool = "racecheck";
  t.ran = true;
  props::SanitizerFinding f;
  f.tool = "racecheck";
  f.what = "Error: Race reported between Write access at k(A)+0x90 in f.cu:41";
  f.kernel = "k(A)";
  f.offsets = {"0x90", "0x100"};
  f.case_line = v.sanitize.cases[0];
  t.findings.push_back(f);
  v.sanitize.tools.push_back(t);
  bool named = false;
  for (const props::Reason& x : props::verdict_reasons(v))
    named = named || (x.group == "sanitize" && !x.details.empty() && x.details[0].find("k(A)") != std::string::npos);
  EXPECT_TRUE(named);
  const auto j = nlohmann::json::parse(verify_json_report(v, context()));
  EXPECT_EQ(j["sanitize"]["tools"][0]["findings"][0]["sass_offsets"][1], "0x100");
  EXPECT_EQ(j["sanitize"]["tools"][0]["findings"][0]["case"], f.case_line);
  const std::string x = verify_junit_report(v, context());
  EXPECT_NE(x.find("name=\"one_case_per_cell_under_racecheck_and_synccheck\">\n    <failure"), std::string::npos) << x;
  // Not checked: skipped, and not a reason.
  v.sanitize = props::SanitizeReport{};
  v.sanitize.why_not = "no compute-sanitizer on PATH";
  for (const props::Reason& r : props::verdict_reasons(v)) EXPECT_NE(r.group, "sanitize");
  EXPECT_NE(verify_junit_report(v, context()).find("NOT CHECKED: no compute-sanitizer on PATH"), std::string::npos);
  v.sanitize_asked = false, v.sanitize_run = false;
  EXPECT_NE(verify_junit_report(v, context()).find("not run (no --sanitize)"), std::string::npos);
}

}  // namespace
}  // namespace w8a16::cli
