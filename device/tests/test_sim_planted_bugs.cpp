// SPDX-License-Identifier: MIT OR Apache-2.0
// Planted geometry bugs: each starts from a correct plan, breaks one thing, and must fail the
// simulation's checks with the finding that names it, while C outside [M, N) keeps its poison.
// Without these, a simulation that checked nothing would pass every coverage test.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "sim_operands.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace w8a16::device {
namespace {

using testing::Shape;

struct Fixture {
  Shape sh;
  SimBackend sim;
  std::unique_ptr<Buffer> a, w, s, c;
  Plan plan;

  // The seed's bodies by default: every kernel but the Hopper tier, which would take every
  // tensor-core call first (its own tests below pass all_present()).
  Fixture(Entry e, Shape shape, StaticRegistry reg = StaticRegistry::without_hopper_tier(),
          DeviceLimits lim = DeviceLimits::h200())
      : sh(shape), sim(reg, lim) {
    const testing::Operands& o = testing::operands_for(sh);
    a = sim.allocate(o.a.size() * 2);
    w = sim.allocate(o.w.size());
    s = sim.allocate(o.s.size() * 4);
    c = sim.allocate(std::size_t{sh.m + testing::kRowsPastM} * sh.ldc * 2);
    EXPECT_TRUE(a->upload(o.a.data(), o.a.size() * 2).ok() && w->upload(o.w.data(), o.w.size()).ok() &&
                s->upload(o.s.data(), o.s.size() * 4).ok() && c->fill(0xA5).ok());
    Call call;
    call.entry = e;
    call.kernel = KernelHandle{99};
    call.args = Args{a->address(), w->address(), s->address(), c->address(), sh.m, sh.n, sh.k, sh.lda, sh.ldc, 0};
    DeviceLimits plan_lim = DeviceLimits::h200();  // the plan a real device would make; `lim` is the simulated device's
    plan_lim.multiprocessors = lim.multiprocessors;
    const Planned p = plan_launch(call, reg, plan_lim);
    EXPECT_TRUE(p.ok()) << p.status.message;
    plan = p.plan;
  }

  // Executes the (mutated) plan; expects a simulation error carrying `kind`.
  void expect_caught(FindingKind kind) {
    const Status st = sim.execute(plan);
    EXPECT_EQ(st.code, Errc::simulation_finding) << st.message;
    EXPECT_TRUE(sim.has_finding(kind)) << "no " << finding_kind_name(kind) << " finding; status: " << st.message;
    // Whatever the bug, nothing outside [M, N) changed.
    std::vector<std::uint16_t> got(std::size_t{sh.m + testing::kRowsPastM} * sh.ldc);
    ASSERT_TRUE(c->download(got.data(), got.size() * 2).ok());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (i / sh.ldc >= sh.m || i % sh.ldc >= sh.n) {
        ASSERT_EQ(got[i], testing::kPoison16) << "element " << i;
      }
    }
  }
};

TEST(PlantedBug, TheUnmutatedPlanHasNoFinding) {
  // The baseline of every test below: the same plans, unbroken, pass.
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{64, 129, 128, 136, 131});
  const Status st = f.sim.execute(f.plan);
  EXPECT_TRUE(st.ok()) << st.message;
  EXPECT_TRUE(f.sim.findings().empty());
}

TEST(PlantedBug, GridXOneShortLeavesColumnsUnwritten) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{64, 129, 128, 136, 131});
  ASSERT_EQ(f.plan.grid.x, 5u);
  f.plan.grid.x -= 1;
  f.expect_caught(FindingKind::never_written);
  EXPECT_NE(f.sim.findings().front().message.find("C[0][128]"), std::string::npos) << f.sim.findings().front().message;
}

TEST(PlantedBug, TileMapOffByOneRowIsCaught) {
  {
    Fixture f(Entry::gemm_pipelined_m32_strided, Shape{64, 33, 128, 128, 40});
    f.plan.tile.row_origin = 1;  // CTA y owns rows [32y + 1, 32y + 33): row 0 is nobody's
    f.expect_caught(FindingKind::never_written);
    EXPECT_TRUE(f.sim.has_finding(FindingKind::tile_map_mismatch));
  }
  {
    Fixture f(Entry::gemm_pipelined_m64_strided, Shape{64, 33, 128, 128, 40});
    f.plan.tile.rows = 63;  // a 63-row tile under the 64-row grid: row 63 is nobody's
    f.expect_caught(FindingKind::never_written);
  }
  {
    Fixture f(Entry::gemm_pipelined, Shape{256, 33, 128, 128, 33});
    f.plan.tile.rows = 127;  // 127-row tiles under the 128-row grid: rows 254 and 255 are nobody's
    f.expect_caught(FindingKind::never_written);
  }
}

TEST(PlantedBug, SkinnyBodyChosenAtK5248IsCaught) {
  StaticRegistry no_tc = StaticRegistry::without_hopper_tier();
  no_tc.set_present(KernelId::tc_rows, false);
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{8, 33, 5248, 5248, 33}, no_tc);
  ASSERT_EQ(f.plan.body, Body::m32_tile);
  f.plan.body = Body::m32_skinny;  // the launch sized for the skinny body, as if K <= 5120
  f.plan.tile = documented_tile_map(Body::m32_skinny, f.plan.params.m, f.plan.params.n);
  f.plan.grid = Dim3{5, 1, 1};
  f.plan.dynamic_smem = skinny_smem_bytes(5248);
  f.expect_caught(FindingKind::body_mismatch);
  bool names_the_limit = false;
  for (const Finding& x : f.sim.findings()) names_the_limit |= x.message.find("k <= 5120") != std::string::npos;
  EXPECT_TRUE(names_the_limit);
}

TEST(PlantedBug, SharedMemoryOtherThanTheDeclaredNeedIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{17, 33, 128, 128, 33});
  f.plan.dynamic_smem = kM32SmemBytes + 16;
  f.expect_caught(FindingKind::smem_mismatch);
  // Less than the need is as wrong: the kernel would run past its shared memory.
  Fixture g(Entry::gemm_pipelined_m32_strided, Shape{4, 33, 5120, 5120, 33});
  g.plan.dynamic_smem = skinny_smem_bytes(5120) - 16;
  g.expect_caught(FindingKind::smem_mismatch);
}

TEST(PlantedBug, SharedMemoryPastTheDeviceLimitIsCaught) {
  DeviceLimits small = DeviceLimits::h200();
  small.max_dynamic_smem_per_block = 40000;
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{17, 33, 128, 128, 33}, StaticRegistry::without_hopper_tier(),
            small);
  f.expect_caught(FindingKind::smem_over_limit);
}

TEST(PlantedBug, ColumnStripWithASecondGridRowWritesTwice) {
  Fixture f(Entry::gemv_batch4_strided, Shape{3, 33, 128, 128, 33});
  f.plan.grid.y = 2;
  f.expect_caught(FindingKind::written_twice);
}

TEST(PlantedBug, KernelPitchWiderThanTheCallsWritesIntoPadding) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{4, 33, 128, 128, 40});
  f.plan.params.c_row_stride = 41;  // the kernel's rows drift one element per row into the padding
  f.expect_caught(FindingKind::write_into_padding);
}

TEST(PlantedBug, KernelWithOneRowTooManyWritesPastM) {
  Fixture f(Entry::gemm_pipelined_m64_strided, Shape{40, 33, 128, 128, 33});
  f.plan.params.m = 41;
  f.expect_caught(FindingKind::write_outside);
}

TEST(PlantedBug, MisalignedARowStartIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{4, 33, 128, 136, 33});
  f.plan.params.a_row_stride = 132;  // rows 16-byte aligned no more
  f.expect_caught(FindingKind::misaligned_row);
}

TEST(PlantedBug, BlockOtherThan256ThreadsIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{4, 33, 128, 128, 33});
  f.plan.block.x = 128;
  f.expect_caught(FindingKind::block_mismatch);
}

TEST(PlantedBug, GemvAboveItsRowLimitIsCaught) {
  Fixture f(Entry::gemv_batch16_strided, Shape{16, 33, 128, 128, 33});
  f.plan.kernel = KernelId::gemv_batch4_strided;  // the 4-row GEMV handed 16 rows
  f.plan.kernel_name = kernel_name(KernelId::gemv_batch4_strided);
  f.expect_caught(FindingKind::body_mismatch);
}

TEST(PlantedBug, RowTileBodyInTheWrongSymbolIsCaught) {
  Fixture f(Entry::gemm_pipelined_m64_strided, Shape{40, 3969, 128, 136, 3971});
  ASSERT_EQ(f.plan.body, Body::tc_rows_strip);
  ASSERT_EQ(f.plan.kernel, KernelId::tc_rows_m64);
  f.plan.kernel = KernelId::tc_rows;  // the 80-register symbol, which has no 33..64-row configuration
  f.plan.kernel_name = kernel_name(KernelId::tc_rows);
  f.expect_caught(FindingKind::body_mismatch);
  bool names_the_symbol = false;
  for (const Finding& x : f.sim.findings())
    names_the_symbol |= x.message.find("w8a16_tc_rows_m64") != std::string::npos;
  EXPECT_TRUE(names_the_symbol);
}

// ---- the Hopper tier's persistent map ---------------------------------------------------------
// 7 SMs over 9 column units of 5 steps: every CTA's range cuts a unit, so heads, tails and the
// workspace chain are all exercised. 20 rows and a module whose Hopper tier has only its 64-column
// symbol.
StaticRegistry only_wgmma64() { return StaticRegistry::without_hopper_tier().set_present(KernelId::wgmma_rows, true); }
DeviceLimits seven_sms() {
  DeviceLimits l = DeviceLimits::h200();
  l.multiprocessors = 7;
  return l;
}

TEST(PlantedBug, HopperTierUnmutatedPlanHasNoFinding) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  ASSERT_EQ(f.plan.body, Body::wgmma_units);
  ASSERT_EQ(f.plan.grid, (Dim3{7, 1, 1}));
  const Status st = f.sim.execute(f.plan);
  EXPECT_TRUE(st.ok()) << st.message;
}

TEST(PlantedBug, HopperTierWorkspaceOtherThanTheNeedIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  f.plan.workspace_bytes -= 4;  // one flag short
  f.expect_caught(FindingKind::workspace_mismatch);
}

TEST(PlantedBug, HopperTierGridPastItsUnitsIsCaught) {
  // 10 CTAs over 9 units: some range would be shorter than a unit (a unit cut twice).
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  f.plan.grid.x = 10;
  f.plan.workspace_bytes = wgmma_workspace_bytes(20, 10, WgVariant::k64);
  f.expect_caught(FindingKind::grid_over_limit);
}

TEST(PlantedBug, HopperTierWithTheSeedsBlockIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  f.plan.block.x = 256;  // two warpgroups: no producer, or one consumer short
  f.expect_caught(FindingKind::block_mismatch);
}

TEST(PlantedBug, HopperTierSymbolWithoutTheRowTileIsCaught) {
  // The 64-column symbol has no row tile below 17 rows (the two-CTA symbol's range).
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  f.plan.params.m = 12;
  f.plan.extent.m = 12;
  f.plan.tile = documented_tile_map(Body::wgmma_units, 12, 520);
  f.plan.dynamic_smem = wgmma_smem_bytes(12, WgVariant::k64);
  f.plan.workspace_bytes = wgmma_workspace_bytes(12, f.plan.grid.x, WgVariant::k64);
  f.expect_caught(FindingKind::body_mismatch);
}

TEST(PlantedBug, HopperTierRowTileOtherThanTheDocumentedIsCaught) {
  Fixture f(Entry::gemm_pipelined_m32_strided, Shape{20, 520, 640, 648, 523}, only_wgmma64(), seven_sms());
  ASSERT_EQ(f.plan.tile.rows, 24u);
  f.plan.tile.rows = 16;  // the kernel tiles 20 rows as one 24-row tile, not two of 16
  f.expect_caught(FindingKind::tile_map_mismatch);
}

}  // namespace
}  // namespace w8a16::device
