// SPDX-License-Identifier: MIT OR Apache-2.0
// Recording formats of golden/ for Python: `.mmav` tensor-core vectors (golden/mma/README.md),
// read and written by the same C++ the CLI uses, so a file written here is a file the CLI replays.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "arrays.hpp"
#include "w8a16/golden/mmav.hpp"

namespace w8a16::py_bind {
namespace {

// A parsed file as numpy arrays: a [count, 16, 16] uint16, bt [count, 8, 16] uint16,
// c and d [count, 16, 8] uint32, kind int.
py::dict to_dict(const golden::MmavFile& file) {
  const auto count = static_cast<py::ssize_t>(file.cases.size());
  py::array_t<std::uint16_t> a({count, py::ssize_t{16}, py::ssize_t{16}});
  py::array_t<std::uint16_t> bt({count, py::ssize_t{8}, py::ssize_t{16}});
  py::array_t<std::uint32_t> c({count, py::ssize_t{16}, py::ssize_t{8}});
  py::array_t<std::uint32_t> d({count, py::ssize_t{16}, py::ssize_t{8}});
  for (py::ssize_t i = 0; i < count; ++i) {
    const golden::MmavCase& k = file.cases[static_cast<std::size_t>(i)];
    std::copy(k.a.begin(), k.a.end(), a.mutable_data() + i * 256);
    std::copy(k.bt.begin(), k.bt.end(), bt.mutable_data() + i * 128);
    std::copy(k.c.begin(), k.c.end(), c.mutable_data() + i * 128);
    std::copy(k.d.begin(), k.d.end(), d.mutable_data() + i * 128);
  }
  py::dict out;
  out["kind"] = file.kind;
  out["a"] = a;
  out["bt"] = bt;
  out["c"] = c;
  out["d"] = d;
  return out;
}

py::dict parse_mmav(const py::bytes& data) {
  const std::string bytes = data;
  golden::MmavFile file;
  std::string error;
  if (!golden::parse_mmav(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &file, &error))
    throw py::value_error("data: not a valid .mmav: " + error);
  return to_dict(file);
}

py::dict read_mmav(const std::string& path) {
  golden::MmavFile file;
  std::string error;
  if (!golden::read_mmav_file(path, &file, &error)) {
    if (error == "cannot open") throw py::value_error("path: cannot open '" + path + "'");
    throw py::value_error("path: '" + path + "' is not a valid .mmav: " + error);
  }
  return to_dict(file);
}

template <class T>
void check_case_array(const py::array_t<T, py::array::c_style>& x, const char* name, py::ssize_t count, py::ssize_t r,
                      py::ssize_t cols) {
  if (x.ndim() != 3 || x.shape(0) != count || x.shape(1) != r || x.shape(2) != cols)
    throw py::value_error(std::string(name) + " must have shape (count, " + std::to_string(r) + ", " +
                          std::to_string(cols) + ") with count = " + std::to_string(count) + ", got " + shape_str(x));
}

py::bytes serialize_mmav(const py::object& a_obj, const py::object& bt_obj, const py::object& c_obj,
                         const py::object& d_obj) {
  auto a = checked_array<std::uint16_t>(a_obj, "a");
  auto bt = checked_array<std::uint16_t>(bt_obj, "bt");
  auto c = checked_array<std::uint32_t>(c_obj, "c");
  auto d = checked_array<std::uint32_t>(d_obj, "d");
  require_ndim(a, 3, "a", "[count, 16, 16] (BF16 bits)");
  const py::ssize_t count = a.shape(0);
  check_case_array(a, "a", count, 16, 16);
  check_case_array(bt, "bt", count, 8, 16);
  check_case_array(c, "c", count, 16, 8);
  check_case_array(d, "d", count, 16, 8);
  golden::MmavFile file;
  file.cases.resize(static_cast<std::size_t>(count));
  for (py::ssize_t i = 0; i < count; ++i) {
    golden::MmavCase& k = file.cases[static_cast<std::size_t>(i)];
    std::memcpy(k.a.data(), a.data() + i * 256, sizeof k.a);
    std::memcpy(k.bt.data(), bt.data() + i * 128, sizeof k.bt);
    std::memcpy(k.c.data(), c.data() + i * 128, sizeof k.c);
    std::memcpy(k.d.data(), d.data() + i * 128, sizeof k.d);
  }
  const std::vector<std::uint8_t> out = golden::serialize_mmav(file);
  return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
}

void write_mmav(const std::string& path, const py::object& a, const py::object& bt, const py::object& c,
                const py::object& d) {
  const std::string bytes = serialize_mmav(a, bt, c, d);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw py::value_error("path: cannot open '" + path + "' for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw py::value_error("path: writing '" + path + "' failed");
}

}  // namespace

void bind_golden(py::module_& m) {
  m.def("read_mmav", &read_mmav, py::arg("path"),
        ".mmav file -> dict(kind, a [n,16,16] u16, bt [n,8,16] u16, c [n,16,8] u32, d [n,16,8] u32)");
  m.def("parse_mmav", &parse_mmav, py::arg("data"), "bytes of a .mmav file -> the dict read_mmav returns");
  m.def("serialize_mmav", &serialize_mmav, py::arg("a"), py::arg("bt"), py::arg("c"), py::arg("d"),
        "The bytes of a .mmav file (kind 1) holding these cases");
  m.def("write_mmav", &write_mmav, py::arg("path"), py::arg("a"), py::arg("bt"), py::arg("c"), py::arg("d"),
        "Writes a .mmav file (kind 1) holding these cases");
}

}  // namespace w8a16::py_bind
