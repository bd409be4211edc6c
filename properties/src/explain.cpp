// SPDX-License-Identifier: MIT OR Apache-2.0
// One output element explained: its fold, both contracts' values, and what wrong bits look like.
#include "w8a16/properties/explain.hpp"

#include <cstdio>

#include "w8a16/properties/case_runner.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace w8a16::props {
namespace {

double bf16_value(std::uint16_t b) { return ref::f32_from_bits(ref::bf16_bits_to_f32_bits(b)); }

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
  (void)contract;
  std::string out;
  char buf[256];
  // Appends one formatted piece (every piece is far below the buffer's size).
  auto say = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  const ref::GemmView v = golden::case_view(c, in);
  const std::size_t at = std::size_t{m} * c.c_row_stride + n;
  say("\nC[%u][%u]: expected 0x%04x (%g)", m, n, expected[at], bf16_value(expected[at]));
  if (produced) say(", produced 0x%04x (%g)", (*produced)[at], bf16_value((*produced)[at]));
  say("\n  special operands:%s\n", specials_of_element(c, in, m, n).c_str());
  const std::uint32_t steps = c.k / 128;
  if (!golden::entry_point_is_gemv(c.entry)) {
    say("  canonical fold (NUMERICS.md 2.1), scale row %u:\n", n / 128);
    std::uint32_t acc = 0;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t p = ref::canonical_step_partial_bits(v, ref::Arch::sm90, m, n, s);
      const std::uint32_t scale = ref::f32_to_bits(v.scale(n, s));
      acc = ref::f32_fma_rne_bits(p, scale, acc);
      if (steps <= 24 || s < 8 || s + 8 >= steps)
        say("    step %3u: p = 0x%08x (%-13g) S = 0x%08x (%-13g) acc = 0x%08x (%g)\n", s, p, ref::f32_from_bits(p),
            scale, ref::f32_from_bits(scale), acc, ref::f32_from_bits(acc));
      else if (s == 8) say("    ... %u steps ...\n", steps - 16);
    }
    say("    bf16_rne(acc) = 0x%04x\n", ref::f32_bits_to_bf16_rne(acc));
  }
  const std::uint16_t gemv = ref::gemv_element_bf16(v, m, n);
  const std::uint16_t canonical = ref::canonical_element_bf16(v, ref::Arch::sm90, m, n);
  say("  canonical fold gives 0x%04x, GEMV order (2.2) gives 0x%04x\n", canonical, gemv);
  if (!produced) return out;
  const std::uint16_t got = (*produced)[at];
  if (got == golden::kOutputSentinelBits) say("  produced is the sentinel 0x7FA5: no launch wrote this element\n");
  else if (got == gemv && gemv != expected[at]) say("  produced matches the GEMV order: the wrong contract ran\n");
  else if (got == canonical && canonical != expected[at])
    say("  produced matches the canonical fold: the wrong contract ran\n");
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
  return out;
}

}  // namespace w8a16::props
