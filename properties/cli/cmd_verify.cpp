// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check verify`: the default verification campaign and its verdict: recorded MMAs against the
// emulator, then saved and seeded cases on the best backend present against the emulator.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_cases.hpp"
#include "command.hpp"
#include "data_dir.hpp"
#include "gpu_identity.hpp"
#include "vectors_replay.hpp"
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
// mma/: golden/mma/README.md).
std::vector<fs::path> recorded_mma_files(const std::vector<std::string>& roots) {
  std::vector<fs::path> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".mmav") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct MmaSummary {
  std::uint64_t files = 0, dots = 0, mismatches = 0, unreadable = 0;
  std::vector<std::string> problems;
};

MmaSummary replay_recorded_mmas(const std::vector<std::string>& roots) {
  MmaSummary s;
  for (const fs::path& f : recorded_mma_files(roots)) {
    ++s.files;
    golden::MmavFile file;
    std::string error;
    if (!golden::read_mmav_file(f.string(), &file, &error)) {
      s.problems.push_back(f.string() + ": " + error);
      ++s.unreadable;
      continue;
    }
    const VectorsReplay r = replay_mmav(file, ref::kMmaSm90, 3);
    s.dots += r.dot_products;
    s.mismatches += r.mismatches;
    for (const std::string& line : r.details) s.problems.push_back(f.filename().string() + ": " + line);
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

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += (static_cast<unsigned char>(ch) < 0x20 && ch != '\n') ? ' ' : ch;
    }
  }
  return o;
}

// What verify knows about coverage: the cells it expected, and what the campaign left empty.
struct CoverageReport {
  bool checked = false;                        // false with --no-coverage
  std::vector<props::CoverageKey> expected;    // expected_cells for the backend and the entry points
  std::vector<std::string> gaps;               // coverage_gaps, plus cells no aimed shape reached
  std::uint64_t aimed = 0, aimed_without = 0;  // coverage cases, and those planned with kernels taken away
};

// JUnit: one test case for the recorded MMAs, one per entry point, failing with its case lines, and
// one for the coverage table, failing with its gaps.
bool write_junit(const std::string& path, const MmaSummary& mma, const CampaignResult& r, const std::string& backend,
                 const RunIdentity& id, const CoverageReport& cov) {
  std::ofstream o(path);
  if (!o) return false;
  std::size_t failed = (mma.mismatches || mma.unreadable) ? 1 : 0;
  for (const auto& [e, t] : r.per_entry) failed += (t.mismatching_cases || t.errors) ? 1 : 0;
  failed += cov.gaps.empty() ? 0 : 1;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"w8a16check.verify\" tests=\""
    << 2 + r.per_entry.size() << "\" failures=\"" << failed << "\" time=\"" << r.seconds << "\">\n";
  o << "  <testcase classname=\"verify.coverage\" name=\"every_cell_drawn\">\n";
  if (!cov.checked) o << "    <skipped message=\"--no-coverage\"/>\n";
  if (!cov.gaps.empty()) {
    o << "    <failure message=\"" << cov.gaps.size() << " coverage gaps\">";
    for (const std::string& g : cov.gaps) o << xml_escape(g) << "\n";
    o << "</failure>\n";
  }
  o << "  </testcase>\n";
  o << identity_junit_properties(id);
  o << "  <testcase classname=\"verify.recorded_mma\" name=\"sm90_model_vs_hardware\">\n";
  if (mma.mismatches || mma.unreadable) {
    o << "    <failure message=\"" << mma.mismatches << " mismatches, " << mma.unreadable << " unreadable\">";
    for (const std::string& p : mma.problems) o << xml_escape(p) << "\n";
    o << "</failure>\n";
  }
  o << "  </testcase>\n";
  for (const auto& [e, t] : r.per_entry) {
    o << "  <testcase classname=\"verify." << xml_escape(backend) << "\" name=\"" << golden::entry_point_name(e) << "\">\n";
    if (t.mismatching_cases || t.errors) {
      o << "    <failure message=\"" << t.mismatching_cases << " mismatching cases, " << t.errors << " errors\">";
      for (const props::CaseFailure& f : r.failures)
        if (f.c.entry == e) o << xml_escape(f.source + ": " + golden::format_case(f.c) + "\n  " + f.why) << "\n";
      o << "</failure>\n";
    }
    o << "    <system-out>cases " << t.cases << ", bytes compared " << t.bytes_compared << ", special classes "
      << xml_escape(specials_text(t.specials_seen)) << "</system-out>\n  </testcase>\n";
  }
  o << "</testsuite>\n</testsuites>\n";
  return static_cast<bool>(o);
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

bool write_json(const std::string& path, const MmaSummary& mma, const CampaignResult& r, const std::string& backend,
                const props::CampaignOptions& opt, bool pass, const RunIdentity& id, const std::string& data,
                const std::vector<std::string>& why_fail, const CoverageReport& cov) {
  nlohmann::json j;
  j["verdict"] = pass ? "PASS" : "FAIL";
  j["why_not_pass"] = why_fail;
  add_identity_json(&j, id);
  j["data_dir"] = data;
  j["backend"] = backend;
  j["seed"] = opt.seed;
  j["shard"] = {{"index", opt.shard_index}, {"count", opt.shard_count}};
  j["seconds"] = r.seconds;
  j["recorded_mma"] = {{"files", mma.files}, {"dot_products", mma.dots}, {"mismatches", mma.mismatches},
                       {"unreadable", mma.unreadable}};
  j["cases"] = {{"saved_run", r.saved_run},          {"aimed_run", r.aimed_run},
                {"drawn_run", r.drawn_run},          {"drawn_planned", r.drawn_planned},
                {"stopped_by_time_budget", r.stopped_by_budget}, {"stopped_by_max_failures", r.stopped_by_failures}};
  j["coverage"] = coverage_json(r, cov);
  for (const auto& [e, t] : r.per_entry) {
    nlohmann::json specials = nlohmann::json::array();
    for (int b = 0; b < golden::kSpecialClassCount; ++b)
      if ((t.specials_seen >> b) & 1u) specials.push_back(std::string(golden::special_class_name(b)));
    j["entry_points"][std::string(golden::entry_point_name(e))] = {
        {"cases", t.cases},           {"bytes_compared", t.bytes_compared}, {"mismatching_cases", t.mismatching_cases},
        {"mismatched_elements", t.mismatched_elements}, {"errors", t.errors}, {"special_classes_seen", specials}};
  }
  j["failures"] = nlohmann::json::array();
  for (const props::CaseFailure& f : r.failures)
    j["failures"].push_back({{"case", golden::format_case(f.c)},
                             {"source", f.source},
                             {"why", f.why},
                             {"mismatched_elements", f.mismatched_elements}});
  std::ofstream o(path);
  o << j.dump(2) << "\n";
  return static_cast<bool>(o);
}

struct VerifyArgs {
  std::string data_dir;                  // --data-dir; else found (data_dir.hpp)
  std::vector<std::string> mma_roots;    // --mma-dir; default <data>/mma
  std::vector<std::string> case_paths;   // --cases-from; default <data>/cases and <data>/regressions
  bool saved = true;                     // --no-saved: replay no saved case
  std::string module;                    // --module
  std::uint64_t cases = 1000;
  std::uint64_t seed = 1;
  double time_budget_s = 0;
  std::string backend = "auto";
  std::vector<std::string> entries, dists;
  std::string shard;
  std::uint64_t max_macs = 0;  // 0: by backend
  std::uint32_t gpus = 0;      // 0: every visible GPU
  std::string junit, json;
  bool save_failures = true;
  bool coverage = true;            // --no-coverage: no coverage cases, no coverage verdict
  std::uint64_t max_failures = 0;  // --max-failures
};

int run_verify(const VerifyArgs& a) {
  props::CampaignOptions opt;
  opt.cases = a.cases;
  opt.seed = a.seed;
  opt.time_budget_s = a.time_budget_s;
  opt.max_failures = a.max_failures;
  std::string error;
  // --shard wins; else GoogleTest's variables, so CI that shards test binaries shards this too.
  std::string shard = a.shard;
  if (shard.empty() && std::getenv("GTEST_TOTAL_SHARDS"))
    shard = std::string(std::getenv("GTEST_SHARD_INDEX") ? std::getenv("GTEST_SHARD_INDEX") : "") + "/" +
            std::getenv("GTEST_TOTAL_SHARDS");
  if (!shard.empty() && !props::parse_shard(shard, &opt.shard_index, &opt.shard_count, &error)) {
    std::fprintf(stderr, "verify: %s\n", error.c_str());
    return 2;
  }
  if (!a.entries.empty()) {
    opt.draw.entries.clear();
    for (const std::string& name : a.entries) {
      golden::EntryPoint e;
      const std::string full = name.rfind("w8a16_", 0) == 0 ? name : "w8a16_" + name;
      if (!golden::parse_entry_point(full, &e)) {
        std::fprintf(stderr, "verify: unknown --entry '%s' (e.g. gemm_pipelined_m32_strided)\n", name.c_str());
        return 2;
      }
      opt.draw.entries.push_back(e);
    }
  }
  if (!a.dists.empty()) {
    opt.draw.dists.clear();
    for (const std::string& name : a.dists) {
      golden::Distribution d;
      if (!golden::parse_distribution(name, &d)) {
        std::fprintf(stderr, "verify: unknown --dist '%s'\n", name.c_str());
        return 2;
      }
      opt.draw.dists.push_back(d);
    }
  }
  // Where the recorded MMAs and the saved cases come from: every folder or file named on the
  // command line must exist, and so must the data folder's mma/ and cases/ when they are the
  // defaults (its regressions/ appears with the first saved failure). Nothing found is exit 2,
  // never a campaign that checked nothing.
  if (!a.saved && !a.case_paths.empty()) {
    std::fprintf(stderr, "verify: --no-saved and --cases-from contradict each other\n");
    return 2;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool need_data = a.mma_roots.empty() || (a.saved && a.case_paths.empty());
  const DataDir data = find_data_dir(a.data_dir);
  if (data.path.empty() && (need_data || !a.data_dir.empty())) {
    std::fprintf(stderr, "verify: %s\n", data.error.c_str());
    return 2;
  }
  std::vector<std::string> mma_roots = a.mma_roots, case_paths = a.case_paths;
  if (mma_roots.empty()) mma_roots.push_back((fs::path(data.path) / "mma").string());
  if (a.saved && case_paths.empty()) {
    case_paths.push_back((fs::path(data.path) / "cases").string());
    const fs::path regressions = fs::path(data.path) / "regressions";
    if (fs::is_directory(regressions, ec)) case_paths.push_back(regressions.string());
  }
  for (const auto* list : {&mma_roots, &case_paths})
    for (const std::string& p : *list)
      if (!fs::exists(p, ec)) {
        std::fprintf(stderr, "verify: %s: no such file or folder%s\n", p.c_str(),
                     data.path.empty() ? "" : (" (" + data_dir_line(data) + ")").c_str());
        return 2;
      }

  std::string note;
  auto backend = make_backend(a.backend, &note, &error, a.module);
  if (!backend) {
    std::fprintf(stderr, "verify: %s\n", error.c_str());
    return 2;
  }
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : opt.draw.entries) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) {
    std::fprintf(stderr, "verify: %s\n", error.c_str());
    return 2;
  }
  const RunIdentity id = run_identity(*backend);
  const bool on_gpu = std::string(backend->name()) == "cuda";
  // The emulator computes every expected byte on the host: on a 2-core machine 2^23 multiply-adds
  // per case keeps the default campaign to a few minutes and admits the smaller model shapes at m=1.
  opt.draw.max_macs = a.max_macs != 0 ? a.max_macs : (on_gpu ? std::uint64_t{1} << 28 : std::uint64_t{1} << 23);

  // Coverage by construction (coverage.hpp): every cell this module can run through the chosen
  // entry points gets cases aimed at it. On a GPU they hold every special class and the data that
  // shows the order; on the simulation, whose values are the emulator's by construction and whose
  // findings are the geometry's, every special class only.
  CoverageReport cov;
  cov.checked = a.coverage;
  if (a.coverage) {
    cov.expected = props::expected_cells(backend->registry(), opt.draw.entries);
    std::vector<props::CoverageKey> unreached;
    opt.aimed = props::coverage_plan(backend->registry(), backend->limits(), opt.draw.entries,
                                     props::coverage_distributions(on_gpu), opt.seed, &unreached);
    for (const props::CoverageKey& k : unreached)
      cov.gaps.push_back("no aimed shape reaches " + props::coverage_key_text(k) + " (coverage.cpp aimed_shapes)");
    cov.aimed = opt.aimed.size();
    for (const props::AimedCase& x : opt.aimed) cov.aimed_without += x.c.without != 0;
  }

  std::printf("w8a16check verify: backend %s; seed %" PRIu64 ", %" PRIu64 " drawn cases, shard %u/%u\n", note.c_str(),
              opt.seed, opt.cases, opt.shard_index, opt.shard_count);
  std::fputs(identity_text(id).c_str(), stdout);
  if (!data.path.empty()) std::printf("%s\n", data_dir_line(data).c_str());

  // 1. Recorded MMAs: the emulator's tensor-core model against the hardware.
  const MmaSummary mma = replay_recorded_mmas(mma_roots);
  std::printf("recorded MMAs (sm90 model vs hardware): %" PRIu64 " files, %" PRIu64 " dot products, %" PRIu64
              " mismatches, %" PRIu64 " unreadable\n",
              mma.files, mma.dots, mma.mismatches, mma.unreadable);
  for (const std::string& p : mma.problems) std::printf("  %s\n", p.c_str());
  std::fflush(stdout);  // before the progress lines on stderr

  // 2. Saved cases, then drawn ones.
  const LoadedCases saved = load_cases(case_paths);
  for (const std::string& e : saved.errors) std::printf("  case file error: %s\n", e.c_str());
  for (std::size_t i = 0; i < saved.cases.size(); ++i) {
    const bool wanted = std::find(opt.draw.entries.begin(), opt.draw.entries.end(), saved.cases[i].entry) != opt.draw.entries.end();
    if (!wanted) continue;
    opt.saved.push_back(saved.cases[i]);
    opt.saved_sources.push_back(saved.sources[i]);
  }
  // Every visible GPU takes part: GPU j of shard i/n runs the cases of sub-shard (i + n*j)/(n*g),
  // which together are exactly shard i/n's, so the verdict never depends on the GPU count.
  std::vector<std::unique_ptr<device::Backend>> extra;
  if (on_gpu && a.gpus != 1) extra = more_gpu_backends(a.gpus, a.module);
  std::vector<device::Backend*> backends{backend.get()};
  for (auto& b : extra) backends.push_back(b.get());
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
  std::vector<std::thread> threads;
  for (std::uint32_t j = 0; j < g; ++j) {
    props::CampaignOptions o = opt;
    o.shard_index = opt.shard_index + opt.shard_count * j;
    o.shard_count = opt.shard_count * g;
    threads.emplace_back([&, j, o] {
      parts[j] = props::run_campaign(*backends[j], o, [&, j](const props::CampaignProgress& p) { report(j, p); });
    });
  }
  for (std::thread& t : threads) t.join();
  CampaignResult r;
  for (const CampaignResult& part : parts) props::merge_campaign_result(&r, part);
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
  if (cov.checked) {
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
    for (const auto& [k, v] : r.coverage)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const props::CoverageKey& k : keys) {
      const auto it = r.coverage.find(k);
      const props::CoverageCell cell = it == r.coverage.end() ? props::CoverageCell{} : it->second;
      int seen = 0;
      for (int b = 0; b < golden::kSpecialClassCount; ++b) seen += (cell.specials_seen >> b) & 1u;
      std::printf("  %-34s %-18s %-34s %6" PRIu64 " %6d/%-2d %8" PRIu64 "%s\n", std::string(golden::entry_point_name(k.entry)).c_str(),
                  device::body_name(k.body), k.config.c_str(), cell.cases, seen, golden::kSpecialClassCount,
                  cell.planned_without, cell.cases == 0 ? "  EMPTY" : seen < golden::kSpecialClassCount ? "  (classes missing)" : "");
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
  for (const props::CaseFailure& f : r.failures) {
    std::printf("FAIL %s: %s\n  %s\n", f.source.c_str(), golden::format_case(f.c).c_str(), f.why.c_str());
    if (a.save_failures && (f.source.rfind("drawn", 0) == 0 || f.source.rfind("aimed", 0) == 0)) {
      std::string why;
      const std::string dir = data.path.empty() ? "" : (fs::path(data.path) / "regressions").string();
      const std::string path =
          dir.empty() && !std::getenv("W8A16_REGRESSIONS_DIR")
              ? ""
              : props::save_regression({f.c, f.why}, std::string("verify-") + backend->name(), dir, &why);
      if (dir.empty() && why.empty()) why = "no data folder (set W8A16_REGRESSIONS_DIR or --data-dir)";
      std::printf("  %s\n", path.empty() ? ("not saved: " + why).c_str() : ("saved to " + path).c_str());
    }
  }

  // Every reason the verdict is not PASS; a campaign that checked nothing is one of them.
  std::vector<std::string> why_fail;
  if (mma.dots == 0) why_fail.push_back("no recorded MMA was replayed (no .mmav file under the --mma-dir folders)");
  if (mma.mismatches || mma.unreadable)
    why_fail.push_back(std::to_string(mma.mismatches) + " recorded MMA mismatches, " + std::to_string(mma.unreadable) +
                       " unreadable files");
  if (total_cases == 0) why_fail.push_back("no case ran");
  if (a.saved && opt.saved.empty())
    why_fail.push_back("no saved case was replayed: none of the chosen entry points under the saved-case paths");
  if (!saved.errors.empty()) why_fail.push_back(std::to_string(saved.errors.size()) + " case file errors");
  if (!r.failures.empty()) why_fail.push_back(std::to_string(r.failures.size()) + " failing cases");
  if (r.stopped_by_failures) why_fail.push_back("stopped after --max-failures " + std::to_string(a.max_failures) + " failing cases");
  for (std::size_t i = 0; i < cov.gaps.size() && i < 20; ++i) why_fail.push_back("coverage: " + cov.gaps[i]);
  if (cov.gaps.size() > 20) why_fail.push_back("coverage: " + std::to_string(cov.gaps.size() - 20) + " more gaps (JSON: coverage.gaps)");
  const bool pass = why_fail.empty();
  for (const std::string& w : why_fail) std::printf("not a pass: %s\n", w.c_str());
  if (!a.junit.empty() && !write_junit(a.junit, mma, r, backend->name(), id, cov))
    std::fprintf(stderr, "verify: cannot write %s\n", a.junit.c_str());
  if (!a.json.empty() && !write_json(a.json, mma, r, backend->name(), opt, pass, id, data.path, why_fail, cov))
    std::fprintf(stderr, "verify: cannot write %s\n", a.json.c_str());
  std::printf("verdict: %s\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}

void add_verify(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("verify", "Run the default verification campaign and print a verdict");
  auto a = std::make_shared<VerifyArgs>();
  cmd->add_option("--cases", a->cases, "drawn cases over all shards")->capture_default_str();
  cmd->add_option("--seed", a->seed, "campaign seed: case i is the same on every machine")->capture_default_str();
  cmd->add_option("--time-budget", a->time_budget_s, "seconds after which no new drawn case starts (0: none; the saved and coverage cases always run)")
      ->capture_default_str();
  cmd->add_option("--backend", a->backend, "auto (GPU if present, else simulation), cuda or sim")->capture_default_str();
  cmd->add_option("--entry", a->entries, "entry points to draw (repeatable; default all), e.g. gemv_batch4_strided");
  cmd->add_option("--dist", a->dists, "input distributions to draw (repeatable; default all)");
  cmd->add_option("--shard", a->shard, "i/n: run the cases with index % n == i (default from GTEST_SHARD_INDEX/"
                                       "GTEST_TOTAL_SHARDS, else 0/1)");
  cmd->add_option("--max-macs", a->max_macs, "cap on m*n*k per drawn case (default 2^23 on the CPU, 2^28 on a GPU)");
  cmd->add_option("--gpus", a->gpus, "GPUs to spread the cases over on the cuda backend (0: every visible one)")
      ->capture_default_str();
  cmd->add_option("--junit", a->junit, "write a JUnit XML report");
  cmd->add_option("--json", a->json, "write a JSON report");
  cmd->add_option("--data-dir", a->data_dir,
                  "the data folder (a golden/: mma/, cases/, regressions/); default $W8A16_DATA_DIR, else "
                  "<prefix>/share/w8a16check/golden, else the source tree of this binary's build tree");
  cmd->add_option("--mma-dir", a->mma_roots, "folders of recorded .mmav files to replay (default <data>/mma)");
  cmd->add_option("--cases-from", a->case_paths,
                  "saved .case files or folders to replay first (default <data>/cases and <data>/regressions)");
  cmd->add_flag("!--no-saved", a->saved, "replay no saved case (otherwise none replayed is a FAIL)");
  add_module_option(cmd, &a->module);
  cmd->add_flag("!--no-save", a->save_failures, "do not append failing drawn and coverage cases to golden/regressions/");
  cmd->add_flag("!--no-coverage", a->coverage,
                "run no coverage cases and do not require every cell (entry point x body x configuration x special "
                "class) to be drawn");
  cmd->add_option("--max-failures", a->max_failures, "start no case after this many have failed (0: no limit)")
      ->capture_default_str();
  cmd->callback([a, exit_code] { *exit_code = run_verify(*a); });
}

W8A16_COMMAND(add_verify);

}  // namespace
}  // namespace w8a16::cli
