// SPDX-License-Identifier: MIT OR Apache-2.0
// Shapes and inputs of the GPU tests' cases (gpu_cases.hpp).
#include "gpu_cases.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sstream>

namespace w8a16::gputest {
namespace {

using device::Body;
using device::Entry;

std::uint16_t bf16(std::uint32_t sign, int exp_unbiased, std::uint32_t mant7) {
  // Normal BF16 for exponents in [-126, 127]; below that, the subnormal with the same leading bits.
  if (exp_unbiased < -126) {
    const int shift = -126 - exp_unbiased;
    const std::uint32_t frac = shift >= 8 ? 0 : ((0x80u | mant7) >> shift);
    return static_cast<std::uint16_t>((sign << 15) | std::max<std::uint32_t>(frac, 1u));
  }
  return static_cast<std::uint16_t>((sign << 15) | (static_cast<std::uint32_t>(exp_unbiased + 127) << 7) | (mant7 & 0x7F));
}
float f32(std::uint32_t sign, int exp_unbiased, std::uint32_t mant23) {
  const std::uint32_t bits = (sign << 31) | (static_cast<std::uint32_t>(exp_unbiased + 127) << 23) | (mant23 & 0x7FFFFF);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
float f32_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A realistic E4M3 weight: exponent fields clustered mid-range, every mantissa, 2% extremes.
std::uint8_t realistic_e4m3(SplitMix64& r) {
  static constexpr std::uint8_t kExtremes[] = {0x7E, 0xFE, 0x01, 0x81, 0x00, 0x80, 0x08, 0x77};
  if (r.chance(2, 100)) return kExtremes[r.below(std::size(kExtremes))];
  const std::uint32_t e = (r.in_range(1, 15) + r.in_range(1, 15) + 1) / 2;
  std::uint32_t mant = r.below(8);
  if (e == 15 && mant == 7) mant = 6;  // 0x7F is NaN, kept for the specials distribution
  return static_cast<std::uint8_t>((r.below(2) << 7) | (e << 3) | mant);
}
std::uint8_t any_finite_e4m3(SplitMix64& r) {
  std::uint8_t c;
  do c = static_cast<std::uint8_t>(r.below(256));
  while ((c & 0x7F) == 0x7F);
  return c;
}
std::uint16_t activation_bf16(SplitMix64& r) {
  if (r.chance(2, 100)) return static_cast<std::uint16_t>(r.below(2) << 15);  // +-0
  return bf16(r.below(2), r.in_range(-6, 2), r.below(128));
}

std::uint32_t pick(SplitMix64& r, std::initializer_list<std::uint32_t> values) {
  return values.begin()[r.below(static_cast<std::uint32_t>(values.size()))];
}

}  // namespace

const char* dist_name(Dist d) {
  switch (d) {
    case Dist::activation: return "activation";
    case Dist::wide_exponents: return "wide_exponents";
    case Dist::cancellation: return "cancellation";
    case Dist::specials: return "specials";
    case Dist::near_overflow: return "near_overflow";
    case Dist::tiny: return "tiny";
  }
  return "?";
}

std::string GpuCase::describe() const {
  std::ostringstream o;
  o << device::entry_name(entry) << " m=" << m << " n=" << n << " k=" << k << " a_row_stride=" << a_row_stride
    << " c_row_stride=" << c_row_stride << " dist=" << dist_name(dist) << " seed=0x" << std::hex << seed;
  return o.str();
}

Inputs make_inputs(const GpuCase& c) {
  SplitMix64 r(c.seed);
  Inputs in;
  in.a.assign(static_cast<std::size_t>(c.m) * c.a_row_stride, 0x7FC0);  // padding: NaN, never to be read
  in.w.resize(static_cast<std::size_t>(c.n) * c.k);
  in.s.resize(static_cast<std::size_t>((c.n + 127) / 128) * (c.k / 128));
  auto a_at = [&](std::uint32_t m, std::uint32_t k) -> std::uint16_t& { return in.a[static_cast<std::size_t>(m) * c.a_row_stride + k]; };

  switch (c.dist) {
    case Dist::activation:
    case Dist::specials:
      for (std::uint32_t m = 0; m < c.m; ++m)
        for (std::uint32_t k = 0; k < c.k; ++k) a_at(m, k) = activation_bf16(r);
      for (auto& w : in.w) w = realistic_e4m3(r);
      for (auto& s : in.s) s = f32(0, r.in_range(-12, -4), static_cast<std::uint32_t>(r.next()));
      break;
    case Dist::wide_exponents:
      for (std::uint32_t m = 0; m < c.m; ++m)
        for (std::uint32_t k = 0; k < c.k; ++k)
          a_at(m, k) = r.chance(1, 20) ? 0 : bf16(r.below(2), r.in_range(-60, 60), r.below(128));
      for (auto& w : in.w) w = any_finite_e4m3(r);
      for (auto& s : in.s) s = f32(r.below(2), r.in_range(-40, 40), static_cast<std::uint32_t>(r.next()));
      break;
    case Dist::cancellation:
      // Pairs (k, k+1): A equal or one ulp apart, W negated, so the pair's products cancel to
      // nothing or to a few bits; now and then a large term, so the small ones truncate against it.
      for (std::uint32_t m = 0; m < c.m; ++m)
        for (std::uint32_t k = 0; k < c.k; k += 2) {
          const std::uint16_t x = r.chance(1, 16) ? bf16(r.below(2), r.in_range(4, 10), r.below(128)) : activation_bf16(r);
          a_at(m, k) = x;
          a_at(m, k + 1) = r.chance(1, 2) ? x : static_cast<std::uint16_t>(x ^ 1u);
        }
      for (std::uint32_t n = 0; n < c.n; ++n)
        for (std::uint32_t k = 0; k < c.k; k += 2) {
          const std::uint8_t w = realistic_e4m3(r);
          in.w[static_cast<std::size_t>(n) * c.k + k] = w;
          in.w[static_cast<std::size_t>(n) * c.k + k + 1] = r.chance(7, 8) ? static_cast<std::uint8_t>(w ^ 0x80) : realistic_e4m3(r);
        }
      for (auto& s : in.s) s = f32(r.below(2), r.in_range(-8, 8), static_cast<std::uint32_t>(r.next()));
      break;
    case Dist::near_overflow:
      for (std::uint32_t m = 0; m < c.m; ++m)
        for (std::uint32_t k = 0; k < c.k; ++k)
          a_at(m, k) = r.chance(1, 10) ? 0 : bf16(r.below(2), r.in_range(96, 127), r.below(128));
      for (auto& w : in.w) {
        const std::uint32_t e = r.in_range(8, 15);
        w = static_cast<std::uint8_t>((r.below(2) << 7) | (e << 3) | (e == 15 ? r.below(7) : r.below(8)));
      }
      for (auto& s : in.s) s = f32(r.below(2), r.in_range(-8, 8), static_cast<std::uint32_t>(r.next()));
      break;
    case Dist::tiny:
      for (std::uint32_t m = 0; m < c.m; ++m)
        for (std::uint32_t k = 0; k < c.k; ++k)
          a_at(m, k) = r.chance(1, 20) ? static_cast<std::uint16_t>(r.below(2) << 15)
                                       : bf16(r.below(2), r.in_range(-133, -110), r.below(128));
      for (auto& w : in.w)
        w = static_cast<std::uint8_t>((r.below(2) << 7) | (r.in_range(0, 6) << 3) | r.below(8));
      for (auto& s : in.s) s = f32(r.below(2), r.in_range(-30, -5), static_cast<std::uint32_t>(r.next()));
      break;
  }

  if (c.dist == Dist::specials) {
    // About two specials per A row and per W row, one scale in twelve; an A row in ten all zeros
    // of mixed sign (the MMA's +0 rule, NUMERICS.md 1.1 item 6).
    static constexpr std::uint16_t kA[] = {0x7FC0, 0xFFC1, 0x7F81, 0x7F80, 0xFF80, 0x0001, 0x8035,
                                           0x007F, 0x8000, 0x0000, 0x7F7F, 0xFF7F};
    static constexpr std::uint8_t kW[] = {0x7F, 0xFF, 0x80, 0x7E, 0xFE, 0x00, 0x01, 0x81};
    for (std::uint32_t m = 0; m < c.m; ++m) {
      const bool zero_row = r.chance(1, 10);
      for (std::uint32_t k = 0; k < c.k; ++k) {
        if (zero_row) a_at(m, k) = static_cast<std::uint16_t>(r.below(2) << 15);
        else if (r.chance(2, c.k)) a_at(m, k) = kA[r.below(std::size(kA))];
      }
    }
    for (auto& w : in.w)
      if (r.chance(2, c.k)) w = kW[r.below(std::size(kW))];
    for (auto& s : in.s)
      if (r.chance(1, 12))
        s = f32_bits(pick(r, {0x00000000u, 0x80000000u, 0xBF800000u, 0xC2F00000u, 0x00000001u, 0x007FFFFFu,
                              0x80000005u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u,
                              0x7F7FFFFFu}));
  }
  return in;
}

std::vector<GpuCase> make_cases(Entry entry, Body target, std::uint32_t count, std::uint64_t seed, std::uint64_t work_cap) {
  SplitMix64 r(seed ^ (static_cast<std::uint64_t>(entry) << 40) ^ (static_cast<std::uint64_t>(target) << 48));
  const bool by_m = entry == Entry::gemm_pipelined_by_m;
  std::vector<GpuCase> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    GpuCase c;
    c.entry = entry;
    c.target = target;
    c.dist = kAllDists[i % std::size(kAllDists)];
    c.seed = r.next();

    // M, weighted to the tile edges of every body.
    auto edge_m = [&](std::uint32_t lo, std::uint32_t hi) {
      static constexpr std::uint32_t kEdges[] = {1,  2,  3,  4,  5,  7,  8,  9,  15, 16,  17,  24,  31,
                                                 32, 33, 47, 48, 63, 64, 65, 96, 127, 128, 129, 130};
      if (r.chance(1, 3)) return static_cast<std::uint32_t>(r.in_range(lo, hi));
      std::uint32_t v;
      do v = kEdges[r.below(std::size(kEdges))];
      while (v < lo || v > hi);
      return v;
    };
    // K: a positive multiple of 128 in [lo, hi] (hi <= 32768), edges of the skinny limit included.
    auto pick_k = [&](std::uint32_t lo, std::uint32_t hi) {
      static constexpr std::uint32_t kEdges[] = {128,  256,  384,  512,  640,   1024,  1152,  2048,  3072, 4096,
                                                 4992, 5120, 5248, 6144, 8192, 12288, 16384, 24576, 32640, 32768};
      if (r.chance(1, 4)) return 128u * static_cast<std::uint32_t>(r.in_range(lo / 128, hi / 128));
      std::uint32_t v;
      do v = kEdges[r.below(std::size(kEdges))];
      while (v < lo || v > hi);
      return v;
    };
    int tc_region = -1, wg_region = -1;
    switch (device::is_wgmma_body(target) || !by_m ? target : Body::gemm128_tile) {
      case Body::gemm128_tile: c.m = edge_m(1, 130); c.k = pick_k(128, 32768); break;
      // The row-tile kernel takes every shape at 17..32 rows (plan.hpp tc_rows_takes), so the
      // twins' own tiles are aimed at the rows it leaves them: 33.. rows at N <= 1100 (below its
      // 33..64-row threshold), where the partial last row tile is still exercised.
      case Body::m32_tile: c.m = edge_m(33, 130); c.k = pick_k(128, 32768); break;
      case Body::m32_skinny: c.m = edge_m(1, 16); c.k = pick_k(128, 5120); break;
      case Body::tc_rows_strip:
        // Its nine regions (plan.hpp tc_rows_takes, geometry.hpp tc_rows_cols), by rows and N:
        //   0: 1..16, thin (1..8) / narrow at long K;  1: 1..16, thin / narrow at short K and N > 3968;
        //   2: 1..16, narrow (1..8) / mid at N > 12160; 3: 17..32, wide at N >= 10113;
        //   4: 33..64, mid at 3969..10112;           5: 33..64, wide at N >= 10113;
        //   6: 17..32, mid at 3969..10112;           7: 17..32, narrow at N <= 3968, any K;
        //   8: 1..8, narrow at 8065..10112.
        // Regions 1..6 and 8 need a large N, so they set N themselves below and keep K short
        // instead of shrinking N to the cap.
        tc_region = static_cast<int>(r.below(9));
        switch (tc_region) {
          case 0: c.m = edge_m(1, 16); c.k = pick_k(5248, 32768); break;
          case 1:
          case 2: c.m = edge_m(1, 16); c.k = pick_k(128, 384); break;
          case 3: c.m = edge_m(17, 32); c.k = pick_k(128, 384); break;
          case 4: c.m = edge_m(33, 64); c.k = pick_k(128, 512); break;
          case 5: c.m = edge_m(33, 64); c.k = pick_k(128, 384); break;
          case 6: c.m = edge_m(17, 32); c.k = pick_k(128, 640); break;
          case 7: c.m = edge_m(17, 32); c.k = pick_k(128, 32768); break;
          default: c.m = edge_m(1, 8); c.k = pick_k(128, 1024); break;
        }
        break;
      case Body::m64_tile:
        if (r.chance(1, 3)) { c.m = edge_m(1, 16); c.k = pick_k(128, 5120); }
        else { c.m = edge_m(33, 130); c.k = pick_k(128, 32768); }
        break;
      case Body::gemv_strip:
        c.m = edge_m(1, entry == Entry::gemv_batch4_strided ? 4 : 16);
        c.k = pick_k(128, 32768);
        break;
      case Body::wgmma_units:
      case Body::wgmma_units128:
        // The Hopper tier's one-CTA symbols run 17 rows and more, where the rule takes them
        // (plan.hpp wgmma_choice): 0: 33..130 rows, any K, few units (none cut); 1: 17..32 rows and
        // 2: 33..128 rows over more than 66 128-column units (more than 132 64-column ones: most
        // CTAs' ranges cut a unit: heads, tails, the workspace); 3: 129..300 rows, 2 or 3 row tiles,
        // units cut too. (The 128-column symbol's units are twice as wide: N is doubled below.)
        wg_region = static_cast<int>(r.below(4));
        switch (wg_region) {
          case 0: c.m = edge_m(33, 130); c.k = pick_k(128, 32768); break;
          case 1: c.m = edge_m(17, 32); c.k = pick_k(128, 1152); break;
          case 2: c.m = edge_m(33, 128); c.k = pick_k(128, 384); break;
          default: c.m = static_cast<std::uint32_t>(r.in_range(129, 300)); c.k = pick_k(128, 384); break;
        }
        break;
      case Body::wgmma_units128_x2:
        // The two-CTA symbol: 1..16 rows over 264 or more 128-column units (N > 33792).
        wg_region = 4;
        c.m = edge_m(1, 16);
        c.k = pick_k(128, 640);
        break;
    }

    // N: off every multiple of 8 / 32 / 128 most of the time, shrunk to the work cap.
    static constexpr std::uint32_t kNEdges[] = {1,   2,   3,   5,   7,   8,   9,   13,  15,  16,  17,  23,
                                                31,  32,  33,  47,  63,  64,  65,  95,  127, 128, 129, 130,
                                                135, 191, 255, 256, 257, 383, 385, 500, 639, 641, 777, 1000};
    c.n = r.chance(1, 3) ? static_cast<std::uint32_t>(r.in_range(1, 1100)) : kNEdges[r.below(std::size(kNEdges))];
    const bool sets_n = (tc_region >= 1 && tc_region != 7) || wg_region >= 1;
    if (tc_region >= 1 && sets_n) {  // N past the region's threshold, off every multiple of 16, 32 and 128 mostly
      static constexpr std::uint32_t kBase[] = {0, 3969, 12161, 10113, 3969, 10113, 3969, 0, 8065};
      static constexpr std::uint32_t kSpan[] = {0, 700, 700, 700, 6144, 700, 6144, 0, 2048};
      c.n = kBase[tc_region] + static_cast<std::uint32_t>(r.below(kSpan[tc_region]));
    }
    if (wg_region == 4) {
      c.n = 33793 + static_cast<std::uint32_t>(r.below(3000));
    } else if (wg_region >= 1) {  // more than 132 64-column units (N > 8448), or 2..3 row tiles over N > 2900
      c.n = (wg_region == 3 ? 2900 : 8449) + static_cast<std::uint32_t>(r.below(wg_region == 3 ? 1200 : 3000));
      if (target == Body::wgmma_units128) c.n = 2 * c.n - static_cast<std::uint32_t>(r.below(2));
    }
    const std::uint64_t mk = static_cast<std::uint64_t>(c.m) * c.k;
    if (!sets_n && mk * c.n > work_cap) {
      c.n = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, work_cap / mk));
      if (c.n > 8 && c.n % 8 == 0 && r.chance(3, 4)) c.n -= 1 + r.below(7);
    }

    if (device::entry_is_contiguous(entry)) {
      c.a_row_stride = c.k;
      c.c_row_stride = c.n;
    } else {
      c.a_row_stride = c.k + (r.chance(1, 2) ? 8 * static_cast<std::uint32_t>(r.in_range(1, 24)) : 0);
      c.c_row_stride = c.n + (r.chance(1, 2) ? static_cast<std::uint32_t>(r.in_range(1, 40)) : 0);
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace w8a16::gputest
