// SPDX-License-Identifier: MIT OR Apache-2.0
// GPU recordings (golden/recording.hpp) for Python: which case, which digest of C's used outputs,
// and the full bits when small; plus the digest itself, so Python can hold an emulator result
// against a recording.
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

}  // namespace

void bind_recording(py::module_& m) {
  m.def("read_recording", &read_recording, py::arg("path"),
        "A .rec file -> dict(header, outputs: [dict(case, digest, outputs, bits or None)])");
  m.def("parse_recording", &parse_recording, py::arg("text"), py::arg("source_name") = "<text>",
        "The text of a .rec file -> the dict read_recording returns");
  m.def("outputs_digest", &outputs_digest, py::arg("used"),
        "The recordings' digest (fnv1a64-bf16le-rows) of C's used outputs, uint16 [m, n]");
}

}  // namespace w8a16::py_bind
