// SPDX-License-Identifier: MIT OR Apache-2.0
// Dispatch and launch sizing: the seed's entry points as one pure function from a Call to a Plan.
// Grid, block and shared memory come from the chosen body's plan function (bodies.hpp, from
// geometry.hpp: seed lines 88-89, 141-153, 261-267).
#include <string>

#include "w8a16/device/bodies.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::device {
namespace {

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
    case Entry::gemm_packed_strided: return KernelId::wgmma_rows_n128_packed;
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
    case Entry::gemm_packed_strided: return "gemm_packed_strided";
  }
  return "unknown";
}

Planned plan_launch(const Call& call, const KernelRegistry& registry, const DeviceLimits& limits) {
  const Entry e = call.entry;
  const Args a = effective_args(e, call.args);
  if (Status st = validate_args(e, a); !st.ok()) return Planned{st, Plan{}};
  const std::string shape = "m=" + std::to_string(a.m) + ", n=" + std::to_string(a.n) + ", k=" + std::to_string(a.k);

  // Which body runs, on which handle. Every tensor-core entry tries the tier that goes first (the
  // Hopper tier); the strided twins then try theirs (the row-tile kernel). A body of such a tier
  // declines a shape it does not take, and a zero handle declines everything (seed lines 124-139).
  // The GEMVs keep their own contract.
  Body body = Body::gemm128_tile;
  KernelHandle handle = call.kernel;
  const BodyShape shape_of_call{e, a.m, a.n, a.k, limits.multiprocessors};
  auto tried_first = [&](Tier tier) {
    for (Body b : kAllBodies) {
      const BodyInfo& row = body_info(b);
      if (row.tier != tier || !(row.entries & entry_bit(e))) continue;
      if (const KernelHandle h = row.takes(shape_of_call, registry)) {
        body = b;
        handle = h;
        return true;
      }
    }
    return false;
  };
  auto twin32 = [&](KernelHandle h) {
    if (tried_first(Tier::twin_first)) return;
    body = skinny_body_runs(a.m, a.k) ? Body::m32_skinny : Body::m32_tile;  // seed line 141
    handle = h;
  };
  auto twin64 = [&](KernelHandle h) {
    if (tried_first(Tier::twin_first)) return;
    body = Body::m64_tile;
    handle = h;
  };
  if (!tried_first(Tier::first)) switch (e) {
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
      case Entry::gemm_packed_strided: {  // its symbol by shape (packed_bodies), from the registry
        const PackedBodies choices = packed_bodies(a.m, a.n, limits.multiprocessors);
        body = choices.body[0];
        handle = KernelHandle{};  // the entry has no handle of its own
        for (int i = 0; i < choices.count && !handle; ++i) {
          const KernelHandle h = registry.resolve(
              body_launch(choices.body[i], a.m, a.n, a.k, limits.multiprocessors).kernel);
          if (h) {
            body = choices.body[i];
            handle = h;
          }
        }
        break;
      }
    }

  const BodyInfo& row = body_info(body);
  const BodyLaunch launch = row.plan(shape_of_call);
  Plan p;
  p.entry = e;
  p.kernel = launch.kernel;
  p.kernel_name = kernel_name(p.kernel);
  p.handle = handle;
  p.body = body;
  p.tile = launch.tile;
  p.contract = row.contract;
  p.block = Dim3{launch.threads, 1, 1};
  p.grid = launch.grid;
  p.dynamic_smem = launch.smem;
  p.workspace_bytes = launch.workspace;
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
  } dims[] = {
      {"x", p.grid.x, limits.max_grid_x}, {"y", p.grid.y, limits.max_grid_y}, {"z", p.grid.z, limits.max_grid_z}};
  for (const auto& d : dims)
    if (d.value > d.limit)
      return fail(e, Errc::grid_too_large,
                  std::string("grid.") + d.axis + "=" + std::to_string(d.value) + " (" + body_name(body) + ", " +
                      shape + "): must be at most the device limit " + std::to_string(d.limit));
  if (p.dynamic_smem > limits.max_dynamic_smem_per_block)
    return fail(e, Errc::smem_too_large,
                std::string("dynamic_smem=") + std::to_string(p.dynamic_smem) + " (" + body_name(body) +
                    "): must be at most the device's opt-in limit " +
                    std::to_string(limits.max_dynamic_smem_per_block));
  return Planned{Status::success(), p};
}

}  // namespace w8a16::device
