// SPDX-License-Identifier: MIT OR Apache-2.0
// Every gate takes a contract (NUMERICS.md 2.4), as processes on the simulation: verify, replay,
// repro, record and run-operands --check accept --contract NAME|FILE and ENTRY=NAME|FILE, say the
// contract in every report, fail a case the contract does not define without comparing it, and
// refuse a bad name or file with exit 2 before anything runs. The simulation keeps the canonical
// contract (its values are the emulator's under it), so under another contract it fails exactly
// where the two contracts differ: the cases here are built so that they do (NaN codes) or do not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/operands.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/recordings.hpp"

namespace {
namespace fs = std::filesystem;
namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;
using w8a16::cli_test::CliRun;
using w8a16::cli_test::has;
using w8a16::cli_test::slurp;

const fs::path kGolden = fs::path(W8A16_SOURCE_DIR) / "golden";

CliRun cli(const std::string& args) { return w8a16::cli_test::run_cli(args); }

fs::path fresh_dir(const std::string& name) { return w8a16::cli_test::fresh_dir("w8a16_contract_", name); }

// A case whose W holds NaN codes that reach its outputs (nan_codes: one W row in eight), so that
// canonical (NaN propagates) and seed-tile (NaN codes read as zeros) give other bytes; and one
// with no NaN code, where the two give the same bytes.
golden::Case nan_case(golden::EntryPoint e) {
  return golden::CaseSpec{}.entry(e).shape(2, 32, 384).dist(golden::Distribution::nan_codes).seed(5);
}
golden::Case plain_case(golden::EntryPoint e) {
  return golden::CaseSpec{}.entry(e).shape(3, 40, 256).dist(golden::Distribution::activation_like).seed(9);
}

fs::path write_cases(const fs::path& dir, const std::vector<golden::Case>& cases) {
  std::string text;
  for (const golden::Case& c : cases) text += golden::format_case(c) + "\n";
  const fs::path p = dir / "these.case";
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// verify, quickly: the given saved cases on the simulation, nothing drawn, no coverage, no
// recordings, nothing saved.
CliRun verify(const fs::path& cases, const std::string& more) {
  // The invariance rows are the invariance tests' (--no-invariance): these hold the contract's cases.
  return cli("verify --backend sim --no-invariance --cases 0 --no-coverage --no-save --no-recordings --cases-from '" +
             cases.string() + "' " + more);
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

TEST(ContractCli, NoFlagAndCanonicalGiveTheSameVerdictAndTallies) {
  const fs::path dir = fresh_dir("canonical");
  const fs::path cases = write_cases(dir, {nan_case(golden::EntryPoint::gemm_pipelined),
                                           plain_case(golden::EntryPoint::gemv_batch4_strided)});
  const CliRun plain = verify(cases, "--json '" + (dir / "plain.json").string() + "'");
  const CliRun named = verify(cases, "--contract canonical --json '" + (dir / "named.json").string() + "'");
  ASSERT_EQ(plain.exit_status, 0) << plain.output;
  ASSERT_EQ(named.exit_status, 0) << named.output;
  EXPECT_TRUE(has(plain.output, "\ncontract: canonical\n")) << plain.output;
  EXPECT_TRUE(has(named.output, "\ncontract: canonical\n")) << named.output;
  const nlohmann::json a = read_json(dir / "plain.json"), b = read_json(dir / "named.json");
  EXPECT_EQ(a["verdict"], "PASS");
  EXPECT_EQ(a["entry_points"], b["entry_points"]);
  EXPECT_EQ(a["failures"], b["failures"]);
  EXPECT_EQ(a["contract"]["name"], "canonical");
  EXPECT_EQ(a["contract"], b["contract"]);
  EXPECT_EQ(a["contract"]["canonical"], true);
}

TEST(ContractCli, SeedTileFailsTheNanCasesOnTheSimulationAndEveryReportNamesIt) {
  const fs::path dir = fresh_dir("seed_tile");
  const golden::Case nan = nan_case(golden::EntryPoint::gemm_pipelined),
                     plain = plain_case(golden::EntryPoint::gemm_pipelined_m32);
  const fs::path cases = write_cases(dir, {nan, plain});
  const CliRun r = verify(cases, "--contract seed-tile --json '" + (dir / "r.json").string() + "' --junit '" +
                                     (dir / "r.xml").string() + "'");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "\ncontract: seed-tile\n")) << r.output;
  EXPECT_TRUE(has(r.output, "tensor-core entry points: seed-tile (tc: nan=zero")) << r.output;
  EXPECT_TRUE(has(r.output, "under the contract seed-tile")) << r.output;
  EXPECT_TRUE(has(r.output, "verdict: FAIL")) << r.output;
  const nlohmann::json j = read_json(dir / "r.json");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["contract"]["name"], "seed-tile");
  EXPECT_EQ(j["contract"]["canonical"], false);
  EXPECT_TRUE(has(j["contract"]["all"]["text"].get<std::string>(), "tc.nan = zero")) << j["contract"].dump();
  // The case with NaN codes fails; the one without is the same under both contracts and passes.
  std::size_t case_failures = 0;
  for (const auto& f : j["failures"])
    if (f["kind"] == "case") {
      ++case_failures;
      EXPECT_EQ(f["case"], golden::format_case(nan)) << f.dump();
    }
  EXPECT_EQ(case_failures, 1u) << j["failures"].dump();
  const std::string xml = slurp(dir / "r.xml");
  EXPECT_TRUE(has(xml, "<property name=\"contract\" value=\"seed-tile\"/>")) << xml;
}

TEST(ContractCli, AnEntryOverrideAppliesToThatEntryPointOnly) {
  const fs::path dir = fresh_dir("override");
  const golden::Case held = nan_case(golden::EntryPoint::gemm_pipelined),
                     other = nan_case(golden::EntryPoint::gemm_pipelined_m32);
  const fs::path cases = write_cases(dir, {held, other});
  const CliRun r = verify(cases, "--contract gemm_pipelined=seed-tile --json '" + (dir / "r.json").string() +
                                     "' --junit '" + (dir / "r.xml").string() + "'");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "\ncontract: canonical; w8a16_gemm_pipelined=seed-tile\n")) << r.output;
  EXPECT_TRUE(has(r.output, "  w8a16_gemm_pipelined: seed-tile (tc: nan=zero")) << r.output;
  const nlohmann::json j = read_json(dir / "r.json");
  EXPECT_EQ(j["contract"]["name"], "canonical; w8a16_gemm_pipelined=seed-tile");
  EXPECT_EQ(j["contract"]["all"]["name"], "canonical");
  EXPECT_EQ(j["contract"]["entry_points"]["w8a16_gemm_pipelined"]["name"], "seed-tile");
  EXPECT_EQ(j["entry_points"]["w8a16_gemm_pipelined"]["mismatching_cases"], 1);
  EXPECT_EQ(j["entry_points"]["w8a16_gemm_pipelined_m32"]["mismatching_cases"], 0);
  const std::string xml = slurp(dir / "r.xml");
  EXPECT_TRUE(has(xml, "<property name=\"contract.w8a16_gemm_pipelined\" value=\"seed-tile (tc: nan=zero")) << xml;
}

TEST(ContractCli, ACaseTheContractDoesNotDefineFailsSayingWhyAndIsNeverCompared) {
  const fs::path dir = fresh_dir("undefined");
  // One fold at the end is defined only for scales that do not change along K; activation_like
  // scales do.
  const fs::path file = dir / "per-channel.contract";
  std::ofstream(file) << "contract = per-channel\ntc.period = end\n";
  const fs::path cases = write_cases(dir, {plain_case(golden::EntryPoint::gemm_pipelined)});
  const CliRun r = verify(cases, "--contract '" + file.string() + "' --json '" + (dir / "r.json").string() + "'");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "the contract per-channel does not define this case's outputs")) << r.output;
  const nlohmann::json j = read_json(dir / "r.json");
  EXPECT_EQ(j["entry_points"]["w8a16_gemm_pipelined"]["bytes_compared"], 0);
  EXPECT_EQ(j["entry_points"]["w8a16_gemm_pipelined"]["errors"], 1);
  const CliRun repro = cli("repro --backend sim --contract '" + file.string() + "' '" +
                           golden::format_case(plain_case(golden::EntryPoint::gemm_pipelined)) + "'");
  EXPECT_EQ(repro.exit_status, 1) << repro.output;
  EXPECT_TRUE(has(repro.output, "nothing was launched or compared")) << repro.output;
  EXPECT_FALSE(has(repro.output, "verdict: PASS")) << repro.output;
}

TEST(ContractCli, ABadNameOrFileIsExitTwoAndNothingRunsOrLooksLikeAPass) {
  const fs::path dir = fresh_dir("bad");
  const fs::path cases = write_cases(dir, {plain_case(golden::EntryPoint::gemm_pipelined)});
  const fs::path bad_file = dir / "bad.contract";
  std::ofstream(bad_file) << "tc.fold = sideways\n";
  const std::string line = golden::format_case(plain_case(golden::EntryPoint::gemm_pipelined));
  const std::vector<std::string> specs = {"no-such-contract", bad_file.string(), "gemv_batch4_strided=no-such-contract",
                                          "gemm_pipelined="};
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    const std::string c = " --contract '" + spec + "'";
    const fs::path json = dir / "r.json";
    fs::remove(json);
    const CliRun v = verify(cases, c + " --json '" + json.string() + "'");
    EXPECT_EQ(v.exit_status, 2) << v.output;
    EXPECT_FALSE(has(v.output, "verdict:")) << v.output;
    // main writes an ERROR report for a refused command line: never a verdict of PASS or FAIL.
    if (fs::exists(json)) EXPECT_EQ(read_json(json)["verdict"], "ERROR");
    const CliRun rp = cli("replay --backend sim" + c + " '" + cases.string() + "'");
    EXPECT_EQ(rp.exit_status, 2) << rp.output;
    EXPECT_FALSE(has(rp.output, "PASS")) << rp.output;
    const CliRun rr = cli("repro --backend sim" + c + " '" + line + "'");
    EXPECT_EQ(rr.exit_status, 2) << rr.output;
    EXPECT_FALSE(has(rr.output, "compared")) << rr.output;
    const fs::path out = dir / "r.rec";
    const CliRun rec = cli("record --source sim --cases '" + cases.string() + "' --out '" + out.string() + "'" + c);
    EXPECT_EQ(rec.exit_status, 2) << rec.output;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(ContractCli, CommittedRecordingsReplayUnderCanonicalWithNoDifference) {
  const CliRun r = cli("replay --backend sim --contract canonical --recordings '" + (kGolden / "recordings").string() +
                       "'");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "\ncontract: canonical\n")) << r.output;
  EXPECT_TRUE(has(r.output, " recorded cases: emulator 0 differ")) << r.output;
}

TEST(ContractCli, RecordAndReplayHoldTheOutputsToTheContractAndSaySo) {
  const fs::path dir = fresh_dir("record");
  const fs::path cases = write_cases(dir, {nan_case(golden::EntryPoint::gemm_pipelined)});
  // The simulation's bytes are canonical: recorded and compared under canonical, they agree.
  const fs::path rec = dir / "sim.rec";
  const CliRun made = cli("record --source sim --cases '" + cases.string() + "' --out '" + rec.string() + "'");
  ASSERT_EQ(made.exit_status, 0) << made.output;
  EXPECT_TRUE(has(made.output, "\ncontract: canonical\n")) << made.output;
  // Compared under seed-tile they differ, and the recording still keeps what the device produced.
  const fs::path rec2 = dir / "sim2.rec";
  const CliRun held = cli("record --source sim --contract seed-tile --cases '" + cases.string() + "' --out '" +
                          rec2.string() + "'");
  EXPECT_EQ(held.exit_status, 1) << held.output;
  EXPECT_TRUE(has(held.output, "DIFFERS from the emulator")) << held.output;
  EXPECT_TRUE(has(held.output, "under the contract seed-tile")) << held.output;
  EXPECT_TRUE(fs::exists(rec2)) << held.output;
  // The replay of canonical outputs under seed-tile: the recording checks the emulator under
  // canonical, the hardware evidence for its pieces, so there is no difference to report (the
  // device, which would be held to seed-tile's bytes, runs only on a GPU: ReplayRecordings below).
  const CliRun canon = cli("replay --backend sim --recordings '" + rec.string() + "'");
  EXPECT_EQ(canon.exit_status, 0) << canon.output;
  const CliRun other = cli("replay --backend sim --contract seed-tile --recordings '" + rec.string() + "'");
  EXPECT_EQ(other.exit_status, 0) << other.output;
  EXPECT_TRUE(has(other.output, "\ncontract: seed-tile\n")) << other.output;
  EXPECT_TRUE(has(other.output, "emulator: 0 of 1 cases differ from the recording")) << other.output;
  EXPECT_TRUE(has(other.output, "the device is held to the emulator under the contract seed-tile")) << other.output;
}

// The project's own recordings (canonical bytes) under another contract: with a device that keeps
// that contract, no false failure; with one that keeps canonical, the device's difference from the
// contract, named, and never one of the emulator's.
TEST(ReplayRecordings, UnderAnotherContractTheDeviceIsHeldToItOnTheRecordedOperands) {
  props::RecordingsOptions opt;
  // One case in 24 (the recordings' other cases walk the same path; under seed-tile each is emulated
  // element by element, twice).
  opt.shard_count = 24;
  std::string why;
  ASSERT_TRUE(props::parse_contract_args({"seed-tile"}, &opt.contract, &why)) << why;
  std::string stand_ins;
  for (device::Body b : device::kAllBodies)
    stand_ins += (stand_ins.empty() ? "" : ",") + std::string(device::body_name(b)) + "=seed-tile";
  for (const bool keeps : {true, false}) {
    device::SimBackend sim;
    if (keeps) {
      std::vector<device::BodyStandIn> si;
      ASSERT_TRUE(device::parse_stand_ins(stand_ins, &si, &why)) << why;
      sim.stand_in(si);
    }
    props::InProcessLauncher launcher(sim);
    opt.device = &launcher;
    const props::RecordingsResult r = props::replay_recordings({(kGolden / "recordings").string()}, opt);
    EXPECT_EQ(r.emulator_differ, 0u) << keeps;
    EXPECT_GT(r.cases, 0u);
    if (keeps) {
      EXPECT_EQ(r.status, 0) << (r.failures.empty() ? "" : r.failures.front());
      EXPECT_EQ(r.device_differ, 0u);
    } else {
      EXPECT_EQ(r.status, 1);
      ASSERT_GT(r.device_differ, 0u);
      EXPECT_NE(r.failures.front().find("vs the emulator under contract seed-tile on the recorded operands"),
                std::string::npos)
          << r.failures.front();
    }
  }
}

TEST(ContractCli, ReplayAndReproHoldACaseToTheContractAndReproNamesTheConvention) {
  const fs::path dir = fresh_dir("repro");
  const golden::Case nan = nan_case(golden::EntryPoint::gemm_pipelined);
  const fs::path cases = write_cases(dir, {nan});
  const CliRun canon = cli("replay --backend sim '" + cases.string() + "'");
  EXPECT_EQ(canon.exit_status, 0) << canon.output;
  const CliRun held = cli("replay --backend sim --contract seed-tile '" + cases.string() + "'");
  EXPECT_EQ(held.exit_status, 1) << held.output;
  EXPECT_TRUE(has(held.output, "from the contract seed-tile")) << held.output;
  EXPECT_TRUE(has(held.output, " --contract seed-tile 'case/1 w8a16_gemm_pipelined")) << held.output;
  const CliRun r = cli("repro --backend sim --contract seed-tile --show 1 '" + golden::format_case(nan) + "'");
  EXPECT_EQ(r.exit_status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "\ncontract: seed-tile\n")) << r.output;
  EXPECT_TRUE(has(r.output, "contract seed-tile (tc: nan=zero")) << r.output;
  // The simulation keeps canonical, which is seed-tile with NaN codes propagating.
  EXPECT_TRUE(has(r.output, "the produced value is what tc.nan = propagate gives (seed-tile otherwise)")) << r.output;
  EXPECT_TRUE(has(r.output, "the produced value is what the contract canonical gives")) << r.output;
}

TEST(ContractCli, RunOperandsCheckHoldsTheBundleToTheContract) {
  const fs::path dir = fresh_dir("operands");
  const golden::Case c = nan_case(golden::EntryPoint::gemm_pipelined);
  golden::CaseInputs in;
  std::string error;
  ASSERT_TRUE(golden::regenerate_inputs(c, &in, &error)) << error;
  golden::BundleSource src;
  src.entry = "gemm_pipelined";
  src.m = c.m, src.n = c.n, src.k = c.k, src.a_row_stride = c.a_row_stride, src.c_row_stride = c.c_row_stride;
  src.launches = 1;
  src.a_dense = in.a_bits;
  src.w = in.w_e4m3;
  src.s = in.s_f32;
  std::uint64_t size = 0;
  const fs::path bundle = dir / "b.bin";
  ASSERT_TRUE(golden::write_bundle_file(bundle.string(), src, &size, &error)) << error;
  const std::string base = "run-operands --backend sim --entry gemm_pipelined --in '" + bundle.string() + "' --out '" +
                           (dir / "out.bin").string() + "'";
  const CliRun canon = cli(base + " --check");
  EXPECT_EQ(canon.exit_status, 0) << canon.output;
  EXPECT_TRUE(has(canon.output, "\ncontract: canonical\n")) << canon.output;
  const CliRun held = cli(base + " --check --contract seed-tile");
  EXPECT_EQ(held.exit_status, 1) << held.output;
  EXPECT_TRUE(has(held.output, "differ from the contract seed-tile (tc: nan=zero")) << held.output;
  EXPECT_TRUE(has(held.output, "the produced value is what tc.nan = propagate gives")) << held.output;
  const CliRun unchecked = cli(base + " --contract seed-tile");
  EXPECT_EQ(unchecked.exit_status, 2) << unchecked.output;
}

}  // namespace
