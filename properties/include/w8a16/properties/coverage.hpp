// SPDX-License-Identifier: MIT OR Apache-2.0
// Coverage by construction: the cells (entry point x body x strip/tile configuration) a module can
// run, cases aimed at each, and the table of what a campaign's cases really ran (and with which
// special classes).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"

namespace w8a16::props {

// One cell: an entry point, the body its plan ran, and that body's configuration as the plan
// sized it (configuration_of).
struct CoverageKey {
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  device::Body body = device::Body::gemm128_tile;
  std::string config;
  friend bool operator<(const CoverageKey& a, const CoverageKey& b) {
    if (a.entry != b.entry) return a.entry < b.entry;
    if (a.body != b.body) return a.body < b.body;
    return a.config < b.config;
  }
  friend bool operator==(const CoverageKey& a, const CoverageKey& b) {
    return a.entry == b.entry && a.body == b.body && a.config == b.config;
  }
};
std::string coverage_key_text(const CoverageKey& k);  // "w8a16_gemm_pipelined_m32 / tc_rows_strip / ..."

// The configuration a plan runs, from its body and the shape it was sized for (geometry.hpp):
//   the tile bodies: their tile ("128x64 tiles", "32x32 tiles", "64x32 tiles"); the skinny body and
//   the GEMVs: "8-column strips";
//   the row-tile kernel: its strip width and row blocks (tc_rows_cols, tc_rows_row_blocks), e.g.
//   "128-column strips, 8 row blocks";
//   the Hopper tier: its row tile (wgmma_tile_rows; "128-row tiles x2+" above 128 rows) and whether
//   the persistent CTAs' step ranges cut a unit between two CTAs (wgmma_cta_pieces: the workspace
//   hand-over), e.g. "48-row tiles, units cut".
std::string configuration_of(const device::Plan& plan);

// Every cell a module with this registry can run through `entries` (NUMERICS.md 2's tiers, plan.hpp's
// dispatch): each body whose kernel the registry resolves, through each entry point that can reach
// it, at each configuration of that body. Written out from geometry.hpp, not found by searching
// plans: a configuration the dispatch cannot reach any more stays in the list, and a campaign that
// misses it fails naming it.
std::vector<CoverageKey> expected_cells(const device::KernelRegistry& registry,
                                        const std::vector<golden::EntryPoint>& entries);

// What a campaign saw in one cell.
struct CoverageCell {
  std::uint64_t cases = 0;
  std::uint32_t specials_seen = 0;    // golden::SpecialClass bits over the cell's cases
  std::uint64_t planned_without = 0;  // of those, cases whose line takes kernels away (without=)
  std::uint32_t lone_seen = 0;        // lone_bit()s of the cell's cases (lone_bits)
};
using CoverageTable = std::map<CoverageKey, CoverageCell>;

// A case aimed at a cell, and the cell.
struct AimedCase {
  golden::Case c;
  CoverageKey target;
};
// Distributions of the aimed cases: every_special (all 15 special classes in each cell), and on a
// device whose values are not the emulator's by construction also fold_ties, zero_signs and
// cancelling_steps (the data that shows the order, case.hpp) and nan_codes (a NaN code in many
// columns, so a kernel's NaN path shows in many outputs).
std::vector<golden::Distribution> coverage_distributions(bool order_data);

// For every expected cell, one case per distribution whose plan (plan_case over this registry and
// these limits) lands in it: a shape aimed at the configuration (geometry.hpp's thresholds), and
// when the dispatch would send that shape to a tier that goes first, the fewest kernels taken away
// (`without=`: the Hopper tier for the seed's bodies on an sm_90a module, its other symbols for
// each of its own bodies, the row-tile kernel for by_m's 32-row tile). Cheapest first. A cell no
// aimed shape reaches is returned in *unreached (and stays empty in the table).
std::vector<AimedCase> coverage_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                     const std::vector<golden::EntryPoint>& entries,
                                     const std::vector<golden::Distribution>& dists, std::uint64_t seed,
                                     std::vector<CoverageKey>* unreached);

// The gate's share of a coverage plan (`verify --quick`): in every cell its every_special case
// (so every cell and every special class is still covered), every lone_specials case (every lone
// cell), and of the data that shows the order (fold_ties, zero_signs, cancelling_steps, nan_codes)
// one kind per cell, rotating over each body's cells so that every body meets every kind; a body
// with fewer cells than kinds keeps all of them in each cell. Cheapest first, as the plan.
std::vector<AimedCase> quick_coverage_plan(const std::vector<AimedCase>& plan);

// Lone specials over long ranges. A slip in a body's handling of specials over K (a NaN table
// scan, a NaN probe, a decode, the scales' reads) may show only for a special alone at the start
// or the end of a range that a lane, a warp or a ring of stages goes through in several passes;
// data with many specials, or short ranges, hides it. So every body of the expected cells has a
// cell for each kind of lone special (golden::LoneKind: a NaN code of W, a NaN activation, an Inf
// or NaN scale) at each K-step (golden::LoneStep: the range's first, a middle one, its last) of a
// range longer than the body's longest stride over K (bodies.hpp long_range: stride_steps, and
// which stride it is). A cell is filled by a case of more steps than that which ran in the body
// and whose inputs hold exactly that one special at that step (golden::find_lone_special),
// whichever entry point and configuration it ran through.
struct LoneCell {
  device::Body body = device::Body::gemm128_tile;
  golden::LoneKind kind = golden::LoneKind::w_nan;
  golden::LoneStep step = golden::LoneStep::first;
  friend bool operator==(const LoneCell& a, const LoneCell& b) {
    return a.body == b.body && a.kind == b.kind && a.step == b.step;
  }
};
std::string lone_cell_text(const LoneCell& c);  // "tc_rows_packed x w_nan at the first K-step"
constexpr std::uint32_t lone_bit(golden::LoneKind kind, golden::LoneStep step) {
  return 1u << (3 * static_cast<unsigned>(kind) + static_cast<unsigned>(step));
}
inline constexpr std::uint32_t kAllLoneBits = (1u << 9) - 1;
// The lone cell a case fills in the body it ran: lone_bit of its one special when its inputs hold
// one (`found`) and its K has more steps than the body's stride_steps, else 0.
std::uint32_t lone_bits(const golden::Case& c, const golden::LoneSpecial& lone, device::Body body);
// Every body of `expected` x each kind x each step, in body order.
std::vector<LoneCell> expected_lone_cells(const std::vector<CoverageKey>& expected);
// For every body of expected_cells(registry, entries), one lone_specials case per kind x step
// (golden::lone_specials_seed), all at the first of the body's long_range shapes (and the fewest
// kernels taken away, as coverage_plan) whose plan lands in one of the body's expected cells;
// each AimedCase's target is that cell. Cheapest first. A body no long_range shape reaches through
// `entries` is returned in *unreached (and its lone cells stay empty).
std::vector<AimedCase> lone_specials_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                          const std::vector<golden::EntryPoint>& entries, std::uint64_t seed,
                                          std::vector<device::Body>* unreached);
// Two plans, each cheapest first, as one, cheapest first (the first's case before the second's
// at equal work).
std::vector<AimedCase> merged_plans(const std::vector<AimedCase>& a, const std::vector<AimedCase>& b);

// The cells of `expected` with no case, those whose cases lack special classes, the lone cells
// (expected_lone_cells) no case filled, and any cell the list lacks, as lines naming each
// ("empty cell: ...", "empty cells: ... x {...}", "a case ran in ...").
std::vector<std::string> coverage_gaps(const std::vector<CoverageKey>& expected, const CoverageTable& table);

}  // namespace w8a16::props
