// SPDX-License-Identifier: MIT OR Apache-2.0
// Every entry point, simulated over awkward shapes: every output in [M, N) is written exactly once
// with the emulator's bytes for the kernel's contract, and the pitch padding and the rows past M
// keep their poison. Sizes sit one off every tile boundary (1, 7, 33, 129, 300 columns; 15..129
// rows; K at and past the skinny body's 5120).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim_operands.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/packed.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace w8a16::device {
namespace {

using testing::Shape;

const std::vector<std::uint32_t> kMs = {1, 2, 4, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 127, 128, 129};
const std::vector<std::uint32_t> kNs = {1, 7, 33, 129, 300};

const Entry kEntries[] = {
    Entry::gemm_pipelined,      Entry::gemm_pipelined_m32,         Entry::gemm_pipelined_m32_strided,
    Entry::gemm_pipelined_m64,  Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m,
    Entry::gemv_batch4_strided, Entry::gemv_batch16_strided};

std::uint32_t max_rows(Entry e) {
  if (e == Entry::gemv_batch4_strided) return kGemvBatch4MaxRows;
  if (e == Entry::gemv_batch16_strided) return kGemvBatch16MaxRows;
  return ~0u;
}

// Runs one entry point on the simulation and compares the whole C buffer with the expectation.
// Returns the plan's body, so callers can see which bodies a sweep reached.
// The default module lacks the Hopper tier, so the seed's bodies are reached; the tier's own tests
// pass all_present() (and, to cut units between CTAs, fewer SMs).
Body simulate_and_compare(Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda_pad,
                          std::uint32_t ldc_pad, StaticRegistry reg = StaticRegistry::without_hopper_tier(),
                          DeviceLimits limits = DeviceLimits::h200()) {
  const bool contiguous = entry_is_contiguous(e);
  const Shape sh{m, n, k, contiguous ? k : k + lda_pad, contiguous ? n : n + ldc_pad};
  SCOPED_TRACE(std::string(entry_name(e)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " k=" + std::to_string(k) + " lda=" + std::to_string(sh.lda) + " ldc=" + std::to_string(sh.ldc));
  const testing::Operands& o = testing::operands_for(sh);
  SimBackend sim(reg, limits);
  auto a = sim.allocate(o.a.size() * 2), w = sim.allocate(o.w.size()), s = sim.allocate(o.s.size() * 4);
  const std::size_t c_elems = std::size_t{m + testing::kRowsPastM} * sh.ldc;
  auto c = sim.allocate(c_elems * 2);
  EXPECT_TRUE(a->upload(o.a.data(), o.a.size() * 2).ok() && w->upload(o.w.data(), o.w.size()).ok() &&
              s->upload(o.s.data(), o.s.size() * 4).ok() && c->fill(0xA5).ok());

  Launcher api(sim);
  Call call;
  call.entry = e;
  call.kernel = api.handle(entry_own_kernel(e));
  call.m32_kernel = api.handle(KernelId::gemm_pipelined_m32);
  call.m64_kernel = api.handle(KernelId::gemm_pipelined_m64);
  call.args = Args{a->address(), w->address(), s->address(), c->address(), m, n, k, sh.lda, sh.ldc, 0};
  const Status st = api.launch(call);
  EXPECT_TRUE(st.ok()) << errc_name(st.code) << ": " << st.message;
  for (const Finding& f : sim.findings()) ADD_FAILURE() << finding_kind_name(f.kind) << ": " << f.message;
  if (sim.plans().size() != 1) {
    ADD_FAILURE() << "expected one plan, got " << sim.plans().size();
    return Body::gemm128_tile;
  }
  const Plan& plan = sim.plans().front();

  std::vector<std::uint16_t> got(c_elems);
  EXPECT_TRUE(c->download(got.data(), c_elems * 2).ok());
  const auto& want = testing::expected_for(sh, plan.contract == Contract::gemv);
  if (got != want) {
    for (std::size_t i = 0; i < c_elems; ++i)
      if (got[i] != want[i]) {
        ADD_FAILURE() << body_name(plan.body) << ": first difference at C[" << i / sh.ldc << "][" << i % sh.ldc
                      << "]: got 0x" << std::hex << got[i] << ", want 0x" << want[i];
        break;
      }
  }
  return plan.body;
}

// Every M (within the entry's row limit) x every N, at K = 128, pitches padded.
TEST(Simulation, EveryEntryCoversEveryAwkwardShapeAtK128) {
  for (Entry e : kEntries)
    for (std::uint32_t m : kMs) {
      if (m > max_rows(e)) continue;
      for (std::uint32_t n : kNs) {
        simulate_and_compare(e, m, n, 128, 8, 3);
        const Body hopper = simulate_and_compare(e, m, n, 128, 8, 3, StaticRegistry::all_present());
        const bool takes = wgmma_choice(m, n, 128, 132, WgPresent{true, true, true}).takes;
        if (max_rows(e) == ~0u) EXPECT_EQ(is_wgmma_body(hopper), takes) << entry_name(e) << " m=" << m << " n=" << n;
      }
    }
}

// The Hopper tier's persistent map with few SMs, so that units are cut between CTAs at every
// step boundary the shapes allow: every output written once, by the CTA that folds the last step.
// Each symbol alone (the others taken away), over the rows it runs, wherever the rule takes it.
TEST(Simulation, HopperTierCutsUnitsBetweenCtasAndCoversEveryOutput) {
  struct Symbol {
    KernelId id;
    Body body;
    WgPresent present;
    std::vector<std::uint32_t> ms;
  };
  const Symbol symbols[] = {{KernelId::wgmma_rows, Body::wgmma_units, {true, false, false}, {17, 24, 65, 130}},
                            {KernelId::wgmma_rows_n128, Body::wgmma_units128, {false, true, false}, {17, 33, 65, 130}},
                            {KernelId::wgmma_rows_n128_x2, Body::wgmma_units128_x2, {false, false, true}, {1, 9, 16}}};
  int reached = 0;
  for (const Symbol& sym : symbols) {
    StaticRegistry reg = StaticRegistry::without_hopper_tier();
    reg.set_present(sym.id, true);
    for (std::uint32_t sms : {1u, 2u, 3u, 5u, 7u, 132u}) {
      DeviceLimits lim = DeviceLimits::h200();
      lim.multiprocessors = sms;
      for (std::uint32_t m : sym.ms)
        for (std::uint32_t n : {1u, 64u, 65u, 300u, 1300u})
          for (std::uint32_t k : {128u, 640u, 1152u}) {
            const Body b = simulate_and_compare(Entry::gemm_pipelined_m32_strided, m, n, k, 8, 3, reg, lim);
            const bool takes = wgmma_choice(m, n, k, sms, sym.present).takes;
            EXPECT_EQ(b == sym.body, takes) << "sms=" << sms << " m=" << m << " n=" << n;
            reached += b == sym.body;
          }
    }
  }
  EXPECT_GT(reached, 100);
}

// gemm_packed_strided over W packed by the launch layer: the simulation reads it back through the
// emulator's own reader of the layout (reference/.../packed.hpp), so every C byte equal to the
// emulator's on the unpacked W checks the two sides of NUMERICS.md 2.3 against each other. Both
// packed symbols, units cut between CTAs (few SMs), N off every multiple of 128 (padding rows).
// Returns the body, or Body::gemm128_tile after a failed launch.
Body simulate_packed(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                     std::vector<std::uint8_t> packed, Errc want = Errc::ok, std::vector<FindingKind> findings = {}) {
  const Shape sh{m, n, k, k + 8, n + 3};
  SCOPED_TRACE("gemm_packed_strided m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
               " sms=" + std::to_string(sms));
  const testing::Operands& o = testing::operands_for(sh);
  DeviceLimits lim = DeviceLimits::h200();
  lim.multiprocessors = sms;
  SimBackend sim(StaticRegistry::all_present(), lim);
  auto a = sim.allocate(o.a.size() * 2), w = sim.allocate(packed.size()), s = sim.allocate(o.s.size() * 4);
  const std::size_t c_elems = std::size_t{m + testing::kRowsPastM} * sh.ldc;
  auto c = sim.allocate(c_elems * 2);
  EXPECT_TRUE(a->upload(o.a.data(), o.a.size() * 2).ok() && w->upload(packed.data(), packed.size()).ok() &&
              s->upload(o.s.data(), o.s.size() * 4).ok() && c->fill(0xA5).ok());
  Launcher api(sim);
  const Status st = api.gemm_packed_strided(a->address(), w->address(), s->address(), c->address(), m, n, k, sh.lda,
                                            sh.ldc);
  EXPECT_EQ(st.code, want) << st.message;
  std::vector<FindingKind> got_findings;
  for (const Finding& f : sim.findings()) got_findings.push_back(f.kind);
  EXPECT_EQ(got_findings, findings);
  std::vector<std::uint16_t> got(c_elems);
  EXPECT_TRUE(c->download(got.data(), c_elems * 2).ok());
  if (want != Errc::ok) {  // nothing written
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](std::uint16_t v) { return v == 0xA5A5; }));
    return Body::gemm128_tile;
  }
  EXPECT_TRUE(got == testing::expected_for(sh, false)) << "C differs from the emulator's";
  return sim.plans().empty() ? Body::gemm128_tile : sim.plans().front().body;
}

TEST(Simulation, PackedEntryCoversEveryShapeThroughItsThreeSymbols) {
  int x2 = 0, one = 0, strips = 0;
  for (std::uint32_t m : {1u, 9u, 16u, 17u, 33u, 65u, 130u})
    for (std::uint32_t n : {1u, 129u, 300u})
      for (std::uint32_t k : {128u, 640u})
        for (std::uint32_t sms : {1u, 3u, 132u}) {
          const testing::Operands& o = testing::operands_for(Shape{m, n, k, k + 8, n + 3});
          const Body b = simulate_packed(m, n, k, sms, pack_weights(o.w.data(), n, k));
          EXPECT_EQ(b, packed_body(m, n, sms));
          x2 += b == Body::wgmma_packed128_x2;
          one += b == Body::wgmma_packed128;
          strips += b == Body::tc_rows_packed;
        }
  // Up to 16 rows, per K: the two-CTA symbol where units (1, 2, 3) >= 2 SMs at 1 row (2 of the 9
  // (n, sms): 2 and 3 units on 1 SM) and where 2 units > SMs at 9 and 16 rows (5 of 9 each: every
  // N on 1 SM, 2 and 3 units on 3); the strips at the other 7 + 4 + 4.
  EXPECT_EQ(x2, 2 * (2 + 2 * 5));
  EXPECT_EQ(strips, 2 * (7 + 2 * 4));
  EXPECT_EQ(one, 4 * 3 * 2 * 3);
}

// A packed W whose NaN table hides a NaN code is input the kernels would misread (+-480 for NaN):
// the emulator refuses it, the simulation reports it and writes nothing (a marked NaN code is the
// GPU campaigns' nan_codes and specials distributions).
TEST(Simulation, PackedEntryRefusesANanTableThatHidesANanCode) {
  const std::uint32_t m = 5, n = 130, k = 256;
  const Shape sh{m, n, k, k + 8, n + 3};
  std::vector<std::uint8_t> w = testing::operands_for(sh).w;
  w[std::size_t{129} * k + 200] = 0xFF;  // tile (1, 1)
  std::vector<std::uint8_t> packed = pack_weights(w.data(), n, k);
  const std::size_t table = static_cast<std::size_t>(packed_table_offset(n, k));
  EXPECT_EQ(packed[table + 1 * 2 + 1], 1);  // unit 1, step 1
  packed[table + 3] = 0;
  simulate_packed(m, n, k, 132, packed, Errc::simulation_finding, {FindingKind::packed_weight_invalid});
  packed[table + 3] = 2;
  simulate_packed(m, n, k, 132, packed, Errc::simulation_finding, {FindingKind::packed_weight_invalid});
}

// K around the skinny body's limit: 256 and 5120 run it (M <= 16), 5248 goes to the row-tile
// kernel (M <= 16) or the tile bodies.
TEST(Simulation, EveryEntryAroundTheSkinnyKLimit) {
  std::vector<Body> reached;
  for (Entry e : kEntries)
    for (std::uint32_t m : {1u, 2u, 4u, 15u, 16u, 17u, 33u})
      for (std::uint32_t k : {256u, 5120u, 5248u}) {
        if (m > max_rows(e)) continue;
        for (std::uint32_t n : {7u, 33u}) reached.push_back(simulate_and_compare(e, m, n, k, 16, 5));
      }
  for (Body b :
       {Body::gemm128_tile, Body::m32_tile, Body::m32_skinny, Body::m64_tile, Body::tc_rows_strip, Body::gemv_strip})
    EXPECT_NE(std::find(reached.begin(), reached.end(), b), reached.end()) << "no shape reached " << body_name(b);
}

TEST(Simulation, WithoutTheRowTileKernelTheTwinsTileBodyTakesFewRowsAtLargeK) {
  StaticRegistry reg = StaticRegistry::without_hopper_tier();
  reg.set_present(KernelId::tc_rows, false);
  for (std::uint32_t m : {1u, 16u}) {
    EXPECT_EQ(simulate_and_compare(Entry::gemm_pipelined_m32_strided, m, 33, 5248, 8, 1, reg), Body::m32_tile);
    EXPECT_EQ(simulate_and_compare(Entry::gemm_pipelined_m64_strided, m, 33, 5248, 8, 1, reg), Body::m64_tile);
  }
}

TEST(Simulation, WiderShapesAtK256) {
  for (Entry e : {Entry::gemm_pipelined, Entry::gemm_pipelined_m32_strided, Entry::gemm_pipelined_m64_strided,
                  Entry::gemv_batch16_strided})
    for (std::uint32_t m : {4u, 16u, 65u})
      if (m <= max_rows(e)) simulate_and_compare(e, m, 300, 256, 24, 17);
}

}  // namespace
}  // namespace w8a16::device
