// SPDX-License-Identifier: MIT OR Apache-2.0
// w8a16check._core: the emulator (reference/) and the recording formats (golden/) for Python.
// Every number the Python package reports is computed here, by the C++ that the tests verify.
#include <pybind11/pybind11.h>

#include "w8a16/version.hpp"

namespace w8a16::py_bind {
void bind_numerics(pybind11::module_& m);
void bind_contract(pybind11::module_& m);
void bind_conventions(pybind11::module_& m);
void bind_golden(pybind11::module_& m);
void bind_exact(pybind11::module_& m);
void bind_case(pybind11::module_& m);
void bind_recording(pybind11::module_& m);
void bind_plan(pybind11::module_& m);
void bind_operands(pybind11::module_& m);
void bind_invariance(pybind11::module_& m);
}  // namespace w8a16::py_bind

PYBIND11_MODULE(_core, m) {
  m.doc() = "w8a16check emulator bindings (raw bits in, raw bits out); see the w8a16check package";
  // The one version (CMake project(VERSION)) and the commit this module was built from.
  m.attr("__version__") = w8a16::kVersion;
  m.attr("__commit__") = w8a16::kGitCommit;
  w8a16::py_bind::bind_numerics(m);
  w8a16::py_bind::bind_contract(m);
  w8a16::py_bind::bind_conventions(m);
  w8a16::py_bind::bind_golden(m);
  w8a16::py_bind::bind_exact(m);
  w8a16::py_bind::bind_case(m);
  w8a16::py_bind::bind_recording(m);
  w8a16::py_bind::bind_plan(m);
  w8a16::py_bind::bind_operands(m);
  w8a16::py_bind::bind_invariance(m);
  // What this module was built from (cmake/version.hpp.in): the CMake project version and the
  // commit at configure time. Reports name the data they show by these.
  m.def(
      "build_info",
      [] {
        pybind11::dict d;
        d["version"] = w8a16::kVersion;
        d["commit"] = w8a16::kGitCommit;
        return d;
      },
      "The CMake project version and the git commit (at configure time) this module was built from");
}
