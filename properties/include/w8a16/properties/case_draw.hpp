// SPDX-License-Identifier: MIT OR Apache-2.0
// Drawing cases from any source of integers: the campaign's seeded PRNG or RapidCheck's generators.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_rng.hpp"

namespace w8a16::props {

struct DrawOptions {
  std::vector<golden::EntryPoint> entries{std::begin(golden::kAllEntryPoints), std::end(golden::kAllEntryPoints)};
  std::vector<golden::Distribution> dists{std::begin(golden::kAllDistributions), std::end(golden::kAllDistributions)};
  // Cap on m * n * k, the emulator's work (about 1/16 that many MMA steps): CPU runs keep it small.
  std::uint64_t max_macs = std::uint64_t{1} << 21;
  // The real model shapes, 1 draw in 32 when one fits under max_macs at small m.
  bool model_shapes = true;
};

// The real (N, K) of the model's projections.
struct ModelShape {
  std::uint32_t n, k;
};
inline constexpr ModelShape kModelShapes[] = {{12288, 2048}, {2048, 4096},  {8192, 2048},
                                              {10240, 5120}, {51200, 5120}, {5120, 25600}};

// M: one row, and one off each tile boundary (16 skinny, 32 twin, 64 twin, 128 tile).
inline constexpr std::uint32_t kBoundaryRows[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
// N: awkward (not a multiple of 8, 32 or 128) around every column-tile width, and a few multiples.
inline constexpr std::uint32_t kAwkwardCols[] = {1,  3,   7,   9,   15,  17,  31,  33,  63,
                                                 65, 100, 127, 129, 191, 255, 257, 383, 385};
inline constexpr std::uint32_t kMultipleCols[] = {8, 32, 64, 128, 256};
// K: the skinny body's limit 5120 (40 blocks) and one block past it, where the tiers switch.
inline constexpr std::uint32_t kSkinnyEdgeK[] = {5120, 5248};

// Source: anything with `std::uint64_t below(std::uint64_t bound)` giving a value in [0, bound).
// With golden::Xoshiro256ss it is the campaign's reproducible draw; with RapidCheck (generators.hpp)
// every choice shrinks toward 0, which the tables order as "simplest first".
template <class Source>
class CaseDrawer {
 public:
  CaseDrawer(Source& src, const DrawOptions& opt) : src_(src), opt_(opt) {}

  // Requires non-empty opt.entries and opt.dists (the CLI checks its options before drawing).
  golden::Case draw() {
    golden::Case c;
    c.entry = opt_.entries[pick(opt_.entries.size())];
    c.dist = opt_.dists[pick(opt_.dists.size())];
    const std::uint32_t max_rows = golden::entry_point_max_rows(c.entry);
    if (!draw_model_shape(&c, max_rows)) {
      c.k = draw_k();
      c.m = draw_m(max_rows);
      const std::uint64_t per_col = std::uint64_t{c.m} * c.k;
      if (per_col > opt_.max_macs)  // the cap binds: the largest K with one column under it
        c.k = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, opt_.max_macs / c.m / 128) * 128);
      c.n = draw_n(std::max<std::uint64_t>(1, opt_.max_macs / (std::uint64_t{c.m} * c.k)));
    }
    draw_strides(&c);
    c.seed = src_.below(~std::uint64_t{0});
    c.gen = golden::kCaseGeneratorVersion;
    return c;
  }

 private:
  std::size_t pick(std::size_t count) { return static_cast<std::size_t>(src_.below(count)); }

  bool draw_model_shape(golden::Case* c, std::uint32_t max_rows) {
    if (!opt_.model_shapes || src_.below(32) != 0) return false;
    const ModelShape s = kModelShapes[pick(std::size(kModelShapes))];
    const std::uint32_t m = 1 + static_cast<std::uint32_t>(src_.below(max_rows == 0 ? 2 : std::min(2u, max_rows)));
    if (std::uint64_t{m} * s.n * s.k > opt_.max_macs) return false;
    c->m = m;
    c->n = s.n;
    c->k = s.k;
    return true;
  }

  std::uint32_t draw_m(std::uint32_t max_rows) {
    const std::uint32_t limit = max_rows == 0 ? 130 : max_rows;
    std::uint32_t m;
    if (src_.below(4) != 0) {  // 3 in 4: a boundary row count
      m = kBoundaryRows[pick(std::size(kBoundaryRows))];
    } else {
      m = 1 + static_cast<std::uint32_t>(src_.below(130));
    }
    return m <= limit ? m : 1 + static_cast<std::uint32_t>(src_.below(limit));
  }

  std::uint32_t draw_k() {
    switch (src_.below(8)) {
      case 0:
      case 1:
      case 2: return 128;
      case 3:
      case 4: return 128 * (2 + static_cast<std::uint32_t>(src_.below(15)));  // 256 .. 2048
      case 5: return kSkinnyEdgeK[pick(2)];
      case 6: return 128 * (1 + static_cast<std::uint32_t>(src_.below(64)));    // up to 8192
      default: return 128 * (1 + static_cast<std::uint32_t>(src_.below(256)));  // up to 32768
    }
  }

  std::uint32_t draw_n(std::uint64_t max_n) {
    std::uint32_t n;
    switch (src_.below(4)) {
      case 0:
      case 1: n = kAwkwardCols[pick(std::size(kAwkwardCols))]; break;
      case 2: n = 1 + static_cast<std::uint32_t>(src_.below(400)); break;
      default: n = kMultipleCols[pick(std::size(kMultipleCols))];
    }
    return n <= max_n ? n : 1 + static_cast<std::uint32_t>(src_.below(std::min<std::uint64_t>(max_n, 400)));
  }

  // Tight or padded pitches; contiguous entry points have no choice (case.hpp).
  void draw_strides(golden::Case* c) {
    c->a_row_stride = c->k;
    c->c_row_stride = c->n;
    if (golden::entry_point_is_contiguous(c->entry) || src_.below(2) == 0) return;
    static constexpr std::uint32_t kAPad[] = {8, 16, 24, 64, 128, 1024};
    c->a_row_stride = c->k + kAPad[pick(std::size(kAPad))];
    c->c_row_stride = c->n + 1 + static_cast<std::uint32_t>(src_.below(40));
  }

  Source& src_;
  const DrawOptions& opt_;
};

// The campaign's draw: case i of a campaign with seed `seed`, independent of every other case
// (so shards and time budgets never change which case a given index is).
inline golden::Case draw_case_seeded(std::uint64_t seed, std::uint64_t index, const DrawOptions& opt) {
  golden::Xoshiro256ss rng(golden::derive_seed(seed, 0x100000000ull + index));
  return CaseDrawer<golden::Xoshiro256ss>(rng, opt).draw();
}

}  // namespace w8a16::props
