// SPDX-License-Identifier: MIT OR Apache-2.0
// `w8a16check verify`: the default verification campaign and its verdict: recorded MMAs and GPU
// recordings against the emulator, then saved and seeded cases on the best backend present against
// the emulator. The flags and the order of the stages live here; the result, the verdict rules and
// the campaign over several GPUs in the library (properties/verify.hpp), the reports in
// verify_report.hpp.
#include "run_verify.hpp"

#include "exit_status.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "backends.hpp"
#include "data_dir.hpp"
#include "gpu_identity.hpp"
#include "recordings_text.hpp"
#include "report_files.hpp"
#include "verify_report.hpp"
#include "w8a16/device/geometry.hpp"
#include "w8a16/device/module_abi.hpp"
#if W8A16_HAVE_CUDA
#include "w8a16/device/cuda_backend.hpp"
#endif
#include "w8a16/golden/files.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/perturb.hpp"
#include "w8a16/properties/regression.hpp"
#include "w8a16/properties/verify.hpp"

namespace w8a16::cli {
namespace cmd_verify {

namespace fs = std::filesystem;

int usage(const std::string& message) { return usage_error("verify", message); }

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
  else std::printf("  - GPU recordings: not replayed (--no-recordings)\n");
  if (on_gpu)
    std::printf("  - saved and drawn cases on this GPU: every byte the kernels write against the emulator's\n");
  else
    std::printf(
        "  - saved and drawn cases on the simulation (no GPU here): each kernel's launch plan and geometry\n"
        "    (grid, block, shared memory, which CTA writes which element, bounds, pitch padding) with every\n"
        "    value taken from the emulator. It cannot find an arithmetic bug in a kernel: the recorded MMAs\n"
        "    and the GPU recordings above are this run's hardware evidence.\n");
}

// --shard, --entry and --dist into the campaign's options (*shard_from: what asked for a shard, ""
// for none); a usage error's exit status, or 0.
int campaign_options(const VerifyArgs& a, props::CampaignOptions* opt, std::string* shard_from) {
  opt->cases = a.quick && !a.cases_given ? kQuickCases : a.cases;
  opt->seed = a.seed;
  opt->time_budget_s = a.time_budget_s;
  opt->max_failures = a.max_failures;
  std::string error;
  // --shard wins; else GoogleTest's variables, so CI that shards test binaries shards this too.
  std::string shard = a.shard;
  if (shard.empty() && std::getenv("GTEST_TOTAL_SHARDS"))
    shard = std::string(std::getenv("GTEST_SHARD_INDEX") ? std::getenv("GTEST_SHARD_INDEX") : "") + "/" +
            std::getenv("GTEST_TOTAL_SHARDS");
  if (!shard.empty() && !props::parse_shard(shard, &opt->shard_index, &opt->shard_count, &error))
    return usage(golden::escaped(error) + (a.shard.empty() ? " (from GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)" : ""));
  if (opt->shard_count != 1) *shard_from = a.shard.empty() ? "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS" : "--shard";
  if (!a.entries.empty()) {
    opt->draw.entries.clear();
    for (const std::string& name : a.entries) {
      golden::EntryPoint e;
      const std::string full = name.rfind("w8a16_", 0) == 0 ? name : "w8a16_" + name;
      if (!golden::parse_entry_point(full, &e))
        return usage("unknown --entry " + golden::quote(name) + " (e.g. gemm_pipelined_m32_strided)");
      opt->draw.entries.push_back(e);
    }
  }
  if (!a.dists.empty()) {
    opt->draw.dists.clear();
    for (const std::string& name : a.dists) {
      golden::Distribution d;
      if (!golden::parse_distribution(name, &d)) return usage("unknown --dist " + golden::quote(name));
      opt->draw.dists.push_back(d);
    }
  }
  return 0;
}

// Where the recorded MMAs, the recordings and the saved cases come from.
struct Inputs {
  DataDir data;
  std::vector<std::string> mma_roots, case_paths, recordings;
  LoadedCases saved;
};

// Every folder or file named on the command line must exist, and so must the data folder's mma/,
// recordings/ and cases/ when they are the defaults (its regressions/ appears with the first saved
// failure). Nothing found is exit 2, never a campaign that checked nothing. The saved cases are
// read and costed before anything runs: a case no machine here can run is refused with the limit
// that stops it, not started. A usage error's exit status, or 0.
int gather_inputs(const VerifyArgs& a, props::CampaignOptions* opt, Inputs* in) {
  if (!a.saved && !a.case_paths.empty()) return usage("--no-saved and --cases-from contradict each other");
  if (!a.replay_recordings && !a.recordings.empty())
    return usage("--no-recordings and --recordings-from contradict each other");
  std::error_code ec;
  const bool need_data = a.mma_roots.empty() || (a.saved && a.case_paths.empty()) ||
                         (a.replay_recordings && a.recordings.empty());
  in->data = find_data_dir(a.data_dir);
  const std::string& data = in->data.path;
  if (data.empty() && (need_data || !a.data_dir.empty())) return usage(in->data.error);
  in->mma_roots = a.mma_roots, in->case_paths = a.case_paths, in->recordings = a.recordings;
  if (in->mma_roots.empty()) in->mma_roots.push_back((fs::path(data) / "mma").string());
  if (a.replay_recordings && in->recordings.empty()) in->recordings.push_back((fs::path(data) / "recordings").string());
  if (a.saved && in->case_paths.empty()) {
    in->case_paths.push_back((fs::path(data) / "cases").string());
    const fs::path regressions = fs::path(data) / "regressions";
    if (fs::is_directory(regressions, ec)) in->case_paths.push_back(regressions.string());
  }
  for (const auto* list : {&in->mma_roots, &in->case_paths, &in->recordings})
    for (const std::string& p : *list)
      if (!fs::exists(p, ec))
        return usage(golden::shown(p) + ": no such file or folder" +
                     (data.empty() ? "" : " (" + data_dir_line(in->data) + ")"));
  in->saved = load_cases(in->case_paths);
  const std::vector<golden::EntryPoint>& wanted = opt->draw.entries;
  for (std::size_t i = 0; i < in->saved.cases.size(); ++i) {
    if (std::find(wanted.begin(), wanted.end(), in->saved.cases[i].entry) == wanted.end()) continue;
    opt->saved.push_back(in->saved.cases[i]);
    opt->saved_sources.push_back(in->saved.sources[i]);
  }
  const std::string over = over_limits(opt->saved, opt->saved_sources, a.limits);
  if (!over.empty()) return usage(over + "\nnothing was run");
  return 0;
}

// Coverage by construction (coverage.hpp): every cell this module can run through the chosen entry
// points gets cases aimed at it. On a GPU they hold every special class and the data that shows
// the order; on the simulation, whose values are the emulator's by construction and whose findings
// are the geometry's, every special class only. On both, every body gets its lone specials over a
// long K range (lone_specials_plan), in the quick plan as in the full one.
void plan_coverage(const VerifyArgs& a, const device::Backend& backend, props::CampaignOptions* opt,
                   props::VerifyResult* v) {
  props::CoverageReport& cov = v->coverage;
  cov.checked = a.coverage;
  if (!a.coverage) return;
  cov.expected = props::expected_cells(backend.registry(), opt->draw.entries);
  std::vector<props::CoverageKey> unreached;
  opt->aimed = props::coverage_plan(backend.registry(), backend.limits(), opt->draw.entries,
                                    props::coverage_distributions(v->on_gpu), opt->seed, &unreached);
  for (const props::CoverageKey& k : unreached)
    cov.gaps.push_back("no aimed shape reaches " + props::coverage_key_text(k) + " (coverage.cpp aimed_shapes)");
  std::vector<device::Body> lone_unreached;
  opt->aimed = props::merged_plans(opt->aimed,
                                   props::lone_specials_plan(backend.registry(), backend.limits(), opt->draw.entries,
                                                             opt->seed, &lone_unreached));
  for (device::Body b : lone_unreached)
    cov.gaps.push_back(std::string("no long-range shape reaches ") + device::body_name(b) +
                       " through the chosen entry points (bodies.cpp long_range)");
  if (a.quick) opt->aimed = props::quick_coverage_plan(opt->aimed);
  cov.aimed = opt->aimed.size();
  for (const props::AimedCase& x : opt->aimed) cov.aimed_without += x.c.without != 0;
}

// The seconds of each stage: lap() is the time since the last lap (or the start).
class Stopwatch {
 public:
  double lap() {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }
  double total() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now(), last_ = start_;
};

// 0. The evidence itself: the data folder's files against their manifests, and nothing the
//    simulation made counted as hardware (golden/include/w8a16/golden/manifest.hpp).
// 1. Recorded MMAs: the emulator's tensor-core model against the hardware.
void check_evidence_and_mmas(const Inputs& in, Stopwatch* clock, props::VerifyResult* v) {
  std::vector<std::string> read = in.mma_roots;
  read.insert(read.end(), in.recordings.begin(), in.recordings.end());
  read.insert(read.end(), in.case_paths.begin(), in.case_paths.end());
  clock->lap();
  v->evidence = props::check_evidence(in.data.path, read);
  v->times.evidence = clock->lap();
  std::printf("evidence (manifests): %" PRIu64 " folders, %" PRIu64 " manifests, %" PRIu64
              " files checked, %zu problems\n",
              v->evidence.folders, v->evidence.manifests, v->evidence.files, v->evidence.failures.size());
  for (const std::string& p : v->evidence.failures) std::printf("  FAIL %s\n", p.c_str());
  for (const std::string& n : v->evidence.notes) std::printf("  note: %s\n", n.c_str());

  std::vector<std::string> not_counted = v->evidence.failed;
  not_counted.insert(not_counted.end(), v->evidence.simulated.begin(), v->evidence.simulated.end());
  v->mma = props::replay_recorded_mmas(in.mma_roots, not_counted);
  v->times.recorded_mma = clock->lap();
  const props::MmaReplaySummary& m = v->mma;
  std::printf("recorded MMAs (sm90 model vs hardware): %" PRIu64 " files, %" PRIu64 " dot products, %" PRIu64
              " mismatches, %" PRIu64 " unreadable%s\n",
              m.files, m.dots, m.mismatches, m.unreadable,
              m.not_hardware
                  ? (", " + std::to_string(m.not_hardware) + " failing the evidence check not counted").c_str()
                  : "");
  for (const std::string& p : m.problems) std::printf("  %s\n", p.c_str());
  std::fflush(stdout);  // before the progress lines on stderr
}

// 2. GPU recordings: the emulator's whole GEMMs (and this GPU's) against a GPU's recorded bytes.
//    A usage error's exit status, or 0.
int replay_recordings_stage(const VerifyArgs& a, const Inputs& in, props::CaseLauncher* device,
                            const props::CampaignOptions& opt, Stopwatch* clock, props::VerifyResult* v) {
  if (!a.replay_recordings) return 0;
  props::RecordingsOptions ro;
  ro.command = "verify";
  ro.limits = a.limits;
  ro.module = a.module;
  ro.device = device;
  ro.contract = opt.contract;
  ro.shard_index = opt.shard_index;
  ro.shard_count = opt.shard_count;
  if (!a.entries.empty()) ro.device_entries = opt.draw.entries;  // --entry: the device runs those only
  RecordingsText text(ro);
  ro.listener = &text;
  // A recording the evidence check failed (cut, changed, not listed) is named there and not read
  // again; one the simulation made is replayed as what it is, and its evidence FAIL stands.
  clock->lap();
  v->recordings = props::replay_recordings(props::without_failed(in.recordings, ".rec", v->evidence), ro);
  v->times.recordings = clock->lap();
  // A recording that cannot be read is evidence that fails, as an unreadable .mmav or .case is:
  // a FAIL naming it, with the reports (other input errors, a case over the limits, stay exit 2).
  props::RecordingsResult& rec = v->recordings;
  if (rec.status == kExitUsage && !rec.unreadable) return usage(rec.error);
  if (rec.status == kExitUsage) {
    std::printf("FAIL recordings: %s\n", rec.error.c_str());
    rec.failures.push_back(rec.error);
  }
  v->recordings_replayed = true;
  std::fflush(stdout);
  return 0;
}

// "[done/planned] seconds, failing; entry point" on stderr over every launcher's progress: each
// tenth on a file or pipe, every case on a terminal (one line rewritten in place).
class ProgressLine {
 public:
  ProgressLine(std::uint32_t launchers, std::uint64_t planned)
      : planned_(planned), tty_(isatty(fileno(stderr))), done_(launchers, 0), failing_(launchers, 0) {}
  void update(std::uint32_t j, const props::CampaignProgress& p) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_[j] = p.done;
    failing_[j] = p.failures;
    std::uint64_t all_done = 0, all_failing = 0;
    for (std::size_t x = 0; x < done_.size(); ++x) all_done += done_[x], all_failing += failing_[x];
    const std::uint64_t tenth = planned_ ? 10 * all_done / planned_ : 10;
    if (!tty_ && tenth == last_tenth_ && all_done != planned_) return;
    last_tenth_ = tenth;
    std::fprintf(stderr, "%s[%" PRIu64 "/%" PRIu64 "] %.1fs, %" PRIu64 " failing; %s%s", tty_ ? "\r\033[K" : "",
                 all_done, planned_, p.seconds, all_failing,
                 p.current ? std::string(golden::entry_point_name(p.current->entry)).c_str() : "", tty_ ? "" : "\n");
  }
  void end() const {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  std::uint64_t planned_, last_tenth_ = 0;
  bool tty_;
  std::mutex mutex_;
  std::vector<std::uint64_t> done_, failing_;
};

// 3. Saved cases, then aimed and drawn ones, over every launcher (verify.hpp run_campaign_over).
// 4. The batch and tier verdicts at each entry point's dispatch edges (invariance.hpp): M = 1 and
// each edge -1, 0, +1 on one small shape (N = 136: a partial scale block and column tile; K = 512:
// four steps) with two needles: fold_ties, whose bytes change with the fold's rounding (one or two),
// and cancelling_steps, whose bytes change with the order of the steps and windows
// (case_inputs.cpp), then the pair-order needle (invariance.hpp pair_order_inputs), whose bytes
// change with any association of K. About 3 s on the simulation. Once per run (shard 0), after the cases, through
// the first launcher; not after a run was cut short (a hang or a lost context).
void run_invariance_stage(props::CaseLauncher& cases, device::Backend& backend, const props::CampaignOptions& opt,
                          props::VerifyResult* v) {
  // A kernel that faulted is already its cases' failure; its rows here would say it again.
  if (v->shard_index != 0 || props::cut_short(*v) || v->campaign.faulted > 0 || v->invariance_not_asked) return;
  const auto start = std::chrono::steady_clock::now();
  props::InvarianceOptions io;
  io.shapes = {{136, 512}};
  io.entries = opt.draw.entries;
  io.edges_only = true;
  io.needles = {golden::Distribution::fold_ties, golden::Distribution::cancelling_steps};
  io.kinds[static_cast<int>(props::InvarianceKind::run_to_run)] = false;
  io.kinds[static_cast<int>(props::InvarianceKind::contract)] = false;
  // Nothing saved from here (verify writes into the data folder only through its regressions): a
  // failing row names the `w8a16check invariance` run that saves its operand bundle.
  io.save_dir = "";
  io.backend_name = device::backend_option(backend.kind());
  props::BackendInvarianceLauncher launcher(cases, backend);
  v->invariance = props::run_invariance(launcher, io, backend.registry(), backend.limits());
  v->invariance_run = true;
  v->invariance_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// 5. The sanitizer stage (sanitize.hpp), with --sanitize: one aimed case per cell replayed by this
// CLI under compute-sanitizer's racecheck and synccheck. On a GPU only, on the first shard, not
// after a run cut short; where it does not run, the reports say why.
void run_sanitize_stage(const VerifyArgs& a, const props::CampaignOptions& opt, props::VerifyResult* v) {
  v->sanitize_asked = a.sanitize;
  if (!a.sanitize) return;
  if (!v->on_gpu) v->sanitize_not_run = "the simulation runs no kernel for a sanitizer to watch";
  else if (v->shard_index != 0) v->sanitize_not_run = "it runs on the first shard";
  else if (props::cut_short(*v)) v->sanitize_not_run = "the run was cut short (a hang or a lost context)";
  if (!v->sanitize_not_run.empty()) return;  // the summary says why
  std::vector<std::string> cells;
  const std::vector<golden::Case> cases = props::sanitize_cases(opt.aimed, &cells);
  props::SanitizeOptions so;
  so.sanitizer = a.sanitizer;
  std::error_code ec;
  so.self = fs::read_symlink("/proc/self/exe", ec).string();
  so.module = a.module;
  std::printf("sanitize: %zu cases under %s\n", cases.size(), "racecheck and synccheck");
  std::fflush(stdout);
  v->sanitize = props::run_sanitize(cases, cells, so);
  v->sanitize_run = true;
}

void run_cases_stage(const std::vector<std::unique_ptr<props::CaseLauncher>>& launchers, props::CampaignOptions opt,
                     Stopwatch* clock, props::VerifyResult* v) {
  for (const std::string& e : v->case_file_errors) std::printf("  case file error: %s\n", e.c_str());
  const auto g = static_cast<std::uint32_t>(launchers.size());
  if (g > 1) std::printf("spreading over %u GPUs\n", g);
  const std::uint64_t planned = props::planned_cases(opt);
  // A hang in the recordings' replay ends the run there: every case is counted as not run.
  const bool hung = !v->recordings.hang.empty();
  if (hung) opt.saved.clear(), opt.aimed.clear(), opt.cases = 0;
  std::vector<props::CaseLauncher*> each;
  for (const auto& l : launchers) each.push_back(l.get());
  ProgressLine progress(g, planned);
  v->campaign = props::run_campaign_over(each, opt, [&](std::uint32_t j, const props::CampaignProgress& p) {
    progress.update(j, p);
  });
  v->times.cases = clock->lap();
  v->times.total = clock->total();
  if (hung) v->campaign.not_run_after_hang += planned;
  progress.end();
}

// Each failing case, and where a drawn or coverage case was saved (regression.hpp).
void print_failures(const VerifyArgs& a, const props::VerifyResult& v, const std::string& data,
                    const std::string& backend, const props::ContractChoice& contract) {
  for (const props::CaseFailure& f : v.campaign.failures) {
    const bool hung = f.why.rfind("HANG", 0) == 0;
    std::printf("%s %s: %s\n  %s\n", hung ? "HANG" : "FAIL", f.source.c_str(), golden::format_case(f.c).c_str(),
                f.why.c_str());
    if (!a.save_failures || (f.source.rfind("drawn", 0) != 0 && f.source.rfind("aimed", 0) != 0)) continue;
    // A case line carries no contract and every saved case replays under canonical: a failure
    // under another contract would come back as a pass, or as a failure of something else.
    const ref::Conventions& held = contract.for_entry(f.c.entry);
    if (!held.same_numerics(ref::canonical_conventions())) {
      std::printf("  not saved: held to the contract %s (a saved case replays under canonical)\n", held.name.c_str());
      continue;
    }
    std::string why;
    const std::string dir = data.empty() ? "" : (fs::path(data) / "regressions").string();
    const std::string path = dir.empty() && !std::getenv("W8A16_REGRESSIONS_DIR")
                                 ? ""
                                 : props::save_regression({f.c, f.why}, "verify-" + backend, dir, &why);
    if (dir.empty() && why.empty()) why = "no data folder (set W8A16_REGRESSIONS_DIR or --data-dir)";
    std::printf("  %s\n", path.empty() ? ("not saved: " + why).c_str() : ("saved to " + golden::shown(path)).c_str());
  }
}

// The reasons, the reports asked for and the verdict line; the exit status.
int finish(const VerifyArgs& a, const props::VerifyResult& v, const VerifyReportContext& ctx) {
  const std::vector<props::Reason> reasons = props::verdict_reasons(v);
  for (const props::Reason& x : reasons) std::printf("not a pass: %s\n", x.message.c_str());
  int status = reasons.empty() ? kExitPass : kExitFail;
  std::string error;
  if (!a.junit->path.empty() && !finish_report(a.junit.get(), verify_junit_report(v, ctx), &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    status = kExitUsage;
  }
  if (!a.json->path.empty() && !finish_report(a.json.get(), verify_json_report(v, ctx), &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    status = kExitUsage;
  }
  // Two qualifiers print as two parenthesised remarks, as they always have.
  const std::string shard = v.shard_count != 1 ? "shard " + std::to_string(v.shard_index) + "/" +
                                                     std::to_string(v.shard_count) + " only; coverage not judged"
                                               : "";
  std::string line = verdict_line(reasons.empty() ? "PASS" : "FAIL", shard);
  if (status == kExitUsage) line.insert(line.size() - 1, " (but a report could not be written: exit status 2)");
  std::fputs(line.c_str(), stdout);
  return status;
}

// The static protocol check (protocol_check.hpp) of the module the cases run on: --module's file, or
// the embedded module written to a temporary file for the disassembler.
props::ProtocolReport check_loaded_module_protocol(const std::string& module) {
#if W8A16_HAVE_CUDA
  if (!module.empty()) return props::check_module_protocol(module);
  const std::vector<unsigned char> image = device::CudaBackend::embedded_module();
  char path[] = "/tmp/w8a16check-module-XXXXXX";
  const int fd = ::mkstemp(path);
  props::ProtocolReport none;
  none.why_not = "the embedded module could not be written to a temporary file for the disassembler";
  if (fd < 0) return none;
  const bool written = ::write(fd, image.data(), image.size()) == static_cast<ssize_t>(image.size());
  ::close(fd);
  props::ProtocolReport r = written ? props::check_module_protocol(path) : none;
  ::unlink(path);
  return r;
#else
  (void)module;
  return {};
#endif
}

// `verify --perturb`: the cases of the bodies the perturbed module delays (the Hopper tier's and the
// cp.async rings'; the coverage plan's with its lone specials,
// --quick's share of it with --quick, and the saved cases) on the perturbed module, each under several timing seeds
// (properties/perturb.hpp). The module: --module, else bin/w8a16_perturbed.fatbin beside the CLI.
int run_perturb(const VerifyArgs& a, const props::CampaignOptions& opt, const std::string& data_dir) {
#if W8A16_HAVE_CUDA
  std::string module = a.module;
  if (module.empty()) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    module = (self.parent_path() / "w8a16_perturbed.fatbin").string();
    if (ec || !fs::is_regular_file(module, ec))
      return usage("--perturb: no perturbed module at " + golden::shown(module) +
                   " (the cuda preset builds bin/w8a16_perturbed.fatbin beside the CLI); name one with --module");
  }
  std::string error, note;
  bool no_gpu = false;
  auto backend = make_backend("cuda", &note, &error, module, 0, &no_gpu);
  if (!backend) return backend_refused("verify", error, no_gpu);
  auto* gpu = dynamic_cast<device::CudaBackend*>(backend.get());
  if (!gpu || !gpu->is_perturbed_module())
    return usage("--perturb: " + golden::shown(module) +
                 " lacks w8a16_timing_seed or w8a16_timing_stalls: it is not a perturbed module "
                 "(device/kernels/w8a16_timing.cuh)");
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : opt.draw.entries) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) return usage(error);
  // The campaign's own coverage plan, as a run on this GPU makes it (plan_coverage).
  props::CampaignOptions planned = opt;
  props::VerifyResult v;
  v.on_gpu = true;
  plan_coverage(a, *backend, &planned, &v);
  const std::vector<props::AimedCase>& aimed = planned.aimed;
  std::vector<golden::Case> candidates;
  for (const props::AimedCase& x : aimed) candidates.push_back(x.c);
  candidates.insert(candidates.end(), opt.saved.begin(), opt.saved.end());
  const std::vector<golden::Case> cases = props::pipelined_cases(candidates, backend->registry(), backend->limits());
  props::PerturbOptions po;
  po.seed = a.perturb_seed;
  po.seeds_per_case = a.perturb_seeds;
  po.time_budget_s = a.time_budget_s > 0 ? a.time_budget_s : kPerturbBudgetSeconds;
  po.max_failures = a.max_failures;
  po.contract = opt.contract;
  std::printf("w8a16check verify --perturb 0x%" PRIx64 ": backend %s\n", po.seed, note.c_str());
  std::fputs(identity_text(run_identity(*backend)).c_str(), stdout);
  std::fputs(props::contract_report_text(opt.contract).c_str(), stdout);
  std::printf(
      "perturb: %zu cases of the bodies the perturbed module delays (the Hopper tier's and the cp.async rings'; of "
      "%zu coverage%s and saved cases), each under %u timing "
      "seeds; every byte against the emulator; no case starts after %.0f s\n",
      cases.size(), candidates.size(), a.quick ? " (--quick)" : "", po.seeds_per_case, po.time_budget_s);
  // The module's protocol, read before it runs: a finding fails the run as a failing launch does.
  const props::ProtocolReport protocol = props::check_module_protocol(module);
  std::fputs(props::protocol_text(protocol).c_str(), stdout);
  props::InProcessLauncher launcher(*backend, a.deadlines);
  const props::TimingControl timing{[gpu](std::uint64_t seed) { return gpu->set_timing_seed(seed); },
                                    [gpu](std::uint32_t* stalls) { return gpu->take_timing_stalls(stalls); }};
  const auto progress = [](const golden::Case& c, std::uint64_t i, std::uint64_t failed) {
    if (failed)
      std::printf("  case %" PRIu64 ": %s: %" PRIu64 " failing seeds\n", i, golden::format_case(c).c_str(), failed);
  };
  // The result is verify's, with the perturbed stage and the protocol check its only stages: the
  // same reasons, JSON and JUnit as a campaign's (verify_report.hpp).
  v.perturb_run = true;
  v.perturb = props::run_perturbed(launcher, cases, timing, po, progress);
  v.perturb_seed = po.seed, v.perturb_seeds_per_case = po.seeds_per_case;
  v.protocol_run = true;
  v.protocol = protocol;
  v.quick = a.quick;
  const props::PerturbResult& r = v.perturb;
  for (const props::PerturbFailure& f : r.failures) std::printf("  FAIL %s\n", props::perturb_failure_text(f).c_str());
  const char* verdict = !r.failures.empty() || !protocol.findings.empty() ? "FAIL"
                        : !r.complete || r.cases_run == 0                 ? "INCOMPLETE"
                                                                          : "PASS";
  std::printf("verify --perturb: %s: %" PRIu64 " of %" PRIu64 " cases x %u seeds, %" PRIu64
              " launches in %.1f s; %zu failing launches%s\n",
              verdict, r.cases_run, r.cases, po.seeds_per_case, r.launches, r.seconds, r.failures.size(),
              r.failures.empty() ? "" : " (each replays with the same --perturb seed and campaign flags)");
  return finish(a, v, VerifyReportContext{backend->name(), run_identity(*backend), data_dir, opt.contract});
#else
  (void)opt, (void)data_dir;
  return usage(
      "--perturb runs the perturbed module on a GPU: this build has no CUDA backend (configure with the "
      "cuda preset)");
#endif
}

int run_verify(const VerifyArgs& a) {
  props::CampaignOptions opt;
  Inputs in;
  std::string shard_from;
  if (const int bad = campaign_options(a, &opt, &shard_from)) return bad;
  opt.contract = a.contract;  // resolved while the command line was parsed (a bad one: exit 2, nothing run)
  if (a.perturb) {
    if (a.backend == "sim") return usage("--perturb runs the perturbed module on a GPU: not with --backend sim");
    if (a.sanitize) return usage("--sanitize is a stage of the campaign: not with --perturb");
    if (const int bad = gather_inputs(a, &opt, &in)) return bad;
    std::string error;
    for (Report* rep : {a.junit.get(), a.json.get()})
      if (!begin_report(rep, &error)) return usage(error);
    return run_perturb(a, opt, in.data.path);
  }
  if (a.sanitize && !a.sanitizer.empty() && ::access(a.sanitizer.c_str(), X_OK) != 0)
    return usage("--sanitizer " + golden::shown(a.sanitizer) + ": not an executable file");
  if (const int bad = gather_inputs(a, &opt, &in)) return bad;
  // The reports can be written, and an earlier run's are marked INCOMPLETE, before the module is
  // loaded: a driver that crashes on it cannot leave an earlier PASS in place.
  std::string error, note;
  for (Report* rep : {a.junit.get(), a.json.get()})
    if (!begin_report(rep, &error)) return usage(error);
  bool no_gpu = false;
  auto backend = make_backend(a.backend, &note, &error, a.module, 0, &no_gpu);
  if (!backend) return backend_refused("verify", error, no_gpu);
  // The seed's entry points are required of every module (docs/KERNEL_ABI.md 1.2); the packed one
  // only of modules with an sm_90a cubin: by default it is left out, and named, where its symbols
  // are absent, while --entry gemm_packed_strided requires them.
  if (a.entries.empty()) {
    for (device::KernelId id : device::required_kernels(device::Entry::gemm_packed_strided))
      if (!backend->registry().resolve(id)) {
        std::printf("verify: note: gemm_packed_strided not verified: the module lacks %s (no sm_90a cubin)\n",
                    device::kernel_name(id));
        auto& es = opt.draw.entries;
        es.erase(std::remove(es.begin(), es.end(), golden::EntryPoint::gemm_packed_strided), es.end());
        break;
      }
  }
  std::vector<device::Entry> entries;
  for (golden::EntryPoint e : opt.draw.entries) entries.push_back(props::to_device_entry(e));
  if (!check_module(*backend, entries, &error)) return usage(error);
  const VerifyReportContext ctx{backend->name(), run_identity(*backend), in.data.path, opt.contract};
  props::VerifyResult v;
  v.quick = a.quick;
  v.invariance_not_asked = !a.invariance;
  v.on_gpu = backend->kind() == device::BackendKind::cuda;
  // The emulator computes every expected byte on the host: on a 2-core machine 2^23 multiply-adds
  // per case keeps the default campaign to a few minutes and admits the smaller model shapes at m=1.
  const std::uint64_t draw_default = v.on_gpu ? std::uint64_t{1} << 28 : std::uint64_t{1} << 23;
  opt.draw.max_macs = std::min(a.draw_max_macs != 0 ? a.draw_max_macs : draw_default, a.limits.max_macs);
  Stopwatch clock;
  plan_coverage(a, *backend, &opt, &v);
  v.seed = opt.seed, v.shard_index = opt.shard_index, v.shard_count = opt.shard_count, v.shard_from = shard_from;
  v.saved_asked = a.saved, v.saved_chosen = opt.saved.size(), v.max_failures = a.max_failures;
  v.case_file_errors = in.saved.errors;

  std::printf("w8a16check verify%s: backend %s; seed %" PRIu64 ", %" PRIu64 " drawn cases, shard %u/%u%s\n",
              a.quick ? " --quick (the gate)" : "", note.c_str(), opt.seed, opt.cases, opt.shard_index, opt.shard_count,
              shard_from.empty() ? ""
                                 : (" (a shard, from " + shard_from +
                                    ": it runs part of the cases and judges no "
                                    "coverage)")
                                       .c_str());
  std::fputs(props::contract_report_text(opt.contract).c_str(), stdout);
  print_scope(v.on_gpu, in.mma_roots, in.recordings, a.replay_recordings);
  std::fputs(identity_text(ctx.identity).c_str(), stdout);
  if (!in.data.path.empty()) std::printf("%s\n", data_dir_line(in.data).c_str());
  check_evidence_and_mmas(in, &clock, &v);
  if (v.on_gpu) {
    v.protocol_run = true;
    v.protocol = check_loaded_module_protocol(a.module);
    std::fputs(props::protocol_text(v.protocol).c_str(), stdout);
  }

  // Every launch goes through a launcher (launcher.hpp): on a GPU each GPU's cases run in a worker
  // process, so a kernel that hangs, faults or crashes fails its case and the run goes on.
  std::vector<std::unique_ptr<device::Backend>> extra;
  if (v.on_gpu && a.gpus != 1) extra = more_gpu_backends(a.gpus, a.module);
  std::vector<device::Backend*> backends{backend.get()};
  for (auto& b : extra) backends.push_back(b.get());
  std::vector<std::unique_ptr<props::CaseLauncher>> launchers;
  for (std::size_t j = 0; j < backends.size(); ++j)
    launchers.push_back(make_launcher(*backends[j], a.module, static_cast<int>(j), a.isolate, a.deadlines));

  if (const int bad = replay_recordings_stage(a, in, v.on_gpu ? launchers[0].get() : nullptr, opt, &clock, &v))
    return bad;
  run_cases_stage(launchers, opt, &clock, &v);
  run_invariance_stage(*launchers[0], *backend, opt, &v);
  run_sanitize_stage(a, opt, &v);
  props::judge_coverage(&v);
  print_verify_summary(stdout, v);
  print_failures(a, v, in.data.path, backend->name(), opt.contract);
  return finish(a, v, ctx);
}

}  // namespace cmd_verify
}  // namespace w8a16::cli
