// SPDX-License-Identifier: MIT OR Apache-2.0
// The output contracts of NUMERICS.md 2 over numpy operands: the whole GEMM as the kernels see
// it (pointer + row pitch), and selected output columns for the audit.
#include <string>

#include "arrays.hpp"
#include "bind_conventions.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::py_bind {

ref::Arch parse_arch_arg(const std::string& text);

namespace {

// An optional pitch argument: None -> fallback; an integer otherwise (TypeError naming it).
py::ssize_t optional_pitch(const py::object& obj, py::ssize_t fallback, const char* name) {
  if (obj.is_none()) return fallback;
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw py::type_error(std::string(name) + " must be an integer or None, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  // The pitch checks below refuse any value past the arrays; this bound only keeps the cast exact.
  return static_cast<py::ssize_t>(checked_int(obj, name, PY_SSIZE_T_MIN, PY_SSIZE_T_MAX, "at most 2^63 - 1"));
}

// K from W's shape: a positive multiple of 128 (one scale block = one fold point).
std::uint32_t k_of(const py::array& w, const char* name) {
  const py::ssize_t k = w.shape(1);
  if (k <= 0 || k % ref::kKStep != 0)
    throw py::value_error(std::string(name) + ": K = " + std::to_string(k) +
                          " (its second dimension) must be a positive multiple of 128");
  return checked_u32(k, "K");
}

// One element under a contract's part. The canonical value keeps contract.hpp's functions (the
// bytes every call gave before contracts were data); any other goes through conventions.hpp's
// emulation of NUMERICS.md 2.4.
std::uint16_t element(const ContractPart& cp, ref::Arch arch, const ref::GemmView& v, std::uint32_t m,
                      std::uint32_t n) {
  if (cp.legacy) return cp.gemv ? ref::gemv_element_bf16(v, m, n) : ref::canonical_element_bf16(v, arch, m, n);
  return cp.gemv ? ref::gemv_conv_element_bf16(cp.conventions.gemv, v, m, n)
                 : ref::tc_element_bf16(cp.conventions.tc, v, arch, m, n);
}

// A contract that does not define the output (tc.period = end with scales changing along K) is
// an error that says so, never bytes (NUMERICS.md 2.4).
void require_defined(const ContractPart& cp, const ref::GemmView& v, const std::string& what) {
  const std::string problem = cp.gemv ? ref::conventions_view_problem(cp.conventions.gemv, v)
                                      : ref::conventions_view_problem(cp.conventions.tc, v);
  if (!problem.empty())
    throw py::value_error("contract '" + cp.conventions.name + "' does not define " + what + ": " + problem);
}

// C = A x dequant(W, S)^T under a contract. a: [M, L] read as M rows of pitch a_row_stride
// (default L) from its flat buffer, first K of each; c: [M, c_row_stride], first N of each row
// written, the rest left 0 (the kernels write nothing else either).
py::array_t<std::uint16_t> gemm(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj,
                                const std::string& contract_name, const std::string& arch_name,
                                const py::object& a_row_stride_obj, const py::object& c_row_stride_obj,
                                const py::object& threads_obj, const py::object& part_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array wv = any_layout_array<std::uint8_t>(w_obj, "w");
  const py::array sv = any_layout_array<float>(s_obj, "s");
  const ContractPart contract = resolve_contract_part(contract_name, part_obj);
  const ref::Arch arch = parse_arch_arg(arch_name);
  require_ndim(av, 2, "a", "[M, >=K] (BF16 bits)");
  require_ndim(wv, 2, "w", "[N, K] (E4M3 codes)");
  require_ndim(sv, 2, "s", "[ceil(N/128), K/128] (FP32 scales)");
  const std::uint32_t k = k_of(wv, "w");
  const std::uint32_t n = checked_u32(wv.shape(0), "N");
  const std::uint32_t m = checked_u32(av.shape(0), "M");
  auto a = contiguous<std::uint16_t>(av, "a");
  auto w = contiguous<std::uint8_t>(wv, "w");
  auto s = contiguous<float>(sv, "s");
  if (n == 0) throw py::value_error("w must have at least one row (N >= 1)");
  if (m == 0) throw py::value_error("a must have at least one row (M >= 1)");
  const py::ssize_t a_stride = optional_pitch(a_row_stride_obj, a.shape(1), "a_row_stride");
  if (a_stride < static_cast<py::ssize_t>(k))
    throw py::value_error("a_row_stride = " + std::to_string(a_stride) + " must be at least K = " + std::to_string(k));
  // (M-1)*a_row_stride + K > a.size(), without the product overflowing for an absurd pitch.
  if (a.size() < static_cast<py::ssize_t>(k) ||
      (m > 1 && a_stride > (a.size() - static_cast<py::ssize_t>(k)) / static_cast<py::ssize_t>(m - 1)))
    throw py::value_error("a holds " + std::to_string(a.size()) +
                          " elements, fewer than M rows of pitch a_row_stride = " + std::to_string(a_stride) +
                          " need ((M-1)*a_row_stride + K)");
  const py::ssize_t scale_rows = (n + ref::kScaleRows - 1) / ref::kScaleRows;
  if (s.shape(0) != scale_rows || s.shape(1) != k / ref::kKStep)
    throw py::value_error("s must have shape (ceil(N/128), K/128) = (" + std::to_string(scale_rows) + ", " +
                          std::to_string(k / ref::kKStep) + "), got " + shape_str(s));
  const py::ssize_t c_stride = optional_pitch(c_row_stride_obj, n, "c_row_stride");
  if (c_stride < static_cast<py::ssize_t>(n))
    throw py::value_error("c_row_stride = " + std::to_string(c_stride) + " must be at least N = " + std::to_string(n));

  const ref::GemmView v = ref::gemm_view(a.data(), static_cast<std::size_t>(a_stride), w.data(), s.data(), m, n, k);
  if (const char* problem = ref::gemm_view_problem(v)) throw py::value_error(problem);
  require_defined(contract, v, "this output");
  if (static_cast<double>(m) * static_cast<double>(c_stride) > 9.0e18)
    throw py::value_error("M * c_row_stride = " + std::to_string(m) + " * " + std::to_string(c_stride) +
                          " is too large");
  py::array_t<std::uint16_t> c = new_array<std::uint16_t>({static_cast<py::ssize_t>(m), c_stride}, "the result C");
  std::fill(c.mutable_data(), c.mutable_data() + c.size(), std::uint16_t{0});
  std::uint16_t* pc = c.mutable_data();
  {
    py::gil_scoped_release unlocked;
    const std::size_t pitch = static_cast<std::size_t>(c_stride);
    if (contract.legacy && !contract.gemv) ref::gemm_canonical(v, arch, pc, pitch, threads);
    else if (contract.legacy) ref::gemm_gemv(v, pc, pitch, threads);
    else if (contract.gemv) ref::gemm_conventions(contract.conventions.gemv, v, pc, pitch, threads);
    else ref::gemm_conventions(contract.conventions.tc, v, arch, pc, pitch, threads);
  }
  return c;
}

// Selected output columns, each given by its own W row and scale row (S[n // 128] of the full
// problem): the same per-element functions as gemm(), for audits that sample a few hundred of
// 51,200 columns without materialising W. element(view, m) gets a one-column view of column j.
template <class Out, class Element>
py::array_t<Out> per_column(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj, unsigned threads,
                            Element element_of, const ContractPart* defined_under = nullptr) {
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a");
  const py::array wv = any_layout_array<std::uint8_t>(w_obj, "w_rows");
  const py::array sv = any_layout_array<float>(s_obj, "s_rows");
  require_ndim(av, 2, "a", "[M, >=K] (BF16 bits)");
  require_ndim(wv, 2, "w_rows", "[columns, K] (E4M3 codes)");
  require_ndim(sv, 2, "s_rows", "[columns, K/128] (FP32 scales)");
  const std::uint32_t k = k_of(wv, "w_rows");
  const std::uint32_t cols = checked_u32(wv.shape(0), "columns");
  const std::uint32_t m = checked_u32(av.shape(0), "M");
  auto a = contiguous<std::uint16_t>(av, "a");
  auto w = contiguous<std::uint8_t>(wv, "w_rows");
  auto s = contiguous<float>(sv, "s_rows");
  if (m == 0 || cols == 0) throw py::value_error("a and w_rows must have at least one row");
  if (a.shape(1) < static_cast<py::ssize_t>(k))
    throw py::value_error("a has rows of " + std::to_string(a.shape(1)) +
                          " elements, fewer than K = " + std::to_string(k));
  if (s.shape(0) != w.shape(0) || s.shape(1) != k / ref::kKStep)
    throw py::value_error("s_rows must have shape (columns, K/128) = (" + std::to_string(cols) + ", " +
                          std::to_string(k / ref::kKStep) + "), got " + shape_str(s));
  py::array_t<Out> c = new_array<Out>({static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(cols)}, "the result");
  Out* pc = c.mutable_data();
  const std::uint16_t* pa = a.data();
  const std::uint8_t* pw = w.data();
  const float* ps = s.data();
  const std::size_t a_stride = static_cast<std::size_t>(a.shape(1));
  if (defined_under != nullptr)
    for (std::uint32_t j = 0; j < cols; ++j)
      require_defined(*defined_under,
                      ref::gemm_view(pa, a_stride, pw + std::size_t{j} * k, ps + std::size_t{j} * (k / ref::kKStep), m,
                                     1, k),
                      "column " + std::to_string(j));
  {
    py::gil_scoped_release unlocked;
    ref::parallel_for(cols, threads, [&](std::uint32_t j) {
      // A one-column view: its scale row 0 is the column's own S row.
      const ref::GemmView v = ref::gemm_view(pa, a_stride, pw + std::size_t{j} * k,
                                             ps + std::size_t{j} * (k / ref::kKStep), m, 1, k);
      for (std::uint32_t i = 0; i < m; ++i) pc[std::size_t{i} * cols + j] = element_of(v, i);
    });
  }
  return c;
}

py::array_t<std::uint16_t> gemm_columns(const py::object& a, const py::object& w, const py::object& s,
                                        const std::string& contract_name, const std::string& arch_name,
                                        const py::object& threads_obj, const py::object& part_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const ContractPart contract = resolve_contract_part(contract_name, part_obj);
  const ref::Arch arch = parse_arch_arg(arch_name);
  return per_column<std::uint16_t>(
      a, w, s, threads, [&](const ref::GemmView& v, std::uint32_t i) { return element(contract, arch, v, i, 0); },
      &contract);
}

// Selected columns' FP32 accumulators before the BF16 rounding under a contract's part: the audit's
// accumulation bound for the contract its tiers are held to (NUMERICS.md 2.4).
py::array_t<std::uint32_t> contract_acc_columns(const py::object& a, const py::object& w, const py::object& s,
                                                const std::string& contract_name, const py::object& part_obj,
                                                const std::string& arch_name, const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const ContractPart cp = resolve_contract_part(contract_name, part_obj);
  const ref::Arch arch = parse_arch_arg(arch_name);
  return per_column<std::uint32_t>(
      a, w, s, threads,
      [&](const ref::GemmView& v, std::uint32_t i) {
        return cp.gemv ? ref::gemv_conv_acc_bits(cp.conventions.gemv, v, i, 0)
                       : ref::tc_acc_bits(cp.conventions.tc, v, arch, i, 0);
      },
      &cp);
}

// The canonical fold's FP32 accumulator before the final BF16 rounding (NUMERICS.md 2.1), per
// selected column: lets the audit check the accumulation bound without the output rounding.
py::array_t<std::uint32_t> canonical_acc_columns(const py::object& a, const py::object& w, const py::object& s,
                                                 const std::string& arch_name, const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  const ref::Arch arch = parse_arch_arg(arch_name);
  return per_column<std::uint32_t>(a, w, s, threads, [&](const ref::GemmView& v, std::uint32_t i) {
    return ref::canonical_acc_bits(v, arch, i, 0, v.k_steps());
  });
}

// The GEMV order's FP32 accumulator (lane 0 after the butterfly, NUMERICS.md 2.2) before the BF16
// rounding, per selected column: the audit checks the GEMV's accumulation bound on it.
py::array_t<std::uint32_t> gemv_acc_columns(const py::object& a, const py::object& w, const py::object& s,
                                            const py::object& threads_obj) {
  const unsigned threads = checked_threads(threads_obj);
  return per_column<std::uint32_t>(a, w, s, threads, [&](const ref::GemmView& v, std::uint32_t i) {
    return ref::gemv_acc_bits(v, i, 0);
  });
}

// One output's canonical fold step by step (NUMERICS.md 2.1), as `w8a16check repro` prints it
// (properties/src/explain.cpp): p_s, the step's 8 chained MMAs from +0, and acc after folding step s.
// a_row: the output's A row (its first K elements), w_row: its W row, s_row: its scale row S[n // 128].
py::dict canonical_fold(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj,
                        const std::string& arch_name) {
  const ref::Arch arch = parse_arch_arg(arch_name);
  const RowOperands r = row_operands(a_obj, w_obj, s_obj);
  const ref::GemmView v = ref::gemm_view(r.a.data(), r.k, r.w.data(), r.s.data(), 1, 1, r.k);
  const std::uint32_t steps = v.k_steps();
  auto p = new_array<std::uint32_t>({static_cast<py::ssize_t>(steps)}, "p");
  auto acc = new_array<std::uint32_t>({static_cast<py::ssize_t>(steps)}, "acc");
  std::uint32_t* pp = p.mutable_data();
  std::uint32_t* pacc = acc.mutable_data();
  {
    py::gil_scoped_release unlocked;
    std::uint32_t running = 0;  // +0
    for (std::uint32_t st = 0; st < steps; ++st) {
      pp[st] = ref::canonical_step_partial_bits(v, arch, 0, 0, st);
      running = ref::f32_fma_rne_bits(pp[st], ref::f32_to_bits(v.scale(0, st)), running);
      pacc[st] = running;
    }
  }
  py::dict d;
  d["p"] = p;
  d["acc"] = acc;
  return d;
}

}  // namespace

void bind_contract(py::module_& m) {
  m.def("canonical_fold", &canonical_fold, py::arg("a_row"), py::arg("w_row"), py::arg("s_row"),
        py::arg("arch") = "sm90",
        "One output's canonical fold step by step: dict(p: uint32 [K/128] each step's partial, acc: uint32 [K/128] "
        "the FP32 accumulator after each step), FP32 bits");
  // `part` comes last, so that every existing call (positional arguments included) keeps its meaning.
  m.def("gemm", &gemm, py::arg("a"), py::arg("w"), py::arg("s"), py::arg("contract") = "canonical",
        py::arg("arch") = "sm90", py::arg("a_row_stride") = py::none(), py::arg("c_row_stride") = py::none(),
        py::arg("threads") = 0, py::arg("part") = py::none(),
        "C (BF16 bits, uint16 [M, c_row_stride]) under a contract (NUMERICS.md 2): 'canonical' (2.1), 'gemv' "
        "(2.2), or a library name / the text form of 2.4 with part='tc' or part='gemv'");
  m.def("gemm_columns", &gemm_columns, py::arg("a"), py::arg("w_rows"), py::arg("s_rows"),
        py::arg("contract") = "canonical", py::arg("arch") = "sm90", py::arg("threads") = 0,
        py::arg("part") = py::none(),
        "Selected output columns (BF16 bits, uint16 [M, columns]); each column brings its W row and S row");
  m.def("contract_acc_columns", &contract_acc_columns, py::arg("a"), py::arg("w_rows"), py::arg("s_rows"),
        py::arg("contract"), py::arg("part"), py::arg("arch") = "sm90", py::arg("threads") = 0,
        "Selected columns' FP32 accumulators (bits, uint32 [M, columns]) under a contract's part");
  m.def("canonical_acc_columns", &canonical_acc_columns, py::arg("a"), py::arg("w_rows"), py::arg("s_rows"),
        py::arg("arch") = "sm90", py::arg("threads") = 0,
        "The canonical fold's FP32 accumulator (bits, uint32 [M, columns]) before the BF16 rounding");
  m.def("gemv_acc_columns", &gemv_acc_columns, py::arg("a"), py::arg("w_rows"), py::arg("s_rows"),
        py::arg("threads") = 0,
        "The GEMV order's FP32 accumulator (bits, uint32 [M, columns]) before the BF16 rounding");
}

}  // namespace w8a16::py_bind
