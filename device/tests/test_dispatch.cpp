// SPDX-License-Identifier: MIT OR Apache-2.0
// Dispatch against the seed's rules, restated here independently: the predicates, by_m and the
// strided twins' choice of kernel and body, for every m in 0..200 and the boundary values of k,
// with and without each handle.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/device/plan.hpp"

namespace w8a16::device {
namespace {

const std::vector<std::uint32_t> kKs = {0, 64, 128, 129, 5120, 5248, 1u << 20};
constexpr KernelHandle kZero{0};
constexpr KernelHandle kSome{77};

// Plausible, aligned, non-overlapping addresses: planning never dereferences them.
Args args_for(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  Args a;
  a.input = 0x10000000000ull;
  a.weight = 0x20000000000ull;
  a.block_scale = 0x30000000000ull;
  a.output = 0x40000000000ull;
  a.m = m;
  a.n = n;
  a.k = k;
  a.a_row_stride = k;
  a.c_row_stride = n;
  return a;
}

bool k_ok(std::uint32_t k) { return k >= 128 && k % 128 == 0; }

TEST(Predicates, PrefersM32IsTheSeedRule) {
  for (std::uint32_t m = 0; m <= 200; ++m)
    for (std::uint32_t k : kKs)
      for (KernelHandle h : {kZero, kSome}) {
        const bool rule = m >= 1 && m <= 32 && k_ok(k) && h.value != 0;
        EXPECT_EQ(prefers_m32(m, k, h), rule) << "m=" << m << " k=" << k << " h=" << h.value;
      }
}

TEST(Predicates, PrefersM64IsTheSeedRule) {
  for (std::uint32_t m = 0; m <= 200; ++m)
    for (std::uint32_t k : kKs)
      for (KernelHandle h : {kZero, kSome}) {
        const bool rule = m >= 33 && m <= 64 && k_ok(k) && h.value != 0;
        EXPECT_EQ(prefers_m64(m, k, h), rule) << "m=" << m << " k=" << k << " h=" << h.value;
      }
}

// The row-tile kernel's rule (plan.hpp), restated: 1..16 rows unless K <= 5120 and N <= 3968
// (fewer than 32 strips of 128 columns), 17..32 rows always, 33..64 rows when N >= 3969.
// 1..32 rows run in w8a16_tc_rows, 33..64 in w8a16_tc_rows_m64.
bool tc_rule(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  if (m >= 1 && m <= 16) return k > 5120 || n > 3968;
  if (m >= 17 && m <= 32) return true;
  return m >= 33 && m <= 64 && n >= 3969;
}
KernelId tc_kernel(std::uint32_t m) { return m <= 32 ? KernelId::tc_rows : KernelId::tc_rows_m64; }
const std::vector<std::uint32_t> kNs = {1, 33, 3968, 3969, 4096, 10112, 10113, 12160, 12161, 51200};

TEST(Predicates, TcRowsTakesItsMeasuredShapes) {
  for (std::uint32_t m = 0; m <= 200; ++m)
    for (std::uint32_t n : kNs)
      for (std::uint32_t k : kKs) EXPECT_EQ(tc_rows_takes(m, n, k), tc_rule(m, n, k)) << m << " " << n << " " << k;
}

// The strip width the launch sizes the grid with: 16 columns at 1..8 rows when N <= 8064 (fewer
// than 64 strips of 128 columns); 32 columns at 1..8 rows otherwise, at 9..16 rows when
// N <= 10112 (fewer than 80 strips of 128 columns) and at 17..32 rows when N <= 3968 (fewer than
// 32); 64 columns at 9..16 rows from N = 10113 and at 17..64 rows below it; 128 columns at 17..64
// rows from N = 10113. Shared memory as geometry.hpp's layout formula gives it, written out:
// stages x (W rows x (round x 128 + 16) + A rows x (round x 256 + 32)) + two rounds of partial
// sums (round x groups x row blocks x 128 FP32) when several warps share a tile. Rows in blocks of
// 8: 1, 2, 4, 6 or 8 of them.
TEST(Dispatch, RowTileGeometryFollowsTheShape) {
  StaticRegistry reg = StaticRegistry::all_present();
  auto plan = [&](std::uint32_t m, std::uint32_t n, std::uint32_t k) {
    Call c;
    c.entry = Entry::gemm_pipelined_m64_strided;
    c.kernel = reg.resolve(KernelId::gemm_pipelined_m64);
    c.args = args_for(m, n, k);
    const Planned p = plan_launch(c, reg, DeviceLimits::h200());
    EXPECT_TRUE(p.ok()) << p.status.message;
    return p.plan;
  };
  const std::uint32_t thin = 2u * (16 * (8 * 128 + 16) + 8 * (8 * 256 + 32)) + 2u * 8 * 1 * 1 * 128 * 4;
  auto narrow = [](std::uint32_t blocks) {
    return 2u * (32 * (4 * 128 + 16) + 8 * blocks * (4 * 256 + 32)) + 2u * 4 * 2 * blocks * 128 * 4;
  };
  auto mid = [](std::uint32_t blocks) {
    return 2u * (64 * (2 * 128 + 16) + 8 * blocks * (2 * 256 + 32)) + 2u * 2 * 4 * blocks * 128 * 4;
  };
  auto wide = [](std::uint32_t blocks, std::uint32_t stages) {
    return stages * (128 * (128 + 16) + 8 * blocks * (256 + 32));
  };
  struct Want {
    std::uint32_t m, n, k;
    KernelId kernel;
    std::uint32_t grid_x, smem;
  };
  const Want wants[] = {
      {8, 51200, 128, KernelId::tc_rows, 1600, narrow(1)},
      {1, 8065, 128, KernelId::tc_rows, 253, narrow(1)},
      {8, 8064, 128, KernelId::tc_rows, 504, thin},
      {1, 33, 5248, KernelId::tc_rows, 3, thin},
      {16, 10112, 128, KernelId::tc_rows, 316, narrow(2)},
      {9, 10113, 128, KernelId::tc_rows, 159, mid(2)},
      {16, 51200, 128, KernelId::tc_rows, 800, mid(2)},
      {17, 3968, 128, KernelId::tc_rows, 124, narrow(4)},
      {17, 3969, 128, KernelId::tc_rows, 63, mid(4)},
      {32, 10112, 128, KernelId::tc_rows, 158, mid(4)},
      {32, 10113, 128, KernelId::tc_rows, 80, wide(4, 4)},
      {32, 51200, 128, KernelId::tc_rows, 400, wide(4, 4)},
      {33, 3969, 25600, KernelId::tc_rows_m64, 63, mid(6)},
      {48, 10112, 128, KernelId::tc_rows_m64, 158, mid(6)},
      {49, 8064, 128, KernelId::tc_rows_m64, 126, mid(8)},
      {64, 3969, 25600, KernelId::tc_rows_m64, 63, mid(8)},
      {33, 51200, 128, KernelId::tc_rows_m64, 400, wide(6, 2)},
      {64, 10113, 128, KernelId::tc_rows_m64, 80, wide(8, 2)},
  };
  for (const Want& w : wants) {
    const Plan p = plan(w.m, w.n, w.k);
    ASSERT_EQ(p.body, Body::tc_rows_strip) << w.m << " " << w.n;
    EXPECT_EQ(p.kernel, w.kernel) << w.m << " " << w.n;
    EXPECT_EQ(p.grid, (Dim3{w.grid_x, 1, 1})) << w.m << " " << w.n;
    EXPECT_EQ(p.dynamic_smem, w.smem) << w.m << " " << w.n;
    EXPECT_LE(p.dynamic_smem, DeviceLimits::h200().max_dynamic_smem_per_block) << w.m << " " << w.n;
  }
  EXPECT_EQ(narrow(1), 58880u);  // three CTAs per SM (geometry.hpp)
  EXPECT_EQ(thin, 74752u);       // three as well
  EXPECT_EQ(mid(8), 169984u);
  EXPECT_EQ(plan(33, 3968, 25600).body, Body::m64_tile);
  EXPECT_EQ(plan(65, 51200, 128).body, Body::m64_tile);
}

// The seed's by_m, written out: which kernel and body a contiguous call must get.
struct Expect {
  bool error;
  KernelId kernel;
  Body body;
};
Expect by_m_rule(std::uint32_t m, std::uint32_t n, std::uint32_t k, bool full, bool m32, bool m64, bool tc) {
  if (m == 0 || !k_ok(k)) return {true, KernelId::gemm_pipelined, Body::gemm128_tile};
  const bool tc_takes = tc && tc_rule(m, n, k);
  if (m <= 32 && m32) {
    if (tc_takes) return {false, tc_kernel(m), Body::tc_rows_strip};
    return {false, KernelId::gemm_pipelined_m32, (m <= 16 && k <= 5120) ? Body::m32_skinny : Body::m32_tile};
  }
  if (m >= 33 && m <= 64 && m64) {
    if (tc_takes) return {false, tc_kernel(m), Body::tc_rows_strip};
    return {false, KernelId::gemm_pipelined_m64, Body::m64_tile};
  }
  if (!full) return {true, KernelId::gemm_pipelined, Body::gemm128_tile};  // kernel_missing
  return {false, KernelId::gemm_pipelined, Body::gemm128_tile};
}

TEST(Dispatch, ByMFollowsTheSeedForEveryHandleCombination) {
  int planned = 0;
  for (int mask = 0; mask < 16; ++mask) {
    const bool full = mask & 1, m32 = mask & 2, m64 = mask & 4, tc = mask & 8;
    StaticRegistry reg = StaticRegistry::all_present();
    reg.set_present(KernelId::tc_rows, tc);
    reg.set_present(KernelId::tc_rows_m64, tc);
    for (std::uint32_t m = 0; m <= 200; ++m)
      for (std::uint32_t n : {33u, 3968u, 4096u, 10113u})
      for (std::uint32_t k : kKs) {
        if (static_cast<std::uint64_t>(n) * k > kMaxElementOffsets) continue;  // refused for its size
        Call c;
        c.entry = Entry::gemm_pipelined_by_m;
        c.kernel = full ? reg.resolve(KernelId::gemm_pipelined) : kZero;
        c.m32_kernel = m32 ? reg.resolve(KernelId::gemm_pipelined_m32) : kZero;
        c.m64_kernel = m64 ? reg.resolve(KernelId::gemm_pipelined_m64) : kZero;
        c.args = args_for(m, n, k);
        const Planned p = plan_launch(c, reg, DeviceLimits::h200());
        const Expect e = by_m_rule(m, n, k, full, m32, m64, tc);
        ASSERT_EQ(!p.ok(), e.error) << "m=" << m << " n=" << n << " k=" << k << " mask=" << mask << ": "
                                    << p.status.message;
        if (!p.ok()) continue;
        ++planned;
        EXPECT_EQ(p.plan.kernel, e.kernel) << "m=" << m << " n=" << n << " k=" << k << " mask=" << mask;
        EXPECT_EQ(p.plan.body, e.body) << "m=" << m << " n=" << n << " k=" << k << " mask=" << mask;
        EXPECT_EQ(p.plan.handle, reg.resolve(e.kernel));
        EXPECT_TRUE(p.plan.handle);
      }
  }
  EXPECT_GT(planned, 0);
}

TEST(Dispatch, StridedTwinsTryTheRowTileKernelFirst) {
  for (bool tc : {false, true}) {
    StaticRegistry reg = StaticRegistry::all_present();
    reg.set_present(KernelId::tc_rows, tc);
    reg.set_present(KernelId::tc_rows_m64, tc);
    for (std::uint32_t m = 1; m <= 200; ++m)
      for (std::uint32_t n : {40u, 3968u, 4096u, 10113u})
      for (std::uint32_t k : {128u, 5120u, 5248u}) {
        for (Entry e : {Entry::gemm_pipelined_m32_strided, Entry::gemm_pipelined_m64_strided}) {
          const bool is32 = e == Entry::gemm_pipelined_m32_strided;
          Call c;
          c.entry = e;
          c.kernel = reg.resolve(is32 ? KernelId::gemm_pipelined_m32 : KernelId::gemm_pipelined_m64);
          c.args = args_for(m, n, k);
          c.args.a_row_stride = k + 8;
          c.args.c_row_stride = n + 1;
          const Planned p = plan_launch(c, reg, DeviceLimits::h200());
          ASSERT_TRUE(p.ok()) << p.status.message;
          Body want = is32 ? ((m <= 16 && k <= 5120) ? Body::m32_skinny : Body::m32_tile) : Body::m64_tile;
          if (tc && tc_rule(m, n, k)) want = Body::tc_rows_strip;
          EXPECT_EQ(p.plan.body, want) << entry_name(e) << " m=" << m << " n=" << n << " k=" << k << " tc=" << tc;
          if (want == Body::tc_rows_strip) {
            EXPECT_EQ(p.plan.kernel, tc_kernel(m)) << "m=" << m;
          }
        }
      }
  }
}

// Grid, block and shared memory per body: the seed's numbers (lines 88-89, 141-153, 261-267).
TEST(Dispatch, GeometryIsTheSeeds) {
  StaticRegistry reg = StaticRegistry::all_present();
  const DeviceLimits lim = DeviceLimits::h200();
  auto plan = [&](Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
    Call c;
    c.entry = e;
    c.kernel = KernelHandle{5};
    c.args = args_for(m, n, k);
    const Planned p = plan_launch(c, reg, lim);
    EXPECT_TRUE(p.ok()) << p.status.message;
    return p.plan;
  };
  Plan p = plan(Entry::gemm_pipelined_m32, 33, 300, 256);  // tile body (the row-tile kernel declines N < 3969)
  EXPECT_EQ(p.body, Body::m32_tile);
  EXPECT_EQ(p.grid, (Dim3{10, 2, 1}));
  EXPECT_EQ(p.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(p.dynamic_smem, 44032u);
  p = plan(Entry::gemm_pipelined_m32, 16, 300, 5120);  // skinny body
  EXPECT_EQ(p.grid, (Dim3{38, 1, 1}));
  EXPECT_EQ(p.dynamic_smem, 8u * (5120 + 16));
  p = plan(Entry::gemm_pipelined_m32, 129, 33, 128);  // the twin still runs above 32 rows
  EXPECT_EQ(p.grid, (Dim3{2, 5, 1}));
  p = plan(Entry::gemm_pipelined_m64, 65, 129, 128);
  EXPECT_EQ(p.grid, (Dim3{5, 2, 1}));
  EXPECT_EQ(p.dynamic_smem, 0u);
  p = plan(Entry::gemm_pipelined, 129, 129, 128);
  EXPECT_EQ(p.grid, (Dim3{3, 2, 1}));
  EXPECT_EQ(p.dynamic_smem, kGemm128SmemBytes);
  p = plan(Entry::gemm_pipelined_m32, 3, 33, 5248);  // row-tile kernel, 16-column strips
  EXPECT_EQ(p.kernel, KernelId::tc_rows);
  EXPECT_EQ(p.grid, (Dim3{3, 1, 1}));
  p = plan(Entry::gemv_batch16_strided, 16, 33, 128);
  EXPECT_EQ(p.grid, (Dim3{5, 1, 1}));
  EXPECT_EQ(p.contract, Contract::gemv);
  EXPECT_EQ(p.kernel, KernelId::gemv_batch16_strided);
}

TEST(Registry, ResolvesByIdAndByNameAndZeroesWhatIsAbsent) {
  StaticRegistry reg = StaticRegistry::all_present();
  reg.set_present(KernelId::tc_rows, false);
  for (KernelId id : kAllKernels) {
    EXPECT_EQ(reg.resolve_name(kernel_name(id)), reg.resolve(id)) << kernel_name(id);
    EXPECT_EQ(static_cast<bool>(reg.resolve(id)), id != KernelId::tc_rows) << kernel_name(id);
  }
  EXPECT_FALSE(reg.resolve_name("w8a16_gemm_pipelined_m16"));
  for (KernelId id : kAllKernels) EXPECT_FALSE(StaticRegistry::none_present().resolve(id));
}

// kAllBodies is the list the audit shows as the family's tiers (_core.bodies): a body that
// body_name knows but the list lacks would vanish from the audit, so every value of the enum's
// underlying type is tried.
TEST(Bodies, EveryNamedBodyIsListedOnceInEnumeratorOrder) {
  std::vector<Body> named;
  for (unsigned v = 0; v <= 0xFF; ++v) {
    const Body b = static_cast<Body>(v);
    if (std::string_view(body_name(b)) != "unknown") named.push_back(b);
  }
  EXPECT_EQ(named, std::vector<Body>(kAllBodies.begin(), kAllBodies.end()));
  std::set<std::string> names;
  for (const Body b : kAllBodies) names.insert(body_name(b));
  EXPECT_EQ(names.size(), kAllBodies.size());
}

TEST(Dispatch, ContiguousEntriesUseKAndNAsPitches) {
  StaticRegistry reg = StaticRegistry::all_present();
  Call c;
  c.entry = Entry::gemm_pipelined_m32;
  c.kernel = reg.resolve(KernelId::gemm_pipelined_m32);
  c.args = args_for(5, 7, 256);
  c.args.a_row_stride = 999;  // ignored: the contiguous launch passes k and n (seed line 195)
  c.args.c_row_stride = 3;
  const Planned p = plan_launch(c, reg, DeviceLimits::h200());
  ASSERT_TRUE(p.ok()) << p.status.message;
  EXPECT_EQ(p.plan.params.a_row_stride, 256u);
  EXPECT_EQ(p.plan.params.c_row_stride, 7u);
}

}  // namespace
}  // namespace w8a16::device
