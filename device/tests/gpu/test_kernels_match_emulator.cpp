// SPDX-License-Identifier: MIT OR Apache-2.0
// Every kernel through every entry point on a real GPU, compared byte for byte with the emulator
// (NUMERICS.md 2), over golden case lines and verify's launch path (gpu_rig.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu_cases.hpp"
#include "gpu_rig.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::gputest {
namespace {

using device::Body;
using golden::EntryPoint;

// ---- knobs (environment), so a quick run and the full run use one binary --------------------
std::uint32_t case_percent() {
  const char* v = std::getenv("W8A16_GPU_CASE_PERCENT");
  return v ? static_cast<std::uint32_t>(std::max(1, std::atoi(v))) : 100u;
}
std::uint64_t work_cap() {  // m * n * k per case: the emulator's cost (the full run takes ~1 min on 16 cores)
  const char* v = std::getenv("W8A16_GPU_WORK_CAP");
  return v ? std::strtoull(v, nullptr, 10) : 48'000'000ull;
}
std::uint64_t base_seed() {
  const char* v = std::getenv("W8A16_GPU_SEED");
  return v ? std::strtoull(v, nullptr, 0) : 0x5EED'CAFE'2026ull;
}

std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

// ---- the tally every test adds to and the summary prints ------------------------------------
struct Tally {
  std::uint64_t cases = 0, bytes = 0, mismatched_elements = 0, failed_cases = 0;
};
std::mutex g_mutex;
std::map<std::pair<std::string, std::string>, Tally> g_tally;  // (entry, body)

void print_table(const char* title, const std::map<std::pair<std::string, std::string>, Tally>& t) {
  std::printf("%s\n  %-34s %-18s %8s %14s %12s %8s\n", title, "entry point", "body", "cases", "bytes compared",
              "mismatches", "failed");
  for (const auto& [key, v] : t)
    std::printf("  %-34s %-18s %8llu %14llu %12llu %8llu\n", key.first.c_str(), key.second.c_str(),
                static_cast<unsigned long long>(v.cases), static_cast<unsigned long long>(v.bytes),
                static_cast<unsigned long long>(v.mismatched_elements),
                static_cast<unsigned long long>(v.failed_cases));
}

template <class F>
void parallel_for(std::size_t count, F&& f) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < count;) f(i);
    });
  for (auto& th : pool) th.join();
}

device::Contract contract_of(EntryPoint e) {
  return golden::entry_point_is_gemv(e) ? device::Contract::gemv : device::Contract::canonical;
}

class GpuKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!rig_ && why_.empty()) rig_ = GpuRig::create(&why_);
    if (rig_) {
      const char* module = std::getenv("W8A16_GPU_MODULE");
      std::printf("GPU tests over %s\n", module && *module ? module : "the embedded kernel module");
    }
  }
  void SetUp() override {
    if (!rig_) GTEST_SKIP() << "GPU test skipped: " << why_;
  }

  // Runs the cases, emulator on every core in chunks, GPU launches in order; every byte of C (its
  // guard rows past M and its pitch padding included) is compared. check_target: the entry must
  // dispatch each case to the body it was aimed at. Each failure prints its case line and is
  // saved to golden/regressions/<test>.case (at most 12 per test, the rest are counted).
  static void run_campaign(const std::vector<GpuCase>& cases, bool check_target) {
    std::map<std::pair<std::string, std::string>, Tally> local;
    const std::size_t chunk = 4 * std::max(1u, std::thread::hardware_concurrency());
    const std::string test = test_name();
    int kept = 0;
    auto fail = [&](const GpuCase& g, const std::string& why) {
      if (kept++ < 12) ADD_FAILURE() << why << keep_failure(test, g.c, why);
      else ADD_FAILURE() << why << "\n  case: " << g.line() << " (not saved: 12 already kept for this test)";
    };
    for (std::size_t base = 0; base < cases.size(); base += chunk) {
      const std::size_t count = std::min(chunk, cases.size() - base);
      std::vector<golden::CaseInputs> inputs(count);
      std::vector<std::vector<std::uint16_t>> expected(count);
      parallel_for(count, [&](std::size_t i) {
        const golden::Case& c = cases[base + i].c;
        inputs[i] = inputs_of(c);
        expected[i] = props::expected_output(c, inputs[i], 1);  // one thread: one case per core
      });
      for (std::size_t i = 0; i < count; ++i) {
        const GpuCase& g = cases[base + i];
        const GpuRun run = rig_->run(g.c, inputs[i]);
        const std::string entry(golden::entry_point_name(g.c.entry));
        if (!run.ok) {
          Tally& t = local[{entry, "(none)"}];
          ++t.cases;
          ++t.failed_cases;
          fail(g, "launch failed: " + run.error);
          continue;
        }
        Tally& t = local[{entry, device::body_name(run.plan.body)}];
        ++t.cases;
        if (check_target && run.plan.body != g.target)
          fail(g, std::string("dispatch reached ") + device::body_name(run.plan.body) + ", the case was aimed at " +
                      device::body_name(g.target));
        if (run.plan.contract != contract_of(g.c.entry)) fail(g, "plan contract differs from the entry's");
        const props::Comparison cmp = props::compare_output(g.c, expected[i], run.c);
        t.bytes += cmp.bytes_compared;
        t.mismatched_elements += cmp.mismatches;
        if (cmp.mismatches != 0) {
          ++t.failed_cases;
          std::string why = "MISMATCH in " + std::string(run.plan.kernel_name) + " (" +
                            device::body_name(run.plan.body) + "): " + std::to_string(cmp.mismatches) +
                            " elements differ from the emulator";
          for (const std::string& d : cmp.details) why += "; " + d;
          why += "; grid (" + std::to_string(run.plan.grid.x) + ", " + std::to_string(run.plan.grid.y) +
                 "), dynamic smem " + std::to_string(run.plan.dynamic_smem);
          fail(g, why);
        }
      }
    }
    print_table("per entry point and body:", local);
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [key, v] : local) {
      Tally& x = g_tally[key];
      x.cases += v.cases;
      x.bytes += v.bytes;
      x.mismatched_elements += v.mismatched_elements;
      x.failed_cases += v.failed_cases;
    }
  }

  static std::vector<GpuCase> cases_for(EntryPoint e, std::initializer_list<std::pair<Body, std::uint32_t>> plan) {
    std::vector<GpuCase> all;
    for (const auto& [body, count] : plan) {
      const std::uint32_t n = std::max<std::uint32_t>(1, count * case_percent() / 100);
      auto v = make_cases(e, body, n, base_seed(), work_cap(), rig_->present());
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }

  static std::unique_ptr<GpuRig> rig_;
  static std::string why_;
};
std::unique_ptr<GpuRig> GpuKernels::rig_;
std::string GpuKernels::why_;

TEST_F(GpuKernels, ModuleCarriesEveryKernelOfTheFamily) {
  for (device::KernelId id : device::kAllKernels)
    EXPECT_TRUE(static_cast<bool>(rig_->backend().registry().resolve(id)))
        << device::kernel_name(id) << " is missing from the kernel module";
}

TEST_F(GpuKernels, GemmPipelinedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined, {{Body::gemm128_tile, 600}}), true);
}
TEST_F(GpuKernels, GemmPipelinedM32MatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined_m32,
                         {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedM32StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined_m32_strided,
                         {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedM64MatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined_m64, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}), true);
}
TEST_F(GpuKernels, GemmPipelinedM64StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined_m64_strided, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedByMMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_pipelined_by_m, {{Body::gemm128_tile, 500}}), false);
}
TEST_F(GpuKernels, GemvBatch4StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemv_batch4_strided, {{Body::gemv_strip, 500}}), true);
}
// The Hopper tier through every tensor-core entry point (each tries it first), each of its three
// symbols at every shape region (the cases take the other symbols away: without=).
TEST_F(GpuKernels, HopperTierMatchesEmulatorBitForBitThroughEveryEntry) {
  for (EntryPoint e :
       {EntryPoint::gemm_pipelined, EntryPoint::gemm_pipelined_m32, EntryPoint::gemm_pipelined_m32_strided,
        EntryPoint::gemm_pipelined_m64, EntryPoint::gemm_pipelined_m64_strided, EntryPoint::gemm_pipelined_by_m})
    run_campaign(cases_for(e, {{Body::wgmma_units, 90}, {Body::wgmma_units128, 90}, {Body::wgmma_units128_x2, 30}}),
                 true);
}
// W packed by the launch layer (NUMERICS.md 2.3): its three symbols, every shape region.
TEST_F(GpuKernels, GemmPackedStridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemm_packed_strided,
                         {{Body::wgmma_packed128, 150}, {Body::wgmma_packed128_x2, 90}, {Body::tc_rows_packed, 90}}),
               true);
}
TEST_F(GpuKernels, GemvBatch16StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(EntryPoint::gemv_batch16_strided, {{Body::gemv_strip, 500}}), true);
}

// One awkward shape per body and configuration: what gpu-run gives compute-sanitizer.
TEST_F(GpuKernels, OneAwkwardShapePerBodyMatchesEmulator) { run_campaign(awkward_cases(rig_->present()), true); }

// Same case twice, fresh sentinel each time: identical bytes (a race or an unwritten output would
// show as a difference), for every body.
TEST_F(GpuKernels, SameCaseTwiceGivesIdenticalBytes) {
  std::vector<GpuCase> cases = awkward_cases(rig_->present());
  for (const GpuCase& big : make_cases(EntryPoint::gemm_pipelined_by_m, Body::gemm128_tile, 12, base_seed() ^ 0x77,
                                       work_cap(), rig_->present()))
    cases.push_back(big);
  for (const GpuCase& g : cases) {
    const golden::CaseInputs in = inputs_of(g.c);
    const GpuRun first = rig_->run(g.c, in);
    const GpuRun second = rig_->run(g.c, in);
    ASSERT_TRUE(first.ok && second.ok) << first.error << second.error
                                       << keep_failure(test_name(), g.c, "launch failed");
    if (first.c != second.c) ADD_FAILURE() << "two runs differ" << keep_failure(test_name(), g.c, "two runs differ");
  }
}

// Determinism: one awkward case per body and configuration, 100 launches, every launch's bytes
// equal to the first's. A race or an order that depends on scheduling shows as a moving result.
TEST_F(GpuKernels, HundredRunsOfOneCasePerBodyGiveIdenticalBytes) {
  constexpr int kRuns = 100;
  for (const GpuCase& g : awkward_cases(rig_->present())) {
    const golden::CaseInputs in = inputs_of(g.c);
    const GpuRun first = rig_->run(g.c, in);
    ASSERT_TRUE(first.ok) << first.error << keep_failure(test_name(), g.c, "launch failed: " + first.error);
    int differing = 0;
    for (int run = 2; run <= kRuns; ++run) {
      const GpuRun again = rig_->run(g.c, in);
      ASSERT_TRUE(again.ok) << again.error << keep_failure(test_name(), g.c, "launch failed: " + again.error);
      if (again.c != first.c) ++differing;
    }
    std::printf("determinism: %d runs of %s: %d differ from the first\n", kRuns, g.line().c_str(), differing);
    if (differing != 0)
      ADD_FAILURE() << differing << " of " << kRuns << " runs differ from the first"
                    << keep_failure(test_name(), g.c, std::to_string(differing) + " of 100 runs differ from the first");
  }
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_tally.empty()) return;
    print_table("GPU vs emulator, all tests (bytes: every byte of the (M + 2) x c_row_stride C buffer):", g_tally);
    std::map<std::string, Tally> by_body;
    for (const auto& [key, v] : g_tally) {
      Tally& b = by_body[key.second];
      b.cases += v.cases;
      b.bytes += v.bytes;
      b.mismatched_elements += v.mismatched_elements;
      b.failed_cases += v.failed_cases;
    }
    std::printf("per body (kernel):\n");
    for (const auto& [body, v] : by_body)
      std::printf("  %-18s %8llu cases %14llu bytes %12llu mismatches\n", body.c_str(),
                  static_cast<unsigned long long>(v.cases), static_cast<unsigned long long>(v.bytes),
                  static_cast<unsigned long long>(v.mismatched_elements));
  }
};
const auto* const g_summary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
}  // namespace w8a16::gputest
