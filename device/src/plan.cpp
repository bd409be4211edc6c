// SPDX-License-Identifier: MIT OR Apache-2.0
// Dispatch and launch sizing: the seed's entry points as one pure function from a Call to a Plan.
// Grid, block and shared memory per body come from geometry.hpp (seed lines 88-89, 141-153, 261-267).
#include <string>

#include "w8a16/device/plan.hpp"

namespace w8a16::device {
namespace {

constexpr std::uint32_t div_ceil(std::uint32_t a, std::uint32_t b) { return a / b + (a % b != 0); }

KernelId kernel_of(Body b, Entry e, std::uint32_t m) {
  switch (b) {
    case Body::gemm128_tile: return KernelId::gemm_pipelined;
    case Body::m32_tile:
    case Body::m32_skinny: return KernelId::gemm_pipelined_m32;
    case Body::m64_tile: return KernelId::gemm_pipelined_m64;
    case Body::tc_rows_strip: return tc_rows_kernel(m);
    case Body::gemv_strip:
      return e == Entry::gemv_batch4_strided ? KernelId::gemv_batch4_strided : KernelId::gemv_batch16_strided;
    case Body::wgmma_units: return KernelId::wgmma_rows;
    case Body::wgmma_units128: return KernelId::wgmma_rows_n128;
    case Body::wgmma_units128_x2: return KernelId::wgmma_rows_n128_x2;
  }
  return KernelId::gemm_pipelined;
}

Planned fail(Entry e, Errc c, const std::string& what) {
  return Planned{Status::error(c, std::string("w8a16_") + entry_name(e) + ": " + what), Plan{}};
}

}  // namespace

KernelId entry_own_kernel(Entry e) {
  switch (e) {
    case Entry::gemm_pipelined:
    case Entry::gemm_pipelined_by_m: return KernelId::gemm_pipelined;
    case Entry::gemm_pipelined_m32:
    case Entry::gemm_pipelined_m32_strided: return KernelId::gemm_pipelined_m32;
    case Entry::gemm_pipelined_m64:
    case Entry::gemm_pipelined_m64_strided: return KernelId::gemm_pipelined_m64;
    case Entry::gemv_batch4_strided: return KernelId::gemv_batch4_strided;
    case Entry::gemv_batch16_strided: return KernelId::gemv_batch16_strided;
  }
  return KernelId::gemm_pipelined;
}

const char* entry_name(Entry e) {
  switch (e) {
    case Entry::gemm_pipelined: return "gemm_pipelined";
    case Entry::gemm_pipelined_m32: return "gemm_pipelined_m32";
    case Entry::gemm_pipelined_m32_strided: return "gemm_pipelined_m32_strided";
    case Entry::gemm_pipelined_m64: return "gemm_pipelined_m64";
    case Entry::gemm_pipelined_m64_strided: return "gemm_pipelined_m64_strided";
    case Entry::gemm_pipelined_by_m: return "gemm_pipelined_by_m";
    case Entry::gemv_batch4_strided: return "gemv_batch4_strided";
    case Entry::gemv_batch16_strided: return "gemv_batch16_strided";
  }
  return "unknown";
}

const char* body_name(Body b) {
  switch (b) {
    case Body::gemm128_tile: return "gemm128_tile";
    case Body::m32_tile: return "m32_tile";
    case Body::m32_skinny: return "m32_skinny";
    case Body::m64_tile: return "m64_tile";
    case Body::tc_rows_strip: return "tc_rows_strip";
    case Body::gemv_strip: return "gemv_strip";
    case Body::wgmma_units: return "wgmma_units";
    case Body::wgmma_units128: return "wgmma_units128";
    case Body::wgmma_units128_x2: return "wgmma_units128_x2";
  }
  return "unknown";
}

Contract body_contract(Body b) { return b == Body::gemv_strip ? Contract::gemv : Contract::canonical; }

TileMap documented_tile_map(Body b, std::uint32_t m, std::uint32_t n) {
  switch (b) {
    case Body::gemm128_tile: return {TileKind::tile, kGemm128TileRows, kGemm128TileCols, 0};
    case Body::m32_tile: return {TileKind::tile, kM32TileRows, kM32TileCols, 0};
    case Body::m32_skinny: return {TileKind::column_strip, 0, kSkinnyTileCols, 0};
    case Body::m64_tile: return {TileKind::tile, kM64TileRows, kM64TileCols, 0};
    case Body::tc_rows_strip: return {TileKind::column_strip, 0, tc_rows_cols(m, n), 0};
    case Body::gemv_strip: return {TileKind::column_strip, 0, kGemvColsPerCta, 0};
    case Body::wgmma_units:
    case Body::wgmma_units128:
    case Body::wgmma_units128_x2:
      return {TileKind::stream_units, wgmma_tile_rows(m), wgmma_unit_cols(wgmma_variant(b)), 0};
  }
  return {};
}

std::uint32_t body_threads(Body b) { return is_wgmma_body(b) ? kWgThreads : kThreadsPerCta; }

std::uint32_t body_smem_bytes(Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  switch (b) {
    case Body::gemm128_tile: return kGemm128SmemBytes;
    case Body::m32_tile: return kM32SmemBytes;
    case Body::m32_skinny: return skinny_smem_bytes(k);
    case Body::m64_tile: return kM64SmemBytes;  // seed: the m64 launch sets no dynamic smem
    case Body::tc_rows_strip: return tc_rows_smem_bytes(m, n);
    case Body::gemv_strip: return kGemvSmemBytes;
    case Body::wgmma_units:
    case Body::wgmma_units128:
    case Body::wgmma_units128_x2: return wgmma_smem_bytes(m, wgmma_variant(b));
  }
  return 0;
}

Planned plan_launch(const Call& call, const KernelRegistry& registry, const DeviceLimits& limits) {
  const Entry e = call.entry;
  const Args a = effective_args(e, call.args);
  if (Status st = validate_args(e, a); !st.ok()) return Planned{st, Plan{}};
  const std::string shape = "m=" + std::to_string(a.m) + ", n=" + std::to_string(a.n) + ", k=" + std::to_string(a.k);

  // Which body runs, on which handle. The strided twins try the row-tile kernel first; it
  // declines a shape it does not take, and a zero handle declines everything (seed lines 124-139).
  Body body = Body::gemm128_tile;
  KernelHandle handle = call.kernel;
  const KernelHandle tc = registry.resolve(tc_rows_kernel(a.m));
  auto twin32 = [&](KernelHandle h) {
    if (tc && tc_rows_takes(a.m, a.n, a.k)) {
      body = Body::tc_rows_strip;
      handle = tc;
    } else {
      body = skinny_body_runs(a.m, a.k) ? Body::m32_skinny : Body::m32_tile;  // seed line 141
      handle = h;
    }
  };
  auto twin64 = [&](KernelHandle h) {
    if (tc && tc_rows_takes(a.m, a.n, a.k)) {
      body = Body::tc_rows_strip;
      handle = tc;
    } else {
      body = Body::m64_tile;
      handle = h;
    }
  };
  // Every tensor-core entry tries the Hopper tier first; the GEMVs keep their own contract.
  const KernelHandle wg64 = registry.resolve(KernelId::wgmma_rows), wg128 = registry.resolve(KernelId::wgmma_rows_n128),
                     wg128x2 = registry.resolve(KernelId::wgmma_rows_n128_x2);
  const bool tensor_core = e != Entry::gemv_batch4_strided && e != Entry::gemv_batch16_strided;
  const WgChoice wg = wgmma_choice(a.m, a.n, a.k, limits.multiprocessors,
                                   WgPresent{static_cast<bool>(wg64), static_cast<bool>(wg128), static_cast<bool>(wg128x2)});
  if (tensor_core && wg.takes) {
    body = wg.variant == WgVariant::k64 ? Body::wgmma_units
           : wg.variant == WgVariant::n128 ? Body::wgmma_units128 : Body::wgmma_units128_x2;
    handle = wg.variant == WgVariant::k64 ? wg64 : wg.variant == WgVariant::n128 ? wg128 : wg128x2;
  } else switch (e) {
    case Entry::gemm_pipelined: body = Body::gemm128_tile; break;
    case Entry::gemm_pipelined_m32:
    case Entry::gemm_pipelined_m32_strided: twin32(call.kernel); break;
    case Entry::gemm_pipelined_m64:
    case Entry::gemm_pipelined_m64_strided: twin64(call.kernel); break;
    case Entry::gemm_pipelined_by_m:  // seed lines 332-371
      if (prefers_m32(a.m, a.k, call.m32_kernel)) {
        twin32(call.m32_kernel);
      } else if (prefers_m64(a.m, a.k, call.m64_kernel)) {
        twin64(call.m64_kernel);
      } else {
        body = Body::gemm128_tile;
        handle = call.kernel;
      }
      break;
    case Entry::gemv_batch4_strided:
    case Entry::gemv_batch16_strided: body = Body::gemv_strip; break;
  }

  Plan p;
  p.entry = e;
  p.kernel = kernel_of(body, e, a.m);
  p.kernel_name = kernel_name(p.kernel);
  p.handle = handle;
  p.body = body;
  p.tile = documented_tile_map(body, a.m, a.n);
  p.contract = body_contract(body);
  p.block = Dim3{body_threads(body), 1, 1};
  if (p.tile.kind == TileKind::tile)
    p.grid = Dim3{div_ceil(a.n, p.tile.cols), div_ceil(a.m, p.tile.rows), 1};
  else if (p.tile.kind == TileKind::stream_units)
    p.grid = Dim3{wgmma_ctas(a.m, a.n, limits.multiprocessors, wgmma_variant(body)), 1, 1};
  else
    p.grid = Dim3{div_ceil(a.n, p.tile.cols), 1, 1};
  p.dynamic_smem = body_smem_bytes(body, a.m, a.n, a.k);
  if (is_wgmma_body(body)) p.workspace_bytes = wgmma_workspace_bytes(a.m, p.grid.x, wgmma_variant(body));
  p.params = KernelParams{a.input, a.weight, a.block_scale, a.output, a.m, a.n, a.k, a.a_row_stride, a.c_row_stride};
  p.extent = OutputExtent{a.output, a.m, a.n, a.c_row_stride};
  p.stream = a.stream;

  if (!p.handle)
    return fail(e, Errc::kernel_missing,
                std::string("kernel ") + p.kernel_name + " has a zero handle (not in the loaded module) and no other " +
                    "kernel of this entry point takes " + shape);
  const struct {
    const char* axis;
    std::uint32_t value, limit;
  } dims[] = {{"x", p.grid.x, limits.max_grid_x}, {"y", p.grid.y, limits.max_grid_y}, {"z", p.grid.z, limits.max_grid_z}};
  for (const auto& d : dims)
    if (d.value > d.limit)
      return fail(e, Errc::grid_too_large,
                  std::string("grid.") + d.axis + "=" + std::to_string(d.value) + " (" + body_name(body) + ", " + shape +
                      "): must be at most the device limit " + std::to_string(d.limit));
  if (p.dynamic_smem > limits.max_dynamic_smem_per_block)
    return fail(e, Errc::smem_too_large,
                std::string("dynamic_smem=") + std::to_string(p.dynamic_smem) + " (" + body_name(body) +
                    "): must be at most the device's opt-in limit " + std::to_string(limits.max_dynamic_smem_per_block));
  return Planned{Status::success(), p};
}

}  // namespace w8a16::device
