// SPDX-License-Identifier: MIT OR Apache-2.0
// Recording formats of golden/ for Python: `.mmav` tensor-core vectors (golden/mma/README.md),
// read and written by the same C++ the CLI uses, so a file written here is a file the CLI replays.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/manifest.hpp"
#include "w8a16/golden/mmav.hpp"

namespace w8a16::py_bind {
namespace {

// A parsed file as numpy arrays: a [count, 16, 16] uint16, bt [count, 8, 16] uint16,
// c and d [count, 16, 8] uint32, kind int.
py::dict to_dict(const golden::MmavFile& file) {
  const auto count = static_cast<py::ssize_t>(file.cases.size());
  auto a = new_array<std::uint16_t>({count, py::ssize_t{16}, py::ssize_t{16}}, "a");
  auto bt = new_array<std::uint16_t>({count, py::ssize_t{8}, py::ssize_t{16}}, "bt");
  auto c = new_array<std::uint32_t>({count, py::ssize_t{16}, py::ssize_t{8}}, "c");
  auto d = new_array<std::uint32_t>({count, py::ssize_t{16}, py::ssize_t{8}}, "d");
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
  std::string bytes, error;
  if (!golden::read_regular_file(path, golden::kMaxInputFileBytes, &bytes, &error))
    throw py::value_error("path: " + golden::shown(path) + ": " + error);
  golden::MmavFile file;
  if (!golden::parse_mmav(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &file, &error))
    throw py::value_error("path: " + golden::shown(path) + " is not a valid .mmav: " + error);
  return to_dict(file);
}

void check_case_array(const py::array& x, const char* name, py::ssize_t count, py::ssize_t r, py::ssize_t cols) {
  if (x.ndim() != 3 || x.shape(0) != count || x.shape(1) != r || x.shape(2) != cols)
    throw py::value_error(std::string(name) + " must have shape (count, " + std::to_string(r) + ", " +
                          std::to_string(cols) + ") with count = " + std::to_string(count) + ", got " + shape_str(x));
}

py::bytes serialize_mmav(const py::object& a_obj, const py::object& bt_obj, const py::object& c_obj,
                         const py::object& d_obj) {
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array btv = any_layout_array<std::uint16_t>(bt_obj, "bt");
  const py::array cv = any_layout_array<std::uint32_t>(c_obj, "c");
  const py::array dv = any_layout_array<std::uint32_t>(d_obj, "d");
  require_ndim(av, 3, "a", "[count, 16, 16] (BF16 bits)");
  const py::ssize_t count = av.shape(0);
  if (count > static_cast<py::ssize_t>(UINT32_MAX))
    throw py::value_error("a: " + std::to_string(count) +
                          " cases, more than a .mmav holds (2^32 - 1: its count is 32 bits)");
  check_case_array(av, "a", count, 16, 16);
  check_case_array(btv, "bt", count, 8, 16);
  check_case_array(cv, "c", count, 16, 8);
  check_case_array(dv, "d", count, 16, 8);
  auto a = contiguous<std::uint16_t>(av, "a");
  auto bt = contiguous<std::uint16_t>(btv, "bt");
  auto c = contiguous<std::uint32_t>(cv, "c");
  auto d = contiguous<std::uint32_t>(dv, "d");
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
  std::string error;
  if (!golden::write_file_atomic(path, bytes, &error))
    throw py::value_error("path: cannot write " + golden::shown(path) + ": " + error);
}

// A folder of evidence checked against its manifests (manifest.hpp check_tree), as verify checks
// the data folder it reads: the audit holds the recordings and order probes it shows to the same rules.
py::dict check_evidence(const std::string& path, bool require_manifest) {
  golden::TreeCheck t;
  golden::check_tree(path, require_manifest, &t);
  auto list_of = [](const std::vector<std::string>& v) {
    py::list out;
    for (const std::string& x : v) out.append(x);
    return out;
  };
  py::dict d;
  d["problems"] = list_of(t.problems);
  d["simulated"] = list_of(t.simulated);
  d["failed"] = list_of(t.failed);
  d["folders"] = t.folders;
  d["manifests"] = t.manifests;
  d["files"] = t.files;
  return d;
}

}  // namespace

void bind_golden(py::module_& m) {
  m.def("check_evidence", &check_evidence, py::arg("path"), py::arg("require_manifest") = true,
        "A folder of evidence and the folders it lists, checked against their evidence manifests "
        "(golden/include/w8a16/golden/manifest.hpp) -> dict(problems, simulated, failed: lists of str, "
        "folders, manifests, files: counts)");
  m.def("read_mmav", &read_mmav, py::arg("path"),
        ".mmav file -> dict(kind, a [n,16,16] u16, bt [n,8,16] u16, c [n,16,8] u32, d [n,16,8] u32)");
  m.def("parse_mmav", &parse_mmav, py::arg("data"), "bytes of a .mmav file -> the dict read_mmav returns");
  m.def("serialize_mmav", &serialize_mmav, py::arg("a"), py::arg("bt"), py::arg("c"), py::arg("d"),
        "The bytes of a .mmav file (kind 1) holding these cases");
  m.def("write_mmav", &write_mmav, py::arg("path"), py::arg("a"), py::arg("bt"), py::arg("c"), py::arg("d"),
        "Writes a .mmav file (kind 1) holding these cases");
}

}  // namespace w8a16::py_bind
