// SPDX-License-Identifier: MIT OR Apache-2.0
// The launch layer's plan for a saved case (device/src/plan.cpp), so that Python names the kernel
// body a call runs from the C++ dispatch itself instead of restating its rules.
#include <string>

#include "arrays.hpp"
#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"

namespace w8a16::py_bind {
namespace {

device::Entry device_entry(golden::EntryPoint e) {
  std::string name(golden::entry_point_name(e));  // "w8a16_<entry>" in case lines
  if (name.rfind("w8a16_", 0) == 0) name = name.substr(6);
  for (int i = 0; i <= static_cast<int>(device::Entry::gemv_batch16_strided); ++i) {
    const auto d = static_cast<device::Entry>(i);
    if (name == device::entry_name(d)) return d;
  }
  throw py::value_error("entry point " + name + " has no launch-layer entry");
}

// Plans the case's call as on a device whose module has every kernel (the H200 and the sim
// backend), with the H200's limits. Addresses are placeholders, aligned and far apart: planning
// never dereferences them and only their overlap and alignment are checked.
py::dict plan_case(const std::string& line) {
  golden::Case c;
  std::string error;
  if (!golden::parse_case(line, &c, &error)) throw py::value_error("line: " + error);
  const device::StaticRegistry reg = device::StaticRegistry::all_present();
  device::Call call;
  call.entry = device_entry(c.entry);
  call.kernel = reg.resolve(device::entry_own_kernel(call.entry));
  call.m32_kernel = reg.resolve(device::KernelId::gemm_pipelined_m32);
  call.m64_kernel = reg.resolve(device::KernelId::gemm_pipelined_m64);
  call.args.input = 0x10000000000ull;
  call.args.weight = 0x20000000000ull;
  call.args.block_scale = 0x30000000000ull;
  call.args.output = 0x40000000000ull;
  call.args.m = c.m;
  call.args.n = c.n;
  call.args.k = c.k;
  call.args.a_row_stride = c.a_row_stride;
  call.args.c_row_stride = c.c_row_stride;
  const device::Planned p = device::plan_launch(call, reg, device::DeviceLimits::h200());
  if (!p.ok()) throw py::value_error("refused: " + p.status.message);
  py::dict d;
  d["kernel"] = std::string(p.plan.kernel_name);
  d["body"] = std::string(device::body_name(p.plan.body));
  d["contract"] = p.plan.contract == device::Contract::gemv ? "gemv" : "canonical";
  d["grid"] = py::make_tuple(p.plan.grid.x, p.plan.grid.y, p.plan.grid.z);
  d["dynamic_smem"] = p.plan.dynamic_smem;
  return d;
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def("plan_case", &plan_case, py::arg("line"),
        "The launch layer's plan for a case line (every kernel present, H200 limits): kernel, body, "
        "contract, grid, dynamic_smem; ValueError if the line is malformed or the call refused");
}

}  // namespace w8a16::py_bind
