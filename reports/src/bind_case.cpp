// SPDX-License-Identifier: MIT OR Apache-2.0
// Saved cases (golden/case.hpp, case_inputs.hpp) for Python: one line names a launch and its
// seeded inputs; the C++ regenerates the same bytes here as in the CLI's replay and repro.
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"

namespace w8a16::py_bind {

// The fields of a case, plus what a Python caller needs to compute its expected output.
// Shared with bind_recording.cpp.
py::dict case_dict(const golden::Case& c) {
  py::dict d;
  d["line"] = golden::format_case(c);
  d["entry"] = std::string(golden::entry_point_name(c.entry));
  d["m"] = c.m;
  d["n"] = c.n;
  d["k"] = c.k;
  d["a_row_stride"] = c.a_row_stride;
  d["c_row_stride"] = c.c_row_stride;
  d["dist"] = std::string(golden::distribution_name(c.dist));
  d["seed"] = c.seed;
  d["gen"] = c.gen;
  d["without"] = golden::without_text(c.without);  // kernel symbols taken away, comma-separated ("" for none)
  d["contract"] = golden::entry_point_is_gemv(c.entry) ? "gemv" : "canonical";  // NUMERICS.md 2.2 or 2.1
  d["problem"] = golden::case_problem(c);
  return d;
}

namespace {

golden::Case parse_line(const std::string& line) {
  golden::Case c;
  std::string error;
  if (!golden::parse_case(line, &c, &error)) throw py::value_error("line: " + error);
  return c;
}

py::dict parse_case(const std::string& line) { return case_dict(parse_line(line)); }

py::list read_case_file(const std::string& path) {
  std::vector<golden::Case> cases;
  std::string error;
  if (!golden::read_case_file(path, &cases, &error)) throw py::value_error("path: " + error);
  py::list out;
  for (const golden::Case& c : cases) out.append(case_dict(c));
  return out;
}

// The case's operands: a uint16 [m, a_row_stride] (unread tail = NaN padding), w uint8 [n, k],
// s float32 [ceil(n/128), k/128]; the generator's digest and the special classes present.
py::dict case_inputs(const std::string& line) {
  const golden::Case c = parse_line(line);
  // The operands are made in C++ and copied into numpy: twice their bytes at once. Refused before
  // they are made when that exceeds half the machine (an allocation past it would only fail when touched).
  // S holds one FP32 scale per whole 128 x 128 block (NUMERICS.md 2): integer divisions, then doubles.
  const std::uint64_t scales = std::uint64_t{(c.n + 127) / 128} * (c.k / 128);
  const double operand_bytes = 2.0 * c.m * c.a_row_stride + 1.0 * c.n * c.k + 4.0 * static_cast<double>(scales);
  const double memory = physical_memory_bytes();
  if (memory > 0 && 2 * operand_bytes > memory / 2)
    raise_memory_error("line: the case's operands need " + bytes_str(operand_bytes) +
                       " (twice, while copied), more than "
                       "half of this machine's " +
                       bytes_str(memory));
  golden::CaseInputs in;
  std::string error;
  try {
    if (!golden::regenerate_inputs(c, &in, &error)) throw py::value_error("line: " + error);
  } catch (const std::bad_alloc&) {
    raise_memory_error("line: the case's operands need " + bytes_str(operand_bytes) + ", which could not be allocated");
  }
  auto a = new_array<std::uint16_t>({static_cast<py::ssize_t>(c.m), static_cast<py::ssize_t>(c.a_row_stride)}, "a");
  auto w = new_array<std::uint8_t>({static_cast<py::ssize_t>(c.n), static_cast<py::ssize_t>(c.k)}, "w");
  auto s = new_array<float>({static_cast<py::ssize_t>((c.n + 127) / 128), static_cast<py::ssize_t>(c.k / 128)}, "s");
  if (static_cast<py::ssize_t>(in.a_bits.size()) != a.size() ||
      static_cast<py::ssize_t>(in.w_e4m3.size()) != w.size() || static_cast<py::ssize_t>(in.s_f32.size()) != s.size())
    throw std::runtime_error("regenerate_inputs returned operands of unexpected sizes");
  std::memcpy(a.mutable_data(), in.a_bits.data(), in.a_bits.size() * sizeof(std::uint16_t));
  std::memcpy(w.mutable_data(), in.w_e4m3.data(), in.w_e4m3.size());
  std::memcpy(s.mutable_data(), in.s_f32.data(), in.s_f32.size() * sizeof(float));
  py::dict d = case_dict(c);
  d["a"] = a;
  d["w"] = w;
  d["s"] = s;
  d["digest"] = golden::inputs_digest(in);
  py::list special;
  const std::uint32_t seen = golden::special_classes(c, in);
  for (int b = 0; b < golden::kSpecialClassCount; ++b)
    if ((seen >> b) & 1u) special.append(std::string(golden::special_class_name(b)));
  d["special_classes"] = special;
  return d;
}

}  // namespace

void bind_case(py::module_& m) {
  m.def("parse_case", &parse_case, py::arg("line"),
        "A 'case/1 ...' line -> its fields (dict); ValueError says why not");
  m.def("read_case_file", &read_case_file, py::arg("path"), "A case file -> list of case dicts");
  m.def("case_inputs", &case_inputs, py::arg("line"),
        "A case's regenerated operands (a, w, s), input digest and special classes, with its fields");
  m.attr("CASE_OUTPUT_SENTINEL_BITS") = golden::kOutputSentinelBits;
}

}  // namespace w8a16::py_bind
