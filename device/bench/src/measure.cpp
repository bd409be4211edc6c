// SPDX-License-Identifier: MIT OR Apache-2.0
// Check, then time, then check again (measure.hpp).
#include "w8a16/bench/measure.hpp"

#include <algorithm>

namespace w8a16::bench {

bool upload_operands(device::Backend& backend, const HostInputs& in, Shape sh, std::uint32_t max_m, int copies,
                     DeviceOperands* out, std::string* why) {
  device::Status st;
  std::string error;
  auto alloc = [&](std::size_t bytes) {
    auto b = backend.allocate(bytes, &st);
    if (!b && error.empty()) error = st.message;
    return b;
  };
  auto upload = [&](device::Buffer& b, const void* src, std::size_t bytes) {
    if (error.empty())
      if (const device::Status u = b.upload(src, bytes); !u.ok()) error = u.message;
  };
  out->a = alloc(in.a.size() * 2);
  out->c = alloc(static_cast<std::size_t>(max_m) * sh.n * 2);
  for (int i = 0; i < copies && error.empty(); ++i) {
    out->w.push_back(alloc(in.w.size()));
    out->s.push_back(alloc(in.s.size() * 4));
    if (!error.empty()) break;
    upload(*out->w.back(), in.w.data(), in.w.size());
    upload(*out->s.back(), in.s.data(), in.s.size() * 4);
  }
  if (error.empty()) upload(*out->a, in.a.data(), in.a.size() * 2);
  if (!error.empty()) *why = error;
  return error.empty();
}

Timing time_plan(device::Backend& backend, Timer& timer, const device::Plan& plan, const DeviceOperands& ops,
                 const MeasureOptions& opt) {
  const int copies = ops.copies();
  return timer.time(opt.reps, opt.batches, opt.graph, [&](int i, device::Stream stream) -> std::string {
    device::Plan p = plan;
    p.stream = stream;
    p.params.weight = ops.w[i % copies]->address();
    p.params.block_scale = ops.s[i % copies]->address();
    const device::Status s = backend.execute(p);
    return s.ok() ? "" : s.message;
  });
}

Measurement measure_plan(device::Backend& backend, Timer& timer, device::Plan plan, const DeviceOperands& ops,
                         Expected& expected, const MeasureOptions& opt) {
  Measurement r;
  plan.stream = timer.stream();
  plan.params.weight = ops.w[0]->address();
  plan.params.block_scale = ops.s[0]->address();
  const std::uint32_t pitch = plan.params.c_row_stride;
  std::vector<std::uint16_t> got(static_cast<std::size_t>(plan.params.m) * pitch);
  device::Status ls = ops.c->fill(0xFF);
  if (ls.ok()) ls = backend.synchronize();
  if (ls.ok()) ls = backend.execute(plan);
  if (ls.ok()) ls = backend.synchronize();
  if (ls.ok()) ls = ops.c->download(got.data(), got.size() * 2);
  if (!ls.ok()) {
    r.error = ls.message;
    return r;
  }
  r.launched = true;
  r.check = compare_sample(got, pitch, expected.sample(), expected.for_contract(plan.contract));
  MeasureOptions timed = opt;
  timed.reps = std::max(opt.reps, ops.copies());
  r.timing = time_plan(backend, timer, plan, ops, timed);
  if (!r.timing.ok) r.error = r.timing.error;
  // Every copy holds the same bytes: the timed launches must leave exactly the checked output.
  std::vector<std::uint16_t> after(got.size());
  r.stable = r.timing.ok && backend.synchronize().ok() && ops.c->download(after.data(), after.size() * 2).ok() &&
             after == got;
  return r;
}

}  // namespace w8a16::bench
