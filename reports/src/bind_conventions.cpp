// SPDX-License-Identifier: MIT OR Apache-2.0
// The contract as data (NUMERICS.md 2.4) for Python: the library of named values, the text form
// (parse, format, describe), each part's emulation traces, and identify's candidates and matching,
// so that w8a16check.compare / audit / identify hold outputs to a contract by the same C++ as the
// CLI's `--contract` and `w8a16check identify`, never by a Python restatement of the fields.
#include "bind_conventions.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/identify.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::py_bind {

ref::Arch parse_arch_arg(const std::string& text);

namespace {

template <class T>
py::list to_list(const std::vector<T>& v) {
  py::list out;
  for (const T& x : v) out.append(x);
  return out;
}

std::string library_names() {
  std::string out;
  for (const ref::Conventions& c : ref::conventions_library()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

// A spec as the text form or a library name: the text form always has a `key = value` line, a
// name never has '=' (NUMERICS.md 2.4), so the two cannot be confused.
ref::Conventions resolve_spec(const std::string& spec, const char* what) {
  if (spec.find('=') == std::string::npos) {
    if (const ref::Conventions* c = ref::find_conventions(spec)) return *c;
    throw py::value_error(std::string(what) + ": '" + spec + "' is neither a library name (" + library_names() +
                          ") nor the text form (key = value lines, NUMERICS.md 2.4)");
  }
  ref::Conventions c;
  std::string error;
  if (!ref::parse_conventions(spec, &c, &error)) throw py::value_error(std::string(what) + ": " + error);
  return c;
}

bool parse_part(const std::string& part, const char* what) {
  if (part == "tc") return false;
  if (part == "gemv") return true;
  throw py::value_error(std::string(what) + " must be 'tc' (the tensor-core tiers) or 'gemv', got '" + part + "'");
}

// `key = value` lines of format_conventions as a dict (the fields, by their text-form names).
py::dict fields_of(const ref::Conventions& c, bool gemv) {
  py::dict d;
  const std::string prefix = gemv ? "gemv." : "tc.";
  for (const auto& [field, value] : ref::conventions_fields(c)) {
    if (field.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string key = field.substr(prefix.size());
    if (key == "bias" || key == "lanes" || key == "chunk") d[py::str(key)] = std::stoul(value);
    else d[py::str(key)] = value;
  }
  return d;
}

py::dict contract_dict(const ref::Conventions& c) {
  py::dict d;
  d["name"] = c.name.empty() ? std::string("custom") : c.name;
  d["text"] = ref::format_conventions(c);
  d["tc"] = fields_of(c, false);
  d["gemv"] = fields_of(c, true);
  d["tc_description"] = ref::describe(c.tc);
  d["gemv_description"] = ref::describe(c.gemv);
  const ref::Conventions* lib = ref::find_conventions(c.name);
  d["library"] = lib != nullptr && lib->same_numerics(c);
  return d;
}

py::list contract_library() {
  py::list out;
  for (const ref::Conventions& c : ref::conventions_library()) out.append(contract_dict(c));
  return out;
}

// The text form only: a bare name is refused here, so that a typo in a file is never read as a name.
py::dict parse_contract(const std::string& text) {
  ref::Conventions c;
  std::string error;
  if (!ref::parse_conventions(text, &c, &error)) throw py::value_error("contract text: " + error);
  return contract_dict(c);
}

py::dict resolve_contract_dict(const std::string& spec) { return contract_dict(resolve_spec(spec, "contract")); }

std::string format_contract(const std::string& spec) { return ref::format_conventions(resolve_spec(spec, "contract")); }

std::string describe_contract(const std::string& spec, const std::string& part) {
  const ref::Conventions c = resolve_spec(spec, "contract");
  return parse_part(part, "part") ? ref::describe(c.gemv) : ref::describe(c.tc);
}

template <class T>
py::array_t<T> vec_array(const std::vector<T>& v, const char* what) {
  auto out = new_array<T>({static_cast<py::ssize_t>(v.size())}, what);
  if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(T));
  return out;
}

// One output's intermediate FP32 values under a contract's part (ref::tc_trace / gemv_trace):
// what compare's explain() prints for a contract that is not canonical.
py::dict contract_trace(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj,
                        const std::string& spec, const std::string& part, const std::string& arch_name) {
  const ContractPart cp = resolve_contract_part(spec, py::str(part));
  const ref::Arch arch = parse_arch_arg(arch_name);
  RowOperands r = row_operands(a_obj, w_obj, s_obj);
  const ref::GemmView v = ref::gemm_view(r.a.data(), r.k, r.w.data(), r.s.data(), 1, 1, r.k);
  const std::string problem = cp.gemv ? ref::conventions_view_problem(cp.conventions.gemv, v)
                                      : ref::conventions_view_problem(cp.conventions.tc, v);
  if (!problem.empty()) throw py::value_error("the contract does not define this output: " + problem);
  py::dict d;
  if (cp.gemv) {
    ref::GemvTrace t;
    {
      py::gil_scoped_release unlocked;
      t = ref::gemv_trace(cp.conventions.gemv, v, 0, 0);
    }
    d["lane_acc"] = vec_array(t.lane_acc, "lane_acc");
    py::list levels;
    for (const auto& level : t.tree_level) levels.append(vec_array(level, "tree_level"));
    d["tree_level"] = levels;
    d["warp_sum"] = vec_array(t.warp_sum, "warp_sum");
    d["acc"] = t.acc;
    d["want"] = ref::f32_bits_to_bf16_rne(t.acc);
  } else {
    ref::TcTrace t;
    {
      py::gil_scoped_release unlocked;
      t = ref::tc_trace(cp.conventions.tc, v, arch, 0, 0);
    }
    d["window_partials"] = vec_array(t.window_partials, "window_partials");
    d["fold_acc"] = vec_array(t.fold_acc, "fold_acc");
    d["acc"] = t.acc;
    d["want"] = ref::f32_bits_to_bf16_rne(t.acc);
  }
  d["part"] = cp.gemv ? "gemv" : "tc";
  return d;
}

py::dict candidate_dict(const props::IdentifyCandidate& c) {
  py::dict d;
  d["name"] = c.name;
  d["description"] = c.description;
  d["part"] = c.gemv ? "gemv" : "tc";
  // The text form needs a one-word name: a candidate's name is a chain of library names or its
  // description, so the text names the first library value it equals, else "custom".
  ref::Conventions named = c.conventions;
  const std::string first = c.name.substr(0, c.name.find(' '));
  named.name = ref::find_conventions(first) != nullptr ? first : "custom";
  d["text"] = ref::format_conventions(named);
  return d;
}

// identify's candidate set (properties/identify.hpp), so that Python's identify names exactly the
// candidates the CLI does (NUMERICS.md 2.4, "Named values").
py::list identify_candidates(const std::string& part) {
  const bool gemv = parse_part(part, "part");
  py::list out;
  for (const props::IdentifyCandidate& c : gemv ? props::gemv_candidates() : props::tc_candidates())
    out.append(candidate_dict(c));
  return out;
}

py::list identify_distributions() {
  py::list out;
  for (golden::Distribution d : props::identify_distributions()) out.append(std::string(golden::distribution_name(d)));
  return out;
}

// Every probe (a, w, s, c) against every candidate of one part, raw bits, by props::match_candidates:
// the same verdict rules as `w8a16check identify` (a candidate is kept only when every byte of every
// probe matches; else the nearest and its differing elements per probe).
py::dict match_candidates(const std::string& part, const py::list& probes, const py::object& threads_obj) {
  const bool gemv = parse_part(part, "part");
  const unsigned threads = checked_threads(threads_obj);
  if (probes.size() == 0) throw py::value_error("probes: at least one (a, w, s, c) probe is needed");
  std::vector<golden::Case> cases;
  std::vector<golden::CaseInputs> inputs;
  std::vector<std::vector<std::uint16_t>> produced;
  cases.reserve(probes.size());
  inputs.reserve(probes.size());
  produced.reserve(probes.size());
  std::size_t index = 0;
  for (const py::handle& item : probes) {
    const std::string what = "probes[" + std::to_string(index++) + "]";
    const py::tuple t = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
    if (t.size() != 4) throw py::value_error(what + " must be (a, w, s, c)");
    auto a = checked_array<std::uint16_t>(t[0], "a");
    auto w = checked_array<std::uint8_t>(t[1], "w");
    auto s = checked_array<float>(t[2], "s");
    auto c = checked_array<std::uint16_t>(t[3], "c");
    if (a.ndim() != 2 || w.ndim() != 2 || s.ndim() != 2 || c.ndim() != 2)
      throw py::value_error(what + ": a, w, s and c must be 2-D");
    golden::Case cs;
    cs.m = checked_u32(a.shape(0), "M");
    cs.n = checked_u32(w.shape(0), "N");
    cs.k = checked_u32(w.shape(1), "K");
    cs.a_row_stride = checked_u32(a.shape(1), "a_row_stride");
    cs.c_row_stride = cs.n;
    if (cs.m == 0 || cs.n == 0 || cs.k == 0 || cs.k % ref::kKStep != 0 || cs.a_row_stride != cs.k)
      throw py::value_error(what + ": want a [M, K], w [N, K] with K a positive multiple of 128");
    if (s.shape(0) != (cs.n + ref::kScaleRows - 1) / ref::kScaleRows || s.shape(1) != cs.k / ref::kKStep)
      throw py::value_error(what + ": s must have shape (ceil(N/128), K/128), got " + shape_str(s));
    if (c.shape(0) != cs.m || c.shape(1) != cs.n)
      throw py::value_error(what + ": c must have shape (M, N), got " + shape_str(c));
    golden::CaseInputs in;
    in.a_bits.assign(a.data(), a.data() + a.size());
    in.w_e4m3.assign(w.data(), w.data() + w.size());
    in.s_f32.assign(s.data(), s.data() + s.size());
    // match_candidates reads C as a launch leaves it, guard rows included: they hold the sentinel
    // here (a Python callable returns only [M, N]), so only the output decides.
    std::vector<std::uint16_t> all(std::size_t{cs.m + golden::kOutputGuardRows} * cs.c_row_stride,
                                   golden::kOutputSentinelBits);
    std::memcpy(all.data(), c.data(), c.size() * sizeof(std::uint16_t));
    const ref::GemmView v = golden::case_view(cs, in);
    if (const char* problem = ref::gemm_view_problem(v)) throw py::value_error(what + ": " + problem);
    cases.push_back(cs);
    inputs.push_back(std::move(in));
    produced.push_back(std::move(all));
  }
  std::vector<props::ProbeRun> runs;
  for (std::size_t i = 0; i < cases.size(); ++i) runs.push_back({cases[i], &inputs[i], &produced[i]});
  const std::vector<props::IdentifyCandidate>& cands = gemv ? props::gemv_candidates() : props::tc_candidates();
  props::BodyMatch m;
  {
    py::gil_scoped_release unlocked;
    m = props::match_candidates(cands, runs, threads);
  }
  py::dict d;
  py::list keeps;
  for (std::size_t i : m.keeps) keeps.append(cands[i].name);
  d["keeps"] = keeps;
  d["keep_indices"] = to_list(m.keeps);
  d["nearest"] = m.keeps.empty() ? py::object(py::str(cands[m.nearest].name)) : py::object(py::none());
  d["nearest_index"] = m.nearest;
  d["nearest_differ"] = to_list(m.nearest_differ);
  d["nearest_total"] = m.nearest_total;
  // Per probe the output's elements (match_candidates counts the guard rows too; none can differ here).
  std::vector<std::uint64_t> elements;
  for (const golden::Case& c : cases) elements.push_back(std::uint64_t{c.m} * c.n);
  d["elements"] = to_list(elements);
  return d;
}

// identify's engine (props::identify_callable) over a Python callable: the same probes, order
// probes, ladder, fold probe, space, match and confirmation as `w8a16check identify`.
// call(a, w, s) -> uint16 [M, N] is identify.py's wrapper (it checks what the user's callable
// returns); an exception it raises stops the run and is raised again here.
py::dict identify_callable(const py::object& call, const std::string& part, std::uint32_t m, std::uint32_t n,
                           std::uint32_t k, std::uint64_t seed, const py::list& confirm_ms,
                           const py::object& threads_obj) {
  props::CallableIdentifyOptions o;
  o.gemv = parse_part(part, "part");
  o.m = m, o.n = n, o.k = k, o.seed = seed;
  for (const py::handle& x : confirm_ms) o.confirm_ms.push_back(checked_u32(x.cast<std::uint64_t>(), "confirm_ms"));
  o.threads = checked_threads(threads_obj);
  // Work over the limits, or no case at all, is refused before fn is called once.
  if (const std::string problem = props::identify_callable_problem(o); !problem.empty())
    throw py::value_error("identify: " + problem);
  std::exception_ptr raised;
  std::size_t calls = 0;
  auto run = [&](const golden::Case& c, const golden::CaseInputs& in, std::vector<std::uint16_t>* bytes,
                 std::string* why) {
    if (raised) return false;
    py::gil_scoped_acquire locked;
    try {
      ++calls;
      auto a = new_array<std::uint16_t>({static_cast<py::ssize_t>(c.m), static_cast<py::ssize_t>(c.k)}, "a");
      for (std::uint32_t r = 0; r < c.m; ++r)
        std::memcpy(a.mutable_data() + std::size_t{r} * c.k, in.a_bits.data() + std::size_t{r} * c.a_row_stride,
                    std::size_t{c.k} * sizeof(std::uint16_t));
      const py::object out = call(a, w_array(c, in), s_array(c, in), golden::format_case(c));
      callable_output_bytes(out, c, "identify", bytes);
      return true;
    } catch (...) {
      raised = std::current_exception();
      *why = "the callable raised";
      return false;
    }
  };
  props::BodyVerdict bv;
  {
    py::gil_scoped_release unlocked;
    bv = props::identify_callable(run, o);
  }
  if (raised) std::rethrow_exception(raised);
  py::dict d;
  d["part"] = part;
  d["error"] = bv.error;
  py::list keeps;
  for (const std::string& name : bv.keeps) keeps.append(name);
  d["keeps"] = keeps;
  py::dict fields;
  for (const auto& [key, values] : bv.fields) {
    py::list v;
    for (const std::string& x : values) v.append(x);
    fields[py::str(key)] = v;
  }
  d["fields"] = fields;
  d["k_order_determined"] = bv.order.determined;
  d["k_order_note"] = bv.order.why;
  py::list probes;
  for (std::size_t i = 0; i < bv.probes.size(); ++i)
    probes.append(py::make_tuple(golden::format_case(bv.probes[i]), i < bv.probe_data.size() ? bv.probe_data[i] : ""));
  d["probes"] = probes;
  d["confirm_cases"] = bv.confirm_cases;
  d["confirm_failure"] = bv.confirm_failure;
  d["nearest_first"] = bv.nearest_first;
  const bool none = bv.error.empty() && bv.keeps.empty() && bv.match.nearest < bv.candidates.size();
  d["nearest"] = none ? py::object(py::str(bv.candidates[bv.match.nearest].name)) : py::object(py::none());
  d["nearest_total"] = bv.match.nearest_total;
  d["nearest_differ"] = to_list(bv.match.nearest_differ);
  std::vector<std::uint64_t> elements;
  for (const golden::Case& c : bv.probes) elements.push_back(std::uint64_t{c.m} * c.n);
  d["elements"] = to_list(elements);
  d["candidates"] = bv.candidates.size();
  d["calls"] = calls;
  d["text"] = props::body_verdict_text(bv);
  return d;
}

}  // namespace

py::array_t<std::uint8_t> w_array(const golden::Case& c, const golden::CaseInputs& in) {
  auto w = new_array<std::uint8_t>({static_cast<py::ssize_t>(c.n), static_cast<py::ssize_t>(c.k)}, "w");
  std::memcpy(w.mutable_data(), in.w_e4m3.data(), in.w_e4m3.size());
  return w;
}

py::array_t<float> s_array(const golden::Case& c, const golden::CaseInputs& in) {
  auto s = new_array<float>({static_cast<py::ssize_t>((c.n + 127) / 128), static_cast<py::ssize_t>(c.k / 128)}, "s");
  std::memcpy(s.mutable_data(), in.s_f32.data(), in.s_f32.size() * sizeof(float));
  return s;
}

void callable_output_bytes(const py::object& out, const golden::Case& c, const std::string& who,
                           std::vector<std::uint16_t>* bytes) {
  auto got = checked_array<std::uint16_t>(out, "c");
  if (got.ndim() != 2 || got.shape(0) != c.m || got.shape(1) != c.n)
    throw py::value_error(who + ": the call's output must have shape (M, N), got " + shape_str(got));
  bytes->assign(std::size_t{c.m + golden::kOutputGuardRows} * c.c_row_stride, golden::kOutputSentinelBits);
  for (std::uint32_t r = 0; r < c.m; ++r)
    std::memcpy(bytes->data() + std::size_t{r} * c.c_row_stride, got.data() + std::size_t{r} * c.n,
                std::size_t{c.n} * sizeof(std::uint16_t));
}

ContractPart resolve_contract_part(const std::string& spec, const py::object& part_obj) {
  std::string part;
  if (!part_obj.is_none()) {
    if (!py::isinstance<py::str>(part_obj))
      throw py::type_error("part must be 'tc', 'gemv' or None, got " +
                           std::string(py::str(py::type::of(part_obj).attr("__name__"))));
    part = part_obj.cast<std::string>();
  }
  ContractPart out;
  // The two names every call had before contracts were data: "canonical" (2.1, the tensor-core
  // tiers) and "gemv" (2.2, canonical's GEMV part); both keep their bytes and meaning.
  if (spec == "gemv") {
    if (!part.empty() && part != "gemv")
      throw py::value_error(
          "contract 'gemv' names canonical's GEMV part (NUMERICS.md 2.2); part must be 'gemv' or None");
    out.conventions = ref::canonical_conventions();
    out.gemv = true;
    out.legacy = true;
    return out;
  }
  out.conventions = resolve_spec(spec, "contract");
  if (part.empty()) {
    if (spec != "canonical")
      throw py::value_error("contract '" + out.conventions.name +
                            "': say which part to emulate, part='tc' (the tensor-core tiers) or part='gemv'");
    out.gemv = false;
  } else {
    out.gemv = parse_part(part, "part");
  }
  out.legacy = out.conventions.same_numerics(ref::canonical_conventions());
  return out;
}

void bind_conventions(py::module_& m) {
  m.def("contract_library", &contract_library,
        "The named contracts (NUMERICS.md 2.4), canonical first: dicts of name, text, tc, gemv (fields), "
        "tc_description, gemv_description");
  m.def("parse_contract", &parse_contract, py::arg("text"),
        "The text form of a contract -> its dict (as contract_library's); ValueError naming the line");
  m.def("resolve_contract", &resolve_contract_dict, py::arg("spec"),
        "A library name or the text form -> the contract's dict");
  m.def("format_contract", &format_contract, py::arg("spec"),
        "A library name or the text form -> the full text form (every field), which parses back to the same value");
  m.def("describe_contract", &describe_contract, py::arg("spec"), py::arg("part"),
        "One line for reports: the fields of one part ('tc' or 'gemv')");
  m.def("contract_trace", &contract_trace, py::arg("a_row"), py::arg("w_row"), py::arg("s_row"), py::arg("contract"),
        py::arg("part"), py::arg("arch") = "sm90",
        "One output's intermediate FP32 values (bits) under a contract's part: tc -> window_partials, fold_acc, "
        "acc, want; gemv -> lane_acc, tree_level, warp_sum, acc, want");
  m.def("identify_candidates", &identify_candidates, py::arg("part"),
        "identify's candidates of one part ('tc': 36, 'gemv': 144): dicts of name, description, part, text");
  m.def("identify_distributions", &identify_distributions,
        "The golden distributions identify's probes use, in the order they run");
  m.def(
      "identify_callable", &identify_callable, py::arg("call"), py::arg("part"), py::arg("m"), py::arg("n"),
      py::arg("k"), py::arg("seed"), py::arg("confirm_ms"), py::arg("threads") = 0,
      "identify's engine over call(a, w, s, line) -> uint16 [M, N]: the probes, order probes, bias ladder, fold "
      "probe, the whole space and the confirmation at confirm_ms, each case twice; a dict of keeps, fields, "
      "k_order_determined, k_order_note, probes [(line, data)], confirm_cases, confirm_failure, nearest, nearest_first, "
      "nearest_total, nearest_differ, elements, candidates, calls, text, error");
  m.def("match_candidates", &match_candidates, py::arg("part"), py::arg("probes"), py::arg("threads") = 0,
        "Probes [(a, w, s, c)] against every candidate of a part, raw bits: dict of keeps (names), keep_indices, "
        "nearest (None when some candidate keeps), nearest_index, nearest_differ (per probe), nearest_total, "
        "elements (per probe)");
}

RowOperands row_operands(const py::object& a_obj, const py::object& w_obj, const py::object& s_obj) {
  RowOperands r;
  const py::array av = any_layout_array<std::uint16_t>(a_obj, "a_row");
  const py::array wv = any_layout_array<std::uint8_t>(w_obj, "w_row");
  const py::array sv = any_layout_array<float>(s_obj, "s_row");
  require_ndim(av, 1, "a_row", "[K] (BF16 bits)");
  require_ndim(wv, 1, "w_row", "[K] (E4M3 codes)");
  require_ndim(sv, 1, "s_row", "[K/128] (FP32 scales)");
  const py::ssize_t k = wv.shape(0);
  if (k <= 0 || k % ref::kKStep != 0)
    throw py::value_error("w_row: K = " + std::to_string(k) + " must be a positive multiple of 128");
  if (av.shape(0) != k)
    throw py::value_error("a_row has " + std::to_string(av.shape(0)) + " elements, w_row K = " + std::to_string(k));
  if (sv.shape(0) != k / ref::kKStep)
    throw py::value_error("s_row must have K/128 = " + std::to_string(k / ref::kKStep) + " elements, got " +
                          shape_str(sv));
  r.a = contiguous<std::uint16_t>(av, "a_row");
  r.w = contiguous<std::uint8_t>(wv, "w_row");
  r.s = contiguous<float>(sv, "s_row");
  r.k = checked_u32(k, "K");
  return r;
}

}  // namespace w8a16::py_bind
