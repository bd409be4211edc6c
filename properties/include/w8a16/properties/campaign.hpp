// SPDX-License-Identifier: MIT OR Apache-2.0
// The verification campaign: saved cases, then seeded drawn cases, on one backend, tallied per entry point.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/case_draw.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::props {

struct CampaignOptions {
  std::uint64_t cases = 200;  // drawn cases over all shards (case i is draw_case_seeded(seed, i))
  std::uint64_t seed = 1;
  double time_budget_s = 0;  // > 0: draw no new case after this many seconds
  DrawOptions draw;
  std::uint32_t shard_index = 0, shard_count = 1;  // this shard runs the indices i % count == index
  std::vector<golden::Case> saved;                 // replayed first (golden/cases, golden/regressions)
  std::vector<std::string> saved_sources;          // where each saved case came from ("file:line")
  std::vector<AimedCase> aimed;                    // then the coverage cases (coverage_plan), all of them
  std::uint64_t max_failures = 0;                  // > 0: start no case after this many failed
  unsigned threads = 0;  // the host threads that regenerate and emulate cases ahead (case_pipeline.hpp); 0: every core
  ContractChoice contract;  // what every case's expected bytes are (NUMERICS.md 2.4); canonical by default
};

struct EntryTally {
  std::uint64_t cases = 0;
  std::uint64_t bytes_compared = 0;
  std::uint64_t mismatching_cases = 0;
  std::uint64_t mismatched_elements = 0;
  std::uint64_t errors = 0;         // launch or regeneration errors
  std::uint32_t specials_seen = 0;  // golden::SpecialClass bits
};

struct CaseFailure {
  golden::Case c;
  std::string source;  // "drawn #i", "aimed #i (cell)" or "file:line"
  std::string why;     // the error, or the mismatch count and the first mismatches
  std::uint64_t mismatched_elements = 0;
};

struct CampaignProgress {
  std::uint64_t done = 0, planned = 0, failures = 0;
  double seconds = 0;
  const golden::Case* current = nullptr;
};

struct CampaignResult {
  std::map<golden::EntryPoint, EntryTally> per_entry;
  CoverageTable coverage;  // what every case that was planned ran, by cell
  std::uint64_t saved_run = 0, aimed_run = 0, drawn_run = 0, drawn_planned = 0;
  bool stopped_by_budget = false;
  bool stopped_by_failures = false;  // max_failures reached
  std::vector<CaseFailure> failures;
  double seconds = 0;
  // What the kernel under test did to the run (launcher.hpp). A faulting case is a failure with
  // its error; a hang stops the campaign (each further launch could hang as long); cases not run
  // for either reason are counted here, never as coverage gaps.
  std::uint64_t faulted = 0;               // cases whose launch lost the context, or whose worker died
  std::uint64_t not_run_lost_context = 0;  // not run: the context was lost and none could replace it
  bool stopped_by_hang = false;
  std::string hang;  // the HANG text of the case that did not complete
  std::uint64_t not_run_after_hang = 0;
  std::uint64_t worker_starts = 0;  // worker processes started (IsolatedLauncher)
};

// Runs every case of this shard through `launcher` against the emulator (case_runner.hpp), in
// order: saved, aimed, drawn. The cases' operands and expected bytes are prepared on a pool of
// threads while earlier cases launch (case_pipeline.hpp); the result does not depend on the
// thread count. `progress` is called after each case, in order.
CampaignResult run_campaign(CaseLauncher& launcher, const CampaignOptions& opt,
                            const std::function<void(const CampaignProgress&)>& progress);
// The same in this process (InProcessLauncher over `backend`).
CampaignResult run_campaign(device::Backend& backend, const CampaignOptions& opt,
                            const std::function<void(const CampaignProgress&)>& progress);

// Adds a part's tallies, counts and failures to *into (parts: the GPUs of one shard).
void merge_campaign_result(CampaignResult* into, const CampaignResult& part);

// "i/n" -> (i, n) with n >= 1 and i < n; false with *error otherwise.
bool parse_shard(const std::string& text, std::uint32_t* index, std::uint32_t* count, std::string* error);

}  // namespace w8a16::props
