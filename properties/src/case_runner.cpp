// SPDX-License-Identifier: MIT OR Apache-2.0
// One case through a backend and through the emulator, compared bit for bit.
#include "w8a16/properties/case_runner.hpp"

#include <cstdio>

#include "w8a16/device/api.hpp"
#include "w8a16/device/packed.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::props {

using golden::EntryPoint;

device::Entry to_device_entry(EntryPoint e) {
  switch (e) {
    case EntryPoint::gemm_pipelined: return device::Entry::gemm_pipelined;
    case EntryPoint::gemm_pipelined_m32: return device::Entry::gemm_pipelined_m32;
    case EntryPoint::gemm_pipelined_m32_strided: return device::Entry::gemm_pipelined_m32_strided;
    case EntryPoint::gemm_pipelined_m64: return device::Entry::gemm_pipelined_m64;
    case EntryPoint::gemm_pipelined_m64_strided: return device::Entry::gemm_pipelined_m64_strided;
    case EntryPoint::gemm_pipelined_by_m: return device::Entry::gemm_pipelined_by_m;
    case EntryPoint::gemv_batch4_strided: return device::Entry::gemv_batch4_strided;
    case EntryPoint::gemv_batch16_strided: return device::Entry::gemv_batch16_strided;
    case EntryPoint::gemm_packed_strided: return device::Entry::gemm_packed_strided;
  }
  return device::Entry::gemm_pipelined;
}

device::Call case_call(const golden::Case& c, const device::KernelRegistry& registry, device::DevPtr a,
                       device::DevPtr w, device::DevPtr s, device::DevPtr out) {
  using device::KernelId;
  device::Call call;
  call.entry = to_device_entry(c.entry);
  switch (c.entry) {
    case EntryPoint::gemm_pipelined:
    case EntryPoint::gemm_pipelined_by_m: call.kernel = registry.resolve(KernelId::gemm_pipelined); break;
    case EntryPoint::gemm_pipelined_m32:
    case EntryPoint::gemm_pipelined_m32_strided: call.kernel = registry.resolve(KernelId::gemm_pipelined_m32); break;
    case EntryPoint::gemm_pipelined_m64:
    case EntryPoint::gemm_pipelined_m64_strided: call.kernel = registry.resolve(KernelId::gemm_pipelined_m64); break;
    case EntryPoint::gemv_batch4_strided: call.kernel = registry.resolve(KernelId::gemv_batch4_strided); break;
    case EntryPoint::gemv_batch16_strided: call.kernel = registry.resolve(KernelId::gemv_batch16_strided); break;
    case EntryPoint::gemm_packed_strided: break;  // resolved by the plan, by rows
  }
  if (c.entry == EntryPoint::gemm_pipelined_by_m) {
    call.m32_kernel = registry.resolve(KernelId::gemm_pipelined_m32);
    call.m64_kernel = registry.resolve(KernelId::gemm_pipelined_m64);
  }
  call.args = device::Args{a, w, s, out, c.m, c.n, c.k, c.a_row_stride, c.c_row_stride, 0};
  return call;
}

device::Planned plan_case(const golden::Case& c, const device::KernelRegistry& registry,
                          const device::DeviceLimits& limits) {
  const CaseRegistry reg(registry, c.without);
  const device::Call call = case_call(c, reg, 0x100000000000ull, 0x200000000000ull, 0x300000000000ull,
                                      0x400000000000ull);
  return device::plan_launch(call, reg, limits);
}

OperandView operand_view(const golden::CaseInputs& in) {
  return OperandView{in.a_bits.data(), in.a_bits.size(), in.w_e4m3.data(),
                     in.w_e4m3.size(), in.s_f32.data(),  in.s_f32.size()};
}

Launched launch_case(device::Backend& backend, const golden::Case& c, const OperandView& in,
                     const std::function<void(const device::Plan&)>& before_execute, const ViewOffsets& offsets) {
  Launched r;
  // gemm_packed_strided takes W repacked by the launch layer (NUMERICS.md 2.3).
  std::vector<std::uint8_t> packed;
  const std::uint8_t* w_host = in.w;
  if (c.entry == EntryPoint::gemm_packed_strided) {
    packed = device::pack_weights(in.w, c.n, c.k);
    w_host = packed.data();
  }
  // A behind `offsets.a` elements of padding bits, C behind `offsets.c` sentinel elements: with
  // offsets the kernel sees views that start inside their allocations.
  std::vector<std::uint16_t> a_front(offsets.a, golden::kAPaddingBits);
  a_front.insert(a_front.end(), in.a, in.a + in.a_count);
  const std::uint16_t* a_host = offsets.a ? a_front.data() : in.a;
  const std::size_t a_bytes = (in.a_count + offsets.a) * 2, w_bytes = w_host == in.w ? in.w_count : packed.size(),
                    s_bytes = in.s_count * 4;
  std::vector<std::uint16_t> c_init(offsets.c, golden::kOutputSentinelBits);
  const std::vector<std::uint16_t> c_view = golden::guarded_sentinel_output(c);
  c_init.insert(c_init.end(), c_view.begin(), c_view.end());
  const std::size_t c_bytes = c_init.size() * 2;
  auto a = backend.allocate(a_bytes, &r.status);
  if (!a) return r;
  auto w = backend.allocate(w_bytes, &r.status);
  if (!w) return r;
  auto s = backend.allocate(s_bytes, &r.status);
  if (!s) return r;
  auto out = backend.allocate(c_bytes, &r.status);
  if (!out) return r;
  if (!(r.status = a->upload(a_host, a_bytes)).ok()) return r;
  if (!(r.status = w->upload(w_host, w_bytes)).ok()) return r;
  if (!(r.status = s->upload(in.s, s_bytes)).ok()) return r;
  if (!(r.status = out->upload(c_init.data(), c_bytes)).ok()) return r;
  // Launcher::launch's path (plan_launch, then execute) over the case's registry.
  const CaseRegistry registry(backend.registry(), c.without);
  const device::Planned planned = device::plan_launch(case_call(c, registry,
                                                                a->address() + 2 * device::DevPtr{offsets.a},
                                                                w->address(), s->address(),
                                                                out->address() + 2 * device::DevPtr{offsets.c}),
                                                      registry, backend.limits());
  if (planned.ok()) {
    r.planned = true;
    r.plan = planned.plan;
    if (before_execute) before_execute(planned.plan);
    r.status = backend.execute(planned.plan);
  } else {
    r.status = planned.status;
  }
  const device::Status sync = backend.synchronize();
  if (r.status.ok() || sync.code == device::Errc::context_lost) r.status = sync;
  // C comes back even after a failed launch: "an error changes nothing" is checked on it.
  std::vector<std::uint16_t> all(c_init.size(), 0);
  const device::Status down = out->download(all.data(), c_bytes);
  if (r.status.ok()) r.status = down;
  // Elements before C's view must still be the sentinel: a kernel that writes there ignores C's
  // pointer.
  bool before_ok = true;
  for (std::uint32_t i = 0; i < offsets.c; ++i) before_ok = before_ok && all[i] == golden::kOutputSentinelBits;
  r.c_bits.assign(all.begin() + offsets.c, all.end());
  if (!before_ok && r.status.ok())
    r.status = device::Status::error(device::Errc::backend_error,
                                     "an element before C's view changed (the kernel wrote outside its output)");
  return r;
}

std::vector<std::uint16_t> expected_output(const golden::Case& c, const golden::CaseInputs& in, unsigned threads,
                                           const ContractChoice& contract) {
  std::vector<std::uint16_t> out = golden::guarded_sentinel_output(c);
  const ref::GemmView v = golden::case_view(c, in);
  const ref::Conventions& conv = contract.for_entry(c.entry);
  if (golden::entry_point_is_gemv(c.entry)) ref::gemm_conventions(conv.gemv, v, out.data(), c.c_row_stride, threads);
  else ref::gemm_conventions(conv.tc, v, ref::Arch::sm90, out.data(), c.c_row_stride, threads);
  return out;
}

Comparison compare_output(const golden::Case& c, const std::vector<std::uint16_t>& expected,
                          const std::vector<std::uint16_t>& produced, std::size_t max_details) {
  Comparison r;
  if (expected.size() != produced.size()) {
    r.mismatches = std::max(expected.size(), produced.size());
    r.details.push_back("size: expected " + std::to_string(expected.size()) + " elements, produced " +
                        std::to_string(produced.size()));
    return r;
  }
  r.bytes_compared = 2 * std::uint64_t{expected.size()};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == produced[i]) continue;
    ++r.mismatches;
    if (r.details.size() < max_details) {
      const std::size_t row = i / c.c_row_stride, col = i % c.c_row_stride;
      char buf[160];
      std::snprintf(buf, sizeof buf, "C[%zu][%zu]%s: expected 0x%04x, produced 0x%04x", row, col,
                    row >= c.m   ? " (guard row past M)"
                    : col >= c.n ? " (pitch padding)"
                                 : "",
                    expected[i], produced[i]);
      r.details.push_back(buf);
    }
  }
  return r;
}

}  // namespace w8a16::props
