// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check repro CASE`: replays one case and explains it: the plan the launch layer makes, the
// special values in the inputs, and for each differing element the fold step by step
// (NUMERICS.md 2.1), the GEMV order's value (2.2) and what the produced bits look like.
#include "run_repro.hpp"

#include "exit_status.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends.hpp"
#include "progress.hpp"
#include "report_files.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/explain.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace w8a16::cli {
namespace cmd_repro {

void print_plan(const golden::Case& c, const device::Backend& backend) {
  // As launch_case plans it: over the backend's registry less the case's without= kernels.
  const device::Planned p = props::plan_case(c, backend.registry(), backend.limits());
  if (c.without != 0)
    std::printf("planned without %s (the case line's without=)\n", golden::without_text(c.without).c_str());
  if (!p.ok()) {
    std::printf("plan: error %s: %s\n", device::errc_name(p.status.code), p.status.message.c_str());
    return;
  }
  std::printf("plan: kernel %s, body %s, grid (%u, %u, %u), block (%u, %u, %u), dynamic smem %u bytes, contract %s\n",
              p.plan.kernel_name, device::body_name(p.plan.body), p.plan.grid.x, p.plan.grid.y, p.plan.grid.z,
              p.plan.block.x, p.plan.block.y, p.plan.block.z, p.plan.dynamic_smem,
              p.plan.contract == device::Contract::gemv ? "GEMV order (NUMERICS.md 2.2)"
                                                        : "canonical fold (NUMERICS.md 2.1)");
}

int usage(const std::string& message) { return usage_error("repro", message); }

int run_repro(const ReproArgs& a) {
  const LoadedCases loaded = load_case_argument(a.arg);
  if (!loaded.errors.empty()) {
    std::string text;
    for (const std::string& e : loaded.errors) text += (text.empty() ? "" : "\n") + e;
    return usage(text);
  }
  if (loaded.cases.size() != 1)
    return usage(golden::shown(a.arg) + " holds " + std::to_string(loaded.cases.size()) +
                 " cases; name one with FILE:LINE");
  const golden::Case& c = loaded.cases.front();
  const std::string over = over_limits(loaded.cases, loaded.sources, a.limits);
  if (!over.empty()) return usage(over + "\nnothing was run");
  if (!a.element.empty() && (a.element[0] >= c.m || a.element[1] >= c.n))
    return usage("--element " + std::to_string(a.element[0]) + " " + std::to_string(a.element[1]) + " is outside the " +
                 std::to_string(c.m) + " x " + std::to_string(c.n) + " output");
  const props::ContractChoice& contract = a.contract;
  std::string error, note;
  golden::CaseInputs in;
  if (!golden::regenerate_inputs(c, &in, &error)) return usage(error);
  bool no_gpu = false;
  auto backend = make_backend(a.backend, &note, &error, a.module, 0, &no_gpu);
  if (!backend) return backend_refused("repro", error, no_gpu);
  if (!check_module(*backend, {props::to_device_entry(c.entry)}, &error)) return usage(error);
  std::printf("case: %s\n  from %s\nbackend: %s\ninputs: digest 0x%016" PRIx64 ", special classes:",
              golden::format_case(c).c_str(), loaded.sources.front().c_str(), note.c_str(), golden::inputs_digest(in));
  const std::uint32_t seen = golden::special_classes(c, in);
  for (int b = 0; b < golden::kSpecialClassCount; ++b)
    if ((seen >> b) & 1u) std::printf(" %s", std::string(golden::special_class_name(b)).c_str());
  std::printf("%s\n", seen ? "" : " none");
  print_plan(c, *backend);
  std::fputs(props::contract_report_text(contract).c_str(), stdout);
  std::printf("  this case's entry point is held to %s\n", contract.describe_for(c.entry).c_str());
  // A case the contract does not define has no expected bytes: it fails, saying why, unlaunched.
  const std::string undefined = props::contract_case_problem(c, in, contract);
  if (!undefined.empty()) {
    std::printf("FAIL: %s\nnothing was launched or compared\nverdict: FAIL\n", undefined.c_str());
    return kExitFail;
  }
  std::fflush(stdout);  // before any progress line on stderr

  std::vector<std::uint16_t> expected;
  props::Launched got;
  {
    props::Heartbeat beat("repro: running the case (" + count_text(case_cost(c).macs) +
                          " multiply-adds) and the emulator");
    expected = props::expected_output(c, in, 0, contract);
    got = props::InProcessLauncher(*backend, a.deadlines).launch(c, in);
  }
  if (!got.status.ok()) {
    std::printf("launch: error %s: %s\nverdict: FAIL\n", device::errc_name(got.status.code),
                got.status.message.c_str());
    return kExitFail;
  }
  const props::Comparison cmp = props::compare_output(c, expected, got.c_bits, 0);
  std::printf("compared %" PRIu64 " bytes (all of C: pitch padding and %u guard rows past M included): %" PRIu64
              " elements differ\n",
              cmp.bytes_compared, golden::kOutputGuardRows, cmp.mismatches);
  int explained = 0;
  for (std::size_t i = 0; i < expected.size() && explained < a.show; ++i) {
    if (expected[i] == got.c_bits[i]) continue;
    const std::uint32_t m = static_cast<std::uint32_t>(i / c.c_row_stride),
                        n = static_cast<std::uint32_t>(i % c.c_row_stride);
    if (m >= c.m) {
      std::printf("\nC[%u][%u] is a guard row past M (m = %u): it must keep 0x%04x, holds 0x%04x\n", m, n, c.m,
                  expected[i], got.c_bits[i]);
    } else if (n >= c.n) {
      std::printf("\nC[%u][%u] is pitch padding (n = %u): it must keep 0x%04x, holds 0x%04x\n", m, n, c.n, expected[i],
                  got.c_bits[i]);
    } else {
      std::fputs(props::explain_element(c, in, expected, &got.c_bits, m, n, contract).c_str(), stdout);
    }
    ++explained;
  }
  if (!a.element.empty())
    std::fputs(props::explain_element(c, in, expected, &got.c_bits, a.element[0], a.element[1], contract).c_str(),
               stdout);
  std::printf("\nverdict: %s\n", cmp.equal() ? "PASS" : "FAIL");
  return cmp.equal() ? kExitPass : kExitFail;
}

}  // namespace cmd_repro
}  // namespace w8a16::cli
