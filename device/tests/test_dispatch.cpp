// SPDX-License-Identifier: MIT OR Apache-2.0
// Dispatch against the seed's rules, restated here independently: the predicates, by_m and the
// strided twins' choice of kernel and body, for every m in 0..200 and the boundary values of k,
// with and without each handle.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/device/bodies.hpp"
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
  StaticRegistry reg = StaticRegistry::without_hopper_tier();
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
// The Hopper tier's rule (plan.hpp wgmma_choice), written out for 132 SMs: up to 16 rows only its
// two-CTA symbol, where 128-column units number 264 or more; 17..32 rows where they number more
// than 66; from 33 rows always; the 128-column symbol where they number more than 66, else the
// 64-column one (whichever the module has).
struct Hopper {
  bool takes;
  KernelId kernel;
  Body body;
};
Hopper hopper_rule(std::uint32_t m, std::uint32_t n, bool wg64, bool wg128, bool wg128x2) {
  const std::uint32_t rows = m <= 8    ? 8
                             : m <= 16 ? 16
                             : m <= 24 ? 24
                             : m <= 32 ? 32
                             : m <= 48 ? 48
                             : m <= 64 ? 64
                             : m <= 96 ? 96
                                       : 128;
  const std::uint64_t units128 = std::uint64_t{(n + 127) / 128} * ((m + rows - 1) / rows);
  if (m <= 16) {
    if (wg128x2 && units128 >= 264) return {true, KernelId::wgmma_rows_n128_x2, Body::wgmma_units128_x2};
    return {false, KernelId::gemm_pipelined, Body::gemm128_tile};
  }
  if (m <= 32 && units128 <= 66) return {false, KernelId::gemm_pipelined, Body::gemm128_tile};
  if (wg128 && (units128 > 66 || !wg64)) return {true, KernelId::wgmma_rows_n128, Body::wgmma_units128};
  if (wg64) return {true, KernelId::wgmma_rows, Body::wgmma_units};
  return {false, KernelId::gemm_pipelined, Body::gemm128_tile};
}

Expect by_m_rule(std::uint32_t m, std::uint32_t n, std::uint32_t k, bool full, bool m32, bool m64, bool tc, bool wg64,
                 bool wg128, bool wg128x2) {
  if (m == 0 || !k_ok(k)) return {true, KernelId::gemm_pipelined, Body::gemm128_tile};
  // The Hopper tier goes first.
  if (const Hopper h = hopper_rule(m, n, wg64, wg128, wg128x2); h.takes) return {false, h.kernel, h.body};

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
  for (int mask = 0; mask < 128; ++mask) {
    const bool full = mask & 1, m32 = mask & 2, m64 = mask & 4, tc = mask & 8, wg64 = mask & 16, wg128 = mask & 32,
               wg128x2 = mask & 64;
    StaticRegistry reg = StaticRegistry::all_present();
    reg.set_present(KernelId::tc_rows, tc);
    reg.set_present(KernelId::tc_rows_m64, tc);
    reg.set_present(KernelId::wgmma_rows, wg64);
    reg.set_present(KernelId::wgmma_rows_n128, wg128);
    reg.set_present(KernelId::wgmma_rows_n128_x2, wg128x2);
    for (std::uint32_t m = 0; m <= 200; ++m)
      for (std::uint32_t n : {33u, 3968u, 4096u, 8449u, 10113u, 16897u, 33793u})
        for (std::uint32_t k : kKs) {
          if (static_cast<std::uint64_t>(n) * k > kMaxElementOffsets) continue;  // refused for its size
          Call c;
          c.entry = Entry::gemm_pipelined_by_m;
          c.kernel = full ? reg.resolve(KernelId::gemm_pipelined) : kZero;
          c.m32_kernel = m32 ? reg.resolve(KernelId::gemm_pipelined_m32) : kZero;
          c.m64_kernel = m64 ? reg.resolve(KernelId::gemm_pipelined_m64) : kZero;
          c.args = args_for(m, n, k);
          const Planned p = plan_launch(c, reg, DeviceLimits::h200());
          const Expect e = by_m_rule(m, n, k, full, m32, m64, tc, wg64, wg128, wg128x2);
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
    StaticRegistry reg = StaticRegistry::without_hopper_tier();
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
  StaticRegistry reg = StaticRegistry::without_hopper_tier();
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

// The Hopper tier: every tensor-core entry point tries it first when the module has it, at every
// shape it takes; the GEMVs never do (their contract is NUMERICS.md 2.2).
TEST(Dispatch, EveryTensorCoreEntryTriesTheHopperTierFirst) {
  const StaticRegistry reg = StaticRegistry::all_present();
  const Entry tensor_core[] = {
      Entry::gemm_pipelined,     Entry::gemm_pipelined_m32,         Entry::gemm_pipelined_m32_strided,
      Entry::gemm_pipelined_m64, Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m};
  struct Shape3 {
    std::uint32_t m, n;
    Body body;
  };
  for (Entry e : tensor_core)
    for (const Shape3& sh : {Shape3{33, 77, Body::wgmma_units}, Shape3{64, 77, Body::wgmma_units},
                             Shape3{65, 77, Body::wgmma_units}, Shape3{512, 77, Body::wgmma_units},
                             Shape3{17, 8577, Body::wgmma_units128}, Shape3{129, 8577, Body::wgmma_units128},
                             Shape3{1, 33793, Body::wgmma_units128_x2}, Shape3{16, 51200, Body::wgmma_units128_x2}})
      for (std::uint32_t k : {128u, 5248u}) {
        Call c;
        c.entry = e;
        c.kernel = KernelHandle{};  // the entry's own handle is not needed when the tier takes it
        c.args = args_for(sh.m, sh.n, k);
        const Planned p = plan_launch(c, reg, DeviceLimits::h200());
        ASSERT_TRUE(p.ok()) << entry_name(e) << " m=" << sh.m << ": " << p.status.message;
        EXPECT_EQ(p.plan.body, sh.body) << entry_name(e) << " m=" << sh.m << " n=" << sh.n;
        EXPECT_EQ(p.plan.handle, reg.resolve(p.plan.kernel));
        EXPECT_EQ(p.plan.contract, Contract::canonical);
      }
  // Where the seed's tiers measured faster the tier declines: up to 16 rows short of 264
  // 128-column units, 17..32 rows at 66 or fewer.
  for (const Shape3& sh : {Shape3{1, 33664, Body::tc_rows_strip}, Shape3{16, 12288, Body::tc_rows_strip},
                           Shape3{32, 8448, Body::tc_rows_strip}, Shape3{4, 77, Body::m32_skinny}}) {
    Call c;
    c.entry = Entry::gemm_pipelined_m32_strided;
    c.kernel = reg.resolve(KernelId::gemm_pipelined_m32);
    c.args = args_for(sh.m, sh.n, 256);
    c.args.a_row_stride = 256;
    c.args.c_row_stride = sh.n;
    const Planned p = plan_launch(c, reg, DeviceLimits::h200());
    ASSERT_TRUE(p.ok()) << p.status.message;
    EXPECT_EQ(p.plan.body, sh.body) << "m=" << sh.m << " n=" << sh.n;
  }
  for (Entry e : {Entry::gemv_batch4_strided, Entry::gemv_batch16_strided}) {
    Call c;
    c.entry = e;
    c.kernel = reg.resolve(e == Entry::gemv_batch4_strided ? KernelId::gemv_batch4_strided
                                                           : KernelId::gemv_batch16_strided);
    c.args = args_for(3, 77, 256);
    const Planned p = plan_launch(c, reg, DeviceLimits::h200());
    ASSERT_TRUE(p.ok()) << p.status.message;
    EXPECT_EQ(p.plan.body, Body::gemv_strip);
  }
}

// The tier's launch: min(SMs, units) CTAs of 384 threads, the shared memory and workspace of its
// row tile (geometry.hpp), written out here from the layout's parts.
TEST(Dispatch, HopperTierGeometryFollowsTheRows) {
  const StaticRegistry reg = StaticRegistry::all_present();
  DeviceLimits lim = DeviceLimits::h200();
  auto plan = [&](std::uint32_t m, std::uint32_t n, std::uint32_t k) {
    Call c;
    c.entry = Entry::gemm_pipelined_by_m;
    c.args = args_for(m, n, k);
    const Planned p = plan_launch(c, reg, lim);
    EXPECT_TRUE(p.ok()) << p.status.message;
    return p.plan;
  };
  // (m, row tile, CTAs per SM, stages) at N = 51200 (400 128-column units per row tile): the
  // stages fill the shared memory a CTA may have (232,448 bytes, or 115,712 with two CTAs per SM)
  // beside the barriers, at most 8. Up to 16 rows, two CTAs per SM.
  struct Want {
    std::uint32_t m, rows, per_sm, stages;
  };
  for (const Want& w : {Want{1, 8, 2, 6}, Want{9, 16, 2, 5}, Want{17, 24, 1, 8}, Want{32, 32, 1, 8}, Want{33, 48, 1, 8},
                        Want{64, 64, 1, 7}, Want{65, 96, 1, 5}, Want{97, 128, 1, 4}, Want{512, 128, 1, 4}}) {
    const Plan p = plan(w.m, 51200, 5120);
    const std::uint32_t stage = 128 * 128 + w.rows * 256, budget = w.per_sm == 2 ? 115712 : 232448;
    EXPECT_EQ(p.body, w.per_sm == 2 ? Body::wgmma_units128_x2 : Body::wgmma_units128) << w.m;
    EXPECT_EQ(p.tile.kind, TileKind::stream_units) << w.m;
    EXPECT_EQ(p.tile.rows, w.rows) << w.m;
    EXPECT_EQ(p.tile.cols, 128u) << w.m;
    EXPECT_EQ(p.block, (Dim3{384, 1, 1}));
    EXPECT_EQ(p.grid, (Dim3{132 * w.per_sm, 1, 1})) << w.m;
    EXPECT_EQ(p.dynamic_smem, 1024 + w.stages * stage + 8 * (2 * w.stages + 4)) << w.m;
    EXPECT_LE(p.dynamic_smem, budget) << w.m;
    if (w.stages < 8) EXPECT_GT(p.dynamic_smem + stage, budget) << w.m;  // no room for one more
    EXPECT_EQ(p.workspace_bytes, 132ull * w.per_sm * (4 * 128 * w.rows + 4)) << w.m;
  }
  // The 64-column symbol (few 128-column units): its hand-over beside the stages.
  {
    const Plan p = plan(40, 2048, 4096);  // 16 128-column units: 64-column ones, 32 CTAs
    EXPECT_EQ(p.body, Body::wgmma_units);
    EXPECT_EQ(p.tile.cols, 64u);
    EXPECT_EQ(p.grid, (Dim3{32, 1, 1}));
    const std::uint32_t stage = 64 * 128 + 48 * 256, handover = 2 * 64 * 48 * 4;
    EXPECT_EQ(p.dynamic_smem, 1024 + 8 * stage + handover + 8 * (2 * 8 + 4));
    EXPECT_EQ(p.workspace_bytes, 32ull * (4 * 64 * 48 + 4));
  }
  // Fewer units than SMs: one CTA per unit; 2 row tiles at 129..256 rows.
  EXPECT_EQ(plan(200, 2048, 4096).grid, (Dim3{64, 1, 1}));
  EXPECT_EQ(plan(40, 1, 128).grid, (Dim3{1, 1, 1}));
  lim.multiprocessors = 7;
  EXPECT_EQ(plan(40, 2048, 128).grid, (Dim3{7, 1, 1}));
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

// gemm_packed_strided runs packed_body's symbol and, where a registry takes that symbol away, the
// other one packed_body weighs against it up to 16 rows; from 17 rows the one-CTA symbol alone.
TEST(Dispatch, PackedEntryFallsBackOnlyToTheSymbolItsRuleWeighs) {
  const std::uint32_t sms = DeviceLimits::h200().multiprocessors;
  struct Want {
    std::uint32_t m, n;
    Body preferred, other;  // other == preferred: nothing to fall back to
  };
  for (const Want& w : {Want{1, 33793, Body::wgmma_packed128_x2, Body::tc_rows_packed},
                        Want{8, 10240, Body::tc_rows_packed, Body::wgmma_packed128_x2},
                        Want{16, 10240, Body::wgmma_packed128_x2, Body::tc_rows_packed},
                        Want{16, 770, Body::tc_rows_packed, Body::wgmma_packed128_x2},
                        Want{17, 10240, Body::wgmma_packed128, Body::wgmma_packed128},
                        Want{512, 77, Body::wgmma_packed128, Body::wgmma_packed128}}) {
    ASSERT_EQ(packed_body(w.m, w.n, sms), w.preferred) << "m=" << w.m << " n=" << w.n;
    auto plan_with = [&](const StaticRegistry& reg) {
      Call c;
      c.entry = Entry::gemm_packed_strided;
      c.args = args_for(w.m, w.n, 256);
      return plan_launch(c, reg, DeviceLimits::h200());
    };
    StaticRegistry reg = StaticRegistry::all_present();
    Planned p = plan_with(reg);
    ASSERT_TRUE(p.ok()) << p.status.message;
    EXPECT_EQ(p.plan.body, w.preferred) << "m=" << w.m << " n=" << w.n;
    reg.set_present(body_launch(w.preferred, w.m, w.n, 256, sms).kernel, false);
    p = plan_with(reg);
    if (w.other == w.preferred) {
      EXPECT_FALSE(p.ok()) << "m=" << w.m << " n=" << w.n << " ran " << body_name(p.plan.body);
      EXPECT_EQ(p.status.code, Errc::kernel_missing);
      continue;
    }
    ASSERT_TRUE(p.ok()) << p.status.message;
    EXPECT_EQ(p.plan.body, w.other) << "m=" << w.m << " n=" << w.n;
    EXPECT_EQ(p.plan.handle, reg.resolve(p.plan.kernel));
    reg.set_present(body_launch(w.other, w.m, w.n, 256, sms).kernel, false);
    EXPECT_EQ(plan_with(reg).status.code, Errc::kernel_missing) << "m=" << w.m << " n=" << w.n;
  }
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
