// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check probe`, `record` and `replay --recordings` run as processes: without a GPU they say
// so and exit 2 writing nothing; with the simulation source the files they write read back and
// replay; bad arguments exit 2 and change nothing; a recording the emulator disagrees with fails.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_run.hpp"
#include "w8a16/golden/mma_probe.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/golden/recording.hpp"

namespace {
namespace fs = std::filesystem;
using namespace w8a16::golden;

using w8a16::cli_test::CliRun;

CliRun cli(const std::string& args) { return w8a16::cli_test::run_cli(args); }

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("w8a16_probe_record_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

constexpr const char* kCases =
    "# three small cases\n"
    "case/1 w8a16_gemv_batch4_strided m=3 n=7 k=640 a_row_stride=648 c_row_stride=9 dist=specials "
    "seed=0x0000000000000042 gen=1\n"
    "case/1 w8a16_gemm_pipelined_m32_strided m=5 n=33 k=256 a_row_stride=264 c_row_stride=35 dist=cancellation "
    "seed=0x0000000000000043 gen=1\n"
    "case/1 w8a16_gemm_pipelined m=65 n=70 k=128 a_row_stride=128 c_row_stride=70 dist=activation_like "
    "seed=0x0000000000000044 gen=1\n";

std::string write_cases(const std::string& dir) {
  const std::string path = dir + "/small.case";
  std::ofstream(path) << kCases;
  return path;
}

TEST(ProbeCli, WithoutAGpuIsSkippedOrRefusedByBuildAndWritesNothing) {
  const std::string dir = fresh_dir("nogpu");
  const CliRun r = cli("probe --cases 2 --out '" + dir + "/mma'");
  if (r.exit_status == 0 || r.exit_status == 1) {
    // A GPU answered (this test also runs on the GPU machine): then it must have recorded.
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir + "/mma")) files += e.path().extension() == ".mmav";
    EXPECT_EQ(files, 11u) << r.output;
    GTEST_SKIP() << "a GPU is present, so the no-GPU path cannot be shown here; it recorded instead:\n" << r.output;
  }
#if W8A16_HAVE_CUDA
  EXPECT_EQ(r.exit_status, 77) << r.output;  // README "Exit statuses": no GPU where one was asked for
  EXPECT_NE(r.output.find("probe: SKIPPED: no GPU on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was recorded"), std::string::npos) << r.output;
#else
  EXPECT_EQ(r.exit_status, 2) << r.output;  // a build without the CUDA backend: a usage error
  EXPECT_NE(r.output.find("probe: no GPU: this build has no CUDA backend"), std::string::npos) << r.output;
#endif
  EXPECT_FALSE(fs::exists(dir + "/mma")) << r.output;
}

TEST(ProbeCli, SimulationSourceWritesElevenFilesThatReadBackAndReplay) {
  const std::string dir = fresh_dir("sim");
  const CliRun r = cli("probe --source sim --cases 16 --out '" + dir + "'");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("NOT a hardware recording"), std::string::npos) << r.output;
  const fs::path folder = fs::path(dir) / "emulator-sm90-not-hardware";
  for (int i = 0; i < kProbeRegimeCount; ++i) {
    const auto regime = static_cast<ProbeRegime>(i);
    const fs::path f = folder / ("emulator-sm90-not-hardware_" + std::to_string(i) + "_" +
                                 std::string(probe_regime_name(regime)) + ".mmav");
    MmavFile m;
    std::string error;
    ASSERT_TRUE(read_mmav_file(f.string(), &m, &error)) << error;
    const auto inputs = regime == ProbeRegime::targeted ? probe_targeted_cases()
                                                        : probe_regime_cases(regime, 16, 0x5eed000000000001ull);
    ASSERT_EQ(m.cases.size(), inputs.size()) << f;
    for (std::size_t c = 0; c < inputs.size(); ++c) {
      EXPECT_EQ(m.cases[c].a, inputs[c].a) << f << " case " << c;
      EXPECT_EQ(m.cases[c].bt, inputs[c].bt) << f << " case " << c;
      EXPECT_EQ(m.cases[c].c, inputs[c].c) << f << " case " << c;
    }
  }
  EXPECT_NE(slurp((folder / "MANIFEST.txt").string()).find("hardware: NO"), std::string::npos);
  // The files replay through `vectors` as well (the format is golden/mma/README.md's).
  const CliRun v = cli("vectors '" + (folder / "emulator-sm90-not-hardware_4_specials.mmav").string() + "'");
  EXPECT_EQ(v.exit_status, 0) << v.output;
  EXPECT_NE(v.output.find("0 mismatches of 2048 dot products"), std::string::npos) << v.output;

  // A second run refuses to replace them, changing nothing; --overwrite replaces them.
  const std::string before = slurp((folder / "emulator-sm90-not-hardware_0_uniform.mmav").string());
  const CliRun again = cli("probe --source sim --cases 8 --out '" + dir + "'");
  EXPECT_EQ(again.exit_status, 2) << again.output;
  EXPECT_NE(again.output.find("--overwrite"), std::string::npos) << again.output;
  EXPECT_EQ(slurp((folder / "emulator-sm90-not-hardware_0_uniform.mmav").string()), before);
  const CliRun over = cli("probe --source sim --cases 8 --overwrite --out '" + dir + "'");
  EXPECT_EQ(over.exit_status, 0) << over.output;
  EXPECT_NE(slurp((folder / "emulator-sm90-not-hardware_0_uniform.mmav").string()), before);
}

TEST(ProbeCli, BadArgumentsExitTwoAndCreateNothing) {
  const std::string dir = fresh_dir("bad");
  for (const char* args : {"--source sim --cases 0", "--source sim --cases 70000", "--source sim --seed zz",
                           "--source sim --seed -1", "--source gpu"}) {
    const CliRun r = cli(std::string("probe ") + args + " --out '" + dir + "/x'");
    EXPECT_EQ(r.exit_status, 2) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir + "/x")) << args;
  }
}

TEST(RecordCli, WithoutAGpuIsSkippedOrRefusedByBuildAndWritesNothing) {
  const std::string dir = fresh_dir("record_nogpu");
  const CliRun r = cli("record --cases '" + write_cases(dir) + "' --out '" + dir + "/r.rec'");
  if (r.exit_status == 0 || r.exit_status == 1) {
    EXPECT_TRUE(fs::exists(dir + "/r.rec")) << r.output;
    GTEST_SKIP() << "a GPU is present, so the no-GPU path cannot be shown here; it recorded instead:\n" << r.output;
  }
#if W8A16_HAVE_CUDA
  EXPECT_EQ(r.exit_status, 77) << r.output;
  EXPECT_NE(r.output.find("record: SKIPPED: no GPU on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was recorded"), std::string::npos) << r.output;
#else
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("record: no GPU: this build has no CUDA backend"), std::string::npos) << r.output;
#endif
  EXPECT_FALSE(fs::exists(dir + "/r.rec"));
}

TEST(RecordCli, SimulationRecordingReplaysAndAChangedOutputFails) {
  const std::string dir = fresh_dir("record_sim");
  const std::string rec = dir + "/out/sim.rec";
  const CliRun r = cli("record --source sim --cases '" + write_cases(dir) + "' --out '" + rec + "'");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_NE(r.output.find("0 of 3 cases differ from the emulator"), std::string::npos) << r.output;
  Recording parsed;
  std::string error;
  ASSERT_TRUE(read_recording_file(rec, &parsed, &error)) << error;
  ASSERT_EQ(parsed.outputs.size(), 3u);
  EXPECT_EQ(parsed.outputs[0].bits.size(), 21u);  // 3 x 7: stored in full
  EXPECT_TRUE(parsed.outputs[2].bits.empty());    // 65 x 70 = 4550 > 4096: digest only
  EXPECT_EQ(parsed.header.gpu, "simulation (emulator, not hardware)");

  const CliRun ok = cli("replay --backend sim --recordings '" + rec + "'");
  EXPECT_EQ(ok.exit_status, 0) << ok.output;
  EXPECT_NE(ok.output.find("3 recorded cases: emulator 0 differ"), std::string::npos) << ok.output;

  // One output bit changed (and the digest made consistent): the emulator no longer agrees.
  Recording changed = parsed;
  changed.outputs[0].bits[4] ^= 1;
  changed.outputs[0].digest = outputs_digest(changed.outputs[0].bits);
  const std::string bad = dir + "/changed.rec";
  ASSERT_TRUE(write_recording_file(bad, changed, &error)) << error;
  const CliRun fails = cli("replay --backend sim --recordings '" + bad + "'");
  EXPECT_EQ(fails.exit_status, 1) << fails.output;
  EXPECT_NE(fails.output.find("FAIL emulator vs recording"), std::string::npos) << fails.output;
  EXPECT_NE(fails.output.find("first C[0][4]"), std::string::npos) << fails.output;
  // A digest-only case changed: caught by its digest.
  changed = parsed;
  changed.outputs[2].digest ^= 1;
  ASSERT_TRUE(write_recording_file(bad, changed, &error)) << error;
  EXPECT_EQ(cli("replay --backend sim --recordings '" + bad + "'").exit_status, 1);

  // Asking for another GPU's recording is an error, not a pass.
  const CliRun other = cli("replay --backend sim --gpu h200 --recordings '" + rec + "'");
  EXPECT_EQ(other.exit_status, 2) << other.output;
  EXPECT_NE(other.output.find("not 'h200'"), std::string::npos) << other.output;
  // A corrupt file is an error naming its line.
  std::ofstream(dir + "/corrupt.rec") << slurp(rec).substr(0, slurp(rec).find("out ")) << "out 0x12 nonsense\n";
  const CliRun corrupt = cli("replay --backend sim --recordings '" + dir + "/corrupt.rec'");
  EXPECT_EQ(corrupt.exit_status, 2) << corrupt.output;
  EXPECT_NE(corrupt.output.find("corrupt.rec:10: corrupt digest"), std::string::npos) << corrupt.output;
  // A folder without recordings, or a missing path, checks nothing: an error.
  fs::create_directories(dir + "/empty");
  EXPECT_EQ(cli("replay --backend sim --recordings '" + dir + "/empty'").exit_status, 2);
  EXPECT_EQ(cli("replay --backend sim --recordings '" + dir + "/none.rec'").exit_status, 2);
  EXPECT_EQ(cli("replay --backend sim").exit_status, 2);
}

TEST(RecordCli, BadInputExitsTwoAndChangesNothing) {
  const std::string dir = fresh_dir("record_bad");
  const std::string cases = write_cases(dir);
  EXPECT_EQ(cli("record --source sim --cases '" + dir + "/missing' --out '" + dir + "/a.rec'").exit_status, 2);
  std::ofstream(dir + "/broken.case") << "case/1 w8a16_gemm_pipelined m=0 n=1 k=128\n";
  const CliRun broken = cli("record --source sim --cases '" + dir + "/broken.case' --out '" + dir + "/a.rec'");
  EXPECT_EQ(broken.exit_status, 2) << broken.output;
  EXPECT_NE(broken.output.find("broken.case:1"), std::string::npos) << broken.output;
  EXPECT_FALSE(fs::exists(dir + "/a.rec"));
  std::ofstream(dir + "/keep.rec") << "precious";
  const CliRun exists = cli("record --source sim --cases '" + cases + "' --out '" + dir + "/keep.rec'");
  EXPECT_EQ(exists.exit_status, 2) << exists.output;
  EXPECT_EQ(slurp(dir + "/keep.rec"), "precious");
  EXPECT_EQ(cli("record --source nope --cases '" + cases + "' --out '" + dir + "/b.rec'").exit_status, 2);
  EXPECT_FALSE(fs::exists(dir + "/b.rec"));
}

}  // namespace

namespace {

// `verify --perturb`: a GPU-only mode. Without a GPU it says so (77 where the CUDA backend is built:
// the perturbed module lies beside the CLI; 2 where it is not), and what it cannot honour is a
// usage error before anything loads.
TEST(VerifyPerturbCli, WithoutAGpuIsSkippedOrRefusedByBuild) {
  const CliRun r = cli("verify --perturb --data-dir '" + std::string(W8A16_SOURCE_DIR) + "/golden' --no-save");
  if (r.exit_status == 0 || r.exit_status == 1) GTEST_SKIP() << "a GPU is present: it ran instead:\n" << r.output;
#if W8A16_HAVE_CUDA
  EXPECT_EQ(r.exit_status, 77) << r.output;
  EXPECT_NE(r.output.find("verify: SKIPPED: no GPU on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("w8a16_perturbed.fatbin"), std::string::npos) << r.output;
  const CliRun missing = cli("verify --perturb --module /nonexistent/w8a16_perturbed.fatbin --data-dir '" +
                             std::string(W8A16_SOURCE_DIR) + "/golden' --no-save");
  EXPECT_EQ(missing.exit_status, 2) << missing.output;
  EXPECT_NE(missing.output.find("no such file"), std::string::npos) << missing.output;
#else
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("this build has no CUDA backend"), std::string::npos) << r.output;
#endif
}

TEST(VerifyPerturbCli, WhatItCannotHonourIsAUsageError) {
  const std::string golden = " --data-dir '" + std::string(W8A16_SOURCE_DIR) + "/golden' --no-save";
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"verify --perturb-seeds 3", "--perturb-seeds needs --perturb"},
      {"verify --perturb --contract no-such-contract", "no-such-contract"},
      {"verify --perturb --backend sim", "not with --backend sim"},
      {"verify --perturb --backend sim --json REPORT", "not with --backend sim"},
      {"verify --perturb --perturb-seeds 0", "--perturb-seeds"},
  };
  const std::string report = fresh_dir("perturb_refused") + "/v.json";
  for (const auto& c : cases) {
    std::string args = c.args;
    if (args.find("REPORT") != std::string::npos) args.replace(args.find("REPORT"), 6, "'" + report + "'");
    const CliRun r = cli(args + golden);
    EXPECT_EQ(r.exit_status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  // Any contract is taken (the bytes are held to it): canonical, as with no flag, goes on to the
  // module, which a build without CUDA refuses for that reason alone.
  const CliRun canonical = cli("verify --perturb --contract canonical --module /nonexistent.fatbin" + golden);
  EXPECT_EQ(canonical.output.find("--contract"), std::string::npos) << canonical.output;
  // The report a refused run was asked for says ERROR (the CLI's rule for every exit before a verdict).
  std::ifstream json(report);
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"verdict\": \"ERROR\""), std::string::npos) << text;
  EXPECT_EQ(text.find("PASS"), std::string::npos) << text;
}

// The sanitizer stage's flags: what cannot be honoured is a usage error before anything runs; on the
// simulation the stage does not run, and every report says so (a stage not run is never a pass).
TEST(VerifySanitizeCli, FlagsItCannotHonourAreUsageErrorsAndTheSimulationSaysNotRun) {
  const std::string golden = " --data-dir '" + std::string(W8A16_SOURCE_DIR) + "/golden' --no-save";
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"verify --sanitizer /bin/true", "--sanitizer needs --sanitize"},
      {"verify --sanitize --sanitizer /nonexistent/compute-sanitizer", "not an executable file"},
      {"verify --perturb --sanitize", "not with --perturb"},
  };
  for (const auto& c : cases) {
    const CliRun r = cli(std::string(c.args) + golden);
    EXPECT_EQ(r.exit_status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  const std::string report = fresh_dir("sanitize_sim") + "/v.json";
  // The least campaign that reaches the stage: one drawn case and nothing else (its verdict is not
  // what this test reads).
  const CliRun sim = cli(
      "verify --backend sim --cases 1 --no-saved --no-coverage --no-recordings --no-invariance "
      "--entry gemm_pipelined_m64_strided --sanitize --json '" +
      report + "'" + golden);
  EXPECT_NE(sim.output.find("sanitize: not run: the simulation runs no kernel"), std::string::npos) << sim.output;
  std::ifstream json(report);
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"why_not_run\": \"the simulation runs no kernel"), std::string::npos) << text;
}

}  // namespace
