// SPDX-License-Identifier: MIT OR Apache-2.0
// `verify` as a library: the whole outcome of a verification run as one result (the evidence
// check, the recorded MMAs, the GPU recordings, the campaign over every launcher and its
// coverage), the rules that turn it into a verdict, and the parts of the run that produce it. The
// CLI parses flags, calls these and formats the result (properties/report/verify_report.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "w8a16/properties/campaign.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/invariance.hpp"
#include "w8a16/properties/evidence.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/perturb.hpp"
#include "w8a16/properties/protocol_check.hpp"
#include "w8a16/properties/sanitize.hpp"
#include "w8a16/properties/recordings.hpp"

namespace w8a16::props {

// The recorded MMAs replayed against the emulator's sm90 policy (NUMERICS.md 1.1).
struct MmaReplaySummary {
  std::uint64_t files = 0, dots = 0, mismatches = 0, unreadable = 0, not_hardware = 0;
  std::vector<std::string> problems;
};

// Every .mmav under `roots` (folders, or .mmav files named directly: golden/mma/README.md)
// replayed bit for bit. `not_hardware`: files the evidence check failed (evidence.hpp: cut,
// changed, not listed, made by the simulation), weakly canonical; they are counted, not replayed
// as hardware, and the evidence reasons name them.
MmaReplaySummary replay_recorded_mmas(const std::vector<std::string>& roots,
                                      const std::vector<std::string>& not_hardware);

// What verify knows about coverage: the cells it expected, and what the campaign left empty.
struct CoverageReport {
  bool checked = false;                        // false with --no-coverage
  std::vector<CoverageKey> expected;           // expected_cells for the backend and the entry points
  std::vector<std::string> gaps;               // coverage_gaps, plus cells no aimed shape reached
  std::uint64_t aimed = 0, aimed_without = 0;  // coverage cases, and those planned with kernels taken away
};

// Seconds each part of the run took, in the order they run.
struct StageTimes {
  double evidence = 0, recorded_mma = 0, recordings = 0, cases = 0, total = 0;
};

// A reason the verdict is not PASS, under the report's test case that fails for it.
struct Reason {
  std::string group;    // evidence, recorded_mma, recordings, saved_cases, campaign, coverage, cases
  std::string message;  // one line
  std::vector<std::string> details;
};

// One verification run, whole: what every report of it reads.
struct VerifyResult {
  // How the run was asked for.
  bool quick = false;   // --quick: the gate's campaign
  bool on_gpu = false;  // the cases ran on a GPU (else the simulation)
  std::uint64_t seed = 1;
  std::uint32_t shard_index = 0, shard_count = 1;
  std::string shard_from;          // what asked for the shard: "--shard", the GTEST_* variables; "" for the whole run
  bool saved_asked = true;         // saved cases were to be replayed (not --no-saved)
  std::size_t saved_chosen = 0;    // saved cases of the chosen entry points
  std::uint64_t max_failures = 0;  // --max-failures (0: none)
  // What it found, part by part.
  StageTimes times;
  EvidenceReport evidence;
  MmaReplaySummary mma;
  bool recordings_replayed = false;
  RecordingsResult recordings;
  std::vector<std::string> case_file_errors;  // saved-case lines that are not cases
  CampaignResult campaign;
  CoverageReport coverage;
  // The batch and tier verdicts at each entry point's dispatch edges (invariance.hpp), on one
  // small shape and one needle: rows of their own in every report. Not run: a shard other than the
  // first, a run cut short, or --no-invariance (invariance_not_asked).
  // The static protocol check of the module's pipelined symbols (protocol_check.hpp): run where the
  // cases run on a GPU (the module that is loaded), never on the simulation.
  bool protocol_run = false;
  ProtocolReport protocol;
  bool invariance_run = false;
  bool invariance_not_asked = false;
  InvarianceReport invariance;
  double invariance_seconds = 0;
  // `verify --perturb` (perturb.hpp): the Hopper tier's cases on the perturbed module under timing
  // seeds, with the protocol check of that module; such a run runs these two stages alone, and
  // its reports say the others did not run.
  bool perturb_run = false;
  PerturbResult perturb;
  std::uint64_t perturb_seed = 0;  // the run's seed, which every timing seed is drawn from
  std::uint32_t perturb_seeds_per_case = 0;
  // `verify --sanitize` (sanitize.hpp): one aimed case per cell under compute-sanitizer. Run on a
  // GPU after the cases, on the first shard of a run not cut short; a finding fails the run, a
  // stage NOT CHECKED (no tool, no summary) is said in every report and fails nothing.
  bool sanitize_asked = false;
  bool sanitize_run = false;
  std::string sanitize_not_run;  // why the stage did not run though asked
  SanitizeReport sanitize;
};

// Cases did not run because a launch hung (in the campaign or the recordings' replay) or the
// context was lost: they are counted as such, and the cells they would have reached are not gaps
// of the campaign's design.
bool cut_short(const VerifyResult& v);

// Why coverage is not judged in this run, or "" when it is: --no-coverage, a run cut short, or a
// shard (a shard runs part of the coverage cases, so a cell may lie in another shard; the union of
// the shards' reports, or an unsharded run, judges it). Every report says this, never a pass.
std::string coverage_not_judged(const VerifyResult& v);

// Adds the campaign's coverage gaps (coverage_gaps) to v->coverage.gaps when coverage is judged
// (coverage_not_judged is "").
void judge_coverage(VerifyResult* v);

// One row of the coverage table: the expected cells in their order, then any other cell a case
// ran. The text table and both reports read these rows.
struct CoverageRow {
  CoverageKey key;
  CoverageCell cell;  // empty when no case reached it
  bool expected = false;
};
std::vector<CoverageRow> coverage_rows(const VerifyResult& v);

// Every reason the verdict is not PASS, in the order the text prints them; empty: PASS. A run
// that checked nothing (no recorded MMA, no recording, no case, no saved case) is one of them.
std::vector<Reason> verdict_reasons(const VerifyResult& v);

// The cases of this shard the campaign plans: saved, aimed and drawn.
std::uint64_t planned_cases(const CampaignOptions& opt);

// The campaign over several launchers (one per GPU): launcher j of shard i/n runs sub-shard
// (i + n*j)/(n*g), which together are exactly shard i/n's cases, so the result never depends on
// the launcher count; the host's cores are shared among them. `progress` is called with the
// launcher's index, from that launcher's thread. An exception of any part is rethrown here once
// every part has ended.
CampaignResult run_campaign_over(const std::vector<CaseLauncher*>& launchers, const CampaignOptions& opt,
                                 const std::function<void(std::uint32_t, const CampaignProgress&)>& progress);

// "13/15 (not seen: nan_codes,...)": the special classes of a tally.
std::string specials_text(std::uint32_t seen);

}  // namespace w8a16::props
