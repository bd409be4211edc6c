// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check repro CASE`: replays one case and explains it: the plan the launch layer makes, the
// special values in the inputs, and for each differing element the fold step by step
// (NUMERICS.md 2.1), the GEMV order's value (2.2) and what the produced bits look like.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_cases.hpp"
#include "command.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace w8a16::cli {
namespace {

double bf16_value(std::uint16_t b) { return ref::f32_from_bits(ref::bf16_bits_to_f32_bits(b)); }

ref::GemmView view_of(const golden::Case& c, const golden::CaseInputs& in) {
  ref::GemmView v;
  v.a = in.a_bits.data();
  v.a_row_stride = c.a_row_stride;
  v.w = in.w_e4m3.data();
  v.s = in.s_f32.data();
  v.m = c.m;
  v.n = c.n;
  v.k = c.k;
  return v;
}

void print_plan(const golden::Case& c, const device::Backend& backend) {
  // Aligned, disjoint addresses: planning validates and sizes, and never reads memory.
  const device::Call call = props::case_call(c, backend.registry(), 0x100000000000ull, 0x200000000000ull,
                                             0x300000000000ull, 0x400000000000ull);
  const device::Planned p = device::plan_launch(call, backend.registry(), backend.limits());
  if (!p.ok()) {
    std::printf("plan: error %s: %s\n", device::errc_name(p.status.code), p.status.message.c_str());
    return;
  }
  std::printf("plan: kernel %s, body %s, grid (%u, %u, %u), block (%u, %u, %u), dynamic smem %u bytes, contract %s\n",
              p.plan.kernel_name, device::body_name(p.plan.body), p.plan.grid.x, p.plan.grid.y, p.plan.grid.z,
              p.plan.block.x, p.plan.block.y, p.plan.block.z, p.plan.dynamic_smem,
              p.plan.contract == device::Contract::gemv ? "GEMV order (NUMERICS.md 2.2)" : "canonical fold (NUMERICS.md 2.1)");
}

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

void explain_element(const golden::Case& c, const golden::CaseInputs& in, const std::vector<std::uint16_t>& expected,
                     const std::vector<std::uint16_t>* produced, std::uint32_t m, std::uint32_t n) {
  const ref::GemmView v = view_of(c, in);
  const std::size_t at = std::size_t{m} * c.c_row_stride + n;
  std::printf("\nC[%u][%u]: expected 0x%04x (%g)", m, n, expected[at], bf16_value(expected[at]));
  if (produced) std::printf(", produced 0x%04x (%g)", (*produced)[at], bf16_value((*produced)[at]));
  std::printf("\n  special operands:%s\n", specials_of_element(c, in, m, n).c_str());
  const std::uint32_t steps = c.k / 128;
  if (!golden::entry_point_is_gemv(c.entry)) {
    std::printf("  canonical fold (NUMERICS.md 2.1), scale row %u:\n", n / 128);
    std::uint32_t acc = 0;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint32_t p = ref::canonical_step_partial_bits(v, ref::Arch::sm90, m, n, s);
      const std::uint32_t scale = ref::f32_to_bits(v.scale(n, s));
      acc = ref::f32_fma_rne_bits(p, scale, acc);
      if (steps <= 24 || s < 8 || s + 8 >= steps)
        std::printf("    step %3u: p = 0x%08x (%-13g) S = 0x%08x (%-13g) acc = 0x%08x (%g)\n", s, p,
                    ref::f32_from_bits(p), scale, ref::f32_from_bits(scale), acc, ref::f32_from_bits(acc));
      else if (s == 8)
        std::printf("    ... %u steps ...\n", steps - 16);
    }
    std::printf("    bf16_rne(acc) = 0x%04x\n", ref::f32_bits_to_bf16_rne(acc));
  }
  const std::uint16_t gemv = ref::gemv_element_bf16(v, m, n);
  const std::uint16_t canonical = ref::canonical_element_bf16(v, ref::Arch::sm90, m, n);
  std::printf("  canonical fold gives 0x%04x, GEMV order (2.2) gives 0x%04x\n", canonical, gemv);
  if (!produced) return;
  const std::uint16_t got = (*produced)[at];
  if (got == golden::kOutputSentinelBits) std::printf("  produced is the sentinel 0x7FA5: no launch wrote this element\n");
  else if (got == gemv && gemv != expected[at]) std::printf("  produced matches the GEMV order: the wrong contract ran\n");
  else if (got == canonical && canonical != expected[at]) std::printf("  produced matches the canonical fold: the wrong contract ran\n");
  // A value that belongs elsewhere in the same row or column suggests a misplaced tile.
  for (std::uint32_t j = 0; j < c.n; ++j)
    if (j != n && expected[std::size_t{m} * c.c_row_stride + j] == got && got != expected[at]) {
      std::printf("  produced equals the expected C[%u][%u]: a write landed in the wrong column?\n", m, j);
      break;
    }
  for (std::uint32_t i = 0; i < c.m; ++i)
    if (i != m && expected[std::size_t{i} * c.c_row_stride + n] == got && got != expected[at]) {
      std::printf("  produced equals the expected C[%u][%u]: a write landed in the wrong row?\n", i, n);
      break;
    }
}

void add_repro(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("repro", "Replay one case and explain every difference from the emulator");
  auto arg = std::make_shared<std::string>();
  auto backend_kind = std::make_shared<std::string>("auto");
  auto show = std::make_shared<int>(3);
  auto element = std::make_shared<std::vector<std::uint32_t>>();
  cmd->add_option("CASE", *arg, "a 'case/1 ...' line, or FILE[:LINE] holding exactly one case")->required();
  cmd->add_option("--backend", *backend_kind, "auto, cuda or sim")->capture_default_str();
  cmd->add_option("--show", *show, "differing elements explained in full")->capture_default_str();
  cmd->add_option("--element", *element, "also explain C[M][N] (two numbers: M N)")->expected(2);
  cmd->callback([=] {
    const LoadedCases loaded = load_case_argument(*arg);
    for (const std::string& e : loaded.errors) std::fprintf(stderr, "repro: %s\n", e.c_str());
    if (!loaded.errors.empty() || loaded.cases.size() != 1) {
      if (loaded.errors.empty())
        std::fprintf(stderr, "repro: %s holds %zu cases; name one with FILE:LINE\n", arg->c_str(), loaded.cases.size());
      *exit_code = 2;
      return;
    }
    const golden::Case& c = loaded.cases.front();
    golden::CaseInputs in;
    std::string error, note;
    if (!golden::regenerate_inputs(c, &in, &error)) {
      std::fprintf(stderr, "repro: %s\n", error.c_str());
      *exit_code = 2;
      return;
    }
    if (!element->empty() && ((*element)[0] >= c.m || (*element)[1] >= c.n)) {
      std::fprintf(stderr, "repro: --element %u %u is outside the %u x %u output\n", (*element)[0], (*element)[1], c.m, c.n);
      *exit_code = 2;
      return;
    }
    auto backend = make_backend(*backend_kind, &note, &error);
    if (!backend) {
      std::fprintf(stderr, "repro: %s\n", error.c_str());
      *exit_code = 2;
      return;
    }
    std::printf("case: %s\n  from %s\nbackend: %s\ninputs: digest 0x%016" PRIx64 ", special classes:", golden::format_case(c).c_str(),
                loaded.sources.front().c_str(), note.c_str(), golden::inputs_digest(in));
    const std::uint32_t seen = golden::special_classes(c, in);
    for (int b = 0; b < golden::kSpecialClassCount; ++b)
      if ((seen >> b) & 1u) std::printf(" %s", std::string(golden::special_class_name(b)).c_str());
    std::printf("%s\n", seen ? "" : " none");
    print_plan(c, *backend);

    const std::vector<std::uint16_t> expected = props::expected_output(c, in);
    const props::Launched got = props::launch_case(*backend, c, in);
    if (!got.status.ok()) {
      std::printf("launch: error %s: %s\nverdict: FAIL\n", device::errc_name(got.status.code), got.status.message.c_str());
      *exit_code = 1;
      return;
    }
    const props::Comparison cmp = props::compare_output(c, expected, got.c_bits, 0);
    std::printf("compared %" PRIu64 " bytes (all of C, pitch padding included): %" PRIu64 " elements differ\n",
                cmp.bytes_compared, cmp.mismatches);
    int explained = 0;
    for (std::size_t i = 0; i < expected.size() && explained < *show; ++i) {
      if (expected[i] == got.c_bits[i]) continue;
      const std::uint32_t m = static_cast<std::uint32_t>(i / c.c_row_stride), n = static_cast<std::uint32_t>(i % c.c_row_stride);
      if (n >= c.n) {
        std::printf("\nC[%u][%u] is pitch padding (n = %u): it must keep 0x%04x, holds 0x%04x\n", m, n, c.n, expected[i],
                    got.c_bits[i]);
      } else {
        explain_element(c, in, expected, &got.c_bits, m, n);
      }
      ++explained;
    }
    if (!element->empty()) explain_element(c, in, expected, &got.c_bits, (*element)[0], (*element)[1]);
    std::printf("\nverdict: %s\n", cmp.equal() ? "PASS" : "FAIL");
    *exit_code = cmp.equal() ? 0 : 1;
  });
}

W8A16_COMMAND(add_repro);

}  // namespace
}  // namespace w8a16::cli
