// SPDX-License-Identifier: MIT OR Apache-2.0
// Output buffers placed against each operand, every entry point: one element into it is refused
// with nothing changed anywhere, exactly adjacent runs with the emulator's bytes. And the largest
// grids the launch layer accepts on an H200, planned only (RecordingBackend, no buffers).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "w8a16/device/recording_backend.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::hostile {
namespace {

using device::Errc;

// One allocation holding A, W and S far apart, C placed anywhere in it: the whole arena is the
// "output buffer" whose bytes a refusal must leave alone.
struct Arena {
  static constexpr std::size_t kGap = 1 << 16;
  std::size_t a_off = kGap, w_off = 0, s_off = 0, size = 0;
  std::vector<std::uint8_t> bytes;

  // Operands at 256-byte offsets, as allocations are, so only the placement of C is in question.
  static std::size_t up(std::size_t x) { return (x + 255) / 256 * 256; }
  std::size_t w_size = 0;
  Arena(Entry e, const Problem& p) {
    const std::vector<std::uint8_t> w = device_weight(e, p);
    w_size = w.size();
    w_off = up(a_off + p.a.size() * 2 + kGap);
    s_off = up(w_off + w_size + kGap);
    size = s_off + p.s.size() * 4 + kGap;
    bytes.assign(size, 0xA5);
    std::memcpy(&bytes[a_off], p.a.data(), p.a.size() * 2);
    std::memcpy(&bytes[w_off], w.data(), w_size);
    std::memcpy(&bytes[s_off], p.s.data(), p.s.size() * 4);
  }
};

TEST(HostileOverlap, OutputAgainstEachOperandAtEachEdge) {
  ClassCounter counter("overlapping input and output");
  for (Entry e : kEntries) {
    const Problem p = make_problem(e, 3, 20, 256, 8, 4, 11);
    const Arena arena(e, p);
    // Used byte spans (NUMERICS.md 2: only the used extents count).
    const std::size_t a_used = 2 * (std::size_t{p.m - 1} * p.lda + p.k), w_used = arena.w_size, s_used = p.s.size() * 4,
                      c_used = 2 * (std::size_t{p.m - 1} * p.ldc + p.n);
    const struct {
      const char* name;
      std::size_t lo, hi;
    } ops[] = {{"input", arena.a_off, arena.a_off + a_used},
               {"weight", arena.w_off, arena.w_off + w_used},
               {"block_scale", arena.s_off, arena.s_off + s_used}};
    for (const auto& op : ops) {
      const struct {
        const char* where;
        std::size_t c_off;
        bool overlaps;
      } places[] = {{"same start", op.lo, true},
                    {"C's last element on the operand's first byte", op.lo - c_used + 2, true},
                    {"C's first element on the operand's last byte", op.hi - 2, true},
                    {"C ends where the operand starts", op.lo - c_used, false},
                    {"C starts where the operand ends", op.hi, false}};
      for (const auto& pl : places) {
        SCOPED_TRACE(std::string(device::entry_name(e)) + ", " + op.name + ": " + pl.where);
        device::SimBackend sim;
        auto buf = sim.allocate(arena.size);
        ASSERT_TRUE(buf && buf->upload(arena.bytes.data(), arena.size).ok());
        const DevPtr base = buf->address();
        device::Launcher api(sim);
        const device::Status st = call_named(api, e, handles_for(e, sim.registry()), base + arena.a_off,
                                             base + arena.w_off, base + arena.s_off, base + pl.c_off, p.m, p.n, p.k,
                                             p.lda, p.ldc);
        std::vector<std::uint8_t> after(arena.size);
        ASSERT_TRUE(buf->download(after.data(), after.size()).ok());
        if (pl.overlaps) {
          EXPECT_EQ(st.code, Errc::output_overlaps_input) << device::errc_name(st.code) << ": " << st.message;
          EXPECT_NE(st.message.find(std::string("overlap ") + op.name), std::string::npos) << st.message;
          EXPECT_TRUE(sim.plans().empty());
          EXPECT_TRUE(after == arena.bytes) << "a refused call changed the buffer";
        } else {
          // Accepted: C's rows get the emulator's values, every other byte of the arena is as before.
          EXPECT_TRUE(st.ok()) << device::errc_name(st.code) << ": " << st.message;
          std::vector<std::uint8_t> want = arena.bytes;
          std::vector<std::uint16_t> c(std::size_t{p.m} * p.ldc);
          std::memcpy(c.data(), &want[pl.c_off], c_used);
          const ref::GemmView v = ref::gemm_view(p.a.data(), p.lda, p.w.data(), p.s.data(), p.m, p.n, p.k);
          if (is_gemv(e)) ref::gemm_gemv(v, c.data(), p.ldc, 1);
          else ref::gemm_canonical(v, ref::Arch::sm90, c.data(), p.ldc, 1);
          std::memcpy(&want[pl.c_off], c.data(), c_used);
          EXPECT_TRUE(after == want) << "not the emulator's bytes in C, or a byte outside C changed";
        }
        counter.add();
      }
    }
  }
}

// ---- the largest grids --------------------------------------------------------------------
constexpr DevPtr kA = 0x100000000000ull, kW = 0x200000000000ull, kS = 0x300000000000ull, kC = 0x400000000000ull;

device::Status plan_only(device::RecordingBackend& rec, Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  device::Launcher api(rec);
  return call_named(api, e, handles_for(e, rec.registry()), kA, kW, kS, kC, m, n, k, k, n);
}

// The accepted plan covers [M, N] with its grid and stays within the H200's limits.
void expect_sound_plan(const device::RecordingBackend& rec, std::uint32_t m, std::uint32_t n) {
  ASSERT_EQ(rec.plans().size(), 1u);
  const device::Plan& p = rec.plans().back();
  const device::DeviceLimits h200 = device::DeviceLimits::h200();
  EXPECT_LE(p.grid.x, h200.max_grid_x);
  EXPECT_LE(p.grid.y, h200.max_grid_y);
  EXPECT_LE(p.dynamic_smem, h200.max_dynamic_smem_per_block);
  EXPECT_GE(std::uint64_t{p.grid.x} * p.tile.cols, n);
  if (p.tile.kind == device::TileKind::tile) {
    EXPECT_GE(std::uint64_t{p.grid.y} * p.tile.rows, m);
  }
}

TEST(HostileGrids, TheLargestGridsAnH200AcceptsAndOneMoreRowOrColumn) {
  ClassCounter counter("largest grids (plan only)");
  for (Entry e : kEntries) {
    SCOPED_TRACE(device::entry_name(e));
    if (e == Entry::gemm_packed_strided) {
      // Its bodies' grids are persistent (geometry.hpp wgmma_ctas): one row of at most two CTAs an
      // SM, whatever M and N, so the largest calls plan within the limits; n * k < 2^32 binds.
      device::RecordingBackend rec;
      const device::DeviceLimits h200 = device::DeviceLimits::h200();
      const std::uint32_t wide_n = 0xFFFFFFFFu / 128;
      for (const auto& [m, n] : {std::pair{65535u * 128 + 1, 1u}, std::pair{1u, wide_n}, std::pair{127u, wide_n}}) {
        rec.clear();
        const device::Status ok = plan_only(rec, e, m, n, 128);
        EXPECT_TRUE(ok.ok()) << "m=" << m << " n=" << n << ": " << ok.message;
        ASSERT_EQ(rec.plans().size(), 1u);
        const device::Plan& p = rec.plans().back();
        EXPECT_LE(p.grid.x, 2 * h200.multiprocessors) << "m=" << m << " n=" << n;
        EXPECT_EQ(p.grid.y, 1u);
        EXPECT_LE(p.dynamic_smem, h200.max_dynamic_smem_per_block);
      }
      const device::Status wider = plan_only(rec, e, 1, wide_n + 1, 128);
      EXPECT_EQ(wider.code, Errc::index_overflow) << wider.message;
      EXPECT_NE(wider.message.find("n * k=4294967296"), std::string::npos) << wider.message;
      counter.add(4);
      continue;
    }
    // Rows: the tile bodies reach grid.y = 65535 (the 32-row twin at 2,097,120 rows, the 64-row
    // twin at 4,194,240, the 128-row tile at 8,388,480; by_m takes the 128-row tile past 64 rows).
    // The GEMVs' strips have grid.y = 1; their row limit binds instead.
    std::uint32_t rows_per_cta = 128;
    if (e == Entry::gemm_pipelined_m32 || e == Entry::gemm_pipelined_m32_strided) rows_per_cta = 32;
    if (e == Entry::gemm_pipelined_m64 || e == Entry::gemm_pipelined_m64_strided) rows_per_cta = 64;
    device::RecordingBackend rec(device::StaticRegistry::without_hopper_tier());  // the seed's tile bodies
    if (!is_gemv(e)) {
      const std::uint32_t m = 65535 * rows_per_cta;
      const device::Status ok = plan_only(rec, e, m, 1, 128);
      EXPECT_TRUE(ok.ok()) << ok.message;
      expect_sound_plan(rec, m, 1);
      if (!rec.plans().empty()) {
        EXPECT_EQ(rec.plans().back().grid.y, 65535u);
      }
      const device::Status over = plan_only(rec, e, m + 1, 1, 128);
      EXPECT_EQ(over.code, Errc::grid_too_large) << over.message;
      EXPECT_NE(over.message.find("grid.y=65536"), std::string::npos) << over.message;
      EXPECT_EQ(rec.plans().size(), 1u) << "the refused plan reached the backend";
      counter.add(2);
    } else {
      const device::Status ok = plan_only(rec, e, max_rows(e), 1, 128);
      EXPECT_TRUE(ok.ok()) << ok.message;
      EXPECT_EQ(plan_only(rec, e, max_rows(e) + 1, 1, 128).code, Errc::gemv_too_many_rows);
      counter.add(2);
    }
    // Columns: grid.x cannot reach 2^31 - 1 on an H200, since n * k < 2^32 binds first:
    // n = 33,554,431 at K = 128 is the widest call, one more column is an index overflow.
    rec.clear();
    const std::uint32_t n = 0xFFFFFFFFu / 128;
    const device::Status wide = plan_only(rec, e, 1, n, 128);
    EXPECT_TRUE(wide.ok()) << wide.message;
    expect_sound_plan(rec, 1, n);
    const device::Status wider = plan_only(rec, e, 1, n + 1, 128);
    EXPECT_EQ(wider.code, Errc::index_overflow) << wider.message;
    EXPECT_NE(wider.message.find("n * k=4294967296"), std::string::npos) << wider.message;
    counter.add(2);
  }
  // Both at once: the 32-row twin at 65535 CTAs down and 64 across (m * n just below 2^32).
  device::RecordingBackend rec(device::StaticRegistry::without_hopper_tier());
  const device::Status big = plan_only(rec, Entry::gemm_pipelined_m32_strided, 65535u * 32, 2048, 128);
  EXPECT_TRUE(big.ok()) << big.message;
  expect_sound_plan(rec, 65535u * 32, 2048);
  if (!rec.plans().empty()) {
    EXPECT_TRUE((rec.plans().back().grid == device::Dim3{64, 65535, 1}));
  }
  counter.add();
}

}  // namespace
}  // namespace w8a16::hostile
