// SPDX-License-Identifier: MIT OR Apache-2.0
// GpuRig: one case on the GPU through the launch layer, the emulator's bytes, and the byte comparison.
#include "gpu_rig.hpp"

#include <cstdio>
#include <cstring>

#include "w8a16/reference/contract.hpp"

namespace w8a16::gputest {

using device::Entry;
using device::KernelId;

std::vector<std::uint16_t> expected_c(const GpuCase& c, const Inputs& in, device::Contract contract) {
  const std::uint16_t poison = static_cast<std::uint16_t>(kPoisonByte * 0x0101u);
  std::vector<std::uint16_t> out(static_cast<std::size_t>(c.m + kExtraRows) * c.c_row_stride, poison);
  ref::GemmView v;
  v.a = in.a.data();
  v.a_row_stride = c.a_row_stride;
  v.w = in.w.data();
  v.s = in.s.data();
  v.m = c.m;
  v.n = c.n;
  v.k = c.k;
  // One thread: the test runs many cases at once, one per core.
  if (contract == device::Contract::gemv) ref::gemm_gemv(v, out.data(), c.c_row_stride, 1);
  else ref::gemm_canonical(v, ref::Arch::sm90, out.data(), c.c_row_stride, 1);
  return out;
}

Comparison compare_c(const GpuCase& c, const std::vector<std::uint16_t>& expected, const std::vector<std::uint16_t>& got) {
  Comparison r;
  r.bytes = expected.size() * 2;
  if (got.size() != expected.size()) {
    r.mismatched_elements = expected.size();
    r.first = "size differs";
    return r;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == got[i]) continue;
    if (r.mismatched_elements++ == 0) {
      const std::size_t row = i / c.c_row_stride, col = i % c.c_row_stride;
      const char* region = row >= c.m ? "row beyond M (must stay poison)"
                           : col >= c.n ? "pitch padding (must stay poison)" : "output";
      char buf[200];
      std::snprintf(buf, sizeof buf, "(m=%zu, n=%zu) %s: emulator 0x%04X, GPU 0x%04X", row, col, region,
                    static_cast<unsigned>(expected[i]), static_cast<unsigned>(got[i]));
      r.first = buf;
    }
  }
  return r;
}

std::unique_ptr<GpuRig> GpuRig::create(std::string* why) {
  device::Status st;
  auto backend = device::CudaBackend::create(0, &st);
  if (!backend) {
    *why = "no usable CUDA device: " + st.message;
    return nullptr;
  }
  return over(std::move(backend));
}

std::unique_ptr<GpuRig> GpuRig::over(std::unique_ptr<device::CudaBackend> backend) {
  auto rig = std::unique_ptr<GpuRig>(new GpuRig());
  rig->backend_ = std::move(backend);
  const device::KernelRegistry& reg = rig->backend_->registry();
  using Ids = std::initializer_list<KernelId>;
  rig->without_hopper_ = std::make_unique<device::MaskedRegistry>(
      reg, Ids{KernelId::wgmma_rows, KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2});
  rig->only_wgmma64_ =
      std::make_unique<device::MaskedRegistry>(reg, Ids{KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2});
  rig->only_wgmma128_ = std::make_unique<device::MaskedRegistry>(reg, Ids{KernelId::wgmma_rows, KernelId::wgmma_rows_n128_x2});
  rig->only_wgmma128_x2_ = std::make_unique<device::MaskedRegistry>(reg, Ids{KernelId::wgmma_rows, KernelId::wgmma_rows_n128});
  return rig;
}

const device::KernelRegistry& GpuRig::registry_for(const GpuCase& c) const {
  if (c.target == device::Body::wgmma_units) return *only_wgmma64_;
  if (c.target == device::Body::wgmma_units128) return *only_wgmma128_;
  if (c.target == device::Body::wgmma_units128_x2) return *only_wgmma128_x2_;
  return *without_hopper_;
}

device::Call GpuRig::call_for(const GpuCase& c) const {
  const auto& reg = registry_for(c);
  device::Call call;
  call.entry = c.entry;
  switch (c.entry) {
    case Entry::gemm_pipelined: call.kernel = reg.resolve(KernelId::gemm_pipelined); break;
    case Entry::gemm_pipelined_m32:
    case Entry::gemm_pipelined_m32_strided: call.kernel = reg.resolve(KernelId::gemm_pipelined_m32); break;
    case Entry::gemm_pipelined_m64:
    case Entry::gemm_pipelined_m64_strided: call.kernel = reg.resolve(KernelId::gemm_pipelined_m64); break;
    case Entry::gemm_pipelined_by_m:
      call.kernel = reg.resolve(KernelId::gemm_pipelined);
      call.m32_kernel = reg.resolve(KernelId::gemm_pipelined_m32);
      call.m64_kernel = reg.resolve(KernelId::gemm_pipelined_m64);
      break;
    case Entry::gemv_batch4_strided: call.kernel = reg.resolve(KernelId::gemv_batch4_strided); break;
    case Entry::gemv_batch16_strided: call.kernel = reg.resolve(KernelId::gemv_batch16_strided); break;
  }
  call.args.m = c.m;
  call.args.n = c.n;
  call.args.k = c.k;
  call.args.a_row_stride = c.a_row_stride;
  call.args.c_row_stride = c.c_row_stride;
  return call;
}

GpuRun GpuRig::run(const GpuCase& c, const Inputs& in) {
  GpuRun out;
  auto fail = [&](const std::string& what, const device::Status& st) {
    out.error = what + ": " + st.message;
    return out;
  };
  device::Status st;
  // Exact-size buffers: a read past an operand leaves its allocation (compute-sanitizer sees it).
  auto a = backend_->allocate(in.a.size() * 2, &st);
  if (!a) return fail("allocate A", st);
  auto w = backend_->allocate(in.w.size(), &st);
  if (!w) return fail("allocate W", st);
  auto s = backend_->allocate(in.s.size() * 4, &st);
  if (!s) return fail("allocate S", st);
  const std::size_t c_elems = static_cast<std::size_t>(c.m + kExtraRows) * c.c_row_stride;
  auto cbuf = backend_->allocate(c_elems * 2, &st);
  if (!cbuf) return fail("allocate C", st);
  if (st = a->upload(in.a.data(), in.a.size() * 2); !st.ok()) return fail("upload A", st);
  if (st = w->upload(in.w.data(), in.w.size()); !st.ok()) return fail("upload W", st);
  if (st = s->upload(in.s.data(), in.s.size() * 4); !st.ok()) return fail("upload S", st);
  if (st = cbuf->fill(kPoisonByte); !st.ok()) return fail("poison C", st);

  device::Call call = call_for(c);
  call.args.input = a->address();
  call.args.weight = w->address();
  call.args.block_scale = s->address();
  call.args.output = cbuf->address();
  const device::Planned planned = device::plan_launch(call, registry_for(c), backend_->limits());
  if (!planned.ok()) return fail("plan", planned.status);
  out.plan = planned.plan;
  if (st = backend_->execute(planned.plan); !st.ok()) return fail("launch", st);
  if (st = backend_->synchronize(); !st.ok()) return fail("synchronize", st);
  out.c.resize(c_elems);
  if (st = cbuf->download(out.c.data(), c_elems * 2); !st.ok()) return fail("download C", st);
  out.ok = true;
  return out;
}

}  // namespace w8a16::gputest
