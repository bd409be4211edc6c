// SPDX-License-Identifier: MIT OR Apache-2.0
// Property 1: the predicates and every entry point's choice of kernel, body, grid and shared memory
// follow the seed's rules, restated here from the seed text, whichever kernels the module holds.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_support.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/geometry.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/device/recording_backend.hpp"

namespace {

namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;
using device::Body;
using device::KernelId;
using golden::EntryPoint;

// m and k around every rule's edges, including the invalid ones the predicates must refuse.
rc::Gen<std::uint32_t> gen_rows() {
  return rc::gen::weightedOneOf<std::uint32_t>({{3, rc::gen::element<std::uint32_t>(0, 1, 15, 16, 17, 31, 32, 33, 63,
                                                                                    64, 65, 127, 128, 129)},
                                                {1, rc::gen::inRange<std::uint32_t>(0, 300)}});
}
rc::Gen<std::uint32_t> gen_depth() {
  return rc::gen::weightedOneOf<std::uint32_t>({{3, rc::gen::element<std::uint32_t>(0, 1, 64, 127, 128, 129, 256, 5120,
                                                                                    5121, 5248, 32768)},
                                                {1, rc::gen::inRange<std::uint32_t>(0, 40000)}});
}

// seed lines 68-73 and 210-215 (docs/KERNEL_ABI.md 2.1 and 6), as written there.
RC_GTEST_PROP(DispatchPredicates, PrefersM32AndPrefersM64AreTheSeedsRanges, ()) {
  const std::uint32_t m = *gen_rows(), k = *gen_depth();
  const device::KernelHandle h{*rc::gen::element<std::uint64_t>(0, 1, 0xDEADBEEF)};
  const bool k_ok = k >= 128 && k % 128 == 0;
  RC_ASSERT(device::prefers_m32(m, k, h) == (1 <= m && m <= 32 && k_ok && h.value != 0));
  RC_ASSERT(device::prefers_m64(m, k, h) == (33 <= m && m <= 64 && k_ok && h.value != 0));
}

std::uint32_t div_ceil(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

struct Expected {
  bool launches = false;
  Body body = Body::gemm128_tile;
  KernelId kernel = KernelId::gemm_pipelined;
  device::Dim3 grid;
  std::uint32_t smem = 0;
};

// The seed's selection, with `present` telling which kernels the module has.
Expected expected_dispatch(const golden::Case& c, const device::KernelRegistry& reg) {
  auto present = [&](KernelId id) { return reg.resolve(id).value != 0; };
  const std::uint32_t m = c.m, n = c.n, k = c.k;
  Expected e;
  auto body = [&](Body b, KernelId id) {
    e.launches = present(id);
    e.body = b;
    e.kernel = id;
    switch (b) {
      case Body::gemm128_tile:
        e.grid = {div_ceil(n, 64), div_ceil(m, 128), 1};
        e.smem = device::kGemm128SmemBytes;
        break;
      case Body::m32_tile:
        e.grid = {div_ceil(n, 32), div_ceil(m, 32), 1};
        e.smem = 44032;
        break;  // seed 150-151
      case Body::m32_skinny:
        e.grid = {div_ceil(n, 8), 1, 1};
        e.smem = 8 * (k + 16);
        break;  // seed 142
      case Body::m64_tile:
        e.grid = {div_ceil(n, 32), div_ceil(m, 64), 1};
        e.smem = 0;
        break;  // seed 262-266
      case Body::tc_rows_strip:
        e.grid = {div_ceil(n, device::tc_rows_cols(m, n)), 1, 1};
        e.smem = device::tc_rows_smem_bytes(m, n);
        break;
      case Body::tc_rows_packed:  // thin (1..8 rows, N < 8065) or narrow strips
        e.grid = {div_ceil(n, m <= 8 && div_ceil(n, 128) < 64 ? 16 : 32), 1, 1};
        e.smem = device::tc_rows_packed_smem_bytes(m, n);
        break;
      case Body::gemv_strip:
        e.grid = {div_ceil(n, 8), 1, 1};
        e.smem = 0;
        break;
      case Body::wgmma_units:
      case Body::wgmma_units128:
      case Body::wgmma_units128_x2:
      case Body::wgmma_packed128:
      case Body::wgmma_packed128_x2: {  // one (two) CTA per SM, at most one per (64 or 128)-column x row-tile unit
        const bool x2 = b == Body::wgmma_units128_x2 || b == Body::wgmma_packed128_x2;
        const std::uint32_t rows = device::wgmma_tile_rows(m);
        const std::uint32_t units = div_ceil(n, b == Body::wgmma_units ? 64 : 128) * div_ceil(m, rows);
        e.grid = {std::min<std::uint32_t>(units, (x2 ? 2 : 1) * device::DeviceLimits::h200().multiprocessors), 1, 1};
        e.smem = device::wgmma_smem_bytes(m, device::wgmma_variant(b));
        break;
      }
    }
  };
  // The packed entry point (NUMERICS.md 2.3: no other tier reads its W): from 17 rows the one-CTA
  // packed symbol; up to 16 rows the two-CTA one where its 128-column units fill 132 SMs (two CTAs
  // each at 1..8 rows: 264 units; more than half of one each at 9..16: 67), else the packed strips.
  // Up to 16 rows, with the first choice's symbol absent, the other of those two.
  if (c.entry == EntryPoint::gemm_packed_strided) {
    const std::uint32_t units = div_ceil(n, 128);
    const bool x2_first = m <= 8 ? units >= 264 : units >= 67;
    const bool x2 = x2_first ? present(KernelId::wgmma_rows_n128_x2_packed) || !present(KernelId::tc_rows_packed)
                             : !present(KernelId::tc_rows_packed) && present(KernelId::wgmma_rows_n128_x2_packed);
    if (m > 16) body(Body::wgmma_packed128, KernelId::wgmma_rows_n128_packed);
    else if (x2) body(Body::wgmma_packed128_x2, KernelId::wgmma_rows_n128_x2_packed);
    else body(Body::tc_rows_packed, KernelId::tc_rows_packed);
    return e;
  }
  // Every tensor-core entry tries the Hopper tier first when the module has it.
  const bool gemv = c.entry == EntryPoint::gemv_batch4_strided || c.entry == EntryPoint::gemv_batch16_strided;
  // Its rule (plan.hpp wgmma_choice) for 132 SMs: up to 16 rows only the two-CTA symbol, with
  // 264 or more 128-column units; 17..32 rows with more than 66; from 33 rows always; the
  // 128-column symbol with more than 66, else the 64-column one (whichever is present).
  const bool wg64 = present(KernelId::wgmma_rows), wg128 = present(KernelId::wgmma_rows_n128),
             wg128x2 = present(KernelId::wgmma_rows_n128_x2);
  const std::uint64_t units128 = std::uint64_t{div_ceil(n, 128)} * div_ceil(m, device::wgmma_tile_rows(m));
  if (!gemv && m >= 1 && k >= 128 && k % 128 == 0) {
    if (m <= 16) {
      if (wg128x2 && units128 >= 264) {
        body(Body::wgmma_units128_x2, KernelId::wgmma_rows_n128_x2);
        return e;
      }
    } else if (m > 32 || units128 > 66) {
      if (wg128 && (units128 > 66 || !wg64)) {
        body(Body::wgmma_units128, KernelId::wgmma_rows_n128);
        return e;
      }
      if (wg64) {
        body(Body::wgmma_units, KernelId::wgmma_rows);
        return e;
      }
    }
  }
  // Seed lines 124-139: the strided twins (and the contiguous ones, which call them) try the
  // row-tile kernel first; it takes the shapes device::tc_rows_takes names, if the symbol for its
  // rows (w8a16_tc_rows at 1..32, w8a16_tc_rows_m64 at 33..64) is present.
  const KernelId tc = m <= 32 ? KernelId::tc_rows : KernelId::tc_rows_m64;
  const bool tc_takes = present(tc) && device::tc_rows_takes(m, n, k);
  auto twin32 = [&] {
    if (tc_takes) body(Body::tc_rows_strip, tc);
    else if (m <= 16 && k <= 5120) body(Body::m32_skinny, KernelId::gemm_pipelined_m32);  // seed line 141
    else body(Body::m32_tile, KernelId::gemm_pipelined_m32);
  };
  auto twin64 = [&] {
    if (tc_takes) body(Body::tc_rows_strip, tc);
    else body(Body::m64_tile, KernelId::gemm_pipelined_m64);
  };
  switch (c.entry) {
    case EntryPoint::gemm_pipelined: body(Body::gemm128_tile, KernelId::gemm_pipelined); break;
    case EntryPoint::gemm_pipelined_m32:
    case EntryPoint::gemm_pipelined_m32_strided: twin32(); break;
    case EntryPoint::gemm_pipelined_m64:
    case EntryPoint::gemm_pipelined_m64_strided: twin64(); break;
    case EntryPoint::gemm_pipelined_by_m:  // seed lines 332-371
      if (m >= 1 && m <= 32 && present(KernelId::gemm_pipelined_m32)) twin32();
      else if (m >= 33 && m <= 64 && present(KernelId::gemm_pipelined_m64)) twin64();
      else body(Body::gemm128_tile, KernelId::gemm_pipelined);
      break;
    case EntryPoint::gemv_batch4_strided: body(Body::gemv_strip, KernelId::gemv_batch4_strided); break;
    case EntryPoint::gemv_batch16_strided: body(Body::gemv_strip, KernelId::gemv_batch16_strided); break;
    case EntryPoint::gemm_packed_strided: break;  // above
  }
  return e;
}

RC_GTEST_PROP(Dispatch, EveryEntryPointLaunchesTheSeedsKernelBodyGridAndSharedMemory, ()) {
  props::DrawOptions opt;
  opt.max_macs = std::uint64_t{1} << 30;  // nothing is computed: shapes may be large
  const golden::Case c = *props::gen_case(opt);
  device::StaticRegistry reg = device::StaticRegistry::all_present();
  for (KernelId id : device::kAllKernels) reg.set_present(id, *rc::gen::weightedElement<bool>({{4, true}, {1, false}}));
  device::RecordingBackend backend(reg);

  const Expected want = expected_dispatch(c, reg);
  // Pointers only: planning never reads memory, and the recording backend runs nothing.
  const device::Call call = props::case_call(c, reg, 0x100000000ull, 0x200000000ull, 0x300000000ull, 0x400000000ull);
  const device::Status st = device::Launcher(backend).launch(call);
  RC_TAG(std::string(golden::entry_point_name(c.entry)),
         want.launches ? device::body_name(want.body) : "kernel_missing");

  if (!want.launches) {
    props::test::require(st.code == device::Errc::kernel_missing && backend.plans().empty(), c,
                         std::string("expected kernel_missing for ") + device::kernel_name(want.kernel) +
                             ", got: " + device::errc_name(st.code) + " " + st.message);
    return;
  }
  props::test::require(st.ok() && backend.plans().size() == 1, c, "launch failed: " + st.message);
  const device::Plan& p = backend.plans().front();
  const std::string got = std::string(device::body_name(p.body)) + " on " + p.kernel_name + " grid (" +
                          std::to_string(p.grid.x) + ", " + std::to_string(p.grid.y) + ", " + std::to_string(p.grid.z) +
                          ") smem " + std::to_string(p.dynamic_smem);
  const std::string exp = std::string(device::body_name(want.body)) + " on " + device::kernel_name(want.kernel) +
                          " grid (" + std::to_string(want.grid.x) + ", " + std::to_string(want.grid.y) + ", 1) smem " +
                          std::to_string(want.smem);
  props::test::require(p.body == want.body && p.kernel == want.kernel && p.grid == want.grid &&
                           p.dynamic_smem == want.smem,
                       c, "planned " + got + ", the seed's rules give " + exp);
  // Seed line 156: (256, 1, 1); the Hopper tier's three warpgroups: (384, 1, 1).
  const std::uint32_t threads = device::is_wgmma_body(want.body) ? 384 : 256;
  props::test::require(p.block == (device::Dim3{threads, 1, 1}), c, "block is not the body's");
  props::test::require(p.handle == reg.resolve(want.kernel), c, "the plan's handle is not the kernel's");
  props::test::require(p.contract == (golden::entry_point_is_gemv(c.entry) ? device::Contract::gemv
                                                                           : device::Contract::canonical),
                       c, "the plan's contract is not the entry point's");
  const bool contiguous = golden::entry_point_is_contiguous(c.entry);
  props::test::require(p.params.m == c.m && p.params.n == c.n && p.params.k == c.k &&
                           p.params.a_row_stride == (contiguous ? c.k : c.a_row_stride) &&
                           p.params.c_row_stride == (contiguous ? c.n : c.c_row_stride),
                       c, "the kernel parameters are not the call's shape and pitches");
}

}  // namespace
