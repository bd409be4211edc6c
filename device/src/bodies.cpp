// SPDX-License-Identifier: MIT OR Apache-2.0
// Each kernel body's functions (bodies.hpp): its launch from geometry.hpp, whether a tier that goes
// first takes a shape, its configurations (the coverage cells) and which one a plan runs; and the
// per-body lookups of plan.hpp, derived from the rows.
#include "w8a16/device/bodies.hpp"

#include <cstdio>

namespace w8a16::device {
namespace {

constexpr std::uint32_t div_ceil(std::uint32_t a, std::uint32_t b) { return a / b + (a % b != 0); }

// The long ranges (bodies.hpp long_range). The longest strides of any body are 32 steps: a warp's
// 32 lanes scanning the packed NaN table, and the skinny body's 256 threads staging 16 codes each.
// Where it costs little a body's range is longer than those, whatever its own: 33 steps, and for
// the row-tile kernel one step past the skinny body's K limit, where it takes 1..16 rows at any N.
constexpr std::uint32_t kWarpLanes = 32;
constexpr std::uint32_t kSkinnyStagingSteps = kThreadsPerCta * 16 / kKBlock;  // 32
constexpr std::uint32_t kLongK = (kWarpLanes + 1) * kKBlock;                  // 4224: 33 steps
constexpr std::uint32_t kLongKPastSkinny = kSkinnyMaxK + kKBlock;             // 5248: 41 steps
static_assert(kSkinnyStagingSteps == kWarpLanes && kLongK <= kSkinnyMaxK,
              "the skinny body's staging pass is 32 steps, and it runs at kLongK");

// A tile or column-strip body's launch: one CTA per tile (or strip), kThreadsPerCta threads.
BodyLaunch tiled(KernelId kernel, TileMap tile, const BodyShape& s, std::uint32_t smem) {
  BodyLaunch l;
  l.kernel = kernel;
  l.tile = tile;
  l.grid = Dim3{div_ceil(s.n, tile.cols), tile.kind == TileKind::tile ? div_ceil(s.m, tile.rows) : 1, 1};
  l.threads = kThreadsPerCta;
  l.smem = smem;
  return l;
}
// The Hopper tier: persistent CTAs over stream units, three warpgroups, a workspace per CTA.
BodyLaunch wgmma_launch(KernelId kernel, WgVariant v, const BodyShape& s) {
  BodyLaunch l;
  l.kernel = kernel;
  l.tile = {TileKind::stream_units, wgmma_tile_rows(s.m), wgmma_unit_cols(v), 0};
  l.grid = Dim3{wgmma_ctas(s.m, s.n, s.sms, v), 1, 1};
  l.threads = kWgThreads;
  l.smem = wgmma_smem_bytes(s.m, v);
  l.workspace = wgmma_workspace_bytes(s.m, l.grid.x, v);
  return l;
}
// The Hopper tier's choice among its symbols (plan.hpp wgmma_choice) over what the registry has.
KernelHandle wgmma_takes(const BodyShape& s, const KernelRegistry& r, WgVariant mine) {
  const KernelHandle h[] = {r.resolve(KernelId::wgmma_rows), r.resolve(KernelId::wgmma_rows_n128),
                            r.resolve(KernelId::wgmma_rows_n128_x2)};
  const WgChoice c = wgmma_choice(s.m, s.n, s.k, s.sms,
                                  WgPresent{static_cast<bool>(h[0]), static_cast<bool>(h[1]), static_cast<bool>(h[2])});
  return c.takes && c.variant == mine ? h[static_cast<std::size_t>(mine)] : KernelHandle{};
}
// Bodies of Tier::own are chosen by the seed's rules in plan_launch, not by a `takes`.
KernelHandle chosen_by_seed_rules(const BodyShape&, const KernelRegistry&) { return {}; }

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
// Whether the persistent CTAs' step ranges cut a unit between two CTAs (wgmma_cta_pieces: the
// workspace hand-over).
bool wgmma_cuts_units(const Plan& p) {
  const WgVariant v = wgmma_variant(p.body);
  const std::uint32_t units = wgmma_units(p.params.m, p.params.n, v), ctas = p.grid.x, steps = p.params.k / kKBlock;
  bool cut = false;
  for (std::uint32_t c = 0; c < ctas && !cut && ctas <= units; ++c) {
    const WgPieces pieces = wgmma_cta_pieces(c, ctas, units, steps);
    cut = pieces.has_head || pieces.has_tail;
  }
  return cut;
}
std::string wgmma_plan_config(const Plan& p) {
  return wgmma_config(wgmma_tile_rows(p.params.m), wgmma_row_tiles(p.params.m) > 1, wgmma_cuts_units(p));
}

// The Hopper tier's one-CTA symbols' cells: each row tile (geometry.hpp wgmma_tile_rows; the fewest
// rows of each aimed at), then two or more 128-row tiles, each with units whole and cut. Cut: more
// units than SMs (N > 8448 at 64 columns, > 16896 at 128; half that at two row tiles), two steps or
// more. Whole: units <= SMs, or one step per unit; at 17..32 rows the tier runs only where its
// 128-column units fill more than half the SMs (N > 8448).
std::vector<BodyConfig> wgmma_cells() {
  struct WgTile {
    std::uint32_t rows, m;
  };
  constexpr WgTile kTiles[] = {{24, 17}, {32, 25}, {48, 33}, {64, 49}, {96, 65}, {128, 97}};
  constexpr std::uint32_t kSeveralTilesM = 129;
  auto cell = [](std::uint32_t rows, bool several, bool cut, std::uint32_t m) {
    if (cut) return BodyConfig{wgmma_config(rows, several, cut), m, {{m, 4231, 256}, {m, 8453, 256}, {m, 16901, 256}}};
    return BodyConfig{wgmma_config(rows, several, cut), m, {{m, 770, 256}, {m, 8453, 256}, {m, 8453, 128}}};
  };
  std::vector<BodyConfig> out;
  for (const WgTile& t : kTiles)
    for (bool cut : {false, true}) out.push_back(cell(t.rows, false, cut, t.m));
  for (bool cut : {false, true}) out.push_back(cell(kWgMaxTileRows, true, cut, kSeveralTilesM));
  return out;
}

}  // namespace

// ---- the rows' functions, in bodies.def's order -----------------------------------------------
namespace bodies {

namespace gemm128_tile {
BodyLaunch plan(const BodyShape& s) {
  return tiled(KernelId::gemm_pipelined, {TileKind::tile, kGemm128TileRows, kGemm128TileCols, 0}, s, kGemm128SmemBytes);
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  static const std::vector<BodyConfig> c{{"128x64 tiles", 130, {{130, 67, 768}, {16, 67, 768}}}};
  return c;
}
std::string config(const Plan&) { return "128x64 tiles"; }
const LongRange& long_range() {
  // Stride: one step a turn through a ring of 2 stages (w8a16_gemm_pipelined.cu, TileBody), each
  // step's codes decoded into shared memory. 16 rows: the Hopper tier declines them below 33665
  // columns; 130 for by_m, whose twins take fewer rows.
  static const LongRange r{2, {{16, 67, kLongK}, {130, 67, kLongK}}};
  return r;
}
}  // namespace gemm128_tile

namespace m32_tile {
BodyLaunch plan(const BodyShape& s) {
  return tiled(KernelId::gemm_pipelined_m32, {TileKind::tile, kM32TileRows, kM32TileCols, 0}, s, kM32SmemBytes);
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  // by_m reaches it at <= 32 rows only
  static const std::vector<BodyConfig> c{{"32x32 tiles", 29, {{29, 77, 768}, {70, 77, 768}}}};
  return c;
}
std::string config(const Plan&) { return "32x32 tiles"; }
const LongRange& long_range() {
  // Stride: a ring of 3 stages (w8a16_gemm_pipelined_m32.cu, Tile), each warp decoding its codes in
  // registers. 29 rows: past the skinny body, with the row-tile kernel (which takes 17..32 rows)
  // taken away; 70: past the row-tile kernel's 64 rows.
  static const LongRange r{3, {{29, 77, kLongK}, {70, 77, kLongK}}};
  return r;
}
}  // namespace m32_tile

namespace m32_skinny {
BodyLaunch plan(const BodyShape& s) {
  return tiled(KernelId::gemm_pipelined_m32, {TileKind::column_strip, 0, kSkinnyTileCols, 0}, s,
               skinny_smem_bytes(s.k));
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  // K <= 5120, N <= 3968: tc_rows declines
  static const std::vector<BodyConfig> c{{"8-column strips", 13, {{13, 100, 768}}}};
  return c;
}
std::string config(const Plan&) { return "8-column strips"; }
const LongRange& long_range() {
  // Stride: 256 threads stage each W row 4,096 K (32 steps) a pass, and warp w computes steps w,
  // w + 8, ... (w8a16_gemm_pipelined_m32.cu skinny_body): 33 steps give the staging two passes and
  // each warp four or five steps. K <= 5120 keeps the skinny body, N < 3969 the row-tile kernel away.
  static const LongRange r{kSkinnyStagingSteps, {{13, 100, kLongK}}};
  return r;
}
}  // namespace m32_skinny

namespace m64_tile {
BodyLaunch plan(const BodyShape& s) {
  // seed: the m64 launch sets no dynamic shared memory
  return tiled(KernelId::gemm_pipelined_m64, {TileKind::tile, kM64TileRows, kM64TileCols, 0}, s, kM64SmemBytes);
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  // N < 3969: tc_rows declines
  static const std::vector<BodyConfig> c{{"64x32 tiles", 40, {{40, 77, 768}, {130, 77, 768}}}};
  return c;
}
std::string config(const Plan&) { return "64x32 tiles"; }
const LongRange& long_range() {
  // Stride: a ring of 2 stages (w8a16_gemm_pipelined_m64.cu). 40 rows: the row-tile kernel declines
  // 33..64 rows below 3969 columns (the Hopper tier taken away); 130: past the row-tile kernel's 64.
  static const LongRange r{2, {{40, 77, kLongK}, {130, 77, kLongK}}};
  return r;
}
}  // namespace m64_tile

namespace tc_rows_strip {
BodyLaunch plan(const BodyShape& s) {
  return tiled(tc_rows_kernel(s.m), {TileKind::column_strip, 0, tc_rows_cols(s.m, s.n), 0}, s,
               tc_rows_smem_bytes(s.m, s.n));
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) {
  const KernelHandle tc = r.resolve(tc_rows_kernel(s.m));
  return tc && tc_rows_takes(s.m, s.n, s.k) ? tc : KernelHandle{};
}
const std::vector<BodyConfig>& cells() {
  // Its configurations (geometry.hpp tc_rows_cols x tc_rows_row_blocks) and a shape that plan.hpp's
  // tc_rows_takes gives it: (cols, blocks, m, n, k).
  struct TcConfig {
    std::uint32_t cols, blocks, m, n, k;
  };
  static constexpr TcConfig kConfigs[] = {
      {16, 1, 5, 4001, 256},                             // thin: 1..8 rows, fewer than 64 wide strips
      {32, 1, 3, 8101, 256},                             // narrow: 1..8 rows from 64 wide strips (N >= 8065)
      {32, 2, 11, 4001, 256},                            // 9..16 rows below 80 wide strips
      {64, 2, 13, 10133, 256},                           // 9..16 rows from 80 wide strips (N >= 10113)
      {32, 4, 23, 77, 768},                              // 17..32 rows below 32 wide strips
      {64, 4, 19, 5003, 256},                            // 17..32 rows, 32..79 wide strips
      {128, 4, 29, 10133, 256}, {64, 6, 41, 4099, 256},  // 33..48 rows (tc_rows takes them from N = 3969)
      {128, 6, 47, 10139, 256}, {64, 8, 57, 8075, 256}, {128, 8, 61, 10147, 256},
  };
  static const std::vector<BodyConfig> c = [] {
    std::vector<BodyConfig> out;
    for (const TcConfig& t : kConfigs) out.push_back({tc_rows_config(t.cols, t.blocks), t.m, {{t.m, t.n, t.k}}});
    return out;
  }();
  return c;
}
std::string config(const Plan& p) { return tc_rows_config(p.tile.cols, tc_rows_row_blocks(p.params.m)); }
const LongRange& long_range() {
  // Stride: the thin strips' 2 stages of 8-step rounds, 16 steps, the longest of its strips (narrow
  // 2 x 4, mid 2 x 2, wide 4 x 1); 8 warps split each round, and the round's NaN probe is joined
  // over the warp (w8a16_tc_rows.cu Thin, w8a16_rows_stream.cuh round_partials). 41 steps are 5
  // rounds and one step. K > 5120: the row-tile kernel takes 1..16 rows at any N, so 77 columns do.
  static const LongRange r{16, {{5, 77, kLongKPastSkinny}}};
  return r;
}
}  // namespace tc_rows_strip

namespace gemv_strip {
BodyLaunch plan(const BodyShape& s) {
  const KernelId k = s.entry == Entry::gemv_batch4_strided ? KernelId::gemv_batch4_strided
                                                           : KernelId::gemv_batch16_strided;
  return tiled(k, {TileKind::column_strip, 0, kGemvColsPerCta, 0}, s, kGemvSmemBytes);
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  static const std::vector<BodyConfig> c{{"8-column strips", 3, {{13, 100, 768}, {3, 100, 768}}}};
  return c;
}
std::string config(const Plan&) { return "8-column strips"; }
const LongRange& long_range() {
  // Stride: lane l reads the 16-K chunks l, l + 32, ... (w8a16_gemv_body.cuh), decoding each and
  // reading its scale: 512 K (4 steps) a pass, so 33 steps (264 chunks) are 8 or 9 passes. 3 rows:
  // either GEMV.
  static const LongRange r{4, {{3, 100, kLongK}}};
  return r;
}
}  // namespace gemv_strip

namespace wgmma_units {
BodyLaunch plan(const BodyShape& s) { return wgmma_launch(KernelId::wgmma_rows, WgVariant::k64, s); }
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return wgmma_takes(s, r, WgVariant::k64); }
const std::vector<BodyConfig>& cells() {
  static const std::vector<BodyConfig> c = wgmma_cells();
  return c;
}
std::string config(const Plan& p) { return wgmma_plan_config(p); }
const LongRange& long_range() {
  // Stride: a CTA walks its range (here one whole unit, 33 steps) through a ring of at most
  // kWgMaxStages stages, its two consumers taking the even and the odd steps, two fragment sets
  // alternating (w8a16_wgmma_rows.cu WgMainloop::consume), each decode probing its own codes for
  // NaN every step (w8a16_w_layout.cuh WRowMajor::decode). From 33 rows the tier takes every
  // shape, with 64-column units below 67 128-column ones.
  static const LongRange r{kWgMaxStages, {{33, 77, kLongK}}};
  return r;
}
}  // namespace wgmma_units

namespace wgmma_units128 {
BodyLaunch plan(const BodyShape& s) { return wgmma_launch(KernelId::wgmma_rows_n128, WgVariant::n128, s); }
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return wgmma_takes(s, r, WgVariant::n128); }
const std::vector<BodyConfig>& cells() {
  static const std::vector<BodyConfig> c = wgmma_cells();
  return c;
}
std::string config(const Plan& p) { return wgmma_plan_config(p); }
const LongRange& long_range() {
  // Stride: wgmma_units' ring of stages and per-step probe, over one whole unit of 33 steps, each
  // consumer folding every step of its 64 columns; the 64-column symbol taken away.
  static const LongRange r{kWgMaxStages, {{33, 77, kLongK}}};
  return r;
}
}  // namespace wgmma_units128

namespace wgmma_units128_x2 {
BodyLaunch plan(const BodyShape& s) { return wgmma_launch(KernelId::wgmma_rows_n128_x2, WgVariant::n128_x2, s); }
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return wgmma_takes(s, r, WgVariant::n128_x2); }
const std::vector<BodyConfig>& cells() {
  // Its row tiles of 8 and 16 (the fewest rows of each); 264 128-column units fill the two CTAs per
  // SM of 132 SMs exactly, one more cuts one.
  static const std::vector<BodyConfig> c = [] {
    std::vector<BodyConfig> out;
    for (const auto& [rows, m] : {std::pair{8u, 5u}, std::pair{16u, 9u}})
      for (bool cut : {false, true})
        out.push_back({wgmma_config(rows, false, cut), m, {{m, cut ? 33811u : 33701u, 256}}});
    return out;
  }();
  return c;
}
std::string config(const Plan& p) { return wgmma_plan_config(p); }
const LongRange& long_range() {
  // Stride: its ring of at most kWgMaxStages stages; no lane or warp strides over K (every consumer
  // thread decodes and probes its codes at every step). At 1..16 rows the tier takes only shapes
  // with two CTAs' worth of 128-column units per SM (264 on 132 SMs, plan.hpp wgmma_choice): 33665
  // columns, each CTA one whole unit. 9 steps, the least past the ring: every step is 4 MB of
  // codes for the host to draw and emulate.
  static const LongRange r{kWgMaxStages, {{1, 33665, (kWgMaxStages + 1) * kKBlock}}};
  return r;
}
}  // namespace wgmma_units128_x2

// gemm_packed_strided's bodies (plan.hpp packed_body): the 128-column symbols' launches and cells,
// and the row-tile kernel's packed strips; the cells' N are not multiples of 128, so the layout's
// padding rows are in every one.
namespace wgmma_packed128 {
BodyLaunch plan(const BodyShape& s) { return wgmma_launch(KernelId::wgmma_rows_n128_packed, WgVariant::n128, s); }
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() { return wgmma_units128::cells(); }
std::string config(const Plan& p) { return wgmma_plan_config(p); }
const LongRange& long_range() {
  // Stride: the NaN table scan, 32 lanes reading every 32nd tile of the CTA's range
  // (w8a16_w_layout.cuh WPacked::range_may_nan). packed_body gives it every shape from 17 rows:
  // one unit, one CTA, 33 tiles, lane 0 reading the first and the last.
  static const LongRange r{kWarpLanes, {{17, 77, kLongK}}};
  return r;
}
}  // namespace wgmma_packed128

namespace wgmma_packed128_x2 {
BodyLaunch plan(const BodyShape& s) { return wgmma_launch(KernelId::wgmma_rows_n128_x2_packed, WgVariant::n128_x2, s); }
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() { return wgmma_units128_x2::cells(); }
std::string config(const Plan& p) { return wgmma_plan_config(p); }
const LongRange& long_range() {
  // Stride: the NaN table scan's 32 lanes (WPacked::range_may_nan). packed_body gives it 9..16 rows
  // from 67 units (more than half of 132 SMs; 1..8 rows need 264): whole units, one a CTA, so each
  // CTA's scan reads its unit's 33 tiles in two passes, lane 0 steps 0 and 32.
  static const LongRange r{kWarpLanes, {{9, 8449, kLongK}, {1, 33665, kLongK}}};
  return r;
}
}  // namespace wgmma_packed128_x2

namespace tc_rows_packed {
BodyLaunch plan(const BodyShape& s) {
  return tiled(KernelId::tc_rows_packed, {TileKind::column_strip, 0, tc_rows_packed_cols(s.m, s.n), 0}, s,
               tc_rows_packed_smem_bytes(s.m, s.n));
}
KernelHandle takes(const BodyShape& s, const KernelRegistry& r) { return chosen_by_seed_rules(s, r); }
const std::vector<BodyConfig>& cells() {
  // Its configurations at shapes packed_body gives it on 132 SMs (fewer than 264 units at 1..8
  // rows, at most 66 at 9..16): thin (N < 8065), narrow with 1 row block (N from 8065) and with 2.
  static const std::vector<BodyConfig> c{
      {tc_rows_config(kTcRowsThinCols, 1), 5, {{5, 4001, 256}, {1, 77, 640}}},
      {tc_rows_config(kTcRowsNarrowCols, 1), 3, {{3, 8101, 256}, {8, 33000, 128}}},
      {tc_rows_config(kTcRowsNarrowCols, 2), 11, {{11, 4001, 256}, {16, 8447, 128}}},
  };
  return c;
}
std::string config(const Plan& p) { return tc_rows_config(p.tile.cols, tc_rows_row_blocks(p.params.m)); }
const LongRange& long_range() {
  // Stride: the thin strips over the packed W (packed_body below 264 units at 1..8 rows), the row-tile
  // kernel's 8-step rounds in a ring of 16 steps and its per-round NaN probe (it reads no NaN
  // table); 33 steps are 4 rounds and one step.
  static const LongRange r{16, {{5, 77, kLongK}}};
  return r;
}
}  // namespace tc_rows_packed

}  // namespace bodies

// ---- lookups derived from the rows -------------------------------------------------------------
const char* tier_name(Tier t) {
  switch (t) {
    case Tier::first: return "first";
    case Tier::twin_first: return "twin_first";
    case Tier::own: return "own";
  }
  return "unknown";
}

const char* body_name(Body b) {
  const BodyInfo* row = find_body(b);
  return row ? row->name : "unknown";
}

Contract body_contract(Body b) {
  const BodyInfo* row = find_body(b);
  return row ? row->contract : Contract::canonical;
}

BodyLaunch body_launch(Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms) {
  const BodyInfo& row = body_info(b);
  Entry e = Entry::gemm_pipelined;
  while (!(row.entries & entry_bit(e))) e = static_cast<Entry>(static_cast<unsigned>(e) + 1);
  return row.plan(BodyShape{e, m, n, k, sms});
}

namespace {
// Tile map, threads and shared memory depend on neither the entry point nor the SM count.
BodyLaunch launch_at(const BodyInfo& row, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  return body_launch(row.body, m, n, k, 1);
}
}  // namespace

TileMap documented_tile_map(Body b, std::uint32_t m, std::uint32_t n) {
  const BodyInfo* row = find_body(b);
  return row ? launch_at(*row, m, n, kKBlock).tile : TileMap{};
}

std::uint32_t body_threads(Body b) {
  const BodyInfo* row = find_body(b);
  return row ? launch_at(*row, 1, 1, kKBlock).threads : kThreadsPerCta;
}

std::uint32_t body_smem_bytes(Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  const BodyInfo* row = find_body(b);
  return row ? launch_at(*row, m, n, k).smem : 0;
}

std::vector<std::uint32_t> kernels_before(Body b) {
  const BodyInfo& row = body_info(b);
  std::vector<std::uint32_t> out = {0};
  std::uint32_t before = 0;
  for (Tier t : {Tier::first, Tier::twin_first}) {
    if (t == row.tier) break;
    before |= tier_kernels(t);
    out.push_back(before);
  }
  if (row.tier == Tier::first) out.push_back(tier_kernels(Tier::first) & ~row.kernels);
  return out;
}

}  // namespace w8a16::device
