// SPDX-License-Identifier: MIT OR Apache-2.0
// One output element explained: its fold, both contracts' values, and what wrong bits look like.
#include "w8a16/properties/explain.hpp"

#include <algorithm>
#include <cstdio>

#include "w8a16/properties/case_runner.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace w8a16::props {
namespace {

double bf16_value(std::uint16_t b) { return ref::f32_from_bits(ref::bf16_bits_to_f32_bits(b)); }

// One alternative to the held contract: another library value, or the held one with one field
// changed. `label` says which, in the text form's own words (NUMERICS.md 2.4).
struct Alternative {
  std::string label;
  ref::Conventions conv;
};

// The lines of the text form where `alt` differs from `held`, as "key = value[, ...]": the field a
// variation changes, named as a user would write it in a contract file.
std::string changed_fields(const ref::Conventions& held, const ref::Conventions& alt, bool gemv) {
  auto lines = [](const ref::Conventions& c) {
    std::vector<std::string> out;
    std::string text = ref::format_conventions(c), line;
    for (char ch : text) {
      if (ch != '\n') {
        line += ch;
        continue;
      }
      if (line.rfind("contract", 0) != 0) out.push_back(line);
      line.clear();
    }
    return out;
  };
  const std::vector<std::string> a = lines(held), b = lines(alt);
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i < a.size() && a[i] == b[i]) continue;
    if (b[i].rfind(gemv ? "gemv." : "tc.", 0) != 0) continue;  // the other part does not apply here
    std::string x = b[i].size() > 48 ? b[i].substr(0, 44) + " ..." : b[i];
    s += (s.empty() ? "" : ", ") + x;
  }
  return s;
}

// Single-field variations of the held contract's part for this entry point first (each names the
// one field that differs), then the other library values whose part differs. The order is the
// order of the report.
std::vector<Alternative> alternatives(const ref::Conventions& held, bool gemv) {
  std::vector<ref::Conventions> vs;
  auto vary = [&](auto set) {
    ref::Conventions v = held;
    set(&v);
    if (gemv ? v.gemv != held.gemv : v.tc != held.tc) vs.push_back(std::move(v));
  };
  constexpr ref::NanCodes kNans[] = {ref::NanCodes::propagate, ref::NanCodes::zero, ref::NanCodes::finite};
  if (!gemv) {
    for (ref::NanCodes x : kNans) vary([x](ref::Conventions* v) { v->tc.nan = x; });
    for (ref::Fold x : {ref::Fold::fma, ref::Fold::mul_add, ref::Fold::prescale})
      vary([x](ref::Conventions* v) { v->tc.fold = x; });
    for (ref::FoldPeriod x : {ref::FoldPeriod::step, ref::FoldPeriod::end})
      vary([x](ref::Conventions* v) { v->tc.period = x; });
    // The biases a kernel of the family is known to keep: none, and the seed's row-tile kernel's.
    for (std::uint32_t x : {0u, 60u}) vary([x](ref::Conventions* v) { v->tc.bias = x; });
    for (ref::ScaleFormat x : {ref::ScaleFormat::fp32, ref::ScaleFormat::bf16})
      vary([x](ref::Conventions* v) { v->tc.scales = x; });
    // The K orders the family is known to keep: contiguous, and every library value's.
    vary([](ref::Conventions* v) { v->tc.k_order = ref::TensorCoreConventions::identity_k_order(); });
    for (const ref::Conventions& lib : ref::conventions_library())
      vary([&lib](ref::Conventions* v) { v->tc.k_order = lib.tc.k_order; });
  } else {
    for (ref::NanCodes x : kNans) vary([x](ref::Conventions* v) { v->gemv.nan = x; });
    for (std::uint32_t x : {32u, 64u, 128u}) vary([x](ref::Conventions* v) { v->gemv.lanes = x; });
    for (std::uint32_t x : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}) vary([x](ref::Conventions* v) { v->gemv.chunk = x; });
    for (ref::GemvScale x : {ref::GemvScale::chunk, ref::GemvScale::element})
      vary([x](ref::Conventions* v) { v->gemv.scale = x; });
    for (ref::Mac x : {ref::Mac::fma, ref::Mac::mul_add}) vary([x](ref::Conventions* v) { v->gemv.mac = x; });
    for (ref::GemvTree x : {ref::GemvTree::xor_butterfly, ref::GemvTree::shfl_down})
      vary([x](ref::Conventions* v) { v->gemv.tree = x; });
  }
  std::vector<Alternative> out;
  for (ref::Conventions& v : vs) {
    // Each variation once: the k-order list may repeat an order another entry already gave.
    bool seen = false;
    for (const Alternative& o : out) seen = seen || (gemv ? o.conv.gemv == v.gemv : o.conv.tc == v.tc);
    if (seen) continue;
    const std::string label = changed_fields(held, v, gemv);
    v.name = held.name + " with " + label;
    out.push_back({label, std::move(v)});
  }
  for (const ref::Conventions& lib : ref::conventions_library())
    if (gemv ? lib.gemv != held.gemv : lib.tc != held.tc) out.push_back({"the contract " + lib.name, lib});
  return out;
}

std::string hex32(std::uint32_t b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", b);
  return buf;
}

// Where two tensor-core traces of one element first part ways: the first window (MMA j of step
// s) whose partial differs, and the first fold point whose accumulator differs.
std::string tc_divergence(const ref::TcTrace& held, const ref::TcTrace& alt, const ref::TensorCoreConventions& ht,
                          const ref::TensorCoreConventions& at) {
  std::string s;
  const std::size_t windows = std::min(held.window_partials.size(), alt.window_partials.size());
  std::size_t w = 0;
  while (w < windows && held.window_partials[w] == alt.window_partials[w]) ++w;
  if (w < windows)
    s += "the first window where the two differ is step " + std::to_string(w / 8) + ", MMA " + std::to_string(w % 8) +
         " (partial " + hex32(held.window_partials[w]) + " under the contract, " + hex32(alt.window_partials[w]) +
         " under the other)";
  else s += "every window's partial is the same";
  if (ht.period != at.period) {
    s += "; the two fold at different points (" +
         std::string(ht.period == ref::FoldPeriod::end ? "once at the end" : "every step") + " against " +
         (at.period == ref::FoldPeriod::end ? "once at the end" : "every step") + ")";
    return s;
  }
  const std::size_t folds = std::min(held.fold_acc.size(), alt.fold_acc.size());
  std::size_t f = 0;
  while (f < folds && held.fold_acc[f] == alt.fold_acc[f]) ++f;
  if (f < folds)
    s += "; the first fold point where the two differ is " +
         (ht.period == ref::FoldPeriod::end ? std::string("the fold at the end") : "step " + std::to_string(f)) +
         " (acc " + hex32(held.fold_acc[f]) + " under the contract, " + hex32(alt.fold_acc[f]) + " under the other)";
  else s += "; every fold point's accumulator is the same";
  return s;
}

// Where two GEMV traces of one element first part ways: the first lane whose sum differs, the
// first tree level where the output's lane (lane 0) differs, the first warp sum that differs.
std::string gemv_divergence(const ref::GemvTrace& held, const ref::GemvTrace& alt) {
  std::string s;
  if (held.lane_acc.size() != alt.lane_acc.size()) {
    s += std::to_string(held.lane_acc.size()) + " lanes under the contract, " + std::to_string(alt.lane_acc.size()) +
         " under the other: the chunks are spread differently, so lane sums and tree levels do not pair up";
  } else {
    std::size_t l = 0;
    while (l < held.lane_acc.size() && held.lane_acc[l] == alt.lane_acc[l]) ++l;
    if (l < held.lane_acc.size())
      s += "the first lane whose sum differs is lane " + std::to_string(l) + " (" + hex32(held.lane_acc[l]) +
           " under the contract, " + hex32(alt.lane_acc[l]) + " under the other)";
    else s += "every lane's sum is the same";
    for (std::size_t t = 0; t < held.tree_level.size() && t < alt.tree_level.size(); ++t) {
      if (held.tree_level[t][0] == alt.tree_level[t][0]) continue;
      s += "; the first tree level where lane 0 differs is off=" + std::to_string(16u >> t) + " (" +
           hex32(held.tree_level[t][0]) + " against " + hex32(alt.tree_level[t][0]) + ")";
      break;
    }
  }
  const std::size_t warps = std::min(held.warp_sum.size(), alt.warp_sum.size());
  for (std::size_t w = 0; w < warps; ++w)
    if (held.warp_sum[w] != alt.warp_sum[w]) {
      s += "; the first warp sum that differs is warp " + std::to_string(w) + " (" + hex32(held.warp_sum[w]) +
           " against " + hex32(alt.warp_sum[w]) + ")";
      break;
    }
  return s;
}

}  // namespace

// Special values in A's row m and W's row n (the operands of one output).
std::string specials_of_element(const golden::Case& c, const golden::CaseInputs& in, std::uint32_t m, std::uint32_t n) {
  std::string s;
  int shown = 0;
  for (std::uint32_t k = 0; k < c.k && shown < 6; ++k) {
    const std::uint16_t a = in.a_bits[std::size_t{m} * c.a_row_stride + k];
    const std::uint16_t mag = a & 0x7FFF;
    if (mag > 0x7F80 || mag == 0x7F80 || (mag != 0 && mag < 0x80) || mag == 0x7F7F) {
      char buf[48];
      std::snprintf(buf, sizeof buf, " A[%u][%u]=0x%04x", m, k, a);
      s += buf;
      ++shown;
    }
  }
  for (std::uint32_t k = 0; k < c.k && shown < 12; ++k) {
    const std::uint8_t w = in.w_e4m3[std::size_t{n} * c.k + k];
    if ((w & 0x7F) == 0x7F || (w & 0x7F) == 0x7E || ((w & 0x7F) != 0 && (w & 0x7F) < 8)) {
      char buf[48];
      std::snprintf(buf, sizeof buf, " W[%u][%u]=0x%02x", n, k, w);
      s += buf;
      ++shown;
    }
  }
  return s.empty() ? " none" : s;
}

std::string explain_element(const golden::Case& c, const golden::CaseInputs& in,
                            const std::vector<std::uint16_t>& expected, const std::vector<std::uint16_t>* produced,
                            std::uint32_t m, std::uint32_t n, const ContractChoice& contract) {
  std::string out;
  char buf[256];
  // Appends one formatted piece (every piece is far below the buffer's size).
  auto say = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  const ref::GemmView v = golden::case_view(c, in);
  const std::size_t at = std::size_t{m} * c.c_row_stride + n;
  const bool gemv_entry = golden::entry_point_is_gemv(c.entry);
  const ref::Conventions& held = contract.for_entry(c.entry);
  const bool canonical = held.same_numerics(ref::canonical_conventions());
  say("\nC[%u][%u]: expected 0x%04x (%g)", m, n, expected[at], bf16_value(expected[at]));
  if (produced) say(", produced 0x%04x (%g)", (*produced)[at], bf16_value((*produced)[at]));
  say("\n  special operands:%s\n", specials_of_element(c, in, m, n).c_str());
  const std::uint32_t steps = c.k / 128;
  auto shown_step = [&](std::uint32_t s) { return steps <= 24 || s < 8 || s + 8 >= steps; };
  if (!gemv_entry && canonical) {
    say("  canonical fold (NUMERICS.md 2.1), scale row %u:\n", n / 128);
    std::uint32_t acc = 0;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t p = ref::canonical_step_partial_bits(v, ref::Arch::sm90, m, n, s);
      const std::uint32_t scale = ref::f32_to_bits(v.scale(n, s));
      acc = ref::f32_fma_rne_bits(p, scale, acc);
      if (shown_step(s))
        say("    step %3u: p = 0x%08x (%-13g) S = 0x%08x (%-13g) acc = 0x%08x (%g)\n", s, p, ref::f32_from_bits(p),
            scale, ref::f32_from_bits(scale), acc, ref::f32_from_bits(acc));
      else if (s == 8) say("    ... %u steps ...\n", steps - 16);
    }
    say("    bf16_rne(acc) = 0x%04x\n", ref::f32_bits_to_bf16_rne(acc));
  } else if (!gemv_entry && ref::conventions_view_problem(held.tc, v).empty()) {
    // The contract's own fold points (NUMERICS.md 2.4): p after the step's last window, S as
    // stored (a bias scales it before the fold), acc after each fold point.
    const ref::TcTrace t = ref::tc_trace(held.tc, v, ref::Arch::sm90, m, n);
    const bool end = held.tc.period == ref::FoldPeriod::end;
    say("  contract %s (tc: %s), scale row %u:\n", held.name.c_str(), ref::describe(held.tc).c_str(), n / 128);
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t p = t.window_partials[std::size_t{s} * 8 + 7];
      const std::uint32_t scale = ref::f32_to_bits(v.scale(n, s));
      if (shown_step(s) && !end)
        say("    step %3u: p = 0x%08x (%-13g) S = 0x%08x (%-13g) acc = 0x%08x (%g)\n", s, p, ref::f32_from_bits(p),
            scale, ref::f32_from_bits(scale), t.fold_acc[s], ref::f32_from_bits(t.fold_acc[s]));
      else if (shown_step(s)) say("    step %3u: p = 0x%08x (%g), no fold (period end)\n", s, p, ref::f32_from_bits(p));
      else if (s == 8) say("    ... %u steps ...\n", steps - 16);
    }
    if (end) say("    the fold at the end: acc = 0x%08x (%g)\n", t.acc, ref::f32_from_bits(t.acc));
    say("    bf16_rne(acc) = 0x%04x\n", ref::f32_bits_to_bf16_rne(t.acc));
  } else if (gemv_entry && ref::conventions_view_problem(held.gemv, v).empty()) {
    // The GEMV's order (NUMERICS.md 2.2, 2.4): each lane's sum, lane 0 after each tree level,
    // each warp's lane 0, and the warps' sum.
    const ref::GemvTrace t = ref::gemv_trace(held.gemv, v, m, n);
    say("  contract %s (gemv: %s):\n    lane sums:", held.name.c_str(), ref::describe(held.gemv).c_str());
    for (std::size_t l = 0; l < t.lane_acc.size(); ++l) say("%s 0x%08x", l % 8 == 0 ? "\n     " : "", t.lane_acc[l]);
    out += "\n    lane 0 after each tree level:";
    for (std::size_t lv = 0; lv < t.tree_level.size(); ++lv) say(" off=%u 0x%08x", 16u >> lv, t.tree_level[lv][0]);
    out += "\n    warp sums:";
    for (std::uint32_t w : t.warp_sum) say(" 0x%08x", w);
    say("\n    acc = 0x%08x (%g), bf16_rne(acc) = 0x%04x\n", t.acc, ref::f32_from_bits(t.acc),
        ref::f32_bits_to_bf16_rne(t.acc));
  }
  // The other part of the contract: a GEMV order where a tile was expected, or the reverse.
  std::uint16_t gemv = 0, tiles = 0;
  if (canonical) {
    gemv = ref::gemv_element_bf16(v, m, n);
    tiles = ref::canonical_element_bf16(v, ref::Arch::sm90, m, n);
    say("  canonical fold gives 0x%04x, GEMV order (2.2) gives 0x%04x\n", tiles, gemv);
  } else {
    const bool tc_defined = ref::conventions_view_problem(held.tc, v).empty(),
               gemv_defined = ref::conventions_view_problem(held.gemv, v).empty();
    tiles = tc_defined ? ref::tc_element_bf16(held.tc, v, ref::Arch::sm90, m, n) : expected[at];
    gemv = gemv_defined ? ref::gemv_conv_element_bf16(held.gemv, v, m, n) : expected[at];
    say("  under %s the tensor-core tiers give 0x%04x, the GEMV gives 0x%04x\n", held.name.c_str(), tiles, gemv);
  }
  if (!produced) return out;
  const std::uint16_t got = (*produced)[at];
  const bool sentinel = got == golden::kOutputSentinelBits;
  if (sentinel) say("  produced is the sentinel 0x7FA5: no launch wrote this element\n");
  else if (got == gemv && gemv != expected[at])
    say("  produced matches the GEMV order%s: the wrong contract ran\n", canonical ? "" : " of this contract");
  else if (got == tiles && tiles != expected[at])
    say("  produced matches the %s: the wrong contract ran\n",
        canonical ? "canonical fold" : "tensor-core tiers of this contract");
  // A value that belongs elsewhere in the same row or column suggests a misplaced tile.
  for (std::uint32_t j = 0; j < c.n; ++j)
    if (j != n && expected[std::size_t{m} * c.c_row_stride + j] == got && got != expected[at]) {
      say("  produced equals the expected C[%u][%u]: a write landed in the wrong column?\n", m, j);
      break;
    }
  for (std::uint32_t i = 0; i < c.m; ++i)
    if (i != m && expected[std::size_t{i} * c.c_row_stride + n] == got && got != expected[at]) {
      say("  produced equals the expected C[%u][%u]: a write landed in the wrong row?\n", i, n);
      break;
    }
  if (sentinel || got == expected[at]) return out;
  // In the contract's terms: which other convention gives the produced bits exactly, and where its
  // trace and the held contract's part ways. Only the emulator's traces are compared: a device's
  // intermediate values are not observed, so this names a convention consistent with the output,
  // not what the device computed inside.
  const bool held_defined = gemv_entry ? ref::conventions_view_problem(held.gemv, v).empty()
                                       : ref::conventions_view_problem(held.tc, v).empty();
  int matches = 0;
  for (const Alternative& alt : alternatives(held, gemv_entry)) {
    const bool defined = gemv_entry ? ref::conventions_view_problem(alt.conv.gemv, v).empty()
                                    : ref::conventions_view_problem(alt.conv.tc, v).empty();
    if (!defined) continue;
    const std::uint16_t bits = gemv_entry ? ref::gemv_conv_element_bf16(alt.conv.gemv, v, m, n)
                                          : ref::tc_element_bf16(alt.conv.tc, v, ref::Arch::sm90, m, n);
    if (bits != got) continue;
    ++matches;
    std::string where;
    if (held_defined)
      where = gemv_entry ? gemv_divergence(ref::gemv_trace(held.gemv, v, m, n), ref::gemv_trace(alt.conv.gemv, v, m, n))
                         : tc_divergence(ref::tc_trace(held.tc, v, ref::Arch::sm90, m, n),
                                         ref::tc_trace(alt.conv.tc, v, ref::Arch::sm90, m, n), held.tc, alt.conv.tc);
    out += "  the produced value is what " + alt.label + " gives" +
           (alt.label.rfind("the contract", 0) == 0 ? "" : " (" + held.name + " otherwise)") +
           (where.empty() ? "" : ": " + where) + "\n";
  }
  if (matches == 0)
    out += "  no other library contract and no single-field variation of " + held.name +
           " gives the produced bits: the difference is not one of the family's known conventions\n";
  return out;
}

}  // namespace w8a16::props
