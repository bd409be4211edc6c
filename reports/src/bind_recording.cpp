// SPDX-License-Identifier: MIT OR Apache-2.0
// GPU recordings (golden/recording.hpp) for Python: which case, which digest of C's used outputs,
// and the full bits when small; plus the digest itself, and the one verdict on a recorded case
// (recording.hpp recorded_verdict) that the CLI and the tests apply too.
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/recording.hpp"

namespace w8a16::py_bind {

py::dict case_dict(const golden::Case& c);  // bind_case.cpp

namespace {

py::dict to_dict(const golden::Recording& r) {
  py::dict header;
  header["version"] = r.header.version;
  header["gpu"] = r.header.gpu;
  header["compute_capability"] = r.header.compute_capability;
  header["driver"] = r.header.driver;
  header["cuda"] = r.header.cuda;
  header["commit"] = r.header.commit;
  header["length_verified"] = r.length_verified;  // false: version 1, no trailer (recording.hpp)
  py::list outputs;
  for (const golden::RecordedOutput& o : r.outputs) {
    py::dict d;
    d["case"] = case_dict(o.c);
    d["digest"] = o.digest;
    d["outputs"] = o.outputs;
    if (o.bits.empty()) {
      d["bits"] = py::none();
    } else {
      // The used outputs, m rows of n (the pitch padding is not recorded).
      auto bits = new_array<std::uint16_t>({static_cast<py::ssize_t>(o.c.m), static_cast<py::ssize_t>(o.c.n)}, "bits");
      std::memcpy(bits.mutable_data(), o.bits.data(), o.bits.size() * sizeof(std::uint16_t));
      d["bits"] = bits;
    }
    outputs.append(d);
  }
  py::dict out;
  out["header"] = header;
  out["outputs"] = outputs;
  return out;
}

py::dict read_recording(const std::string& path) {
  golden::Recording r;
  std::string error;
  if (!golden::read_recording_file(path, &r, &error)) throw py::value_error("path: " + error);
  return to_dict(r);
}

py::dict parse_recording(const std::string& text, const std::string& source_name) {
  golden::Recording r;
  std::string error;
  if (!golden::parse_recording(text, source_name, &r, &error)) throw py::value_error("text: " + error);
  return to_dict(r);
}

// The recording digest of C's used outputs: uint16 [m, n] in row order (C[:, :n] of a gemm()).
std::uint64_t outputs_digest(const py::object& used_obj) {
  auto used = checked_array<std::uint16_t>(used_obj, "used");
  require_ndim(used, 2, "used", "[m, n] (BF16 bits, C's first n of each row)");
  return golden::outputs_digest(std::vector<std::uint16_t>(used.data(), used.data() + used.size()));
}

// An item of read_recording()'s outputs back as the C++ record it was read from.
// A key of `d` (a dict): ValueError when missing, so that a hand-made dict is told what it lacks.
py::object key_of(const py::dict& d, const char* key, const std::string& where) {
  if (!d.contains(key))
    throw py::value_error(where + " has no '" + key + "': pass an item of read_recording()['outputs']");
  return d[key];
}

py::dict dict_of(const py::object& obj, const std::string& where) {
  if (!py::isinstance<py::dict>(obj))
    throw py::type_error(where + " must be a dict (an item of read_recording()['outputs']), got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  return py::reinterpret_borrow<py::dict>(obj);
}

std::uint64_t u64_of(const py::object& obj, const char* name) {
  // An unsigned 64-bit count or digest: what the recording holds, never a value cast modulo 2^64.
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw py::type_error(std::string(name) + " must be an integer, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  const py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!v) throw py::error_already_set();
  const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
  if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(name) + " = " + std::string(py::str(v)) + " is out of range (0..2^64 - 1)");
  }
  return u;
}

golden::RecordedOutput recorded_from_dict(const py::object& obj) {
  golden::RecordedOutput o;
  std::string error;
  const py::dict d = dict_of(obj, "recorded");
  const py::dict c = dict_of(key_of(d, "case", "recorded"), "recorded['case']");
  const py::object line = key_of(c, "line", "recorded['case']");
  if (!py::isinstance<py::str>(line))
    throw py::type_error("recorded['case']['line'] must be a str, got " +
                         std::string(py::str(py::type::of(line).attr("__name__"))));
  if (!golden::parse_case(line.cast<std::string>(), &o.c, &error)) throw py::value_error("recorded: " + error);
  o.digest = u64_of(key_of(d, "digest", "recorded"), "recorded['digest']");
  o.outputs = u64_of(key_of(d, "outputs", "recorded"), "recorded['outputs']");
  if (o.outputs != std::uint64_t{o.c.m} * o.c.n)
    throw py::value_error("recorded: outputs = " + std::to_string(o.outputs) +
                          ", the case has m * n = " + std::to_string(std::uint64_t{o.c.m} * o.c.n));
  const py::object bits_obj = key_of(d, "bits", "recorded");
  if (!bits_obj.is_none()) {
    auto bits = checked_array<std::uint16_t>(bits_obj, "recorded['bits']");
    if (static_cast<std::uint64_t>(bits.size()) != o.outputs)
      throw py::value_error("recorded['bits']: " + std::to_string(bits.size()) + " values, the case has " +
                            std::to_string(o.outputs) + " outputs");
    o.bits.assign(bits.data(), bits.data() + bits.size());
  }
  return o;
}

py::dict verdict(const py::object& recorded, const py::object& used_obj) {
  const golden::RecordedOutput o = recorded_from_dict(recorded);
  std::vector<std::uint16_t> used;
  if (!used_obj.is_none()) {
    auto u = checked_array<std::uint16_t>(used_obj, "used");
    require_ndim(u, 2, "used", "[m, n] (BF16 bits, C's first n of each row)");
    used.assign(u.data(), u.data() + u.size());
  }
  const std::vector<std::uint16_t>* given = used_obj.is_none() ? nullptr : &used;
  const golden::RecordedVerdict v = golden::recorded_verdict(o, given);
  py::dict out;
  out["verdict"] = v.kind == golden::RecordedVerdict::Kind::equal     ? "equal"
                   : v.kind == golden::RecordedVerdict::Kind::differs ? "differs"
                                                                      : "not replayed";
  out["digest_only"] = v.digest_only;
  out["digest"] = v.digest;
  out["size_differs"] = v.size_differs;
  out["outputs_compared"] = v.outputs_compared;
  // Only the full bytes say how many and which outputs differ.
  const bool counted = v.kind != golden::RecordedVerdict::Kind::not_replayed && !v.digest_only && !v.size_differs;
  out["outputs_differing"] = counted ? py::object(py::int_(v.outputs_differing)) : py::object(py::none());
  out["first"] = counted && v.outputs_differing
                     ? py::object(py::make_tuple(v.first_differing / o.c.n, v.first_differing % o.c.n))
                     : py::object(py::none());
  out["text"] = golden::recorded_verdict_text(o, given, v);
  return out;
}

}  // namespace

void bind_recording(py::module_& m) {
  m.def("read_recording", &read_recording, py::arg("path"),
        "A .rec file -> dict(header, outputs: [dict(case, digest, outputs, bits or None)])");
  m.def("parse_recording", &parse_recording, py::arg("text"), py::arg("source_name") = "<text>",
        "The text of a .rec file -> the dict read_recording returns");
  m.def("outputs_digest", &outputs_digest, py::arg("used"),
        "The recordings' digest (fnv1a64-bf16le-rows) of C's used outputs, uint16 [m, n]");
  m.def("recorded_verdict", &verdict, py::arg("recorded"), py::arg("used"),
        "The verdict on one recorded case (an item of read_recording()['outputs']) given C's used outputs, "
        "uint16 [m, n], or None when they were not computed -> dict(verdict: 'equal' | 'differs' | 'not replayed', "
        "digest_only, digest, size_differs, outputs_compared, outputs_differing (None unless the full bytes were "
        "compared), first: (row, column) of the first differing output or None, text)");
}

}  // namespace w8a16::py_bind
