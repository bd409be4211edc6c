// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation's launch-shape checks: what a plan must agree on with the kernel it launches and
// with the device, before any CTA runs (block, shared memory, grid, body, tile map).
#include <string>

#include "sim_internal.hpp"
#include "w8a16/device/bodies.hpp"

namespace w8a16::device::sim {
namespace {

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

bool body_belongs_to(Body b, KernelId k) {
  const BodyInfo* row = find_body(b);
  return row && (row->kernels & kernel_bit(k)) != 0;
}

}  // namespace

void check_launch_shape(const Plan& p, const DeviceLimits& lim, FindingLog& log) {
  const KernelParams& q = p.params;
  const std::string who = std::string(p.kernel_name) + " (" + body_name(p.body) + "): ";

  const std::uint32_t threads = body_threads(p.body);
  if (!(p.block == Dim3{threads, 1, 1}))
    log.add(FindingKind::block_mismatch,
            who + "block " + dims(p.block) + " is not the body's (" + std::to_string(threads) + ", 1, 1)");
  const WgVariant wv = wgmma_variant(p.body);
  const std::uint64_t workspace = is_wgmma_body(p.body) ? wgmma_workspace_bytes(q.m, p.grid.x, wv) : 0;
  if (p.workspace_bytes != workspace)
    log.add(FindingKind::workspace_mismatch, who + "workspace_bytes=" + std::to_string(p.workspace_bytes) +
                                                 " differs from the body's need " + std::to_string(workspace) +
                                                 " at grid.x=" + std::to_string(p.grid.x) + " (geometry.hpp)");
  if (is_wgmma_body(p.body) && q.m >= 1 && q.n >= 1 && q.k >= kKBlock &&
      (p.grid.x < 1 || p.grid.x > wgmma_units(q.m, q.n, wv) || p.grid.y != 1 || p.grid.z != 1))
    log.add(FindingKind::grid_over_limit, who + "grid " + dims(p.grid) +
                                              ": the persistent tier needs 1 <= grid.x <= its " +
                                              std::to_string(wgmma_units(q.m, q.n, wv)) +
                                              " units (every CTA's range at least one unit), grid.y = grid.z = 1");
  if (is_wgmma_body(p.body) && !wgmma_runs_rows(wv, q.m))
    log.add(FindingKind::body_mismatch,
            who + "m=" + std::to_string(q.m) + ": this symbol has no row tile for it " +
                "(the two-CTA symbol runs 1..16 rows, the others 17 and more: geometry.hpp)");

  const std::uint32_t need = body_smem_bytes(p.body, q.m, q.n, q.k);
  if (p.dynamic_smem != need)
    log.add(FindingKind::smem_mismatch, who + "dynamic_smem=" + std::to_string(p.dynamic_smem) +
                                            " differs from the body's declared need " + std::to_string(need) +
                                            " (geometry.hpp)");
  if (p.dynamic_smem > lim.max_dynamic_smem_per_block)
    log.add(FindingKind::smem_over_limit, who + "dynamic_smem=" + std::to_string(p.dynamic_smem) +
                                              " exceeds the device limit " +
                                              std::to_string(lim.max_dynamic_smem_per_block));
  if (p.grid.x > lim.max_grid_x || p.grid.y > lim.max_grid_y || p.grid.z > lim.max_grid_z)
    log.add(FindingKind::grid_over_limit, who + "grid " + dims(p.grid) + " exceeds the device limits (" +
                                              std::to_string(lim.max_grid_x) + ", " + std::to_string(lim.max_grid_y) +
                                              ", " + std::to_string(lim.max_grid_z) + ")");

  // The body: it must be one of the kernel's, be the one the kernel itself picks for (m, k), and
  // keep that body's limits.
  if (!body_belongs_to(p.body, p.kernel)) log.add(FindingKind::body_mismatch, who + "the kernel has no such body");
  if (p.kernel == KernelId::gemm_pipelined_m32) {
    const Body picked = skinny_body_runs(q.m, q.k) ? Body::m32_skinny : Body::m32_tile;
    if (p.body != picked)
      log.add(FindingKind::body_mismatch, who + "the kernel runs its " + body_name(picked) +
                                              " body at m=" + std::to_string(q.m) + ", k=" + std::to_string(q.k) +
                                              " (skinny iff m <= 16 && k <= 5120, seed line 141)");
  }
  if (p.body == Body::m32_skinny && (q.m > kSkinnyMaxRows || q.k > kSkinnyMaxK))
    log.add(FindingKind::body_mismatch, who + "m=" + std::to_string(q.m) + ", k=" + std::to_string(q.k) +
                                            ": the skinny body takes m <= 16 and k <= 5120 (seed W8A16_M16_MAX_ROWS, "
                                            "W8A16_M16_MAX_K)");
  if (p.body == Body::tc_rows_strip && q.m > kTcRowsMaxRows)
    log.add(FindingKind::body_mismatch,
            who + "m=" + std::to_string(q.m) + ": the row-tile kernel takes m <= " + std::to_string(kTcRowsMaxRows));
  else if (p.body == Body::tc_rows_strip && p.kernel != tc_rows_kernel(q.m))
    log.add(FindingKind::body_mismatch, who + "m=" + std::to_string(q.m) + ": the row-tile body runs in " +
                                            kernel_name(tc_rows_kernel(q.m)) + " at these rows, not " +
                                            kernel_name(p.kernel) + " (geometry.hpp: split by registers)");
  const std::uint32_t gemv_rows = p.kernel == KernelId::gemv_batch4_strided ? kGemvBatch4MaxRows : kGemvBatch16MaxRows;
  if (p.body == Body::gemv_strip && q.m > gemv_rows)
    log.add(FindingKind::body_mismatch,
            who + "m=" + std::to_string(q.m) + ": the GEMV takes m <= " + std::to_string(gemv_rows));

  const TileMap doc = documented_tile_map(p.body, q.m, q.n);
  if (p.tile.kind != doc.kind || p.tile.rows != doc.rows || p.tile.cols != doc.cols || p.tile.row_origin != 0)
    log.add(FindingKind::tile_map_mismatch,
            who + "tile map (rows " + std::to_string(p.tile.rows) + ", cols " + std::to_string(p.tile.cols) +
                ", row origin " + std::to_string(p.tile.row_origin) + ") is not the documented (rows " +
                std::to_string(doc.rows) + ", cols " + std::to_string(doc.cols) + ", row origin 0)");
}

}  // namespace w8a16::device::sim

namespace w8a16::device::sim {

void run_stream_units(const Plan& p, FindingLog& log, const UnitWrite& write) {
  const KernelParams& q = p.params;
  if (q.m < 1 || q.n < 1 || q.k < kKBlock || q.k % kKBlock != 0 || p.tile.rows == 0 || p.tile.cols == 0) return;
  const std::uint32_t steps = q.k / kKBlock;
  const std::uint32_t row_tiles = q.m / p.tile.rows + (q.m % p.tile.rows != 0);
  const std::uint32_t col_units = q.n / p.tile.cols + (q.n % p.tile.cols != 0);
  const std::uint32_t units = row_tiles * col_units, ctas = p.grid.x;
  if (ctas < 1 || ctas > units) return;  // reported by check_launch_shape
  // next[u]: the first step of unit u not yet folded; a piece must start there.
  std::vector<std::uint32_t> next(units, 0);
  struct Slot {
    bool set = false;
    std::uint32_t unit = 0, step = 0;
  };
  std::vector<Slot> slots(ctas);
  auto piece = [&](std::uint32_t c, const WgPiece& pc) {
    const std::string who = "CTA (" + std::to_string(c) + ", 0, 0) unit " + std::to_string(pc.unit) + " steps [" +
                            std::to_string(pc.begin) + ", " + std::to_string(pc.end) + ")";
    if (pc.unit >= units || pc.end > steps || pc.begin >= pc.end) {
      log.add(FindingKind::step_coverage,
              who + ": outside the " + std::to_string(units) + " units of " + std::to_string(steps) + " steps");
      return;
    }
    if (pc.kind == WgPieceKind::tail) {
      const Slot& in = c > 0 ? slots[c - 1] : Slot{};
      if (c == 0 || !in.set || in.unit != pc.unit || in.step != pc.begin)
        log.add(FindingKind::workspace_chain,
                who + ": starts from workspace slot " + std::to_string(c) + " - 1, which " +
                    (c == 0 || !in.set
                         ? std::string("nothing wrote")
                         : "holds unit " + std::to_string(in.unit) + " after step " + std::to_string(in.step)));
      if (c > 0) slots[c - 1].set = false;  // read once
    }
    if (next[pc.unit] != pc.begin)
      log.add(FindingKind::step_coverage, who + ": the unit's fold is at step " + std::to_string(next[pc.unit]));
    next[pc.unit] = pc.end;
    if (pc.kind == WgPieceKind::head) {
      slots[c] = Slot{true, pc.unit, pc.end};
      return;
    }
    if (pc.end != steps) {
      log.add(FindingKind::step_coverage, who + ": writes C before the unit's last step");
      return;
    }
    const std::uint64_t cu = pc.unit / row_tiles, rt = pc.unit % row_tiles;
    const std::uint64_t r0 = rt * p.tile.rows, c0 = cu * p.tile.cols;
    write(c, r0, std::min<std::uint64_t>(r0 + p.tile.rows, q.m), c0, std::min<std::uint64_t>(c0 + p.tile.cols, q.n));
  };
  for (std::uint32_t c = 0; c < ctas; ++c) {
    const WgPieces pcs = wgmma_cta_pieces(c, ctas, units, steps);
    if (pcs.has_head) piece(c, pcs.head);
    for (std::uint32_t u = pcs.full_begin; u < pcs.full_end; ++u) piece(c, WgPiece{u, 0, steps, WgPieceKind::full});
    if (pcs.has_tail) piece(c, pcs.tail);
  }
  for (std::uint32_t u = 0; u < units; ++u)
    if (next[u] != steps)
      log.add(FindingKind::step_coverage, "unit " + std::to_string(u) + ": folded up to step " +
                                              std::to_string(next[u]) + " of " + std::to_string(steps));
  for (std::uint32_t c = 0; c < ctas; ++c)
    if (slots[c].set)
      log.add(FindingKind::workspace_chain, "workspace slot " + std::to_string(c) + " (unit " +
                                                std::to_string(slots[c].unit) + ") is written and never read");
}

}  // namespace w8a16::device::sim
