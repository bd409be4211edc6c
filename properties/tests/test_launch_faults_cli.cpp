// SPDX-License-Identifier: MIT OR Apache-2.0
// What the gate does when the kernel under test hangs, faults or crashes (properties/launcher.hpp),
// as processes on the simulation with injected faults (W8A16_SIM_INJECT, sim_backend.hpp): the same
// launcher, worker protocol, deadline and reports a GPU run uses. A hang ends the run within its
// deadline with the case named and final reports; a fault or crash fails exactly the cases of the
// faulting kernel, each alone, while every other case runs; bad deadline or injection values are
// usage errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace {
namespace fs = std::filesystem;
using w8a16::cli_test::CliRun;
using w8a16::cli_test::slurp;

const std::string kData = std::string(W8A16_SOURCE_DIR) + "/golden";

fs::path temp_dir(const std::string& name) { return w8a16::cli_test::fresh_dir("w8a16_launch_faults_", name); }

CliRun cli_with(const std::string& env, const std::string& args) {
  return w8a16::cli_test::run_process(env + " '" + std::string(W8A16_CLI_PATH) + "' " + args);
}

// verify on the simulation over the saved cases and a few drawn ones of the GEMV and 32-row entry
// points, without the recordings (the emulator alone) or the coverage cases: seconds, not minutes.
std::string small_verify(const fs::path& dir, const std::string& more = "") {
  return "verify --backend sim --data-dir '" + kData + "' --no-recordings --no-coverage --no-save --cases 12" +
         " --entry gemv_batch4_strided --entry gemv_batch16_strided --entry gemm_pipelined_m32" + " --json '" +
         (dir / "verify.json").string() + "' --junit '" + (dir / "verify.xml").string() + "' " + more;
}

// The kernel symbol the simulation's registry plans a case line with.
std::string kernel_of(const std::string& line) {
  w8a16::golden::Case c;
  std::string error;
  EXPECT_TRUE(w8a16::golden::parse_case(line, &c, &error)) << error;
  const w8a16::device::SimBackend sim;
  const w8a16::device::Planned p = w8a16::props::plan_case(c, sim.registry(), sim.limits());
  return p.ok() ? p.plan.kernel_name : "(not planned)";
}

TEST(LaunchFaults, AFaultOrACrashFailsExactlyTheCasesOfItsKernelAndEveryOtherCaseRuns) {
  const fs::path clean_dir = temp_dir("clean"), dir = temp_dir("fault");
  const CliRun clean = cli_with("", small_verify(clean_dir));
  ASSERT_EQ(clean.exit_status, 0) << clean.output;
  const CliRun r = cli_with("W8A16_SIM_INJECT=fault:w8a16_gemv_batch4_strided,crash:w8a16_gemv_batch16_strided",
                            small_verify(dir));
  ASSERT_EQ(r.exit_status, 1) << r.output;
  const nlohmann::json want = nlohmann::json::parse(slurp(clean_dir / "verify.json"));
  const nlohmann::json got = nlohmann::json::parse(slurp(dir / "verify.json"));
  EXPECT_EQ(got["verdict"], "FAIL");
  // Every case ran: the same count per entry point as the clean run.
  for (const auto& [entry, tally] : want["entry_points"].items())
    EXPECT_EQ(got["entry_points"][entry]["cases"], tally["cases"]) << entry;
  EXPECT_EQ(got["entry_points"]["w8a16_gemm_pipelined_m32"]["errors"], 0);
  EXPECT_EQ(got["entry_points"]["w8a16_gemm_pipelined_m32"]["mismatching_cases"], 0);
  // The failures are exactly the GEMV cases, each a fault with its own error.
  std::uint64_t gemv_cases = 0;
  for (const char* e : {"w8a16_gemv_batch4_strided", "w8a16_gemv_batch16_strided"})
    gemv_cases += got["entry_points"][e]["cases"].get<std::uint64_t>();
  ASSERT_GT(gemv_cases, 4u);
  std::uint64_t faults = 0;
  for (const auto& f : got["failures"]) {
    if (f["kind"] == "campaign" || f["kind"] == "saved_cases") continue;
    ASSERT_EQ(f["kind"], "fault") << f.dump();
    ++faults;
    const std::string kernel = kernel_of(f["case"].get<std::string>());
    const std::string why = f["why"].get<std::string>();
    if (kernel == "w8a16_gemv_batch4_strided") {
      EXPECT_NE(why.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << why;
    } else {
      EXPECT_EQ(kernel, "w8a16_gemv_batch16_strided") << f.dump();
      // SIGSEGV; a sanitizer's own handler may end the process with another signal instead.
      EXPECT_NE(why.find("the launch worker died during the launch (killed by signal "), std::string::npos) << why;
    }
    EXPECT_NE(why.find("kernel " + kernel + ", grid ("), std::string::npos) << why;  // the case names its launch
  }
  EXPECT_EQ(faults, gemv_cases);
  EXPECT_EQ(got["launches"]["faulted"], gemv_cases);
  EXPECT_EQ(got["launches"]["not_run_lost_context"], 0);
  EXPECT_EQ(got["launches"]["hang"], "");
  // Each faulting case ended its worker: the next case, whatever it is, started a fresh one.
  EXPECT_GE(got["launches"]["worker_processes"].get<std::uint64_t>(), gemv_cases);
}

TEST(LaunchFaults, AnInjectionLimitedToOneMFailsOnlyThoseCases) {
  const CliRun r = cli_with("W8A16_SIM_INJECT=fault:w8a16_gemv_batch4_strided:m=4",
                            "replay --backend sim '" + kData + "/cases/boundaries.case'");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  std::size_t pos = 0, failed = 0;
  while ((pos = r.output.find("\nFAIL ", pos)) != std::string::npos) {
    const std::size_t line_start = r.output.find('\n', pos + 1) + 1;
    const std::string line = r.output.substr(line_start, r.output.find('\n', line_start) - line_start);
    EXPECT_NE(line.find("w8a16_gemv_batch4_strided m=4 "), std::string::npos) << line;
    ++failed;
    pos = line_start;
  }
  EXPECT_GE(failed, 1u) << r.output;
}

TEST(LaunchFaults, AHangEndsTheRunWithinItsDeadlineNamingTheCaseInFinalReports) {
  const fs::path dir = temp_dir("hang");
  // An earlier run's PASS must not survive.
  std::ofstream(dir / "verify.json") << "{\"verdict\": \"PASS\"}\n";
  const auto start = std::chrono::steady_clock::now();
  const CliRun r = cli_with("W8A16_SIM_INJECT=hang:w8a16_gemv_batch16_strided",
                            small_verify(dir, "--launch-deadline 2"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_status, 1) << r.output;
  EXPECT_LT(seconds, 2 + 30) << r.output;
  EXPECT_NE(r.output.find("\nHANG "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("HANG: no completion within 2.0 s of the launch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernel w8a16_gemv_batch16_strided, grid ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not run after the hang"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("coverage gaps"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "verify.json"));
  EXPECT_EQ(j["verdict"], "FAIL");
  const std::string hang = j["launches"]["hang"].get<std::string>();
  EXPECT_NE(hang.find("w8a16_gemv_batch16_strided"), std::string::npos) << hang;
  EXPECT_EQ(kernel_of(hang.substr(hang.find("case/1"), hang.find('\n') - hang.find("case/1"))),
            "w8a16_gemv_batch16_strided");
  bool listed = false;
  for (const auto& f : j["failures"]) listed = listed || f["kind"] == "hang";
  EXPECT_TRUE(listed) << j["failures"].dump();
  EXPECT_GT(j["launches"]["not_run_after_hang"].get<std::uint64_t>(), 0u);
  const std::string junit = slurp(dir / "verify.xml");
  EXPECT_NE(junit.find("HANG"), std::string::npos);
  EXPECT_NE(junit.find("<failure"), std::string::npos);
}

TEST(LaunchFaults, AHungDrawnCaseIsSavedToTheRegressions) {
  const fs::path dir = temp_dir("hang_saved");
  const CliRun r = cli_with("W8A16_SIM_INJECT=hang:w8a16_gemv_batch16_strided W8A16_REGRESSIONS_DIR='" +
                                (dir / "regressions").string() + "'",
                            "verify --backend sim --data-dir '" + kData +
                                "' --no-recordings --no-coverage --no-saved --cases 3 --entry gemv_batch16_strided "
                                "--launch-deadline 2");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  ASSERT_TRUE(fs::exists(dir / "regressions" / "verify-simulation.case")) << r.output;
  const std::string saved = slurp(dir / "regressions" / "verify-simulation.case");
  EXPECT_NE(saved.find("w8a16_gemv_batch16_strided"), std::string::npos) << saved;
  EXPECT_NE(saved.find("HANG"), std::string::npos) << saved;
}

TEST(LaunchFaults, AnInProcessHangPrintsItAndExitsOne) {
  const CliRun r = cli_with(
      "W8A16_SIM_INJECT=hang:w8a16_gemv_batch4_strided",
      "repro --backend sim --launch-deadline 2 'case/1 w8a16_gemv_batch4_strided m=4 n=9 k=384 a_row_stride=392 "
      "c_row_stride=16 dist=activation_like seed=0x0000000000000501 gen=1'");
  ASSERT_EQ(r.exit_status, 1) << r.output;
  EXPECT_NE(r.output.find("HANG: case/1 w8a16_gemv_batch4_strided m=4 n=9"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernel w8a16_gemv_batch4_strided, grid (2, 1, 1)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verdict: FAIL"), std::string::npos) << r.output;
}

TEST(LaunchFaults, TheSimulationInWorkersAgreesWithTheSimulationInProcess) {
  const fs::path a = temp_dir("inproc"), b = temp_dir("isolated");
  const CliRun in_process = cli_with("", small_verify(a));
  const CliRun isolated = cli_with("", small_verify(b, "--isolate"));
  ASSERT_EQ(in_process.exit_status, 0) << in_process.output;
  ASSERT_EQ(isolated.exit_status, 0) << isolated.output;
  const nlohmann::json x = nlohmann::json::parse(slurp(a / "verify.json"));
  const nlohmann::json y = nlohmann::json::parse(slurp(b / "verify.json"));
  EXPECT_EQ(x["entry_points"], y["entry_points"]);
  EXPECT_EQ(x["launches"]["worker_processes"], 0);
  EXPECT_EQ(y["launches"]["worker_processes"], 1);
}

TEST(LaunchFaults, ARefusedModuleReplacesAnEarlierPassReport) {
  const fs::path dir = temp_dir("module");
  std::ofstream(dir / "verify.json") << "{\"verdict\": \"PASS\"}\n";
  std::ofstream(dir / "cut.fatbin", std::ios::binary) << std::string("\x50\xED\x55\xBA\x01\x00\x10\x00", 8);
  const CliRun r = cli_with("", "verify --module '" + (dir / "cut.fatbin").string() + "' --data-dir '" + kData +
                                    "' --json '" + (dir / "verify.json").string() + "'");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "verify.json"));
  EXPECT_EQ(j["verdict"], "ERROR") << j.dump();
  EXPECT_NE(j["why_not_pass"].dump().find("cut.fatbin"), std::string::npos) << j.dump();
}

TEST(LaunchFaults, BadDeadlinesAndInjectionsAreUsageErrors) {
  for (const char* d : {"0", "-1", "abc", "nan", "1e9", ""}) {
    const CliRun r = cli_with("", std::string("verify --backend sim --launch-deadline '") + d + "' --cases 0");
    EXPECT_EQ(r.exit_status, 2) << d << ": " << r.output;
  }
  const CliRun env = cli_with("W8A16_LAUNCH_DEADLINE=soon", "verify --backend sim --cases 0");
  EXPECT_EQ(env.exit_status, 2) << env.output;
  EXPECT_NE(env.output.find("W8A16_LAUNCH_DEADLINE"), std::string::npos) << env.output;
  for (const char* inj : {"explode:w8a16_gemv_batch4_strided", "fault", "fault:gemv", "hang:w8a16_tc_rows:m=0",
                          "hang:w8a16_tc_rows:n=3", "fault:w8a16_no_such_kernel", "hang:w8a16_gemv_batch4"}) {
    const CliRun r = cli_with(std::string("W8A16_SIM_INJECT='") + inj + "'",
                              "replay --backend sim '" + kData + "/cases/boundaries.case'");
    EXPECT_EQ(r.exit_status, 2) << inj << ": " << r.output;
    EXPECT_NE(r.output.find("W8A16_SIM_INJECT"), std::string::npos) << r.output;
  }
}

// ---- a worker never outlives verify ---------------------------------------------------------

// The children of `parent` (from /proc/*/stat's ppid field).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp(e.path() / "stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// verify on the simulation with its one entry point's kernel hanging (the injected hang: the
// launch sleeps forever) and a deadline far off, so that the launch worker is hung when the test
// signals verify. Returns verify's pid and, once it is there, its launch worker's.
std::pair<pid_t, pid_t> start_verify_with_a_hung_worker(const fs::path& dir) {
  const std::string dev_null = "/dev/null";
  std::vector<std::string> args = {W8A16_CLI_PATH,
                                   "verify",
                                   "--backend",
                                   "sim",
                                   "--data-dir",
                                   kData,
                                   "--no-recordings",
                                   "--no-coverage",
                                   "--no-save",
                                   "--no-saved",
                                   "--cases",
                                   "3",
                                   "--entry",
                                   "gemv_batch16_strided",
                                   "--launch-deadline",
                                   "600",
                                   "--json",
                                   (dir / "v.json").string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("W8A16_SIM_INJECT=", 0) != 0) env_text.emplace_back(*e);
  env_text.emplace_back("W8A16_SIM_INJECT=hang:w8a16_gemv_batch16_strided");
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, dev_null.c_str(), O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, dev_null.c_str(), O_WRONLY, 0);
  pid_t pid = -1;
  EXPECT_EQ(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  pid_t worker = -1;
  for (int i = 0; i < 600 && worker < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::vector<pid_t> kids = children_of(pid);
    if (!kids.empty()) worker = kids.front();
  }
  // Past its start: the worker has taken the case and sleeps in the hung launch.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  return {pid, worker};
}

bool gone_within(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (!fs::exists(fs::path("/proc") / std::to_string(pid))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(LaunchFaults, ATerminatedVerifyKillsAndReapsItsHungWorker) {
  // Orphans come to this process, not to PID 1, so that one left behind is seen (and cleaned up).
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path dir = temp_dir("signal_" + std::to_string(sig));
    const auto [verify, worker] = start_verify_with_a_hung_worker(dir);
    ASSERT_GT(worker, 0) << "verify started no launch worker";
    ASSERT_EQ(::kill(verify, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(verify, &status, 0), verify);
    // verify ends as the signal's default action ends it, and no report says PASS.
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    EXPECT_EQ(slurp(dir / "v.json").find("\"PASS\""), std::string::npos);
    // verify reaped its worker: it is no child of this subreaper, alive or a zombie.
    const bool reaped_by_verify = ::waitpid(worker, nullptr, WNOHANG) < 0 && errno == ECHILD;
    EXPECT_TRUE(reaped_by_verify) << "the launch worker " << worker << " outlived verify (signal " << sig << ")";
    if (!reaped_by_verify) {
      ::kill(worker, SIGKILL);
      ::waitpid(worker, nullptr, 0);
    }
  }
}

TEST(LaunchFaults, AKilledVerifysHungWorkerEndsItself) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const fs::path dir = temp_dir("sigkill");
  const auto [verify, worker] = start_verify_with_a_hung_worker(dir);
  ASSERT_GT(worker, 0) << "verify started no launch worker";
  ASSERT_EQ(::kill(verify, SIGKILL), 0);
  ASSERT_EQ(::waitpid(verify, nullptr, 0), verify);
  // No handler runs on SIGKILL: the worker, now this subreaper's child, sees its request pipe close.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  pid_t r = 0;
  while (r == 0 && std::chrono::steady_clock::now() < until) {
    r = ::waitpid(worker, nullptr, WNOHANG);
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(r, worker) << "the launch worker " << worker << " outlived a killed verify";
  if (r != worker) {
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
  }
  EXPECT_TRUE(gone_within(worker, 5));
}

}  // namespace
