// SPDX-License-Identifier: MIT OR Apache-2.0
// invariance's engine (properties/invariance.hpp run_invariance_callable) over a Python callable:
// the same needles, filler rows, positions, repeats and verdicts as `w8a16check invariance`.
// invariance.py wraps the user's callable (backend, timeout, the checks of what it returns and of
// its inputs afterwards); this file moves operands and bytes and hands the result over.
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bind_conventions.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/invariance.hpp"

namespace w8a16::py_bind {
namespace {

template <class T>
py::list list_of(const std::vector<T>& v) {
  py::list out;
  for (const T& x : v) out.append(x);
  return out;
}

// W and S as arrays, made once per needle: the sweep's calls of one needle share them, so that
// the Python side can keep one device copy of each (and check it after every call).
struct OperandCache {
  std::vector<std::uint8_t> w;
  std::vector<float> s;
  py::object w_arr, s_arr;
  void refresh(const golden::Case& c, const golden::CaseInputs& in) {
    if (!w_arr.is_none() && w == in.w_e4m3 && s.size() == in.s_f32.size() &&
        std::memcmp(s.data(), in.s_f32.data(), s.size() * sizeof(float)) == 0)
      return;
    w = in.w_e4m3, s = in.s_f32;
    w_arr = w_array(c, in), s_arr = s_array(c, in);
  }
};

py::dict failure_dict(const props::InvarianceFailure& f) {
  py::dict d;
  d["m"] = f.m;
  d["position"] = f.position;
  d["row"] = f.row;
  d["column"] = f.column;
  d["got"] = f.got;
  d["want"] = f.want;
  d["against"] = f.against;
  d["what"] = f.what;
  d["error"] = f.error;
  if (!f.call) {
    d["operands"] = py::none();
    return d;
  }
  const props::FailingCall& fc = *f.call;
  const golden::Case& c = fc.c;
  py::dict o;
  auto a = new_array<std::uint16_t>({static_cast<py::ssize_t>(c.m), static_cast<py::ssize_t>(c.a_row_stride)}, "a");
  std::memcpy(a.mutable_data(), fc.in.a_bits.data(), std::size_t{c.m} * c.a_row_stride * sizeof(std::uint16_t));
  auto want = new_array<std::uint16_t>({static_cast<py::ssize_t>(fc.want.size())}, "want");
  if (!fc.want.empty()) std::memcpy(want.mutable_data(), fc.want.data(), fc.want.size() * sizeof(std::uint16_t));
  o["a"] = a, o["w"] = w_array(c, fc.in), o["s"] = s_array(c, fc.in), o["want"] = want;
  o["m"] = c.m, o["n"] = c.n, o["k"] = c.k;
  o["pitch"] = c.a_row_stride;
  o["a_offset"] = fc.offsets.a;
  o["which"] = c.without;
  d["operands"] = o;
  return d;
}

// call(which, a [M, pitch] uint16, a_offset, k, w, s) -> uint16 [M, N]: invariance.py's wrapper
// of fn and the tiers (`which` 0 is fn). reference(needle [K], w, s) -> uint16 [N] or None.
py::dict invariance_callable(const py::object& call, const std::string& part, std::uint32_t n, std::uint32_t k,
                             const py::list& ms, std::uint64_t seed, const py::list& needles, const py::list& kinds,
                             const py::list& positions, unsigned repeats, const py::object& contract,
                             const py::object& reference, const std::string& label, const py::list& tiers,
                             const py::object& threads_obj) {
  props::CallableInvarianceOptions o;
  if (part != "tc" && part != "gemv") throw py::value_error("part must be 'tc' or 'gemv', got '" + part + "'");
  o.gemv = part == "gemv";
  o.n = n, o.k = k, o.label = label;
  for (const py::handle& x : ms) o.ms.push_back(checked_u32(x.cast<py::ssize_t>(), "m_values"));
  for (const py::handle& x : tiers) o.tiers.push_back(x.cast<std::string>());
  props::InvarianceOptions& s = o.sweep;
  s.seed = seed;
  s.repeats = repeats;
  s.threads = checked_threads(threads_obj);
  s.needles.clear();
  for (const py::handle& x : needles) {
    const std::string name = x.cast<std::string>();
    golden::Distribution d{};
    if (!golden::parse_distribution(name, &d)) throw py::value_error("needles: '" + name + "' is no distribution");
    s.needles.push_back(d);
  }
  for (props::InvarianceKind kind : props::kAllInvarianceKinds) s.kinds[static_cast<int>(kind)] = false;
  for (const py::handle& x : kinds) {
    const std::string name = x.cast<std::string>();
    bool found = false;
    for (props::InvarianceKind kind : props::kAllInvarianceKinds)
      if (name == props::invariance_kind_name(kind)) s.kinds[static_cast<int>(kind)] = true, found = true;
    if (!found) throw py::value_error("verdicts: '" + name + "' is no verdict (run-to-run, batch, tier, contract)");
  }
  s.positions = 0;
  for (const py::handle& x : positions) {
    props::BatchPosition p{};
    const std::string name = x.cast<std::string>();
    if (!props::parse_batch_position(name, &p)) throw py::value_error("positions: '" + name + "' is no position");
    s.positions |= props::position_bit(p);
  }
  if (!contract.is_none()) {
    const ContractPart cp = resolve_contract_part(contract.cast<std::string>(), py::str(part));
    s.contract.all = cp.conventions;
  }
  if (const std::string problem = props::callable_invariance_problem(o); !problem.empty())
    throw py::value_error("invariance: " + problem);

  std::exception_ptr raised;
  OperandCache cache;
  std::size_t calls = 0;
  props::CallableLaunch run = [&](const golden::Case& c, const golden::CaseInputs& in, const props::ViewOffsets& off,
                                  std::size_t which, std::vector<std::uint16_t>* bytes, std::string* why) {
    if (raised) return false;
    py::gil_scoped_acquire locked;
    try {
      ++calls;
      cache.refresh(c, in);
      auto a = new_array<std::uint16_t>({static_cast<py::ssize_t>(c.m), static_cast<py::ssize_t>(c.a_row_stride)}, "a");
      std::memcpy(a.mutable_data(), in.a_bits.data(), std::size_t{c.m} * c.a_row_stride * sizeof(std::uint16_t));
      const py::object out = call(which, a, off.a, c.k, cache.w_arr, cache.s_arr);
      callable_output_bytes(out, c, "invariance", bytes);
      return true;
    } catch (...) {
      raised = std::current_exception();
      *why = "the callable raised";
      return false;
    }
  };
  if (!reference.is_none())
    o.reference = [&](const golden::Case& c, const golden::CaseInputs& in, std::vector<std::uint16_t>* row,
                      std::string* why) {
      if (raised) return false;
      py::gil_scoped_acquire locked;
      try {
        cache.refresh(c, in);
        auto needle = new_array<std::uint16_t>({static_cast<py::ssize_t>(c.k)}, "needle");
        std::memcpy(needle.mutable_data(), in.a_bits.data(), std::size_t{c.k} * sizeof(std::uint16_t));
        const py::object out = reference(needle, cache.w_arr, cache.s_arr);
        auto got = checked_array<std::uint16_t>(out, "reference");
        row->assign(got.data(), got.data() + got.size());
        return true;
      } catch (...) {
        raised = std::current_exception();
        *why = "the reference raised";
        return false;
      }
    };
  props::InvarianceReport r;
  {
    py::gil_scoped_release unlocked;
    r = props::run_invariance_callable(run, o);
  }
  if (raised) std::rethrow_exception(raised);
  py::dict d;
  d["error"] = r.hung ? r.hang : (r.shapes.empty() ? r.hang : std::string());
  d["stopped"] = r.hang;
  d["launches"] = r.launches;
  d["calls"] = calls;
  d["run_to_run_how"] = r.run_to_run_how;
  d["text"] = props::invariance_text(r, o.sweep);
  d["pass"] = r.pass();
  py::dict verdicts;
  py::list swept;
  if (!r.shapes.empty() && !r.shapes.front().entries.empty()) {
    const props::EntryInvariance& e = r.shapes.front().entries.front();
    swept = list_of(e.ms);
    for (const props::InvarianceVerdict& v : e.verdicts) {
      py::dict vd;
      vd["asked"] = v.asked;
      vd["applicable"] = v.applicable();
      vd["pass"] = r.pass(v.kind);
      vd["comparisons"] = v.comparisons;
      vd["failures"] = v.failures;
      vd["failing_ms"] = list_of(v.failing_ms);
      vd["first"] = v.has_failure ? py::object(failure_dict(v.first)) : py::object(py::none());
      verdicts[props::invariance_kind_name(v.kind)] = vd;
    }
  }
  d["ms"] = swept;
  d["verdicts"] = verdicts;
  return d;
}

}  // namespace

void bind_invariance(py::module_& m) {
  py::list names;
  for (props::BatchPosition p : props::kAllBatchPositions) names.append(props::batch_position_name(p));
  m.attr("invariance_positions") = py::tuple(names);
  py::list needles;
  for (golden::Distribution d : props::default_needles()) needles.append(std::string(golden::distribution_name(d)));
  m.attr("invariance_needles") = py::tuple(needles);
  m.attr("invariance_filler_pool") = props::kFillerPool;
  m.attr("invariance_every_row_max_m") = props::kEveryRowMaxM;
  m.attr("invariance_default_m_bound") = props::kDefaultMBound;
  m.def("invariance_callable", &invariance_callable, py::arg("call"), py::arg("part"), py::arg("n"), py::arg("k"),
        py::arg("ms"), py::arg("seed"), py::arg("needles"), py::arg("kinds"), py::arg("positions"), py::arg("repeats"),
        py::arg("contract"), py::arg("reference"), py::arg("label"), py::arg("tiers"), py::arg("threads") = 0,
        "invariance's engine (the C++ sweep of `w8a16check invariance`) over call(which, a [M, pitch], a_offset, k, "
        "w, s) -> uint16 [M, N]: a dict of verdicts (per name: asked, applicable, pass, comparisons, failures, "
        "failing_ms, first {m, position, row, column, got, want, against, what, error, operands}), ms, launches, "
        "calls, run_to_run_how, text, pass, error, stopped");
}

}  // namespace w8a16::py_bind
