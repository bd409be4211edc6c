// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation's launch-shape checks: what a plan must agree on with the kernel it launches and
// with the device, before any CTA runs (block, shared memory, grid, body, tile map).
#include <string>

#include "sim_internal.hpp"

namespace w8a16::device::sim {
namespace {

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

bool body_belongs_to(Body b, KernelId k) {
  switch (k) {
    case KernelId::gemm_pipelined: return b == Body::gemm128_tile;
    case KernelId::gemm_pipelined_m32: return b == Body::m32_tile || b == Body::m32_skinny;
    case KernelId::gemm_pipelined_m64: return b == Body::m64_tile;
    case KernelId::tc_rows:
    case KernelId::tc_rows_m64: return b == Body::tc_rows_strip;
    case KernelId::gemv_batch4_strided:
    case KernelId::gemv_batch16_strided: return b == Body::gemv_strip;
  }
  return false;
}

}  // namespace

void check_launch_shape(const Plan& p, const DeviceLimits& lim, FindingLog& log) {
  const KernelParams& q = p.params;
  const std::string who = std::string(p.kernel_name) + " (" + body_name(p.body) + "): ";

  if (!(p.block == Dim3{kThreadsPerCta, 1, 1}))
    log.add(FindingKind::block_mismatch, who + "block " + dims(p.block) + " is not the kernel's (256, 1, 1)");

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
  if (!body_belongs_to(p.body, p.kernel))
    log.add(FindingKind::body_mismatch, who + "the kernel has no such body");
  if (p.kernel == KernelId::gemm_pipelined_m32) {
    const Body picked = skinny_body_runs(q.m, q.k) ? Body::m32_skinny : Body::m32_tile;
    if (p.body != picked)
      log.add(FindingKind::body_mismatch, who + "the kernel runs its " + body_name(picked) + " body at m=" +
                                              std::to_string(q.m) + ", k=" + std::to_string(q.k) +
                                              " (skinny iff m <= 16 && k <= 5120, seed line 141)");
  }
  if (p.body == Body::m32_skinny && (q.m > kSkinnyMaxRows || q.k > kSkinnyMaxK))
    log.add(FindingKind::body_mismatch, who + "m=" + std::to_string(q.m) + ", k=" + std::to_string(q.k) +
                                            ": the skinny body takes m <= 16 and k <= 5120 (seed W8A16_M16_MAX_ROWS, "
                                            "W8A16_M16_MAX_K)");
  if (p.body == Body::tc_rows_strip && q.m > kTcRowsMaxRows)
    log.add(FindingKind::body_mismatch, who + "m=" + std::to_string(q.m) + ": the row-tile kernel takes m <= " +
                                            std::to_string(kTcRowsMaxRows));
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
