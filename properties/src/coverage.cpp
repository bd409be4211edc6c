// SPDX-License-Identifier: MIT OR Apache-2.0
// The coverage cells, the cases aimed at them, and the gaps of a campaign's table (coverage.hpp).
#include "w8a16/properties/coverage.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "w8a16/device/geometry.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

using device::Body;
using device::KernelId;
using golden::EntryPoint;

constexpr std::uint32_t bit(KernelId id) { return 1u << static_cast<unsigned>(id); }
constexpr std::uint32_t kHopper = bit(KernelId::wgmma_rows) | bit(KernelId::wgmma_rows_n128) |
                                  bit(KernelId::wgmma_rows_n128_x2);
constexpr std::uint32_t kRowTile = bit(KernelId::tc_rows) | bit(KernelId::tc_rows_m64);
static_assert(kHopper == golden::kWithoutHopperTier, "golden::kKernelSymbols follows device::KernelId");

std::string tc_rows_config(std::uint32_t cols, std::uint32_t blocks) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%u-column strips, %u row block%s", cols, blocks, blocks == 1 ? "" : "s");
  return buf;
}
std::string wgmma_config(std::uint32_t tile_rows, bool several_tiles, bool cut) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%u-row tiles%s, %s", tile_rows, several_tiles ? " x2+" : "",
                cut ? "units cut" : "whole units");
  return buf;
}

// The row-tile kernel's configurations (geometry.hpp tc_rows_cols x tc_rows_row_blocks) and a
// shape that plan.hpp's tc_rows_takes gives it: (cols, blocks, m, n, k).
struct TcConfig { std::uint32_t cols, blocks, m, n, k; };
constexpr TcConfig kTcConfigs[] = {
    {16, 1, 5, 4001, 256},   // thin: 1..8 rows, fewer than 64 wide strips
    {32, 1, 3, 8101, 256},   // narrow: 1..8 rows from 64 wide strips (N >= 8065)
    {32, 2, 11, 4001, 256},  // 9..16 rows below 80 wide strips
    {64, 2, 13, 10133, 256}, // 9..16 rows from 80 wide strips (N >= 10113)
    {32, 4, 23, 77, 768},    // 17..32 rows below 32 wide strips
    {64, 4, 19, 5003, 256},  // 17..32 rows, 32..79 wide strips
    {128, 4, 29, 10133, 256},
    {64, 6, 41, 4099, 256},  // 33..48 rows (tc_rows takes them from N = 3969)
    {128, 6, 47, 10139, 256},
    {64, 8, 57, 8075, 256},
    {128, 8, 61, 10147, 256},
};
// The Hopper tier's row tiles (geometry.hpp wgmma_tile_rows) and the fewest rows of each.
struct WgTile { std::uint32_t rows, m; };
constexpr WgTile kWgTiles[] = {{24, 17}, {32, 25}, {48, 33}, {64, 49}, {96, 65}, {128, 97}};
constexpr WgTile kWgX2Tiles[] = {{8, 5}, {16, 9}};
constexpr std::uint32_t kWgSeveralTilesM = 129;

bool reaches_twin32(EntryPoint e) {
  return e == EntryPoint::gemm_pipelined_m32 || e == EntryPoint::gemm_pipelined_m32_strided ||
         e == EntryPoint::gemm_pipelined_by_m;
}
bool reaches_twin64(EntryPoint e) {
  return e == EntryPoint::gemm_pipelined_m64 || e == EntryPoint::gemm_pipelined_m64_strided ||
         e == EntryPoint::gemm_pipelined_by_m;
}

struct Shape { std::uint32_t m, n, k; };

// Shapes aimed at a cell, cheapest first; the plan decides which (if any) lands there.
std::vector<Shape> aimed_shapes(const CoverageKey& key) {
  switch (key.body) {
    case Body::gemm128_tile: return {{130, 67, 768}, {16, 67, 768}};
    case Body::m32_tile: return {{29, 77, 768}, {70, 77, 768}};  // by_m reaches it at <= 32 rows only
    case Body::m32_skinny: return {{13, 100, 768}};                 // K <= 5120, N <= 3968: tc_rows declines
    case Body::m64_tile: return {{40, 77, 768}, {130, 77, 768}};  // N < 3969: tc_rows declines
    case Body::gemv_strip: return {{13, 100, 768}, {3, 100, 768}};
    case Body::tc_rows_strip:
      for (const TcConfig& t : kTcConfigs)
        if (tc_rows_config(t.cols, t.blocks) == key.config) return {{t.m, t.n, t.k}};
      return {};
    case Body::wgmma_units:
    case Body::wgmma_units128:
    case Body::wgmma_units128_x2: {
      const bool cut = key.config.find("units cut") != std::string::npos;
      const bool several = key.config.find(" x2+") != std::string::npos;
      std::uint32_t m = 0;
      if (several) m = kWgSeveralTilesM;
      for (const WgTile& t : kWgTiles)
        if (!several && key.config.rfind(std::to_string(t.rows) + "-row", 0) == 0) m = t.m;
      if (key.body == Body::wgmma_units128_x2) {
        for (const WgTile& t : kWgX2Tiles)
          if (key.config.rfind(std::to_string(t.rows) + "-row", 0) == 0) m = t.m;
        // 264 128-column units fill the two CTAs per SM of 132 SMs exactly; one more cuts one.
        return {{m, cut ? 33811u : 33701u, 256}};
      }
      // Cut: more units than SMs (N > 8448 at 64 columns, > 16896 at 128; half that at two row
      // tiles), two steps or more. Whole: units <= SMs, or one step per unit; at 17..32 rows the
      // tier runs only where its 128-column units fill more than half the SMs (N > 8448).
      if (cut) return {{m, 4231, 256}, {m, 8453, 256}, {m, 16901, 256}};
      return {{m, 770, 256}, {m, 8453, 256}, {m, 8453, 128}};
    }
  }
  return {};
}

// Kernels to take away so that a shape reaches the cell's body, fewest first.
std::vector<std::uint32_t> aimed_masks(Body body) {
  switch (body) {
    case Body::wgmma_units: return {0, bit(KernelId::wgmma_rows_n128) | bit(KernelId::wgmma_rows_n128_x2)};
    case Body::wgmma_units128: return {0, bit(KernelId::wgmma_rows) | bit(KernelId::wgmma_rows_n128_x2)};
    case Body::wgmma_units128_x2: return {0, bit(KernelId::wgmma_rows) | bit(KernelId::wgmma_rows_n128)};
    default: return {0, kHopper, kHopper | kRowTile};
  }
}

std::uint32_t present_mask(const device::KernelRegistry& registry) {
  std::uint32_t m = 0;
  for (KernelId id : device::kAllKernels)
    if (registry.resolve(id)) m |= bit(id);
  return m;
}

golden::Case make_case(EntryPoint e, const Shape& s, std::uint32_t without, golden::Distribution d, std::uint64_t seed) {
  // Strided entry points get padded pitches (A by 8, C by 3: a pitch that is no multiple of 8).
  const bool contiguous = golden::entry_point_is_contiguous(e);
  return golden::CaseSpec{}
      .entry(e)
      .shape(s.m, s.n, s.k)
      .strides(contiguous ? s.k : s.k + 8, contiguous ? s.n : s.n + 3)
      .dist(d)
      .seed(seed)
      .without(without);
}

// The least K at which a distribution shows what it is built for: fold_ties needs two steps (a
// pair), and eight on the scalar GEMVs (its pairs are then 4 steps apart, one lane's chunks,
// reference/gemv.hpp); cancelling_steps four (one +P, small, -P, small group).
std::uint32_t least_k(golden::Distribution d, EntryPoint e) {
  switch (d) {
    case golden::Distribution::fold_ties: return golden::entry_point_is_gemv(e) ? 1024 : 256;
    case golden::Distribution::cancelling_steps: return 512;
    default: return 128;
  }
}

}  // namespace

std::string coverage_key_text(const CoverageKey& k) {
  return std::string(golden::entry_point_name(k.entry)) + " / " + device::body_name(k.body) + " / " + k.config;
}

std::string configuration_of(const device::Plan& plan) {
  const std::uint32_t m = plan.params.m, n = plan.params.n, k = plan.params.k;
  switch (plan.body) {
    case Body::gemm128_tile: return "128x64 tiles";
    case Body::m32_tile: return "32x32 tiles";
    case Body::m64_tile: return "64x32 tiles";
    case Body::m32_skinny:
    case Body::gemv_strip: return "8-column strips";
    case Body::tc_rows_strip: return tc_rows_config(plan.tile.cols, device::tc_rows_row_blocks(m));
    case Body::wgmma_units:
    case Body::wgmma_units128:
    case Body::wgmma_units128_x2: {
      const device::WgVariant v = device::wgmma_variant(plan.body);
      const std::uint32_t units = device::wgmma_units(m, n, v), ctas = plan.grid.x, steps = k / device::kKBlock;
      bool cut = false;
      for (std::uint32_t c = 0; c < ctas && !cut && ctas <= units; ++c) {
        const device::WgPieces p = device::wgmma_cta_pieces(c, ctas, units, steps);
        cut = p.has_head || p.has_tail;
      }
      return wgmma_config(device::wgmma_tile_rows(m), device::wgmma_row_tiles(m) > 1, cut);
    }
  }
  return "unknown";
}

std::vector<CoverageKey> expected_cells(const device::KernelRegistry& registry,
                                        const std::vector<golden::EntryPoint>& entries) {
  const std::uint32_t present = present_mask(registry);
  auto has = [&](KernelId id) { return (present & bit(id)) != 0; };
  std::vector<CoverageKey> out;
  for (EntryPoint e : entries) {
    if (!has(static_cast<KernelId>(golden::entry_point_own_symbol(e)))) continue;  // refused before anything runs
    auto add = [&](Body b, const std::string& config) { out.push_back({e, b, config}); };
    if (golden::entry_point_is_gemv(e)) {
      add(Body::gemv_strip, "8-column strips");
      continue;
    }
    if (e == EntryPoint::gemm_pipelined || e == EntryPoint::gemm_pipelined_by_m) add(Body::gemm128_tile, "128x64 tiles");
    const bool twin32 = reaches_twin32(e) && has(KernelId::gemm_pipelined_m32);
    const bool twin64 = reaches_twin64(e) && has(KernelId::gemm_pipelined_m64);
    if (twin32) {
      add(Body::m32_tile, "32x32 tiles");
      add(Body::m32_skinny, "8-column strips");
    }
    if (twin64) add(Body::m64_tile, "64x32 tiles");
    // The row-tile kernel, tried first by both twins at any row count up to 64 (by_m: the 32-row
    // twin up to 32 rows, the 64-row one from 33), its symbol split at 32 rows.
    for (const TcConfig& t : kTcConfigs) {
      const bool small = t.m <= device::kTcRowsSmallMaxRows;
      const bool via = e == EntryPoint::gemm_pipelined_by_m ? (small ? twin32 : twin64) : (twin32 || twin64);
      if (via && has(small ? KernelId::tc_rows : KernelId::tc_rows_m64)) add(Body::tc_rows_strip, tc_rows_config(t.cols, t.blocks));
    }
    // The Hopper tier, which every tensor-core entry tries first.
    for (const auto& [body, id] : {std::pair{Body::wgmma_units, KernelId::wgmma_rows},
                                   std::pair{Body::wgmma_units128, KernelId::wgmma_rows_n128}}) {
      if (!has(id)) continue;
      for (const WgTile& t : kWgTiles)
        for (bool cut : {false, true}) add(body, wgmma_config(t.rows, false, cut));
      for (bool cut : {false, true}) add(body, wgmma_config(device::kWgMaxTileRows, true, cut));
    }
    if (has(KernelId::wgmma_rows_n128_x2))
      for (const WgTile& t : kWgX2Tiles)
        for (bool cut : {false, true}) add(Body::wgmma_units128_x2, wgmma_config(t.rows, false, cut));
  }
  // By entry point and body; each body's configurations in the order written above.
  std::stable_sort(out.begin(), out.end(), [](const CoverageKey& a, const CoverageKey& b) {
    return std::tie(a.entry, a.body) < std::tie(b.entry, b.body);
  });
  return out;
}

std::vector<golden::Distribution> coverage_distributions(bool order_data) {
  if (!order_data) return {golden::Distribution::every_special};
  // Appended, never inserted: a cell's case seed comes from the distribution's index here.
  return {golden::Distribution::every_special, golden::Distribution::fold_ties, golden::Distribution::zero_signs,
          golden::Distribution::cancelling_steps, golden::Distribution::nan_codes};
}

std::vector<AimedCase> coverage_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                     const std::vector<golden::EntryPoint>& entries,
                                     const std::vector<golden::Distribution>& dists, std::uint64_t seed,
                                     std::vector<CoverageKey>* unreached) {
  const std::uint32_t present = present_mask(registry);
  const std::vector<CoverageKey> cells = expected_cells(registry, entries);
  std::vector<AimedCase> out;
  for (std::size_t ci = 0; ci < cells.size(); ++ci) {
    const CoverageKey& cell = cells[ci];
    const std::uint32_t own = 1u << golden::entry_point_own_symbol(cell.entry);
    // The first shape (and the fewest kernels taken away) whose plan lands in the cell; shapes at
    // the distribution's least K first, where that keeps the cell.
    auto find = [&](std::uint32_t min_k, golden::Case* found) {
      std::vector<Shape> shapes;
      for (const Shape& s : aimed_shapes(cell))
        if (s.k < min_k) shapes.push_back({s.m, s.n, min_k});
      for (const Shape& s : aimed_shapes(cell)) shapes.push_back(s);
      for (const Shape& s : shapes) {
        std::vector<std::uint32_t> tried;
        for (std::uint32_t mask : aimed_masks(cell.body)) {
          mask &= present & ~own;
          if (std::find(tried.begin(), tried.end(), mask) != tried.end()) continue;
          tried.push_back(mask);
          const golden::Case c = make_case(cell.entry, s, mask, golden::Distribution::every_special, 0);
          if (!golden::case_problem(c).empty()) continue;
          const device::Planned p = plan_case(c, registry, limits);
          if (p.ok() && p.plan.body == cell.body && configuration_of(p.plan) == cell.config) {
            *found = c;
            return true;
          }
        }
      }
      return false;
    };
    bool reached = false;
    for (std::size_t di = 0; di < dists.size(); ++di) {
      golden::Case c;
      if (!find(least_k(dists[di], cell.entry), &c)) continue;
      reached = true;
      c.dist = dists[di];
      c.seed = golden::derive_seed(seed, 0x200000000ull + 64 * ci + di);
      out.push_back({c, cell});
    }
    if (!reached && unreached) unreached->push_back(cell);
  }
  std::stable_sort(out.begin(), out.end(), [](const AimedCase& a, const AimedCase& b) {
    const auto work = [](const golden::Case& c) { return std::uint64_t{c.m} * c.n * c.k; };
    return work(a.c) < work(b.c);
  });
  return out;
}

std::vector<AimedCase> quick_coverage_plan(const std::vector<AimedCase>& plan) {
  // Each body's cells (over every entry point that reaches it) numbered in the order they first appear.
  std::map<CoverageKey, std::size_t> rank;
  std::map<device::Body, std::size_t> cells_of;
  for (const AimedCase& x : plan)
    if (!rank.count(x.target)) rank[x.target] = cells_of[x.target.body]++;
  const std::vector<golden::Distribution> dists = coverage_distributions(true);
  const std::vector<golden::Distribution> order(dists.begin() + 1, dists.end());
  std::vector<AimedCase> out;
  for (const AimedCase& x : plan) {
    const bool few_cells = cells_of[x.target.body] < order.size();
    if (x.c.dist == golden::Distribution::every_special || few_cells ||
        x.c.dist == order[rank[x.target] % order.size()])
      out.push_back(x);
  }
  return out;
}

std::vector<std::string> coverage_gaps(const std::vector<CoverageKey>& expected, const CoverageTable& table) {
  std::vector<std::string> gaps;
  const std::uint32_t all = (1u << golden::kSpecialClassCount) - 1;
  for (const CoverageKey& k : expected) {
    const auto it = table.find(k);
    if (it == table.end() || it->second.cases == 0) {
      gaps.push_back("empty cell: " + coverage_key_text(k) + " (no case ran there: that configuration was not verified)");
      continue;
    }
    if ((it->second.specials_seen & all) != all) {
      std::string missing;
      for (int b = 0; b < golden::kSpecialClassCount; ++b)
        if (!((it->second.specials_seen >> b) & 1u))
          missing += (missing.empty() ? "" : ", ") + std::string(golden::special_class_name(b));
      gaps.push_back("empty cells: " + coverage_key_text(k) + " x {" + missing + "} (no case there held them)");
    }
  }
  for (const auto& [k, cell] : table)
    if (std::find(expected.begin(), expected.end(), k) == expected.end())
      gaps.push_back("a case ran in " + coverage_key_text(k) + ", a cell the coverage list does not name (coverage.cpp)");
  return gaps;
}

}  // namespace w8a16::props
