// SPDX-License-Identifier: MIT OR Apache-2.0
// Operand bundles and run-operands outputs (golden/operands.hpp) for Python: written and read by the
// same C++ the CLI uses, so a bundle written here is one `w8a16check run-operands` reads.
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/operands.hpp"

namespace w8a16::py_bind {
namespace {

template <class T>
std::vector<T> flat(const py::object& obj, const char* name) {
  auto a = checked_array<T>(obj, name);
  return std::vector<T>(a.data(), a.data() + a.size());
}

// A patched bundle: row r of A is `base` with A[r, patch_cols[r, p]] = patch_bits[r, p]; or, with
// patch_cols and patch_bits None, a dense one: `base` is all of A.
// A count the bundle stores in 32 bits: an integer in 0..2^32 - 1 (TypeError / ValueError naming it).
std::uint32_t u32_arg(const py::object& obj, const char* name) {
  return static_cast<std::uint32_t>(checked_int(obj, name, 0, UINT32_MAX));
}

std::uint64_t write_operand_bundle(const std::string& path, const std::string& entry, const py::object& m,
                                   const py::object& n, const py::object& k, const py::object& launches,
                                   const py::object& base, const py::object& patch_cols, const py::object& patch_bits,
                                   const py::object& w, const py::object& s, const py::object& a_row_stride,
                                   const py::object& c_row_stride) {
  golden::BundleSource src;
  src.entry = entry;
  src.m = u32_arg(m, "m");
  src.n = u32_arg(n, "n");
  src.k = u32_arg(k, "k");
  src.launches = u32_arg(launches, "launches");
  src.a_row_stride = u32_arg(a_row_stride, "a_row_stride");
  src.c_row_stride = u32_arg(c_row_stride, "c_row_stride");
  if (patch_cols.is_none() != patch_bits.is_none())
    throw py::value_error("patch_cols and patch_bits: give both (a patched bundle) or neither (a dense one)");
  if (patch_cols.is_none()) {
    // Dense: base is all of A, [launches * m][a_row_stride] (format_bundle checks its length).
    src.patches_per_row = 0;
    src.a_dense = flat<std::uint16_t>(base, "base");
  } else {
    const py::array cols = any_layout_array<std::uint32_t>(patch_cols, "patch_cols");
    require_ndim(cols, 2, "patch_cols", "[launches * m, patches_per_row]");
    src.patches_per_row = checked_u32(cols.shape(1), "patches_per_row");
    if (src.patches_per_row == 0)
      throw py::value_error("patch_cols: a patched bundle needs at least one patch per row");
    src.base = flat<std::uint16_t>(base, "base");
    src.patch_cols = flat<std::uint32_t>(patch_cols, "patch_cols");
    src.patch_bits = flat<std::uint16_t>(patch_bits, "patch_bits");
  }
  src.w = flat<std::uint8_t>(w, "w");
  src.s = flat<float>(s, "s");
  std::uint64_t size = 0;
  std::string error;
  if (!golden::write_bundle_file(path, src, &size, &error)) throw py::value_error("path: " + error);
  return size;
}

py::dict read_operand_output(const std::string& path) {
  golden::OperandOutput o;
  std::string error;
  if (!golden::read_operand_output_file(path, &o, &error)) throw py::value_error("path: " + error);
  auto c = new_array<std::uint16_t>({static_cast<py::ssize_t>(std::uint64_t{o.launches} * o.m),
                                     static_cast<py::ssize_t>(o.c_row_stride)},
                                    "c");
  std::memcpy(c.mutable_data(), o.c.data(), o.c.size() * sizeof(std::uint16_t));
  py::dict d;
  d["entry"] = o.entry;
  d["kernel"] = o.kernel;
  d["body"] = o.body;
  d["contract"] = o.contract == 1 ? "gemv" : "canonical";  // the reader admits 0 and 1 only
  d["m"] = o.m;
  d["n"] = o.n;
  d["c_row_stride"] = o.c_row_stride;
  d["launches"] = o.launches;
  d["backend"] = o.backend;
  d["c"] = c;
  return d;
}

}  // namespace

void bind_operands(py::module_& m) {
  m.def("write_operand_bundle", &write_operand_bundle, py::arg("path"), py::arg("entry"), py::arg("m"), py::arg("n"),
        py::arg("k"), py::arg("launches"), py::arg("base"), py::arg("patch_cols"), py::arg("patch_bits"), py::arg("w"),
        py::arg("s"), py::arg("a_row_stride"), py::arg("c_row_stride"),
        "Writes an operand bundle (golden/operands.hpp) atomically, patched or (patch_cols and patch_bits None) dense; "
        "returns its size in bytes");
  m.def("read_operand_output", &read_operand_output, py::arg("path"),
        "A run-operands output file -> dict(entry, kernel, body, contract, m, n, c_row_stride, launches, backend, "
        "c: uint16 [launches * m, c_row_stride])");
}

}  // namespace w8a16::py_bind
