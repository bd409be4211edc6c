// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check verify`: the default verification campaign and its verdict: recorded MMAs and GPU
// recordings against the emulator, then saved and seeded cases on the best backend present against
// the emulator.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_cases.hpp"
#include "command.hpp"
#include "data_dir.hpp"
#include "evidence.hpp"
#include "gpu_identity.hpp"
#include "options.hpp"
#include "recordings_replay.hpp"
#include "report_files.hpp"
#include "vectors_replay.hpp"
#include "w8a16/golden/files.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/mmav.hpp"
#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/regression.hpp"

namespace w8a16::cli {
namespace {

namespace fs = std::filesystem;
using props::CampaignResult;

// Recorded MMAs the campaign replays: every .mmav under the folders (by default the data folder's
// mma/: golden/mma/README.md), or a .mmav named directly; anything else there is an error.
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

struct MmaSummary {
  std::uint64_t files = 0, dots = 0, mismatches = 0, unreadable = 0, not_hardware = 0;
  std::vector<std::string> problems;
};

// `not_hardware`: files the evidence check failed (evidence.hpp: cut, changed, not listed, made by
// the simulation); they are not replayed as hardware, and the evidence reasons name them.
MmaSummary replay_recorded_mmas(const std::vector<std::string>& roots, const std::vector<std::string>& not_hardware) {
  MmaSummary s;
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
    const VectorsReplay r = replay_mmav(file, ref::kMmaSm90, 3);
    s.dots += r.dot_products;
    s.mismatches += r.mismatches;
    for (const std::string& line : r.details) s.problems.push_back(golden::shown(fs::path(f).filename().string()) + ": " + line);
  }
  return s;
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

// A reason the verdict is not PASS, under the JUnit test case that fails for it. Every reason
// appears in the text, as a <failure> in the JUnit and as an entry of the JSON's "failures".
struct Reason {
  std::string group;    // the test case: evidence, recorded_mma, recordings, saved_cases, campaign
  std::string message;  // one line
  std::vector<std::string> details;
};

// The JUnit test cases that are not an entry point's, in order: (group, classname, name).
constexpr const char* kGroups[][3] = {
    {"evidence", "verify.evidence", "files_match_their_manifests_and_are_hardware"},
    {"recorded_mma", "verify.recorded_mma", "sm90_model_vs_hardware"},
    {"recordings", "verify.recordings", "emulator_vs_gpu_recordings"},
    {"saved_cases", "verify.saved_cases", "case_files_read_and_replayed"},
    {"campaign", "verify.campaign", "cases_ran"},
    {"coverage", "verify.coverage", "every_cell_drawn"},
};

// What verify knows about coverage: the cells it expected, and what the campaign left empty.
struct CoverageReport {
  bool checked = false;                        // false with --no-coverage
  std::vector<props::CoverageKey> expected;    // expected_cells for the backend and the entry points
  std::vector<std::string> gaps;               // coverage_gaps, plus cells no aimed shape reached
  std::uint64_t aimed = 0, aimed_without = 0;  // coverage cases, and those planned with kernels taken away
};

// Seconds each part of the run took, in the order they run.
struct StageTimes {
  double evidence = 0, recorded_mma = 0, recordings = 0, cases = 0, total = 0;
};

struct VerifyOutcome {
  StageTimes times;
  bool quick = false;
  EvidenceReport evidence;
  MmaSummary mma;
  RecordingsResult rec;
  bool recordings_replayed = false;
  CampaignResult r;
  std::vector<Reason> reasons;
  std::vector<std::string> case_file_errors;
  CoverageReport cov;
};

std::string junit_report(const VerifyOutcome& v, const std::string& backend, const RunIdentity& id) {
  const CampaignResult& r = v.r;
  std::size_t failed = 0;
  std::string body;
  for (const auto& g : kGroups) {
    // One <failure> per test case (JUnit's schema), holding every reason of its group.
    std::string message, details;
    for (const Reason& x : v.reasons) {
      if (x.group != g[0]) continue;
      message += (message.empty() ? "" : "; ") + x.message;
      for (const std::string& d : x.details) details += xml_text(d) + "\n";
    }
    const std::string fails =
        message.empty() ? "" : "    <failure message=\"" + xml_text(message) + "\">" + details + "</failure>\n";
    failed += !fails.empty();
    body += std::string("  <testcase classname=\"") + g[1] + "\" name=\"" + g[2] + "\">\n" + fails;
    if (std::string(g[0]) == "recordings" && !v.recordings_replayed && fails.empty())
      body += "    <skipped message=\"not replayed (--no-recordings)\"/>\n";
    if (std::string(g[0]) == "coverage" && !v.cov.checked && fails.empty())
      body += "    <skipped message=\"not checked (--no-coverage)\"/>\n";
    body += "  </testcase>\n";
  }
  for (const auto& [e, t] : r.per_entry) {
    body += "  <testcase classname=\"verify." + xml_text(backend) + "\" name=\"" +
            std::string(golden::entry_point_name(e)) + "\">\n";
    if (t.mismatching_cases || t.errors) {
      ++failed;
      body += "    <failure message=\"" + std::to_string(t.mismatching_cases) + " mismatching cases, " +
              std::to_string(t.errors) + " errors\">";
      for (const props::CaseFailure& f : r.failures)
        if (f.c.entry == e) body += xml_text(f.source + ": " + golden::format_case(f.c) + "\n  " + f.why) + "\n";
      body += "</failure>\n";
    }
    body += "    <system-out>cases " + std::to_string(t.cases) + ", bytes compared " + std::to_string(t.bytes_compared) +
            ", special classes " + xml_text(specials_text(t.specials_seen)) + "</system-out>\n  </testcase>\n";
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", r.seconds);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"w8a16check.verify\" tests=\"" +
         std::to_string(std::size(kGroups) + r.per_entry.size()) + "\" failures=\"" + std::to_string(failed) +
         "\" time=\"" + seconds + "\">\n" + identity_junit_properties(id) + body + "</testsuite>\n</testsuites>\n";
}

nlohmann::json specials_json(std::uint32_t seen, bool present) {
  nlohmann::json a = nlohmann::json::array();
  for (int b = 0; b < golden::kSpecialClassCount; ++b)
    if (((seen >> b) & 1u) == present) a.push_back(std::string(golden::special_class_name(b)));
  return a;
}

nlohmann::json coverage_json(const CampaignResult& r, const CoverageReport& cov) {
  nlohmann::json c;
  c["checked"] = cov.checked;
  c["aimed_cases"] = cov.aimed;
  c["aimed_cases_planned_without_some_kernels"] = cov.aimed_without;
  c["gaps"] = cov.gaps;
  c["cells"] = nlohmann::json::array();
  std::vector<props::CoverageKey> keys = cov.expected;
  for (const auto& [k, v] : r.coverage)
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  for (const props::CoverageKey& k : keys) {
    const auto it = r.coverage.find(k);
    const props::CoverageCell cell = it == r.coverage.end() ? props::CoverageCell{} : it->second;
    c["cells"].push_back({{"entry_point", std::string(golden::entry_point_name(k.entry))},
                          {"body", device::body_name(k.body)},
                          {"configuration", k.config},
                          {"expected", std::find(cov.expected.begin(), cov.expected.end(), k) != cov.expected.end()},
                          {"cases", cell.cases},
                          {"planned_without_some_kernels", cell.planned_without},
                          {"special_classes_seen", specials_json(cell.specials_seen, true)},
                          {"special_classes_missing", specials_json(cell.specials_seen, false)}});
  }
  return c;
}

std::string json_report(const VerifyOutcome& v, const std::string& backend, const props::CampaignOptions& opt,
                        const RunIdentity& id, const std::string& data) {
  const CampaignResult& r = v.r;
  nlohmann::json j;
  j["verdict"] = v.reasons.empty() ? "PASS" : "FAIL";
  j["why_not_pass"] = nlohmann::json::array();
  for (const Reason& x : v.reasons) j["why_not_pass"].push_back(x.message);
  add_identity_json(&j, id);
  j["data_dir"] = data;
  j["backend"] = backend;
  j["seed"] = opt.seed;
  j["shard"] = {{"index", opt.shard_index}, {"count", opt.shard_count}};
  j["seconds"] = r.seconds;
  j["mode"] = v.quick ? "quick" : "full";
  j["stage_seconds"] = {{"evidence", v.times.evidence}, {"recorded_mma", v.times.recorded_mma},
                        {"recordings", v.times.recordings}, {"cases", v.times.cases}, {"total", v.times.total}};
  j["evidence"] = {{"folders", v.evidence.folders}, {"manifests", v.evidence.manifests},
                   {"files_checked", v.evidence.files}, {"problems", v.evidence.failures},
                   {"not_hardware", v.evidence.simulated}, {"notes", v.evidence.notes}};
  j["recorded_mma"] = {{"files", v.mma.files}, {"dot_products", v.mma.dots}, {"mismatches", v.mma.mismatches},
                       {"unreadable", v.mma.unreadable}};
  j["recordings"] = {{"replayed", v.recordings_replayed}, {"files", v.rec.files}, {"cases", v.rec.cases},
                     {"emulator_differ", v.rec.emulator_differ}, {"device_differ", v.rec.device_differ},
                     {"notes", v.rec.notes}};
  j["cases"] = {{"saved_run", r.saved_run},
                {"aimed_run", r.aimed_run},
                {"drawn_run", r.drawn_run},
                {"drawn_planned", r.drawn_planned},
                {"stopped_by_time_budget", r.stopped_by_budget},
                {"stopped_by_max_failures", r.stopped_by_failures},
                {"case_file_errors", v.case_file_errors}};
  j["coverage"] = coverage_json(r, v.cov);
  j["launches"] = {{"faulted", r.faulted},
                   {"not_run_lost_context", r.not_run_lost_context},
                   {"hang", !v.rec.hang.empty() ? v.rec.hang : r.hang},
                   {"not_run_after_hang", r.not_run_after_hang},
                   {"worker_processes", r.worker_starts}};
  j["entry_points"] = nlohmann::json::object();
  for (const auto& [e, t] : r.per_entry) {
    nlohmann::json specials = nlohmann::json::array();
    for (int b = 0; b < golden::kSpecialClassCount; ++b)
      if ((t.specials_seen >> b) & 1u) specials.push_back(std::string(golden::special_class_name(b)));
    j["entry_points"][std::string(golden::entry_point_name(e))] = {
        {"cases", t.cases},           {"bytes_compared", t.bytes_compared}, {"mismatching_cases", t.mismatching_cases},
        {"mismatched_elements", t.mismatched_elements}, {"errors", t.errors}, {"special_classes_seen", specials}};
  }
  // Every reason for the verdict, then every failing case: a FAIL always lists what failed.
  j["failures"] = nlohmann::json::array();
  for (const Reason& x : v.reasons)
    if (x.group != "cases") j["failures"].push_back({{"kind", x.group}, {"why", x.message}, {"details", x.details}});
  for (const props::CaseFailure& f : r.failures)
    j["failures"].push_back(
        {{"kind", f.why.rfind("HANG", 0) == 0 ? "hang" : f.why.rfind("FAULT", 0) == 0 ? "fault" : "case"},
         {"case", golden::format_case(f.c)}, {"source", f.source}, {"why", f.why},
         {"mismatched_elements", f.mismatched_elements}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

struct VerifyArgs {
  std::string data_dir;                  // --data-dir; else found (data_dir.hpp)
  std::vector<std::string> mma_roots;    // --mma-dir; default <data>/mma
  std::vector<std::string> case_paths;   // --cases-from; default <data>/cases and <data>/regressions
  std::vector<std::string> recordings;   // --recordings-from; default <data>/recordings
  bool saved = true;                     // --no-saved: replay no saved case
  bool replay_recordings = true;         // --no-recordings
  std::string module;                    // --module
  std::uint64_t cases = 1000;
  bool quick = false;               // --quick: the gate's campaign (the quick coverage plan, kQuickCases drawn)
  bool cases_given = false;         // --cases was given (it then wins over --quick's count)
  std::uint64_t seed = 1;
  double time_budget_s = 0;
  std::string backend = "auto";
  std::vector<std::string> entries, dists;
  std::string shard;
  std::uint64_t draw_max_macs = 0;  // 0: by backend
  WorkLimits limits;                // --max-macs / --max-bytes: no case above them runs
  std::uint32_t gpus = 0;           // 0: every visible GPU
  std::shared_ptr<Report> junit = std::make_shared<Report>(), json = std::make_shared<Report>();
  bool save_failures = true;
  bool coverage = true;            // --no-coverage: no coverage cases, no coverage verdict
  std::uint64_t max_failures = 0;  // --max-failures
  bool isolate = false;            // --isolate: the simulation's cases in worker processes too
};

int usage(const std::string& message) { return usage_error("verify", message); }

// `--quick`'s drawn cases: with the saved cases and the quick coverage plan they caught every
// planted kernel bug of tools/gpu-mutants (docs/JOURNAL.md).
constexpr std::uint64_t kQuickCases = 200;

// What this run compares, in its first lines: a reader must not take the simulation for hardware.
void print_scope(bool on_gpu, const std::vector<std::string>& mma_roots, const std::vector<std::string>& recordings,
                 bool replay_recs) {
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + golden::shown(x);
    return s;
  };
  std::printf("what this run compares:\n");
  std::printf("  - recorded MMAs (%s): the emulator's tensor-core step against MMAs recorded on hardware\n",
              list(mma_roots).c_str());
  if (replay_recs)
    std::printf("  - GPU recordings (%s): the emulator's whole-GEMM outputs against outputs recorded on a GPU%s\n",
                list(recordings).c_str(), on_gpu ? ", and this GPU's against them" : "");
  else
    std::printf("  - GPU recordings: not replayed (--no-recordings)\n");
  if (on_gpu)
    std::printf("  - saved and drawn cases on this GPU: every byte the kernels write against the emulator's\n");
  else
    std::printf("  - saved and drawn cases on the simulation (no GPU here): each kernel's launch plan and geometry\n"
                "    (grid, block, shared memory, which CTA writes which element, bounds, pitch padding) with every\n"
                "    value taken from the emulator. It cannot find an arithmetic bug in a kernel: the recorded MMAs\n"
                "    and the GPU recordings above are this run's hardware evidence.\n");
}

int run_verify(const VerifyArgs& a) {
  props::CampaignOptions opt;
  opt.cases = a.quick && !a.cases_given ? kQuickCases : a.cases;
  opt.seed = a.seed;
  opt.time_budget_s = a.time_budget_s;
  opt.max_failures = a.max_failures;
  std::string error;
  // --shard wins; else GoogleTest's variables, so CI that shards test binaries shards this too.
  std::string shard = a.shard;
  if (shard.empty() && std::getenv("GTEST_TOTAL_SHARDS"))
    shard = std::string(std::getenv("GTEST_SHARD_INDEX") ? std::getenv("GTEST_SHARD_INDEX") : "") + "/" +
            std::getenv("GTEST_TOTAL_SHARDS");
  if (!shard.empty() && !props::parse_shard(shard, &opt.shard_index, &opt.shard_count, &error))
    return usage(golden::escaped(error));
  if (!a.entries.empty()) {
    opt.draw.entries.clear();
    for (const std::string& name : a.entries) {
      golden::EntryPoint e;
      const std::string full = name.rfind("w8a16_", 0) == 0 ? name : "w8a16_" + name;
      if (!golden::parse_entry_point(full, &e))
        return usage("unknown --entry " + golden::quote(name) + " (e.g. gemm_pipelined_m32_strided)");
      opt.draw.entries.push_back(e);
    }
  }
  if (!a.dists.empty()) {
    opt.draw.dists.clear();
    for (const std::string& name : a.dists) {
      golden::Distribution d;
      if (!golden::parse_distribution(name, &d)) return usage("unknown --dist " + golden::quote(name));
      opt.draw.dists.push_back(d);
    }
  }
  // Where the recorded MMAs, the recordings and the saved cases come from: every folder or file named
  // on the command line must exist, and so must the data folder's mma/, recordings/ and cases/ when
  // they are the defaults (its regressions/ appears with the first saved failure). Nothing found is
  // exit 2, never a campaign that checked nothing.
  if (!a.saved && !a.case_paths.empty()) return usage("--no-saved and --cases-from contradict each other");
  if (!a.replay_recordings && !a.recordings.empty())
    return usage("--no-recordings and --recordings-from contradict each other");
  std::error_code ec;
  const bool need_data = a.mma_roots.empty() || (a.saved && a.case_paths.empty()) ||
                         (a.replay_recordings && a.recordings.empty());
  const DataDir data = find_data_dir(a.data_dir);
  if (data.path.empty() && (need_data || !a.data_dir.empty())) return usage(data.error);
  std::vector<std::string> mma_roots = a.mma_roots, case_paths = a.case_paths, recordings = a.recordings;
  if (mma_roots.empty()) mma_roots.push_back((fs::path(data.path) / "mma").string());
  if (a.replay_recordings && recordings.empty()) recordings.push_back((fs::path(data.path) / "recordings").string());
  if (a.saved && case_paths.empty()) {
    case_paths.push_back((fs::path(data.path) / "cases").string());
    const fs::path regressions = fs::path(data.path) / "regressions";
    if (fs::is_directory(regressions, ec)) case_paths.push_back(regressions.string());
  }
  for (const auto* list : {&mma_roots, &case_paths, &recordings})
    for (const std::string& p : *list)
      if (!fs::exists(p, ec))
        return usage(golden::shown(p) + ": no such file or folder" +
                     (data.path.empty() ? "" : " (" + data_dir_line(data) + ")"));
  // The saved cases are read and costed before anything runs: a case no machine here can run is
  // refused with the limit that stops it, not started.
  const LoadedCases saved = load_cases(case_paths);
  for (std::size_t i = 0; i < saved.cases.size(); ++i) {
    const bool wanted = std::find(opt.draw.entries.begin(), opt.draw.entries.end(), saved.cases[i].entry) != opt.draw.entries.end();
    if (!wanted) continue;
    opt.saved.push_back(saved.cases[i]);
    opt.saved_sources.push_back(saved.sources[i]);
  }
  const std::string over = over_limits(opt.saved, opt.saved_sources, a.limits);
  if (!over.empty()) return usage(over + "\nnothing was run");

  // The reports can be written, and an earlier run's are marked INCOMPLETE, before the module is
  // loaded: a driver that crashes on it cannot leave an earlier PASS in place.
  for (Report* rep : {a.junit.get(), a.json.get()})
    if (!begin_report(rep, &error)) return usage(error);
  std::string note;
  auto backend = make_backend(a.backend, &note, &error, a.module);
  if (!backend) return usage(error);
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : opt.draw.entries) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) return usage(error);
  const RunIdentity id = run_identity(*backend);
  const bool on_gpu = std::string(backend->name()) == "cuda";
  // The emulator computes every expected byte on the host: on a 2-core machine 2^23 multiply-adds
  // per case keeps the default campaign to a few minutes and admits the smaller model shapes at m=1.
  const std::uint64_t draw_default = on_gpu ? std::uint64_t{1} << 28 : std::uint64_t{1} << 23;
  opt.draw.max_macs = std::min(a.draw_max_macs != 0 ? a.draw_max_macs : draw_default, a.limits.max_macs);

  // Coverage by construction (coverage.hpp): every cell this module can run through the chosen
  // entry points gets cases aimed at it. On a GPU they hold every special class and the data that
  // shows the order; on the simulation, whose values are the emulator's by construction and whose
  // findings are the geometry's, every special class only.
  VerifyOutcome v;
  v.quick = a.quick;
  using Clock = std::chrono::steady_clock;
  const auto run_start = Clock::now();
  auto stage_start = run_start;
  // The seconds since the last call (or the run's start).
  auto lap = [&] {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - stage_start).count();
    stage_start = now;
    return s;
  };
  CoverageReport& cov = v.cov;
  cov.checked = a.coverage;
  if (a.coverage) {
    cov.expected = props::expected_cells(backend->registry(), opt.draw.entries);
    std::vector<props::CoverageKey> unreached;
    opt.aimed = props::coverage_plan(backend->registry(), backend->limits(), opt.draw.entries,
                                     props::coverage_distributions(on_gpu), opt.seed, &unreached);
    for (const props::CoverageKey& k : unreached)
      cov.gaps.push_back("no aimed shape reaches " + props::coverage_key_text(k) + " (coverage.cpp aimed_shapes)");
    if (a.quick) opt.aimed = props::quick_coverage_plan(opt.aimed);
    cov.aimed = opt.aimed.size();
    for (const props::AimedCase& x : opt.aimed) cov.aimed_without += x.c.without != 0;
  }

  std::printf("w8a16check verify%s: backend %s; seed %" PRIu64 ", %" PRIu64 " drawn cases, shard %u/%u\n",
              a.quick ? " --quick (the gate)" : "", note.c_str(), opt.seed, opt.cases, opt.shard_index, opt.shard_count);
  print_scope(on_gpu, mma_roots, recordings, a.replay_recordings);
  std::fputs(identity_text(id).c_str(), stdout);
  if (!data.path.empty()) std::printf("%s\n", data_dir_line(data).c_str());

  // 0. The evidence itself: the data folder's files against their manifests, and nothing the
  //    simulation made counted as hardware (golden/include/w8a16/golden/manifest.hpp).
  {
    std::vector<std::string> read = mma_roots;
    read.insert(read.end(), recordings.begin(), recordings.end());
    read.insert(read.end(), case_paths.begin(), case_paths.end());
    lap();
    v.evidence = check_evidence(data.path, read);
    v.times.evidence = lap();
    std::printf("evidence (manifests): %" PRIu64 " folders, %" PRIu64 " manifests, %" PRIu64 " files checked, %zu problems\n",
                v.evidence.folders, v.evidence.manifests, v.evidence.files, v.evidence.failures.size());
    for (const std::string& p : v.evidence.failures) std::printf("  FAIL %s\n", p.c_str());
    for (const std::string& n : v.evidence.notes) std::printf("  note: %s\n", n.c_str());
  }

  // 1. Recorded MMAs: the emulator's tensor-core model against the hardware.
  std::vector<std::string> not_counted = v.evidence.failed;
  not_counted.insert(not_counted.end(), v.evidence.simulated.begin(), v.evidence.simulated.end());
  v.mma = replay_recorded_mmas(mma_roots, not_counted);
  v.times.recorded_mma = lap();
  std::printf("recorded MMAs (sm90 model vs hardware): %" PRIu64 " files, %" PRIu64 " dot products, %" PRIu64
              " mismatches, %" PRIu64 " unreadable%s\n",
              v.mma.files, v.mma.dots, v.mma.mismatches, v.mma.unreadable,
              v.mma.not_hardware ? (", " + std::to_string(v.mma.not_hardware) + " failing the evidence check not counted").c_str() : "");
  for (const std::string& p : v.mma.problems) std::printf("  %s\n", p.c_str());
  std::fflush(stdout);  // before the progress lines on stderr

  // Every launch goes through a launcher (launcher.hpp): on a GPU each GPU's cases run in a worker
  // process, so a kernel that hangs, faults or crashes fails its case and the run goes on.
  std::vector<std::unique_ptr<device::Backend>> extra;
  if (on_gpu && a.gpus != 1) extra = more_gpu_backends(a.gpus, a.module);
  std::vector<device::Backend*> backends{backend.get()};
  for (auto& b : extra) backends.push_back(b.get());
  std::vector<std::unique_ptr<props::CaseLauncher>> launchers;
  for (std::size_t j = 0; j < backends.size(); ++j)
    launchers.push_back(make_launcher(*backends[j], a.module, static_cast<int>(j), a.isolate));

  // 2. GPU recordings: the emulator's whole GEMMs (and this GPU's) against a GPU's recorded bytes.
  if (a.replay_recordings) {
    RecordingsOptions ro;
    ro.command = "verify";
    ro.limits = a.limits;
    ro.module = a.module;
    ro.device = on_gpu ? launchers[0].get() : nullptr;
    ro.shard_index = opt.shard_index;
    ro.shard_count = opt.shard_count;
    // A recording the evidence check failed (cut, changed, not listed) is named there and not read
    // again; one the simulation made is replayed as what it is, and its evidence FAIL stands.
    lap();
    v.rec = replay_recordings(without_failed(recordings, ".rec", v.evidence), ro);
    v.times.recordings = lap();
    // A recording that cannot be read is evidence that fails, as an unreadable .mmav or .case is:
    // a FAIL naming it, with the reports (other input errors, a case over the limits, stay exit 2).
    if (v.rec.status == kExitUsage && !v.rec.unreadable) return usage(v.rec.error);
    if (v.rec.status == kExitUsage) {
      std::printf("FAIL recordings: %s\n", v.rec.error.c_str());
      v.rec.failures.push_back(v.rec.error);
    }
    v.recordings_replayed = true;
    std::fflush(stdout);
  }

  // 3. Saved cases, then drawn ones.
  v.case_file_errors = saved.errors;
  for (const std::string& e : saved.errors) std::printf("  case file error: %s\n", e.c_str());
  // Every visible GPU takes part: GPU j of shard i/n runs the cases of sub-shard (i + n*j)/(n*g),
  // which together are exactly shard i/n's, so the verdict never depends on the GPU count.
  const auto g = static_cast<std::uint32_t>(backends.size());
  if (g > 1) std::printf("spreading over %u GPUs\n", g);
  std::uint64_t planned = 0;
  for (std::uint64_t i = 0; i < opt.saved.size(); ++i) planned += i % opt.shard_count == opt.shard_index;
  for (std::uint64_t i = 0; i < opt.aimed.size(); ++i) planned += i % opt.shard_count == opt.shard_index;
  for (std::uint64_t i = 0; i < opt.cases; ++i) planned += i % opt.shard_count == opt.shard_index;

  const bool tty = isatty(fileno(stderr));
  std::mutex progress_mutex;
  std::vector<std::uint64_t> done(g, 0), failing(g, 0);
  std::uint64_t last_tenth = 0;
  auto report = [&](std::uint32_t j, const props::CampaignProgress& p) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    done[j] = p.done;
    failing[j] = p.failures;
    std::uint64_t all_done = 0, all_failing = 0;
    for (std::uint32_t x = 0; x < g; ++x) all_done += done[x], all_failing += failing[x];
    const std::uint64_t tenth = planned ? 10 * all_done / planned : 10;
    if (!tty && tenth == last_tenth && all_done != planned) return;
    last_tenth = tenth;
    std::fprintf(stderr, "%s[%" PRIu64 "/%" PRIu64 "] %.1fs, %" PRIu64 " failing; %s%s", tty ? "\r\033[K" : "",
                 all_done, planned, p.seconds, all_failing,
                 p.current ? std::string(golden::entry_point_name(p.current->entry)).c_str() : "", tty ? "" : "\n");
  };
  std::vector<CampaignResult> parts(g);
  std::vector<std::exception_ptr> thrown(g);
  std::vector<std::thread> threads;
  for (std::uint32_t j = 0; j < g; ++j) {
    props::CampaignOptions o = opt;
    // A hang in the recordings' replay ends the run there: every case is counted as not run.
    if (!v.rec.hang.empty()) o.saved.clear(), o.aimed.clear(), o.cases = 0;
    o.shard_index = opt.shard_index + opt.shard_count * j;
    o.shard_count = opt.shard_count * g;
    // The host's cores are shared by the GPUs' campaigns.
    o.threads = std::max(1u, (std::thread::hardware_concurrency() ? std::thread::hardware_concurrency() : 1u) / g);
    threads.emplace_back([&, j, o] {
      // An exception must reach main (a message and exit 2), not std::terminate.
      try {
        parts[j] = props::run_campaign(*launchers[j], o, [&, j](const props::CampaignProgress& p) { report(j, p); });
      } catch (...) {
        thrown[j] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  v.times.cases = lap();
  v.times.total = std::chrono::duration<double>(Clock::now() - run_start).count();
  for (const std::exception_ptr& e : thrown)
    if (e) std::rethrow_exception(e);
  for (const CampaignResult& part : parts) props::merge_campaign_result(&v.r, part);
  if (!v.rec.hang.empty()) v.r.not_run_after_hang += planned;
  const CampaignResult& r = v.r;
  // Cases that did not run because a launch hung or the context was lost are counted as such; the
  // cells they would have reached are not gaps of the campaign's design.
  const bool cut_short = r.stopped_by_hang || !v.rec.hang.empty() || r.not_run_lost_context > 0;
  if (tty) std::fprintf(stderr, "\n");

  std::printf("\n%-34s %7s %16s %11s %7s  %s\n", "entry point", "cases", "bytes compared", "mismatches", "errors",
              "special classes seen");
  std::uint64_t total_cases = 0;
  for (const auto& [e, t] : r.per_entry) {
    std::printf("%-34s %7" PRIu64 " %16" PRIu64 " %11" PRIu64 " %7" PRIu64 "  %s\n",
                std::string(golden::entry_point_name(e)).c_str(), t.cases, t.bytes_compared, t.mismatching_cases,
                t.errors, specials_text(t.specials_seen).c_str());
    total_cases += t.cases;
  }

  // The coverage table: what the cases really ran (their plans), cell by cell.
  if (cov.checked && cut_short) {
    std::printf("\ncoverage: not judged: %" PRIu64 " cases did not run (%s); the cells they would have reached are not "
                "counted as gaps\n",
                r.not_run_after_hang + r.not_run_lost_context,
                r.not_run_lost_context ? "the context was lost and could not be replaced" : "after a launch hung");
  } else if (cov.checked) {
    if (opt.shard_count == 1) {
      const std::vector<std::string> gaps = props::coverage_gaps(cov.expected, r.coverage);
      cov.gaps.insert(cov.gaps.end(), gaps.begin(), gaps.end());
    } else {
      std::printf("coverage: shard %u/%u: a shard runs part of the coverage cases; the union of the shards' JSON covers "
                  "every cell\n", opt.shard_index, opt.shard_count);
    }
    std::printf("\ncoverage (entry point x body x configuration x special class; the plan each case ran):\n");
    std::printf("  %-34s %-18s %-34s %6s %9s %8s\n", "entry point", "body", "configuration", "cases", "specials",
                "without=");
    std::vector<props::CoverageKey> keys = cov.expected;
    for (const auto& [k, c] : r.coverage)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const props::CoverageKey& k : keys) {
      const auto it = r.coverage.find(k);
      const props::CoverageCell cell = it == r.coverage.end() ? props::CoverageCell{} : it->second;
      int seen = 0;
      for (int b = 0; b < golden::kSpecialClassCount; ++b) seen += (cell.specials_seen >> b) & 1u;
      std::printf("  %-34s %-18s %-34s %6" PRIu64 " %6d/%-2d %8" PRIu64 "%s\n",
                  std::string(golden::entry_point_name(k.entry)).c_str(), device::body_name(k.body), k.config.c_str(),
                  cell.cases, seen, golden::kSpecialClassCount, cell.planned_without,
                  cell.cases == 0 ? "  EMPTY" : seen < golden::kSpecialClassCount ? "  (classes missing)" : "");
    }
    std::printf("coverage: %zu cells expected, %" PRIu64 " coverage cases, %" PRIu64
                " of them planned with kernels taken away (without=: the Hopper tier, to reach the seed's bodies on an "
                "sm_90a module; the tier's other symbols, to reach each of its own; the row-tile kernel, to reach "
                "by_m's 32-row tile); %zu gaps\n",
                cov.expected.size(), cov.aimed, cov.aimed_without, cov.gaps.size());
  } else {
    std::printf("\ncoverage: not checked (--no-coverage)\n");
  }
  std::printf("%" PRIu64 " saved, %" PRIu64 " coverage and %" PRIu64 " of %" PRIu64 " drawn cases in %.1fs%s%s\n",
              r.saved_run, r.aimed_run, r.drawn_run, r.drawn_planned, r.seconds,
              r.stopped_by_budget ? " (stopped by --time-budget)" : "",
              r.stopped_by_failures ? " (stopped by --max-failures)" : "");
  std::printf("launches: %" PRIu64 " faulted (each its case's failure), %" PRIu64 " not run after a lost context, %s; "
              "%" PRIu64 " worker processes\n",
              r.faulted, r.not_run_lost_context,
              r.stopped_by_hang || !v.rec.hang.empty()
                  ? ("a HANG, " + std::to_string(r.not_run_after_hang) + " not run after it").c_str()
                  : "no hang",
              r.worker_starts);
  std::printf("time: evidence %.1f s, recorded MMAs %.1f s, recordings %.1f s, cases %.1f s; %.1f s in all\n",
              v.times.evidence, v.times.recorded_mma, v.times.recordings, v.times.cases, v.times.total);
  for (const props::CaseFailure& f : r.failures) {
    const bool hung = f.why.rfind("HANG", 0) == 0;
    std::printf("%s %s: %s\n  %s\n", hung ? "HANG" : "FAIL", f.source.c_str(), golden::format_case(f.c).c_str(),
                f.why.c_str());
    if (a.save_failures && (f.source.rfind("drawn", 0) == 0 || f.source.rfind("aimed", 0) == 0)) {
      std::string why;
      const std::string dir = data.path.empty() ? "" : (fs::path(data.path) / "regressions").string();
      const std::string path =
          dir.empty() && !std::getenv("W8A16_REGRESSIONS_DIR")
              ? ""
              : props::save_regression({f.c, f.why}, std::string("verify-") + backend->name(), dir, &why);
      if (dir.empty() && why.empty()) why = "no data folder (set W8A16_REGRESSIONS_DIR or --data-dir)";
      std::printf("  %s\n", path.empty() ? ("not saved: " + why).c_str() : ("saved to " + golden::shown(path)).c_str());
    }
  }

  // Every reason the verdict is not PASS; a campaign that checked nothing is one of them.
  auto fail = [&](const std::string& group, const std::string& message, std::vector<std::string> details = {}) {
    v.reasons.push_back({group, message, std::move(details)});
  };
  for (const std::string& p : v.evidence.failures) fail("evidence", p);
  if (v.mma.dots == 0) fail("recorded_mma", "no recorded MMA was replayed (no .mmav file under the --mma-dir folders)");
  if (v.mma.mismatches || v.mma.unreadable)
    fail("recorded_mma",
         std::to_string(v.mma.mismatches) + " recorded MMA mismatches, " + std::to_string(v.mma.unreadable) +
             " unreadable files",
         v.mma.problems);
  if (v.rec.unreadable) fail("recordings", "a recording could not be read: " + v.rec.error);
  else if (v.recordings_replayed && v.rec.cases == 0 && opt.shard_count == 1)
    fail("recordings", "no recorded GPU output was replayed");
  if (v.rec.emulator_differ || v.rec.device_differ)
    fail("recordings",
         std::to_string(v.rec.emulator_differ) + " recorded cases differ from the emulator" +
             (on_gpu ? ", " + std::to_string(v.rec.device_differ) + " from this GPU" : ""),
         v.rec.failures);
  if (total_cases == 0) fail("campaign", "no case ran");
  if (a.saved && opt.saved.empty())
    fail("saved_cases", "no saved case was replayed: none of the chosen entry points under the saved-case paths");
  if (!saved.errors.empty()) fail("saved_cases", std::to_string(saved.errors.size()) + " case file errors", saved.errors);
  if (!r.failures.empty()) fail("cases", std::to_string(r.failures.size()) + " failing cases");
  if (r.stopped_by_failures)
    fail("cases", "stopped after --max-failures " + std::to_string(a.max_failures) + " failing cases");
  if (!v.rec.hang.empty()) fail("recordings", "a launch hung: HANG " + v.rec.hang);
  if (r.stopped_by_hang) fail("cases", "a launch hung: HANG " + r.hang);
  if (r.faulted) fail("cases", std::to_string(r.faulted) + " cases faulted (the context was lost; each ran alone)");
  if (r.not_run_after_hang)
    fail("campaign", std::to_string(r.not_run_after_hang) + " cases not run after the hang");
  if (r.not_run_lost_context)
    fail("campaign", std::to_string(r.not_run_lost_context) + " cases not run: the context was lost and could not be replaced");
  if (!cov.gaps.empty()) fail("coverage", std::to_string(cov.gaps.size()) + " coverage gaps", cov.gaps);
  const bool pass = v.reasons.empty();
  for (const Reason& x : v.reasons) std::printf("not a pass: %s\n", x.message.c_str());
  int status = pass ? kExitPass : kExitFail;
  if (!a.junit->path.empty() && !finish_report(a.junit.get(), junit_report(v, backend->name(), id), &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    status = kExitUsage;
  }
  if (!a.json->path.empty() && !finish_report(a.json.get(), json_report(v, backend->name(), opt, id, data.path), &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    status = kExitUsage;
  }
  std::printf("verdict: %s%s\n", pass ? "PASS" : "FAIL",
              status == kExitUsage ? " (but a report could not be written: exit status 2)" : "");
  return status;
}

void add_verify(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("verify", "Run the default verification campaign and print a verdict "
                                           "(exit 0: PASS, 1: FAIL, 2: usage or input error, or a report not written)");
  auto a = std::make_shared<VerifyArgs>();
  cmd->add_option("--cases", a->cases, "drawn cases over all shards")
      ->transform(whole_number(0, 1000000000))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "campaign seed (decimal or 0x hex): case i is the same on every machine")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--time-budget", a->time_budget_s,
                  "seconds after which no new drawn case starts (0: none; the saved and coverage cases always run)")
      ->check(finite_number(0, 1e9))
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto (GPU if present, else simulation), cuda or sim")->capture_default_str();
  cmd->add_option("--entry", a->entries, "entry points to draw (repeatable; default all), e.g. gemv_batch4_strided");
  cmd->add_option("--dist", a->dists, "input distributions to draw (repeatable; default all)");
  cmd->add_option("--shard", a->shard, "i/n: run the cases with index % n == i (default from GTEST_SHARD_INDEX/"
                                       "GTEST_TOTAL_SHARDS, else 0/1)");
  cmd->add_option("--draw-max-macs", a->draw_max_macs,
                  "cap on m*n*k per drawn case (default 2^23 on the CPU, 2^28 on a GPU; never above --max-macs)")
      ->transform(whole_number(1, UINT64_MAX));
  add_limit_options(cmd, &a->limits);
  cmd->add_option("--gpus", a->gpus, "GPUs to spread the cases over on the cuda backend (0: every visible one)")
      ->transform(whole_number(0, 1024))
      ->capture_default_str();
  a->junit->format = ReportFormat::junit;
  add_report_option(cmd, "--junit", a->junit, "write a JUnit XML report");
  add_report_option(cmd, "--json", a->json, "write a JSON report");
  cmd->add_option("--data-dir", a->data_dir,
                  "the data folder (a golden/: mma/, recordings/, cases/, regressions/); default $W8A16_DATA_DIR, else "
                  "<prefix>/share/w8a16check/golden, else the source tree of this binary's build tree");
  cmd->add_option("--mma-dir", a->mma_roots, "folders (or files) of recorded .mmav files to replay (default <data>/mma)");
  cmd->add_option("--recordings-from", a->recordings,
                  ".rec files or folders of GPU recordings to replay (default <data>/recordings)");
  cmd->add_flag("!--no-recordings", a->replay_recordings, "replay no GPU recording");
  cmd->add_option("--cases-from", a->case_paths,
                  "saved .case files or folders to replay first (default <data>/cases and <data>/regressions)");
  cmd->add_flag("!--no-saved", a->saved, "replay no saved case (otherwise none replayed is a FAIL)");
  add_module_option(cmd, &a->module);
  add_deadline_option(cmd);
  cmd->add_flag("--isolate", a->isolate,
                "run the simulation's cases in worker processes, as a GPU's always run (a launch that hangs, "
                "faults or crashes fails its case alone)");
  cmd->add_flag("!--no-save", a->save_failures, "do not append failing drawn and coverage cases to golden/regressions/");
  cmd->add_flag("!--no-coverage", a->coverage,
                "run no coverage cases and do not require every cell (entry point x body x configuration x special "
                "class) to be drawn");
  cmd->add_option("--max-failures", a->max_failures, "start no case after this many have failed (0: no limit)")
      ->transform(whole_number(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_flag("--quick", a->quick,
                "the gate's campaign (README \"The gate\"): the saved cases, the quick coverage plan (every cell "
                "with every special class, every body with every kind of order data) and " +
                    std::to_string(kQuickCases) + " drawn cases unless --cases says otherwise");
  cmd->callback([a, exit_code, cmd] {
    a->cases_given = cmd->count("--cases") > 0;
    *exit_code = run_verify(*a);
  });
}

W8A16_COMMAND(add_verify);

}  // namespace
}  // namespace w8a16::cli
