// SPDX-License-Identifier: MIT OR Apache-2.0
// Shapes of the GPU tests' cases (gpu_cases.hpp); their inputs are the golden generator's.
#include "gpu_cases.hpp"

#include <algorithm>
#include <iterator>

#include "w8a16/device/bodies.hpp"
#include "w8a16/golden/case_rng.hpp"

namespace w8a16::gputest {
namespace {

using device::Body;
using golden::EntryPoint;

}  // namespace

// The tier that goes first (the Hopper tier), less the target's own symbols (bodies.hpp).
std::uint32_t without_for(Body target, std::uint32_t present) {
  return device::tier_kernels(device::Tier::first) & ~device::body_info(target).kernels & present;
}

std::vector<GpuCase> make_cases(EntryPoint entry, Body target, std::uint32_t count, std::uint64_t seed,
                                std::uint64_t work_cap, std::uint32_t present) {
  golden::Xoshiro256ss r(seed ^ (static_cast<std::uint64_t>(entry) << 40) ^ (static_cast<std::uint64_t>(target) << 48));
  const bool by_m = entry == EntryPoint::gemm_pipelined_by_m;
  const auto in = [&](std::int64_t lo, std::int64_t hi) { return static_cast<std::uint32_t>(r.in_range(lo, hi)); };
  std::vector<GpuCase> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    GpuCase g;
    golden::Case& c = g.c;
    g.target = target;
    c.entry = entry;
    c.dist = golden::kAllDistributions[i % std::size(golden::kAllDistributions)];
    c.seed = r.next();
    c.gen = golden::kCaseGeneratorVersion;

    // M, weighted to the tile edges of every body.
    auto edge_m = [&](std::uint32_t lo, std::uint32_t hi) {
      static constexpr std::uint32_t kEdges[] = {1,  2,  3,  4,  5,  7,  8,  9,  15,  16,  17,  24, 31,
                                                 32, 33, 47, 48, 63, 64, 65, 96, 127, 128, 129, 130};
      if (r.chance(1, 3)) return in(lo, hi);
      std::uint32_t v;
      do v = kEdges[r.below(std::size(kEdges))];
      while (v < lo || v > hi);
      return v;
    };
    // K: a positive multiple of 128 in [lo, hi] (hi <= 32768), edges of the skinny limit included.
    auto pick_k = [&](std::uint32_t lo, std::uint32_t hi) {
      static constexpr std::uint32_t kEdges[] = {128,  256,  384,  512,  640,  1024,  1152,  2048,  3072,  4096,
                                                 4992, 5120, 5248, 6144, 8192, 12288, 16384, 24576, 32640, 32768};
      if (r.chance(1, 4)) return 128u * in(lo / 128, hi / 128);
      std::uint32_t v;
      do v = kEdges[r.below(std::size(kEdges))];
      while (v < lo || v > hi);
      return v;
    };
    // Rows [m_lo, m_hi] weighted to the tile edges, then K in [k_lo, k_hi] (in that order: the draws
    // make the case line).
    struct Aim {
      std::uint32_t m_lo, m_hi, k_lo, k_hi;
    };
    auto aim = [&](const Aim& a) {
      c.m = edge_m(a.m_lo, a.m_hi);
      c.k = pick_k(a.k_lo, a.k_hi);
    };
    // The row-tile kernel's regions 0..8 and the one-CTA Hopper symbols' regions 0..2 (below).
    static constexpr Aim kTcRegions[] = {{1, 16, 5248, 32768}, {1, 16, 128, 384},    {1, 16, 128, 384},
                                         {17, 32, 128, 384},   {33, 64, 128, 512},   {33, 64, 128, 384},
                                         {17, 32, 128, 640},   {17, 32, 128, 32768}, {1, 8, 128, 1024}};
    static constexpr Aim kWgRegions[] = {{33, 130, 128, 32768}, {17, 32, 128, 1152}, {33, 128, 128, 384}};
    int tc_region = -1, wg_region = -1, pk_region = -1;
    switch (device::is_wgmma_body(target) || !by_m ? target : Body::gemm128_tile) {
      case Body::gemm128_tile: aim({1, 130, 128, 32768}); break;
      // The row-tile kernel takes every shape at 17..32 rows (plan.hpp tc_rows_takes), so the
      // twins' own tiles are aimed at the rows it leaves them: 33.. rows at N <= 1100 (below its
      // 33..64-row threshold), where the partial last row tile is still exercised.
      case Body::m32_tile: aim({33, 130, 128, 32768}); break;
      case Body::m32_skinny: aim({1, 16, 128, 5120}); break;
      case Body::tc_rows_strip:
        // Its regions (plan.hpp tc_rows_takes, geometry.hpp tc_rows_cols), by rows and N:
        //   0: 1..16, thin (1..8) / narrow at long K;  1: 1..16, thin / narrow at short K and N > 3968;
        //   2: 1..16, narrow (1..8) / mid at N > 12160; 3: 17..32, wide at N >= 10113;
        //   4: 33..64, mid at 3969..10112;           5: 33..64, wide at N >= 10113;
        //   6: 17..32, mid at 3969..10112;           7: 17..32, narrow at N <= 3968, any K;
        //   8: 1..8, narrow at 8065..10112.
        // Regions 1..6 and 8 need a large N, so they set N themselves below and keep K short
        // instead of shrinking N to the cap.
        tc_region = static_cast<int>(r.below(9));
        aim(kTcRegions[tc_region]);
        break;
      case Body::m64_tile: aim(r.chance(1, 3) ? Aim{1, 16, 128, 5120} : Aim{33, 130, 128, 32768}); break;
      case Body::gemv_strip:
        c.m = edge_m(1, entry == EntryPoint::gemv_batch4_strided ? 4 : 16);
        c.k = pick_k(128, 32768);
        break;
      case Body::wgmma_units:
      case Body::wgmma_units128:
      case Body::wgmma_packed128:
        // The Hopper tier's one-CTA symbols run 17 rows and more, where the rule takes them
        // (plan.hpp wgmma_choice; the packed one at every shape from 17 rows): 0: 33..130 rows, any K, few units (none cut); 1: 17..32 rows and
        // 2: 33..128 rows over more than 66 128-column units (more than 132 64-column ones: most
        // CTAs' ranges cut a unit: heads, tails, the workspace); 3: 129..300 rows, 2 or 3 row tiles,
        // units cut too. (The 128-column symbol's units are twice as wide: N is doubled below.)
        wg_region = static_cast<int>(r.below(4));
        if (wg_region < 3) {
          aim(kWgRegions[wg_region]);
        } else {
          c.m = in(129, 300);
          c.k = pick_k(128, 384);
        }
        break;
      case Body::wgmma_units128_x2:
        // The two-CTA symbol: 1..16 rows over 264 or more 128-column units (N > 33792).
        wg_region = 4;
        aim({1, 16, 128, 640});
        break;
      case Body::wgmma_packed128_x2:
        // Its packed twin (plan.hpp packed_body): half at 1..16 rows over 264 units or more (units
        // cut), half at 9..16 rows over 67 or more (more than half of 132 SMs).
        wg_region = r.chance(1, 2) ? 4 : 5;
        aim(wg_region == 4 ? Aim{1, 16, 128, 640} : Aim{9, 16, 128, 640});
        break;
      case Body::tc_rows_packed:
        // The packed strips (plan.hpp packed_body, 132 SMs): 0: 1..16 rows, any K, N shrunk to the
        // cap (thin at 1..8 rows, narrow at 9..16); 1: 1..8 rows, narrow from N = 8065 below 264
        // units (N <= 33664), short K.
        pk_region = static_cast<int>(r.below(2));
        aim(pk_region == 0 ? Aim{1, 16, 128, 32768} : Aim{1, 8, 128, 384});
        break;
    }

    // N: off every multiple of 8 / 32 / 128 most of the time, shrunk to the work cap.
    static constexpr std::uint32_t kNEdges[] = {1,   2,   3,   5,   7,   8,   9,   13,  15,  16,  17,  23,
                                                31,  32,  33,  47,  63,  64,  65,  95,  127, 128, 129, 130,
                                                135, 191, 255, 256, 257, 383, 385, 500, 639, 641, 777, 1000};
    c.n = r.chance(1, 3) ? in(1, 1100) : kNEdges[r.below(std::size(kNEdges))];
    const bool sets_n = (tc_region >= 1 && tc_region != 7) || wg_region >= 1 || pk_region == 1;
    if (tc_region >= 1 && sets_n) {  // N past the region's threshold, off every multiple of 16, 32 and 128 mostly
      static constexpr std::uint32_t kBase[] = {0, 3969, 12161, 10113, 3969, 10113, 3969, 0, 8065};
      static constexpr std::uint32_t kSpan[] = {0, 700, 700, 700, 6144, 700, 6144, 0, 2048};
      c.n = kBase[tc_region] + static_cast<std::uint32_t>(r.below(kSpan[tc_region]));
    }
    if (pk_region == 1) {
      c.n = 8065 + static_cast<std::uint32_t>(r.below(25600));
    } else if (wg_region == 4) {
      c.n = 33793 + static_cast<std::uint32_t>(r.below(3000));
    } else if (wg_region >= 1) {  // more than 132 64-column units (N > 8448), or 2..3 row tiles over N > 2900
      c.n = (wg_region == 3 ? 2900 : 8449) + static_cast<std::uint32_t>(r.below(wg_region == 3 ? 1200 : 3000));
      if (target == Body::wgmma_units128 || target == Body::wgmma_packed128)
        c.n = 2 * c.n - static_cast<std::uint32_t>(r.below(2));
    }
    const std::uint64_t mk = static_cast<std::uint64_t>(c.m) * c.k;
    if (!sets_n && mk * c.n > work_cap) {
      c.n = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, work_cap / mk));
      if (c.n > 8 && c.n % 8 == 0 && r.chance(3, 4)) c.n -= 1 + static_cast<std::uint32_t>(r.below(7));
    }

    if (golden::entry_point_is_contiguous(entry)) {
      c.a_row_stride = c.k;
      c.c_row_stride = c.n;
    } else {
      c.a_row_stride = c.k + (r.chance(1, 2) ? 8 * in(1, 24) : 0);
      c.c_row_stride = c.n + (r.chance(1, 2) ? in(1, 40) : 0);
    }
    c.without = without_for(target, present);
    out.push_back(g);
  }
  return out;
}

std::vector<GpuCase> awkward_cases(std::uint32_t present) {
  constexpr auto d = golden::Distribution::row_specials;
  auto mk = [&](EntryPoint e, Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda,
                std::uint32_t ldc) {
    const golden::Case c = golden::CaseSpec{}
                               .entry(e)
                               .shape(m, n, k)
                               .strides(lda, ldc)
                               .dist(d)
                               .seed(0xA11CEull * (m + 31 * n + 7 * k))
                               .without(without_for(b, present));
    return GpuCase{c, b};
  };
  using E = EntryPoint;
  return {
      mk(E::gemm_pipelined, Body::gemm128_tile, 130, 67, 384, 384, 67),
      mk(E::gemm_pipelined_m32_strided, Body::m32_tile, 33, 37, 256, 264, 40),
      mk(E::gemm_pipelined_m32_strided, Body::m32_skinny, 13, 13, 5120, 5128, 15),
      // The row-tile kernel, one shape per configuration (geometry.hpp tc_rows_cols and row blocks):
      // thin; narrow with 1, 2 and 4 row blocks; mid with 2, 4, 6 and 8; wide with 4, 6 and 8.
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 5, 3999, 640, 648, 4001),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 3, 8101, 640, 648, 8103),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 11, 19, 6272, 6280, 21),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 23, 77, 1152, 1160, 79),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 13, 12171, 384, 392, 12173),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 19, 5003, 384, 392, 5005),
      mk(E::gemm_pipelined_m64_strided, Body::tc_rows_strip, 41, 4099, 640, 648, 4101),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 57, 8075, 256, 264, 8077),
      mk(E::gemm_pipelined_m64_strided, Body::tc_rows_strip, 29, 10133, 256, 264, 10135),
      mk(E::gemm_pipelined_m64_strided, Body::tc_rows_strip, 47, 10139, 256, 264, 10141),
      mk(E::gemm_pipelined_m32_strided, Body::tc_rows_strip, 61, 10147, 384, 392, 10149),
      mk(E::gemm_pipelined_m64_strided, Body::m64_tile, 65, 33, 640, 648, 35),
      mk(E::gemv_batch4_strided, Body::gemv_strip, 3, 9, 640, 648, 11),
      mk(E::gemv_batch16_strided, Body::gemv_strip, 13, 17, 256, 264, 19),
      // The Hopper tier: the 64-column symbol at each of its row tiles (24 .. 128, two 128-row
      // tiles), units cut between CTAs where N > 8448 (more than 132 units); the 128-column one,
      // units cut (N > 16896) at tiles of 24, 64, 96 and 128 rows, and 2 row tiles over N = 5811;
      // the two-CTA one at 1 .. 16 rows over more than 264 units.
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units, 21, 8453, 640, 648, 8455),
      mk(E::gemm_pipelined_by_m, Body::wgmma_units, 24, 9001, 384, 384, 9001),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units, 31, 8457, 256, 264, 8460),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units, 40, 77, 6272, 6280, 79),
      mk(E::gemm_pipelined_m64_strided, Body::wgmma_units, 63, 8513, 256, 264, 8515),
      mk(E::gemm_pipelined_m64_strided, Body::wgmma_units, 64, 130, 1152, 1160, 131),
      mk(E::gemm_pipelined, Body::wgmma_units, 90, 8521, 128, 128, 8521),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units, 127, 3001, 384, 392, 3003),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units, 259, 2911, 256, 264, 2913),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units128, 20, 16901, 384, 392, 16903),
      mk(E::gemm_pipelined_m64_strided, Body::wgmma_units128, 50, 16987, 256, 264, 16990),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units128, 77, 16913, 384, 392, 16915),
      mk(E::gemm_pipelined_by_m, Body::wgmma_units128, 120, 17011, 128, 128, 17011),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units128, 200, 5811, 256, 264, 5813),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units128_x2, 1, 33793, 128, 136, 33795),
      mk(E::gemm_pipelined_m32_strided, Body::wgmma_units128_x2, 5, 33811, 256, 264, 33813),
      mk(E::gemm_pipelined_by_m, Body::wgmma_units128_x2, 16, 34001, 384, 384, 34001),
      // The packed symbols: the strips thin, narrow and narrow over 2 row blocks; the two-CTA one
      // over 67 units at 9 rows and units cut at 1 and 16; the one-CTA one over few units at 17
      // rows, units cut at 24, 77 and 200 rows.
      mk(E::gemm_packed_strided, Body::tc_rows_packed, 1, 77, 640, 648, 79),
      mk(E::gemm_packed_strided, Body::tc_rows_packed, 5, 8101, 640, 648, 8103),
      mk(E::gemm_packed_strided, Body::tc_rows_packed, 9, 4099, 1152, 1160, 4101),
      mk(E::gemm_packed_strided, Body::wgmma_packed128_x2, 9, 8453, 256, 264, 8455),
      mk(E::gemm_packed_strided, Body::wgmma_packed128_x2, 1, 33793, 128, 136, 33795),
      mk(E::gemm_packed_strided, Body::wgmma_packed128_x2, 16, 33811, 256, 264, 33813),
      mk(E::gemm_packed_strided, Body::wgmma_packed128, 17, 130, 6272, 6280, 133),
      mk(E::gemm_packed_strided, Body::wgmma_packed128, 24, 16901, 384, 392, 16903),
      mk(E::gemm_packed_strided, Body::wgmma_packed128, 77, 16913, 384, 392, 16915),
      mk(E::gemm_packed_strided, Body::wgmma_packed128, 200, 5811, 256, 264, 5813),
  };
}

}  // namespace w8a16::gputest
