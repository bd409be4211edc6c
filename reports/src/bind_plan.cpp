// SPDX-License-Identifier: MIT OR Apache-2.0
// The launch layer's plan for a saved case (device/src/plan.cpp), so that Python names the kernel
// body a call runs from the C++ dispatch itself instead of restating its rules. The call is the one
// the CLI's replay and repro make for the case (properties' case_call).
#include <algorithm>
#include <string>

#include "arrays.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::py_bind {
namespace {

// Plans the case's call as on a device whose module has every kernel (the H200 and the sim
// backend), with the H200's limits. Addresses are placeholders, aligned and far apart: planning
// never dereferences them and only their overlap and alignment are checked. A line with without=
// is planned without those kernels, as launch_case plans it.
py::dict plan_case(const std::string& line) {
  golden::Case c;
  std::string error;
  if (!golden::parse_case(line, &c, &error)) throw py::value_error("line: " + error);
  // Less the kernels the line's without= takes away, as launch_case plans it.
  const device::Planned p = props::plan_case(c, device::StaticRegistry::all_present(), device::DeviceLimits::h200());
  if (!p.ok()) throw py::value_error("refused: " + p.status.message);
  py::dict d;
  d["kernel"] = std::string(p.plan.kernel_name);
  d["body"] = std::string(device::body_name(p.plan.body));
  d["contract"] = p.plan.contract == device::Contract::gemv ? "gemv" : "canonical";
  d["grid"] = py::make_tuple(p.plan.grid.x, p.plan.grid.y, p.plan.grid.z);
  d["dynamic_smem"] = p.plan.dynamic_smem;
  return d;
}

// Every kernel body of the launch layer (device/include/w8a16/device/bodies.def, one row each) with
// the contract its bytes must meet, its tier, its symbols with their architecture, the entry points
// that reach it and its order probes: the audit lists its tiers from here, so a body added in C++
// appears there without a Python edit.
py::list bodies() {
  py::list out;
  for (const device::Body b : device::kAllBodies) {
    const device::BodyInfo& row = device::body_info(b);
    py::dict d;
    d["name"] = std::string(row.name);
    d["contract"] = row.contract == device::Contract::gemv ? "gemv" : "canonical";
    d["tier"] = std::string(device::tier_name(row.tier));
    py::list symbols, archs, entries;
    for (const device::KernelId k : device::kAllKernels)
      if (row.kernels & device::kernel_bit(k)) {
        symbols.append(std::string(device::kernel_name(k)));
        archs.append(std::string(device::kernel_arch(k)));
      }
    for (const device::Entry e : device::kAllEntries)
      if (row.entries & (1u << static_cast<unsigned>(e))) entries.append(std::string(device::entry_name(e)));
    d["symbols"] = symbols;
    d["archs"] = archs;
    d["entries"] = entries;
    py::list probes;
    const std::string text = row.order_probes;
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t j = std::min(text.find(' ', i), text.size());
      if (j > i) probes.append(text.substr(i, j - i));
      i = j + 1;
    }
    d["order_probes"] = probes;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def("bodies", &bodies,
        "Every kernel body of the launch layer (bodies.def), in order: a list of dicts with name, contract "
        "('canonical' for the tensor-core bodies, 'gemv' for the scalar GEMV strip), tier ('first', 'twin_first', "
        "'own'), symbols and archs (one each per symbol), entries and order_probes (order.py PROBE_PLAN names)");
  m.def(
      "plan_case", &plan_case, py::arg("line"),
      "The launch layer's plan for a case line (every kernel present but the line's without=, H200 limits): kernel, body, "
      "contract, grid, dynamic_smem; ValueError if the line is malformed or the call refused");
}

}  // namespace w8a16::py_bind
