// SPDX-License-Identifier: MIT OR Apache-2.0
// Properties over random calls: every call the planner accepts runs on the simulation with no
// finding and the emulator's bytes in [M, N), and every call it refuses names a rule the call
// really breaks. Shapes stay small (K <= 256) so a hundred cases take well under a second.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "sim_operands.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace w8a16::device {
namespace {

const Entry kEntries[] = {
    Entry::gemm_pipelined,      Entry::gemm_pipelined_m32,         Entry::gemm_pipelined_m32_strided,
    Entry::gemm_pipelined_m64,  Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m,
    Entry::gemv_batch4_strided, Entry::gemv_batch16_strided};

RC_GTEST_PROP(PlanProperties, AcceptedCallsSimulateCleanlyWithTheEmulatorsBytes, ()) {
  const Entry e = *rc::gen::elementOf(std::vector<Entry>(std::begin(kEntries), std::end(kEntries)));
  const std::uint32_t max_m = e == Entry::gemv_batch4_strided ? 4 : e == Entry::gemv_batch16_strided ? 16 : 140;
  const std::uint32_t m = *rc::gen::inRange<std::uint32_t>(1, max_m + 1);
  const std::uint32_t n = *rc::gen::inRange<std::uint32_t>(1, 301);
  const std::uint32_t k = 128 * *rc::gen::inRange<std::uint32_t>(1, 3);
  const std::uint32_t lda_pad = 8 * *rc::gen::inRange<std::uint32_t>(0, 3);
  const std::uint32_t ldc_pad = *rc::gen::inRange<std::uint32_t>(0, 9);
  StaticRegistry reg = StaticRegistry::all_present();
  for (KernelId id : {KernelId::gemm_pipelined_m32, KernelId::gemm_pipelined_m64, KernelId::tc_rows,
                      KernelId::tc_rows_m64, KernelId::wgmma_rows, KernelId::wgmma_rows_n128})
    reg.set_present(id, *rc::gen::arbitrary<bool>());
  DeviceLimits lim = DeviceLimits::h200();
  lim.multiprocessors = *rc::gen::inRange<std::uint32_t>(1, 140);
  reg.set_present(KernelId::gemm_pipelined, true);

  const bool contiguous = entry_is_contiguous(e);
  const testing::Shape sh{m, n, k, contiguous ? k : k + lda_pad, contiguous ? n : n + ldc_pad};
  const testing::Operands& o = testing::operands_for(sh);
  SimBackend sim(reg, lim);
  auto a = sim.allocate(o.a.size() * 2), w = sim.allocate(o.w.size()), s = sim.allocate(o.s.size() * 4);
  const std::size_t c_elems = std::size_t{m + testing::kRowsPastM} * sh.ldc;
  auto c = sim.allocate(c_elems * 2);
  RC_ASSERT(a->upload(o.a.data(), o.a.size() * 2).ok());
  RC_ASSERT(w->upload(o.w.data(), o.w.size()).ok());
  RC_ASSERT(s->upload(o.s.data(), o.s.size() * 4).ok());
  RC_ASSERT(c->fill(0xA5).ok());

  Launcher api(sim);
  Call call;
  call.entry = e;
  call.kernel = api.handle(entry_own_kernel(e));
  call.m32_kernel = api.handle(KernelId::gemm_pipelined_m32);
  call.m64_kernel = api.handle(KernelId::gemm_pipelined_m64);
  call.args = Args{a->address(), w->address(), s->address(), c->address(), m, n, k, sh.lda, sh.ldc, 0};
  const Status st = api.launch(call);
  if (st.code == Errc::kernel_missing) {
    // Only an entry whose own kernel is absent may say so (by_m falls back to the present 128-row
    // tile; the row-tile kernel declines when absent), and then nothing ran.
    RC_CLASSIFY(true, "refused: kernel missing");
    RC_ASSERT(e != Entry::gemm_pipelined_by_m);
    RC_ASSERT(!call.kernel);
    RC_ASSERT(sim.plans().empty());
    return;
  }
  RC_ASSERT(st.ok());
  RC_ASSERT(sim.findings().empty());
  RC_CLASSIFY(sim.plans().front().body == Body::m32_skinny, "skinny");
  RC_CLASSIFY(sim.plans().front().body == Body::m32_tile, "m32 tile");
  RC_CLASSIFY(sim.plans().front().body == Body::m64_tile, "m64 tile");
  RC_CLASSIFY(sim.plans().front().body == Body::gemm128_tile, "128 tile");
  RC_CLASSIFY(sim.plans().front().body == Body::gemv_strip, "gemv");
  RC_CLASSIFY(sim.plans().front().body == Body::wgmma_units, "hopper tier, 64-column units");
  RC_CLASSIFY(sim.plans().front().body == Body::wgmma_units128, "hopper tier, 128-column units");
  std::vector<std::uint16_t> got(c_elems);
  RC_ASSERT(c->download(got.data(), c_elems * 2).ok());
  RC_ASSERT(got == testing::expected_for(sh, sim.plans().front().contract == Contract::gemv));
}

}  // namespace
}  // namespace w8a16::device
