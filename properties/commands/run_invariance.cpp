// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check invariance`: whether each entry point's row bytes depend on the row alone
// (properties/invariance.hpp), on a backend: a GPU, a --module file (docs/KERNEL_ABI.md 5), or the
// simulation with its stand-ins (W8A16_SIM_CONVENTIONS, including the controls that must fail).
#include "run_invariance.hpp"

#include <algorithm>
#include <cstdio>

#include "exit_status.hpp"
#include "gpu_identity.hpp"
#include "invariance_report.hpp"
#include "numbers.hpp"
#include "w8a16/device/module_abi.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/invariance.hpp"
#include "w8a16/properties/work_limits.hpp"

namespace w8a16::cli {
namespace cmd_invariance {
namespace {

int usage(const std::string& message) { return usage_error("invariance", message); }

bool parse_u32(const std::string& t, std::uint32_t* out) {
  if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = static_cast<std::uint32_t>(std::stoul(t));
  return true;
}

// "M" or "A..B"; an empty range (B < A) or a zero is an error.
bool parse_ms(const std::string& t, std::vector<std::uint32_t>* out, std::string* error) {
  const std::size_t dots = t.find("..");
  std::uint32_t lo = 0, hi = 0;
  const bool ok = dots == std::string::npos ? parse_u32(t, &lo) && (hi = lo, true)
                                            : parse_u32(t.substr(0, dots), &lo) && parse_u32(t.substr(dots + 2), &hi);
  if (!ok) {
    *error = "--m " + golden::quote(t) + ": expected M or A..B (whole numbers)";
    return false;
  }
  if (lo == 0 || hi > golden::kCaseMaxM) {
    *error = "--m " + golden::quote(t) + ": M must be in 1.." + std::to_string(golden::kCaseMaxM);
    return false;
  }
  if (hi < lo) {
    *error = "--m " + golden::quote(t) + ": an empty range (nothing would be compared)";
    return false;
  }
  for (std::uint32_t m = lo; m <= hi; ++m) out->push_back(m);
  return true;
}

}  // namespace

int run_invariance(const InvarianceArgs& a) {
  props::InvarianceOptions opt;
  for (const std::string& s : a.shapes) {
    const std::size_t x = s.find('x');
    props::InvarianceShape shape;
    if (x == std::string::npos || !parse_u32(s.substr(0, x), &shape.n) || !parse_u32(s.substr(x + 1), &shape.k) ||
        shape.n == 0 || shape.n > golden::kCaseMaxN || shape.k == 0 || shape.k % 128 != 0 ||
        shape.k > golden::kCaseMaxK)
      return usage("--shape " + golden::quote(s) +
                   ": expected NxK, N >= 1, K a positive multiple of 128 (one scale block per step, NUMERICS.md 2)");
    opt.shapes.push_back(shape);
  }
  if (opt.shapes.empty()) opt.shapes.push_back({136, 512});
  std::string error;
  for (const std::string& m : a.ms)
    if (!parse_ms(m, &opt.ms, &error)) return usage(error);
  std::sort(opt.ms.begin(), opt.ms.end());
  opt.ms.erase(std::unique(opt.ms.begin(), opt.ms.end()), opt.ms.end());
  opt.edges_only = a.edges_only;
  for (const std::string& name : a.needles) {
    golden::Distribution d;
    if (!golden::parse_distribution(name, &d))
      return usage("unknown --needle " + golden::quote(name) + " (a distribution, e.g. cancelling_steps)");
    opt.needles.push_back(d);
  }
  if (opt.needles.empty()) opt.needles = props::default_needles();
  // The work is bounded before anything runs: each shape's largest call (its largest M, or past
  // every edge the default list reaches, times N times K, at the GEMV needle's K where that is
  // larger) must fit the default work limits (work_limits.hpp), as every command's cases must.
  {
    std::vector<golden::Case> largest;
    std::vector<std::string> sources;
    const std::uint32_t m_max = opt.ms.empty() ? props::kEdgeScanMax + 1 : opt.ms.back();
    for (const props::InvarianceShape& sh : opt.shapes) {
      largest.push_back(golden::CaseSpec{}
                            .entry(golden::EntryPoint::gemm_pipelined)
                            .shape(m_max, sh.n, std::max(sh.k, props::kGemvNeedleMinK)));
      sources.push_back("--shape " + std::to_string(sh.n) + "x" + std::to_string(sh.k) +
                        " at M = " + std::to_string(m_max));
    }
    const std::string over = props::over_limits(largest, sources, props::WorkLimits{});
    if (!over.empty()) return usage("the sweep's largest calls pass the work limits:\n" + over);
  }
  if (!a.verdicts.empty()) {
    for (bool& k : opt.kinds) k = false;
    for (const std::string& v : a.verdicts) {
      bool found = false;
      for (props::InvarianceKind k : props::kAllInvarianceKinds)
        if (v == props::invariance_kind_name(k)) opt.kinds[static_cast<int>(k)] = true, found = true;
      if (!found) return usage("unknown --verdict " + golden::quote(v) + " (run-to-run, batch, tier, contract)");
    }
  }
  opt.positions = a.no_permutations ? props::kFixedPositionBits : props::kAllPositionBits;
  opt.seed = a.seed;
  opt.threads = a.threads;
  opt.save_dir = a.save_dir;
  opt.contract = a.contract;
  std::vector<golden::EntryPoint> wanted;
  if (!parse_entry_args(a.entries, &wanted, &error)) return usage(error);
  if (!begin_report(a.json.get(), &error)) return usage(error);
  std::string note;
  bool no_gpu = false;
  auto backend = make_backend(a.backend, &note, &error, a.module, 0, &no_gpu);
  if (!backend) return backend_refused("invariance", error, no_gpu);
  opt.backend_name = device::backend_option(backend->kind());
  if (wanted.empty()) wanted = entries_the_module_holds(backend->registry(), "invariance");
  opt.entries = wanted;
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : wanted) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) return usage(error);

  std::printf("w8a16check invariance: backend %s; seed %llu\n", note.c_str(),
              static_cast<unsigned long long>(opt.seed));
  std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
  std::fputs(props::contract_report_text(opt.contract).c_str(), stdout);
  const auto cases = make_launcher(*backend, a.module, 0, false, a.deadlines);
  props::BackendInvarianceLauncher launcher(*cases, *backend);
  const props::InvarianceReport report = props::run_invariance(launcher, opt, backend->registry(), backend->limits(),
                                                               [](const std::string& what) {
                                                                 std::fprintf(stderr, "invariance: %s\n", what.c_str());
                                                               });
  std::fputs(props::invariance_text(report, opt).c_str(), stdout);

  const bool pass = report.pass();
  int status = pass ? kExitPass : kExitFail;
  if (!a.json->path.empty()) {
    if (!finish_report(a.json.get(), invariance_json_report(report, opt, backend->name()), &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      status = kExitUsage;
    }
  }
  std::fputs(verdict_line(pass ? "PASS" : "FAIL", pass ? "every asked verdict holds" : "").c_str(), stdout);
  return status;
}

}  // namespace cmd_invariance
}  // namespace w8a16::cli
