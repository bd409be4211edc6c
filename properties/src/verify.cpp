// SPDX-License-Identifier: MIT OR Apache-2.0
// The verification run's result, its verdict rules and the campaign over several launchers (verify.hpp).
#include "w8a16/properties/verify.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <thread>

#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/properties/case_files.hpp"
#include "w8a16/properties/mmav_replay.hpp"
#include "w8a16/reference/mma.hpp"

namespace w8a16::props {
namespace {
namespace fs = std::filesystem;

// Every .mmav under the folders, or a file named directly; anything else there is an error.
std::vector<std::string> recorded_mma_files(const std::vector<std::string>& roots, std::vector<std::string>* errors) {
  std::vector<std::string> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (fs::is_directory(root, ec)) {
      const std::vector<std::string> found = files_under(root, ".mmav", errors);
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(root);  // read_mmav_file says what it is when it is not a .mmav file
    }
  }
  return files;
}

std::uint64_t shard_share(std::uint64_t count, const CampaignOptions& opt) {
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < count; ++i) n += i % opt.shard_count == opt.shard_index;
  return n;
}

}  // namespace

MmaReplaySummary replay_recorded_mmas(const std::vector<std::string>& roots,
                                      const std::vector<std::string>& not_hardware) {
  MmaReplaySummary s;
  std::vector<std::string> errors;
  const std::vector<std::string> files = recorded_mma_files(roots, &errors);
  for (const std::string& e : errors) {
    s.problems.push_back(e);
    ++s.unreadable;
  }
  for (const std::string& f : files) {
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(fs::absolute(f, ec), ec).string();
    if (std::find(not_hardware.begin(), not_hardware.end(), canonical) != not_hardware.end()) {
      ++s.not_hardware;
      continue;
    }
    ++s.files;
    golden::MmavFile file;
    std::string error;
    if (!golden::read_mmav_file(f, &file, &error)) {
      s.problems.push_back(golden::shown(f) + ": " + error);
      ++s.unreadable;
      continue;
    }
    const MmavReplay r = replay_mmav(file, ref::kMmaSm90, 3);
    s.dots += r.dot_products;
    s.mismatches += r.mismatches;
    for (const std::string& line : r.details)
      s.problems.push_back(golden::shown(fs::path(f).filename().string()) + ": " + line);
  }
  return s;
}

bool cut_short(const VerifyResult& v) {
  const CampaignResult& r = v.campaign;
  return r.stopped_by_hang || !v.recordings.hang.empty() || r.not_run_lost_context > 0;
}

std::string coverage_not_judged(const VerifyResult& v) {
  if (!v.coverage.checked) return "not checked (--no-coverage)";
  if (cut_short(v)) return "not judged: the run was cut short, and the cells of the cases not run are not gaps";
  if (v.shard_count != 1)
    return "not judged: shard " + std::to_string(v.shard_index) + "/" + std::to_string(v.shard_count) +
           (v.shard_from.empty() ? "" : " (from " + v.shard_from + ")") +
           " runs part of the coverage cases; the union of every shard's JSON, or an unsharded run, judges coverage";
  return "";
}

void judge_coverage(VerifyResult* v) {
  if (!coverage_not_judged(*v).empty()) return;
  const std::vector<std::string> gaps = coverage_gaps(v->coverage.expected, v->campaign.coverage);
  v->coverage.gaps.insert(v->coverage.gaps.end(), gaps.begin(), gaps.end());
}

std::vector<CoverageRow> coverage_rows(const VerifyResult& v) {
  const std::vector<CoverageKey>& expected = v.coverage.expected;
  const CoverageTable& table = v.campaign.coverage;
  std::vector<CoverageRow> rows;
  for (const CoverageKey& k : expected) {
    const auto it = table.find(k);
    rows.push_back({k, it == table.end() ? CoverageCell{} : it->second, true});
  }
  for (const auto& [k, cell] : table)
    if (std::find(expected.begin(), expected.end(), k) == expected.end()) rows.push_back({k, cell, false});
  return rows;
}

std::vector<Reason> verdict_reasons(const VerifyResult& v) {
  std::vector<Reason> out;
  auto fail = [&](const std::string& group, const std::string& message, std::vector<std::string> details = {}) {
    out.push_back({group, message, std::move(details)});
  };
  const CampaignResult& r = v.campaign;
  const RecordingsResult& rec = v.recordings;
  if (v.perturb_run) {
    // The perturbed stage and the protocol check are such a run's only stages.
    const PerturbResult& p = v.perturb;
    if (!p.failures.empty()) {
      std::vector<std::string> details;
      for (const PerturbFailure& f : p.failures) details.push_back(perturb_failure_text(f));
      fail("perturb", std::to_string(p.failures.size()) + " failing launches under timing seeds", details);
    }
    if (p.cases_run == 0) fail("perturb", "no case ran on the perturbed module");
    if (!p.complete)
      fail("perturb", "INCOMPLETE: " + std::to_string(p.cases_run) + " of " + std::to_string(p.cases) +
                          " cases ran (the time budget, --max-failures, a hang or a timing control's error)");
  }
  auto protocol = [&] {
    if (!v.protocol_run || v.protocol.findings.empty()) return;
    std::vector<std::string> where;
    for (const ProtocolFinding& f : v.protocol.findings) where.push_back(f.kernel + " [" + f.rule + "]: " + f.what);
    fail("protocol", std::to_string(v.protocol.findings.size()) + " protocol findings in the pipelined symbols", where);
  };
  if (v.perturb_run) {
    protocol();
    return out;
  }
  for (const std::string& p : v.evidence.failures) fail("evidence", p);
  if (v.mma.dots == 0) fail("recorded_mma", "no recorded MMA was replayed (no .mmav file under the --mma-dir folders)");
  if (v.mma.mismatches || v.mma.unreadable)
    fail("recorded_mma",
         std::to_string(v.mma.mismatches) + " recorded MMA mismatches, " + std::to_string(v.mma.unreadable) +
             " unreadable files",
         v.mma.problems);
  // A shard replays part of the recordings and may hold none of them.
  if (rec.unreadable) fail("recordings", "a recording could not be read: " + rec.error);
  else if (v.recordings_replayed && rec.cases == 0 && v.shard_count == 1)
    fail("recordings", "no recorded GPU output was replayed");
  if (rec.emulator_differ || rec.device_differ)
    fail("recordings",
         std::to_string(rec.emulator_differ) + " recorded cases differ from the emulator" +
             (v.on_gpu ? ", " + std::to_string(rec.device_differ) + " from this GPU" : ""),
         rec.failures);
  std::uint64_t total_cases = 0;
  for (const auto& [e, t] : r.per_entry) total_cases += t.cases;
  if (total_cases == 0) fail("campaign", "no case ran");
  if (v.saved_asked && v.saved_chosen == 0)
    fail("saved_cases", "no saved case was replayed: none of the chosen entry points under the saved-case paths");
  if (!v.case_file_errors.empty())
    fail("saved_cases", std::to_string(v.case_file_errors.size()) + " case file errors", v.case_file_errors);
  if (!r.failures.empty()) fail("cases", std::to_string(r.failures.size()) + " failing cases");
  if (r.stopped_by_failures)
    fail("cases", "stopped after --max-failures " + std::to_string(v.max_failures) + " failing cases");
  if (!rec.hang.empty()) fail("recordings", "a launch hung: HANG " + rec.hang);
  if (r.stopped_by_hang) fail("cases", "a launch hung: HANG " + r.hang);
  if (r.faulted) fail("cases", std::to_string(r.faulted) + " cases faulted (the context was lost; each ran alone)");
  if (r.not_run_after_hang) fail("campaign", std::to_string(r.not_run_after_hang) + " cases not run after the hang");
  if (r.not_run_lost_context)
    fail("campaign",
         std::to_string(r.not_run_lost_context) + " cases not run: the context was lost and could not be replaced");
  if (!v.coverage.gaps.empty())
    fail("coverage", std::to_string(v.coverage.gaps.size()) + " coverage gaps", v.coverage.gaps);
  protocol();
  if (v.sanitize_run && v.sanitize.findings() > 0) {
    std::vector<std::string> where;
    for (const SanitizerToolRun& t : v.sanitize.tools)
      for (const SanitizerFinding& f : t.findings)
        where.push_back("[" + f.tool + "] " + f.what + (f.kernel.empty() ? "" : " [kernel " + f.kernel + "]") +
                        " case: " + (f.case_line.empty() ? "-" : f.case_line));
    fail("sanitize", std::to_string(v.sanitize.findings()) + " sanitizer findings (racecheck, synccheck)", where);
  }
  // The batch and tier rows (invariance.hpp): each failing (entry point, verdict) is a reason of
  // the group "invariance.<verdict>", under that entry point's JUnit test case of the verdict.
  if (v.invariance_run) {
    const InvarianceReport& inv = v.invariance;
    if (inv.hung) fail("invariance.batch", "a launch hung in the invariance sweep: " + inv.hang);
    for (InvarianceKind k : {InvarianceKind::batch, InvarianceKind::tier}) {
      bool compared = false;
      for (const ShapeInvariance& s : inv.shapes)
        for (const EntryInvariance& e : s.entries) {
          const InvarianceVerdict& iv = e.verdicts[static_cast<int>(k)];
          compared = compared || iv.comparisons > 0 || !iv.applicable();
          if (iv.failures == 0) continue;
          const InvarianceFailure& f = iv.first;
          std::string msg = std::string(golden::entry_point_name(e.entry)) + ": " + invariance_kind_name(k) +
                            " invariance FAIL at M=" + std::to_string(f.m) + " " + f.position;
          msg += f.error.empty() ? " row " + std::to_string(f.row) + " column " + std::to_string(f.column) +
                                       " differs from " + f.against
                                 : ": " + f.error;
          fail(std::string("invariance.") + invariance_kind_name(k), msg,
               {f.what, "replay: w8a16check invariance --entry " + std::string(golden::entry_point_name(e.entry)) +
                            " --shape " + std::to_string(s.shape.n) + "x" + std::to_string(s.shape.k) + " --m " +
                            std::to_string(f.m) + " --verdict " + invariance_kind_name(k) +
                            " (saves an operand bundle of the failing launch)"});
        }
      if (!compared && !inv.hung)
        fail(std::string("invariance.") + invariance_kind_name(k), "the invariance sweep compared nothing");
    }
  }
  return out;
}

std::uint64_t planned_cases(const CampaignOptions& opt) {
  return shard_share(opt.saved.size(), opt) + shard_share(opt.aimed.size(), opt) + shard_share(opt.cases, opt);
}

CampaignResult run_campaign_over(const std::vector<CaseLauncher*>& launchers, const CampaignOptions& opt,
                                 const std::function<void(std::uint32_t, const CampaignProgress&)>& progress) {
  const auto g = static_cast<std::uint32_t>(launchers.size());
  std::vector<CampaignResult> parts(g);
  std::vector<std::exception_ptr> thrown(g);
  std::vector<std::thread> threads;
  const unsigned cores = std::thread::hardware_concurrency() ? std::thread::hardware_concurrency() : 1u;
  for (std::uint32_t j = 0; j < g; ++j) {
    CampaignOptions o = opt;
    o.shard_index = opt.shard_index + opt.shard_count * j;
    o.shard_count = opt.shard_count * g;
    o.threads = std::max(1u, cores / g);
    threads.emplace_back([&, j, o] {
      // An exception must reach the caller (the CLI: a message and exit 2), not std::terminate.
      try {
        parts[j] = run_campaign(*launchers[j], o, [&, j](const CampaignProgress& p) { progress(j, p); });
      } catch (...) {
        thrown[j] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : thrown)
    if (e) std::rethrow_exception(e);
  CampaignResult merged;
  for (const CampaignResult& part : parts) merge_campaign_result(&merged, part);
  return merged;
}

std::string specials_text(std::uint32_t seen) {
  int count = 0;
  std::string missing;
  for (int b = 0; b < golden::kSpecialClassCount; ++b) {
    if ((seen >> b) & 1u) ++count;
    else missing += (missing.empty() ? "" : ",") + std::string(golden::special_class_name(b));
  }
  return std::to_string(count) + "/" + std::to_string(golden::kSpecialClassCount) +
         (missing.empty() ? "" : " (not seen: " + missing + ")");
}

}  // namespace w8a16::props
