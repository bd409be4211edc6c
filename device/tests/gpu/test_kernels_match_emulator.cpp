// SPDX-License-Identifier: MIT OR Apache-2.0
// Every kernel through every entry point on a real GPU, compared byte for byte with the emulator (NUMERICS.md 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gpu_cases.hpp"
#include "gpu_rig.hpp"

namespace w8a16::gputest {
namespace {

using device::Body;
using device::Entry;

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

// ---- the tally every test adds to and the summary prints ------------------------------------
struct Tally {
  std::uint64_t cases = 0, bytes = 0, mismatched_elements = 0, failed_cases = 0;
};
std::mutex g_mutex;
std::map<std::pair<std::string, std::string>, Tally> g_tally;  // (entry, body)

void print_table(const char* title, const std::map<std::pair<std::string, std::string>, Tally>& t) {
  std::printf("%s\n  %-28s %-14s %8s %14s %12s %8s\n", title, "entry point", "body", "cases", "bytes compared",
              "mismatches", "failed");
  for (const auto& [key, v] : t)
    std::printf("  %-28s %-14s %8llu %14llu %12llu %8llu\n", key.first.c_str(), key.second.c_str(),
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

device::Contract contract_of(Entry e) {
  return e == Entry::gemv_batch4_strided || e == Entry::gemv_batch16_strided ? device::Contract::gemv
                                                                             : device::Contract::canonical;
}

class GpuKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!rig_ && why_.empty()) rig_ = GpuRig::create(&why_);
  }
  void SetUp() override {
    if (!rig_) GTEST_SKIP() << "GPU test skipped: " << why_;
  }

  // Runs the cases, emulator on every core in chunks, GPU launches in order; every byte of C is
  // compared. check_target: the entry must dispatch each case to the body it was aimed at.
  static void run_campaign(const std::vector<GpuCase>& cases, bool check_target) {
    std::map<std::pair<std::string, std::string>, Tally> local;
    const std::size_t chunk = 4 * std::max(1u, std::thread::hardware_concurrency());
    int printed = 0;
    for (std::size_t base = 0; base < cases.size(); base += chunk) {
      const std::size_t count = std::min(chunk, cases.size() - base);
      std::vector<Inputs> inputs(count);
      std::vector<std::vector<std::uint16_t>> expected(count);
      parallel_for(count, [&](std::size_t i) {
        const GpuCase& c = cases[base + i];
        inputs[i] = make_inputs(c);
        expected[i] = expected_c(c, inputs[i], contract_of(c.entry));
      });
      for (std::size_t i = 0; i < count; ++i) {
        const GpuCase& c = cases[base + i];
        const GpuRun run = rig_->run(c, inputs[i]);
        if (!run.ok) {
          ADD_FAILURE() << "launch failed: " << run.error << "\n  case: " << c.describe();
          Tally& t = local[{device::entry_name(c.entry), "(none)"}];
          ++t.cases;
          ++t.failed_cases;
          continue;
        }
        Tally& t = local[{device::entry_name(c.entry), device::body_name(run.plan.body)}];
        ++t.cases;
        if (check_target && run.plan.body != c.target)
          ADD_FAILURE() << "dispatch reached " << device::body_name(run.plan.body) << ", the case was aimed at "
                        << device::body_name(c.target) << "\n  case: " << c.describe();
        if (run.plan.contract != contract_of(c.entry))
          ADD_FAILURE() << "plan contract differs from the entry's\n  case: " << c.describe();
        const Comparison cmp = compare_c(c, expected[i], run.c);
        t.bytes += cmp.bytes;
        t.mismatched_elements += cmp.mismatched_elements;
        if (cmp.mismatched_elements != 0) {
          ++t.failed_cases;
          if (printed++ < 12)
            ADD_FAILURE() << "MISMATCH in " << run.plan.kernel_name << " (" << device::body_name(run.plan.body)
                          << "): " << cmp.mismatched_elements << " elements differ; first " << cmp.first
                          << "\n  case: " << c.describe() << "\n  grid (" << run.plan.grid.x << ", "
                          << run.plan.grid.y << "), dynamic smem " << run.plan.dynamic_smem;
          else
            ADD_FAILURE() << "MISMATCH (details above for the first 12): " << c.describe();
        }
      }
    }
    print_table("per entry point and body:", local);
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [key, v] : local) {
      Tally& g = g_tally[key];
      g.cases += v.cases;
      g.bytes += v.bytes;
      g.mismatched_elements += v.mismatched_elements;
      g.failed_cases += v.failed_cases;
    }
  }

  static std::vector<GpuCase> cases_for(Entry e, std::initializer_list<std::pair<Body, std::uint32_t>> plan) {
    std::vector<GpuCase> all;
    for (const auto& [body, count] : plan) {
      const std::uint32_t n = std::max<std::uint32_t>(1, count * case_percent() / 100);
      auto v = make_cases(e, body, n, base_seed(), work_cap());
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
        << device::kernel_name(id) << " is missing from the embedded module";
}

TEST_F(GpuKernels, GemmPipelinedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined, {{Body::gemm128_tile, 600}}), true);
}
TEST_F(GpuKernels, GemmPipelinedM32MatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined_m32,
                         {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedM32StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined_m32_strided,
                         {{Body::m32_tile, 260}, {Body::m32_skinny, 260}, {Body::tc_rows_strip, 150}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedM64MatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined_m64, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}), true);
}
TEST_F(GpuKernels, GemmPipelinedM64StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined_m64_strided, {{Body::m64_tile, 350}, {Body::tc_rows_strip, 210}}),
               true);
}
TEST_F(GpuKernels, GemmPipelinedByMMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemm_pipelined_by_m, {{Body::gemm128_tile, 500}}), false);
}
TEST_F(GpuKernels, GemvBatch4StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemv_batch4_strided, {{Body::gemv_strip, 500}}), true);
}
// The Hopper tier through every tensor-core entry point (each tries it first), each of its two
// symbols at every shape region (the rig takes the other symbol away).
TEST_F(GpuKernels, HopperTierMatchesEmulatorBitForBitThroughEveryEntry) {
  for (Entry e : {Entry::gemm_pipelined, Entry::gemm_pipelined_m32, Entry::gemm_pipelined_m32_strided,
                  Entry::gemm_pipelined_m64, Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m})
    run_campaign(cases_for(e, {{Body::wgmma_units, 90}, {Body::wgmma_units128, 90}, {Body::wgmma_units128_x2, 30}}),
                 true);
}
TEST_F(GpuKernels, GemvBatch16StridedMatchesEmulatorBitForBit) {
  run_campaign(cases_for(Entry::gemv_batch16_strided, {{Body::gemv_strip, 500}}), true);
}

// One awkward shape per body (tile edges crossed, N off every multiple, padded pitches, a partial
// last round for tc_rows, each of its strip widths and row-block counts): small enough for
// compute-sanitizer memcheck and racecheck.
std::vector<GpuCase> awkward_cases() {
  auto mk = [](Entry e, Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda,
               std::uint32_t ldc, Dist d) {
    GpuCase c;
    c.entry = e;
    c.target = b;
    c.m = m;
    c.n = n;
    c.k = k;
    c.a_row_stride = lda;
    c.c_row_stride = ldc;
    c.dist = d;
    c.seed = 0xA11CEull * (m + 31 * n + 7 * k);
    return c;
  };
  return {
      mk(Entry::gemm_pipelined, Body::gemm128_tile, 130, 67, 384, 384, 67, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::m32_tile, 33, 37, 256, 264, 40, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::m32_skinny, 13, 13, 5120, 5128, 15, Dist::specials),
      // The row-tile kernel, one shape per configuration (geometry.hpp tc_rows_cols and row blocks):
      // thin; narrow with 1, 2 and 4 row blocks; mid with 2, 4, 6 and 8; wide with 4, 6 and 8.
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 5, 3999, 640, 648, 4001, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 3, 8101, 640, 648, 8103, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 11, 19, 6272, 6280, 21, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 23, 77, 1152, 1160, 79, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 13, 12171, 384, 392, 12173, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 19, 5003, 384, 392, 5005, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::tc_rows_strip, 41, 4099, 640, 648, 4101, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 57, 8075, 256, 264, 8077, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::tc_rows_strip, 29, 10133, 256, 264, 10135, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::tc_rows_strip, 47, 10139, 256, 264, 10141, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::tc_rows_strip, 61, 10147, 384, 392, 10149, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::m64_tile, 65, 33, 640, 648, 35, Dist::specials),
      mk(Entry::gemv_batch4_strided, Body::gemv_strip, 3, 9, 640, 648, 11, Dist::specials),
      mk(Entry::gemv_batch16_strided, Body::gemv_strip, 13, 17, 256, 264, 19, Dist::specials),
      // The Hopper tier: the 64-column symbol at each of its row tiles (24 .. 128, two 128-row
      // tiles), units cut between CTAs where N > 8448 (more than 132 units); the 128-column one,
      // units cut (N > 16896), and 2 row tiles over N = 5811; the two-CTA one at 1 .. 16 rows over
      // more than 264 units.
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units, 21, 8453, 640, 648, 8455, Dist::specials),
      mk(Entry::gemm_pipelined_by_m, Body::wgmma_units, 24, 9001, 384, 384, 9001, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units, 31, 8457, 256, 264, 8460, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units, 40, 77, 6272, 6280, 79, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::wgmma_units, 63, 8513, 256, 264, 8515, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::wgmma_units, 64, 130, 1152, 1160, 131, Dist::specials),
      mk(Entry::gemm_pipelined, Body::wgmma_units, 90, 8521, 128, 128, 8521, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units, 127, 3001, 384, 392, 3003, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units, 259, 2911, 256, 264, 2913, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units128, 20, 16901, 384, 392, 16903, Dist::specials),
      mk(Entry::gemm_pipelined_m64_strided, Body::wgmma_units128, 50, 16987, 256, 264, 16990, Dist::specials),
      mk(Entry::gemm_pipelined_by_m, Body::wgmma_units128, 120, 17011, 128, 128, 17011, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units128, 200, 5811, 256, 264, 5813, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units128_x2, 1, 33793, 128, 136, 33795, Dist::specials),
      mk(Entry::gemm_pipelined_m32_strided, Body::wgmma_units128_x2, 5, 33811, 256, 264, 33813, Dist::specials),
      mk(Entry::gemm_pipelined_by_m, Body::wgmma_units128_x2, 16, 34001, 384, 384, 34001, Dist::specials),
  };
}

TEST_F(GpuKernels, OneAwkwardShapePerBodyMatchesEmulator) { run_campaign(awkward_cases(), true); }

// Same case twice, fresh poison each time: identical bytes (a race or an unwritten output would
// show as a difference), for every body.
TEST_F(GpuKernels, SameCaseTwiceGivesIdenticalBytes) {
  std::vector<GpuCase> cases = awkward_cases();
  for (const GpuCase& big : make_cases(Entry::gemm_pipelined_by_m, Body::gemm128_tile, 12, base_seed() ^ 0x77,
                                       work_cap()))
    cases.push_back(big);
  for (const GpuCase& c : cases) {
    const Inputs in = make_inputs(c);
    const GpuRun first = rig_->run(c, in);
    const GpuRun second = rig_->run(c, in);
    ASSERT_TRUE(first.ok && second.ok) << first.error << second.error << "\n  case: " << c.describe();
    EXPECT_TRUE(first.c == second.c) << "two runs differ: " << c.describe();
  }
}

// Determinism (issue 10): one awkward case per body, 100 launches, every launch's bytes equal to
// the first's. A race or an order that depends on scheduling shows here as a moving result.
TEST_F(GpuKernels, HundredRunsOfOneCasePerBodyGiveIdenticalBytes) {
  constexpr int kRuns = 100;
  for (const GpuCase& c : awkward_cases()) {
    const Inputs in = make_inputs(c);
    const GpuRun first = rig_->run(c, in);
    ASSERT_TRUE(first.ok) << first.error << "\n  case: " << c.describe();
    int differing = 0;
    for (int run = 2; run <= kRuns; ++run) {
      const GpuRun again = rig_->run(c, in);
      ASSERT_TRUE(again.ok) << again.error << "\n  case: " << c.describe();
      if (again.c != first.c) ++differing;
    }
    std::printf("determinism: %d runs of %s: %d differ from the first\n", kRuns, c.describe().c_str(), differing);
    EXPECT_EQ(differing, 0) << c.describe();
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
      std::printf("  %-14s %8llu cases %14llu bytes %12llu mismatches\n", body.c_str(),
                  static_cast<unsigned long long>(v.cases), static_cast<unsigned long long>(v.bytes),
                  static_cast<unsigned long long>(v.mismatched_elements));
  }
};
const auto* const g_summary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
}  // namespace w8a16::gputest
