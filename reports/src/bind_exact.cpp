// SPDX-License-Identifier: MIT OR Apache-2.0
// The exact reference (reference/exact.hpp) for Python: each output's value rounded once to double
// and once to BF16, over the same operands as gemm() and gemm_columns().
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "w8a16/reference/exact.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::py_bind {
namespace {

// The double for an output: value_rn when finite, else the IEEE special its kind names.
double exact_double(const ref::ExactOutput& e) {
  switch (e.kind) {
    case ref::ExactKind::nan: return std::numeric_limits<double>::quiet_NaN();
    case ref::ExactKind::pos_inf: return std::numeric_limits<double>::infinity();
    case ref::ExactKind::neg_inf: return -std::numeric_limits<double>::infinity();
    case ref::ExactKind::finite: break;
  }
  return e.value_rn;
}

using Result = std::pair<py::array_t<double>, py::array_t<std::uint16_t>>;

Result make_result(py::ssize_t rows, py::ssize_t cols) {
  return {new_array<double>({rows, cols}, "the result (values)"),
          new_array<std::uint16_t>({rows, cols}, "the result (bits)")};
}

void check_operands(const py::array& a, const py::array& w, const py::array& s, const char* w_name, const char* s_name,
                    py::ssize_t scale_rows) {
  require_ndim(a, 2, "a", "[M, >=K] (BF16 bits)");
  require_ndim(w, 2, w_name, "(E4M3 codes)");
  require_ndim(s, 2, s_name, "(FP32 scales)");
  const py::ssize_t k = w.shape(1);
  if (k <= 0 || k % ref::kKStep != 0)
    throw py::value_error(std::string(w_name) + ": K = " + std::to_string(k) + " must be a positive multiple of 128");
  if (a.shape(0) < 1 || w.shape(0) < 1) throw py::value_error("a and " + std::string(w_name) + " must have rows");
  if (a.shape(1) < k)
    throw py::value_error("a has rows of " + std::to_string(a.shape(1)) +
                          " elements, fewer than K = " + std::to_string(k));
  if (s.shape(0) != scale_rows || s.shape(1) != k / ref::kKStep)
    throw py::value_error(std::string(s_name) + " must have shape (" + std::to_string(scale_rows) + ", " +
                          std::to_string(k / ref::kKStep) + "), got " + shape_str(s));
}

// exact(a [M, >=K], w [N, K], s [ceil(N/128), K/128]) -> (float64 [M, N], uint16 [M, N]).
Result exact(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj, const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array wv = any_layout_array<std::uint8_t>(w_obj, "w");
  const py::array sv = any_layout_array<float>(s_obj, "s");
  require_ndim(wv, 2, "w", "[N, K] (E4M3 codes)");
  check_operands(av, wv, sv, "w", "s", (wv.shape(0) + ref::kScaleRows - 1) / ref::kScaleRows);
  checked_u32(av.shape(0), "M (a's rows)");
  checked_u32(wv.shape(0), "N (w's rows)");
  auto a = contiguous<std::uint16_t>(av, "a");
  auto w = contiguous<std::uint8_t>(wv, "w");
  auto s = contiguous<float>(sv, "s");
  // M and N were checked above: of the three, only K's check can refuse here.
  const ref::GemmView v = ref::gemm_view(a.data(), static_cast<std::size_t>(a.shape(1)), w.data(), s.data(),
                                         checked_u32(a.shape(0), "M (a's rows)"),
                                         checked_u32(w.shape(0), "N (w's rows)"),
                                         checked_u32(w.shape(1), "K (w's columns)"));
  if (const char* problem = ref::gemm_view_problem(v)) throw py::value_error(problem);
  Result r = make_result(v.m, v.n);
  double* value = r.first.mutable_data();
  std::uint16_t* bits = r.second.mutable_data();
  {
    py::gil_scoped_release unlocked;
    std::vector<ref::ExactOutput> out(std::size_t{v.m} * v.n);
    ref::gemm_exact(v, out.data(), v.n, threads);
    for (std::size_t i = 0; i < out.size(); ++i) {
      value[i] = exact_double(out[i]);
      bits[i] = out[i].bf16_rne_bits;
    }
  }
  return r;
}

// The exact counterpart of gemm_columns(): each column brings its W row and its S row.
Result exact_columns(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj,
                     const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array wv = any_layout_array<std::uint8_t>(w_obj, "w_rows");
  const py::array sv = any_layout_array<float>(s_obj, "s_rows");
  require_ndim(wv, 2, "w_rows", "[columns, K] (E4M3 codes)");
  check_operands(av, wv, sv, "w_rows", "s_rows", wv.shape(0));
  checked_u32(av.shape(0), "M (a's rows)");
  checked_u32(wv.shape(0), "columns (w_rows' rows)");
  auto a = contiguous<std::uint16_t>(av, "a");
  auto w = contiguous<std::uint8_t>(wv, "w_rows");
  auto s = contiguous<float>(sv, "s_rows");
  const std::uint32_t m = checked_u32(a.shape(0), "M (a's rows)");
  const std::uint32_t cols = checked_u32(w.shape(0), "columns (w_rows' rows)");
  const std::uint32_t k = checked_u32(w.shape(1), "K (w_rows' columns)");
  Result r = make_result(m, cols);
  double* value = r.first.mutable_data();
  std::uint16_t* bits = r.second.mutable_data();
  const std::uint16_t* pa = a.data();
  const std::uint8_t* pw = w.data();
  const float* ps = s.data();
  const auto a_stride = static_cast<std::size_t>(a.shape(1));
  {
    py::gil_scoped_release unlocked;
    ref::parallel_for(cols, threads, [&](std::uint32_t j) {
      // One column: its scale row 0 is the column's own S row.
      const ref::GemmView v = ref::gemm_view(pa, a_stride, pw + std::size_t{j} * k,
                                             ps + std::size_t{j} * (k / ref::kKStep), m, 1, k);
      for (std::uint32_t i = 0; i < m; ++i) {
        const ref::ExactOutput e = ref::exact_element(v, i, 0);
        value[std::size_t{i} * cols + j] = exact_double(e);
        bits[std::size_t{i} * cols + j] = e.bf16_rne_bits;
      }
    });
  }
  return r;
}

}  // namespace

void bind_exact(py::module_& m) {
  m.def("exact", &exact, py::arg("a"), py::arg("w"), py::arg("s"), py::arg("threads") = 0,
        "The exact outputs: (float64 [M, N] rounded once to double, uint16 [M, N] rounded once to BF16 RNE)");
  m.def("exact_columns", &exact_columns, py::arg("a"), py::arg("w_rows"), py::arg("s_rows"), py::arg("threads") = 0,
        "exact() for selected columns, each with its W row and S row (as gemm_columns)");
}

}  // namespace w8a16::py_bind
