// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check invariance` and verify's invariance rows, as processes on the simulation
// (properties/invariance.hpp). The canonical simulation keeps every verdict and names the edges its
// sweep crosses; each control stand-in (W8A16_SIM_CONVENTIONS) breaks its own verdict at the M
// where the defect starts, which the tests name exactly: a K split by M (batch, M = 9: two parts),
// an order by row position (batch, M = 2: the needle's copy at the back is row 1, the first odd
// row), a row copied into every row (batch, M = 3, on a filler row), atomics across CTAs
// (run-to-run, M = 1), and the seed's skinny body (tier from M = 1 on,
// only at M <= 16 where it runs; contract under canonical). Bad input exits 2; a hang is a FAIL.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "w8a16/device/bodies.hpp"

namespace {
namespace fs = std::filesystem;
namespace device = w8a16::device;
using w8a16::cli_test::CliRun;
using w8a16::cli_test::has;
using w8a16::cli_test::run_process;

fs::path fresh_dir(const std::string& name) { return w8a16::cli_test::fresh_dir("w8a16_invariance_", name); }

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return nlohmann::json::parse(text, nullptr, false);
}

// The sweep on the simulation: M 1..40 crosses the skinny/row-tile edge (17) and the Hopper tier's
// (33); one needle keeps it to seconds.
struct Sweep {
  CliRun run;
  nlohmann::json json;
  fs::path dir;
};
Sweep sweep(const std::string& name, const std::string& env, const std::string& args) {
  Sweep s;
  s.dir = fresh_dir(name);
  s.run = run_process(env + " '" + std::string(W8A16_CLI_PATH) + "' invariance --backend sim --save-dir '" +
                      s.dir.string() + "' --json '" + (s.dir / "r.json").string() + "' " + args);
  s.json = read_json(s.dir / "r.json");
  return s;
}

const nlohmann::json* entry(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || !j.contains("shapes")) return nullptr;
  for (const nlohmann::json& e : j["shapes"][0]["entries"])
    if (e["entry"] == "w8a16_" + name) return &e;
  return nullptr;
}

std::string verdict(const nlohmann::json& e, const std::string& kind) { return e["verdicts"][kind]["verdict"]; }

TEST(InvarianceCli, CanonicalSimulationKeepsEveryVerdictAndNamesTheEdges) {
  // M 1..36 crosses both edges of the 32-row entry points (17, 33); nan_codes puts special codes in
  // W as well as order-sensitive data.
  const Sweep s = sweep("canonical", "", "--m 1..36 --needle nan_codes");
  ASSERT_EQ(s.run.exit_status, 0) << s.run.output;
  ASSERT_TRUE(s.json.is_object()) << s.run.output;
  EXPECT_EQ(s.json["verdict"], "PASS");
  for (const char* k : {"run-to-run", "batch", "tier", "contract"}) EXPECT_EQ(s.json["verdicts"][k], "PASS") << k;
  const nlohmann::json* m32 = entry(s.json, "gemm_pipelined_m32");
  ASSERT_NE(m32, nullptr);
  // Skinny to the row-tile kernel at 17, to the Hopper tier at 33 (KERNEL_ABI.md 2).
  EXPECT_EQ((*m32)["edges_crossed"], nlohmann::json({17, 33})) << s.run.output;
  EXPECT_EQ((*m32)["dispatch"][0]["last"], 16);
  EXPECT_TRUE(has((*m32)["dispatch"][0]["body"].get<std::string>(), "m32_skinny"));
  for (const char* k : {"run-to-run", "batch", "tier", "contract"}) {
    EXPECT_EQ(verdict(*m32, k), "PASS") << k;
    EXPECT_GT((*m32)["verdicts"][k]["compared"].get<std::uint64_t>(), 0u) << k;
  }
  // The text: the bodies per M range, the edges crossed, one line per verdict.
  EXPECT_TRUE(has(s.run.output, "    M 1..16: m32_skinny")) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "edges crossed: 17, 33")) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "forced for the tier verdict")) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "  contract: PASS (contract: canonical)")) << s.run.output;
  // One launch at a time: no second stream to load, and the report says so.
  EXPECT_TRUE(has(s.json["run_to_run"].get<std::string>(), "repeated once, alone")) << s.json["run_to_run"];
  // The GEMVs sweep their own rows only.
  const nlohmann::json* g4 = entry(s.json, "gemv_batch4_strided");
  ASSERT_NE(g4, nullptr);
  EXPECT_EQ((*g4)["ms"], nlohmann::json({1, 2, 3, 4}));
}

TEST(InvarianceCli, DefaultRangeGoesPastTheTileAndEdgesOnlyKeepsTheirNeighbours) {
  const Sweep s = sweep("edges", "", "--edges-only --needle cancelling_steps --entry gemm_pipelined");
  ASSERT_EQ(s.run.exit_status, 0) << s.run.output;
  const nlohmann::json* e = entry(s.json, "gemm_pipelined");
  ASSERT_NE(e, nullptr);
  // 33 (Hopper tier), its tile rows' edges, and 129 (the second 128-row unit), each -1, 0, +1.
  const std::vector<std::uint32_t> ms = (*e)["ms"];
  for (std::uint32_t m : {1u, 32u, 33u, 34u, 128u, 129u, 130u})
    EXPECT_NE(std::find(ms.begin(), ms.end(), m), ms.end()) << m;
  EXPECT_EQ(std::find(ms.begin(), ms.end(), 20u), ms.end());
  const std::vector<std::uint32_t> crossed = (*e)["edges_crossed"];
  EXPECT_NE(std::find(crossed.begin(), crossed.end(), 33u), crossed.end());
  EXPECT_NE(std::find(crossed.begin(), crossed.end(), 129u), crossed.end());
}

// Every control standing in for the GEMV body fails both GEMV entry points at the command's
// defaults (shape, M list, needles; --entry names the entry points the body serves): the
// distributions' needles round alike on a GEMV's lanes, and the GEMV order needle shows the other
// order. (The tensor-core bodies' controls fail at the defaults on the same needles as the tests
// below; at the default M list every tensor-core body's emulation under a control is minutes here.)
TEST(InvarianceCli, EveryControlFailsTheGemvEntryPointsAtTheDefaults) {
  for (const char* control : {"split-k-by-m", "row-order", "nondeterministic", "row-copy"}) {
    const Sweep s = sweep(std::string("defaults_") + control,
                          std::string("W8A16_SIM_CONVENTIONS=gemv_strip=") + control,
                          "--entry gemv_batch4_strided --entry gemv_batch16_strided");
    ASSERT_EQ(s.run.exit_status, 1) << control << "\n" << s.run.output;
    ASSERT_TRUE(s.json.is_object()) << s.run.output;
    for (const char* e : {"gemv_batch4_strided", "gemv_batch16_strided"}) {
      const nlohmann::json* j = entry(s.json, e);
      ASSERT_NE(j, nullptr) << e;
      bool failed = false;
      for (const char* k : {"run-to-run", "batch", "tier", "contract"}) failed = failed || verdict(*j, k) == "FAIL";
      // split-k-by-m changes the order only where (M + 7) / 8 >= 2: batch16's rows, not batch4's.
      if (std::string(control) == "split-k-by-m" && std::string(e) == "gemv_batch4_strided") EXPECT_FALSE(failed);
      else EXPECT_TRUE(failed) << control << ": " << e;
    }
    // The order controls show on the built order needles (the golden distributions round alike on
    // the GEMV's lanes); row-copy on the first filler row.
    if (std::string(control) != "row-copy")
      EXPECT_TRUE(has(s.run.output, "needle=gemv_order(seed=") || has(s.run.output, "needle=pair_order(seed="))
          << control << "\n"
          << s.run.output;
  }
  // The canonical GEMV passes the same sweep.
  const Sweep c = sweep("defaults_canonical", "", "--entry gemv_batch4_strided --entry gemv_batch16_strided");
  EXPECT_EQ(c.run.exit_status, 0) << c.run.output;
}

// The tensor-core controls at the command's defaults (shape 136 x 512, every needle, every M from 1
// past the 128-row tile and each edge's neighbours, every position) on the entry point whose first
// body they replace: each fails its own verdict at the M where its defect starts. About 25 s each
// on the simulation.
TEST(InvarianceCli, EveryTensorCoreControlFailsAtTheDefaults) {
  const struct {
    const char* control;
    const char* verdict;
    int m;
  } controls[] = {{"split-k-by-m", "batch", 9},
                  {"row-order", "batch", 2},
                  {"nondeterministic", "run-to-run", 1},
                  {"row-copy", "batch", 4}};
  for (const auto& c : controls) {
    const Sweep s = sweep(std::string("tc_defaults_") + c.control,
                          std::string("W8A16_SIM_CONVENTIONS=gemm128_tile=") + c.control, "--entry gemm_pipelined");
    ASSERT_EQ(s.run.exit_status, 1) << c.control << "\n" << s.run.output;
    const nlohmann::json* e = entry(s.json, "gemm_pipelined");
    ASSERT_NE(e, nullptr) << c.control;
    EXPECT_EQ(verdict(*e, c.verdict), "FAIL") << c.control << "\n" << s.run.output;
    EXPECT_EQ((*e)["verdicts"][c.verdict]["first_failure"]["m"], c.m) << c.control << "\n" << s.run.output;
    // Each but the nondeterministic one (whose every launch draws its own order) keeps canonical's
    // M = 1 bytes: invariance and the contract are different verdicts.
    if (std::string(c.control) != "nondeterministic") EXPECT_EQ(s.json["verdicts"]["contract"], "PASS") << c.control;
  }
}

// A body that writes row 0's bytes into every row: every needle row at the front is right, so
// only the filler rows, each held to its own M = 1 bytes, show it; the first call with a filler
// row is M = 4 (M = 2 and 3 hold the needle at the front, the back and the one row between).
TEST(InvarianceCli, ARowCopiedIntoEveryRowFailsBatchOnTheFillerRowsAtFour) {
  const Sweep s = sweep("row_copy", "W8A16_SIM_CONVENTIONS=gemm128_tile=row-copy",
                        "--m 1..6 --needle fold_ties --entry gemm_pipelined --no-permutations");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  const nlohmann::json* e = entry(s.json, "gemm_pipelined");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(verdict(*e, "batch"), "FAIL") << s.run.output;
  EXPECT_EQ((*e)["verdicts"]["batch"]["first_failure"]["m"], 4) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "(filler) row ")) << s.run.output;
  EXPECT_EQ(s.json["verdicts"]["run-to-run"], "PASS");
  EXPECT_EQ(s.json["verdicts"]["contract"], "PASS");
}

// A sweep whose largest call passes the work limits is refused before anything runs.
TEST(InvarianceCli, WorkPastTheLimitsIsRefusedBeforeAnythingRuns) {
  const Sweep s = sweep("limits", "", "--shape 524288x524288 --m 1..4");
  EXPECT_EQ(s.run.exit_status, 2) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "work limits")) << s.run.output;
  EXPECT_FALSE(has(s.run.output, "verdict: ")) << s.run.output;
}

TEST(InvarianceCli, KSplitByMFailsBatchAtNine) {
  const Sweep s = sweep("split", "W8A16_SIM_CONVENTIONS=gemm128_tile=split-k-by-m",
                        "--m 1..20 --needle fold_ties --entry gemm_pipelined --entry gemm_pipelined_m32");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  const nlohmann::json* e = entry(s.json, "gemm_pipelined");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(verdict(*e, "batch"), "FAIL");
  EXPECT_EQ((*e)["verdicts"]["batch"]["first_failure"]["m"], 9) << s.run.output;
  EXPECT_EQ((*e)["verdicts"]["batch"]["failing_ms"][0], 9);
  // Right but not invariant: its M = 1 bytes are the contract's, and repeats agree.
  EXPECT_EQ(verdict(*e, "contract"), "PASS");
  EXPECT_EQ(verdict(*e, "run-to-run"), "PASS");
  EXPECT_EQ(s.json["verdicts"]["contract"], "PASS");
  // The other entry point's bodies are untouched.
  EXPECT_EQ(verdict(*entry(s.json, "gemm_pipelined_m32"), "batch"), "PASS");
  // The failing launch is saved as an operand bundle that run-operands replays.
  const std::string replay = (*e)["verdicts"]["batch"]["first_failure"]["replay"];
  EXPECT_EQ((*e)["verdicts"]["batch"]["first_failure"]["replay_kind"], "bundle");
  const fs::path bundle = s.dir / "invariance-n136-k512-gemm_pipelined-batch.opb";
  ASSERT_TRUE(fs::exists(bundle)) << replay;
  const CliRun r = run_process("'" + std::string(W8A16_CLI_PATH) +
                               "' run-operands --backend sim --entry gemm_pipelined --in '" + bundle.string() +
                               "' --out '" + (s.dir / "c.out").string() + "'");
  EXPECT_EQ(r.exit_status, 0) << r.output;
}

TEST(InvarianceCli, OrderByRowPositionFailsBatchAndTierAtTwoAndNothingElse) {
  const Sweep s = sweep("row_order", "W8A16_SIM_CONVENTIONS=gemm128_tile=row-order",
                        "--m 1..12 --needle cancelling_steps --entry gemm_pipelined --entry gemm_pipelined_m32");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  const nlohmann::json* e = entry(s.json, "gemm_pipelined");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(verdict(*e, "batch"), "FAIL");
  EXPECT_EQ((*e)["verdicts"]["batch"]["first_failure"]["m"], 2) << s.run.output;
  EXPECT_EQ((*e)["verdicts"]["batch"]["first_failure"]["row"], 1);
  // The tier verdict compares all of C: row 1 (odd) of the row-order body is not the skinny body's.
  // Row 0 is every body's, so the M = 1 bytes are canonical and the contract holds.
  EXPECT_EQ(s.json["verdicts"]["tier"], "FAIL") << s.run.output;
  const nlohmann::json* m32 = entry(s.json, "gemm_pipelined_m32");
  ASSERT_NE(m32, nullptr);
  const nlohmann::json& tier_first = verdict(*e, "tier") == "FAIL" ? (*e)["verdicts"]["tier"]["first_failure"]
                                                                   : (*m32)["verdicts"]["tier"]["first_failure"];
  EXPECT_EQ(tier_first["m"], 2) << s.run.output;
  EXPECT_EQ(tier_first["row"], 1) << s.run.output;
  EXPECT_EQ(s.json["verdicts"]["contract"], "PASS");
  EXPECT_EQ(s.json["verdicts"]["run-to-run"], "PASS");
}

TEST(InvarianceCli, AtomicsAcrossCtasFailRunToRunAtOne) {
  const Sweep s = sweep("atomics", "W8A16_SIM_CONVENTIONS=gemm128_tile=nondeterministic",
                        "--m 1..4 --needle cancelling_steps --entry gemm_pipelined --verdict run-to-run");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  const nlohmann::json* e = entry(s.json, "gemm_pipelined");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(verdict(*e, "run-to-run"), "FAIL");
  EXPECT_EQ((*e)["verdicts"]["run-to-run"]["first_failure"]["m"], 1) << s.run.output;
  EXPECT_EQ(verdict(*e, "batch"), "NOT ASKED");
  EXPECT_TRUE(has(s.run.output, "  batch: not asked")) << s.run.output;
}

TEST(InvarianceCli, SeedSkinnyBodyFailsTierAtSixteenRowsAndBelowAndTheCanonicalContract) {
  const Sweep s = sweep("skinny", "W8A16_SIM_CONVENTIONS=m32_skinny=seed-skinny",
                        "--m 1..20 --needle fold_ties --needle nan_codes --contract canonical --entry gemm_pipelined "
                        "--entry gemm_pipelined_m32");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  const nlohmann::json* m32 = entry(s.json, "gemm_pipelined_m32");
  ASSERT_NE(m32, nullptr);
  EXPECT_EQ(verdict(*m32, "tier"), "FAIL");
  EXPECT_EQ((*m32)["verdicts"]["tier"]["first_failure"]["m"], 1) << s.run.output;
  for (std::uint32_t m : (*m32)["verdicts"]["tier"]["failing_ms"]) EXPECT_LE(m, 16u);
  EXPECT_EQ((*m32)["verdicts"]["tier"]["failing_ms"].back(), 16);
  // The plurality (the 128-row tile) is not blamed.
  EXPECT_EQ(verdict(*entry(s.json, "gemm_pipelined"), "tier"), "PASS");
  // Its M = 1 bytes are not canonical's: the contract verdict fails too, on its own line, with a
  // case line that replays it.
  EXPECT_EQ(verdict(*m32, "contract"), "FAIL");
  EXPECT_EQ((*m32)["verdicts"]["contract"]["first_failure"]["replay_kind"], "case");
  EXPECT_TRUE(has((*m32)["verdicts"]["contract"]["first_failure"]["replay"].get<std::string>(),
                  "case/1 w8a16_gemm_pipelined_m32 m=1 n=136 k=512"));
  EXPECT_TRUE(has(s.run.output, "  contract: FAIL (contract: canonical)")) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "  tier: FAIL")) << s.run.output;
}

TEST(InvarianceCli, SeedSkinnyUnderItsOwnContractIsTheTierBreakAlone) {
  const Sweep s = sweep("skinny_own", "W8A16_SIM_CONVENTIONS=m32_skinny=seed-skinny",
                        "--m 1..4 --needle fold_ties --contract gemm_pipelined_m32=seed-skinny --entry "
                        "gemm_pipelined --entry gemm_pipelined_m32");
  ASSERT_EQ(s.run.exit_status, 1) << s.run.output;
  EXPECT_EQ(s.json["verdicts"]["contract"], "PASS") << s.run.output;
  EXPECT_EQ(s.json["verdicts"]["tier"], "FAIL");
}

TEST(InvarianceCli, BadInputIsAUsageError) {
  for (const char* args : {"--m 5..3", "--m 0", "--m x", "--shape 136x100", "--verdict sideways", "--needle nope"}) {
    const CliRun r = w8a16::cli_test::run_cli(std::string("invariance --backend sim ") + args);
    EXPECT_EQ(r.exit_status, 2) << args << "\n" << r.output;
  }
  const CliRun r = w8a16::cli_test::run_cli("invariance --backend sim --m 5..3");
  EXPECT_TRUE(has(r.output, "empty range")) << r.output;
}

TEST(InvarianceCli, AHangIsReportedNeverAPass) {
  const Sweep s = sweep("hang", "W8A16_SIM_INJECT=hang:w8a16_gemm_pipelined_m32:m=3",
                        "--launch-deadline 1 --m 1..4 --needle fold_ties --entry gemm_pipelined_m32");
  EXPECT_EQ(s.run.exit_status, 1) << s.run.output;
  EXPECT_TRUE(has(s.run.output, "HANG")) << s.run.output;
  EXPECT_FALSE(has(s.run.output, "verdict: PASS")) << s.run.output;
}

// verify's rows: the batch and tier verdicts at each entry point's edges in the text, JSON and
// JUnit, and a control that breaks one is a FAIL row naming its M (9: an edge of the packed entry
// point, 8..10 swept for both). --no-save: the failing cases stay out of the data folder. The
// campaign's cases are not what this test holds (verify's own tests do): --no-saved, --no-coverage
// and one drawn case leave the rows, which --quick runs whatever else it runs.
TEST(InvarianceCli, VerifyQuickGainsBatchAndTierRows) {
  const fs::path dir = fresh_dir("verify");
  const std::string
      cmd = "'" + std::string(W8A16_CLI_PATH) +
            "' verify --quick --backend sim --entry gemm_pipelined --entry gemm_packed_strided --no-recordings "
            "--no-save --no-saved --no-coverage --cases 1 --json '" +
            (dir / "v.json").string() + "' --junit '" + (dir / "v.xml").string() + "'";
  CliRun r = run_process("cd '" + dir.string() + "' && " + cmd);
  EXPECT_TRUE(has(r.output, "invariance at the dispatch edges")) << r.output;
  nlohmann::json j = read_json(dir / "v.json");
  ASSERT_TRUE(j.is_object()) << r.output;
  ASSERT_TRUE(j["invariance"]["run"].get<bool>());
  // Two rows per entry point; the edges of both entry points (the packed one's 9 among them).
  ASSERT_EQ(j["invariance"]["rows"].size(), 4u);
  EXPECT_EQ(j["invariance"]["rows"][0]["verdict_kind"], "batch");
  EXPECT_EQ(j["invariance"]["rows"][0]["verdict"], "PASS");
  EXPECT_EQ(j["invariance"]["rows"][1]["verdict_kind"], "tier");
  EXPECT_EQ(j["invariance"]["rows"][1]["verdict"], "PASS");
  std::ifstream xml(dir / "v.xml");
  const std::string junit((std::istreambuf_iterator<char>(xml)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(has(junit, "classname=\"verify.invariance.batch\" name=\"w8a16_gemm_pipelined\"")) << junit;
  EXPECT_TRUE(has(junit, "classname=\"verify.invariance.tier\" name=\"w8a16_gemm_pipelined\"")) << junit;

  r = run_process("cd '" + dir.string() + "' && W8A16_SIM_CONVENTIONS=gemm128_tile=split-k-by-m " + cmd);
  EXPECT_EQ(r.exit_status, 1) << r.output;
  j = read_json(dir / "v.json");
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["invariance"]["rows"][0]["verdict"], "FAIL");
  EXPECT_EQ(j["invariance"]["rows"][0]["first_failure"]["m"], 9) << r.output;
  bool named = false;
  for (const auto& w : j["why_not_pass"]) named = named || has(w.get<std::string>(), "batch invariance FAIL at M=9");
  EXPECT_TRUE(named) << j["why_not_pass"].dump();

  // --no-invariance: the rows are not run, and every report says so rather than showing none.
  r = run_process("cd '" + dir.string() + "' && W8A16_SIM_CONVENTIONS=gemm128_tile=split-k-by-m " + cmd +
                  " --no-invariance");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "invariance at the dispatch edges: not run (--no-invariance)")) << r.output;
  j = read_json(dir / "v.json");
  EXPECT_EQ(j["invariance"]["run"], false);
  EXPECT_EQ(j["invariance"]["asked"], false);
}

}  // namespace
