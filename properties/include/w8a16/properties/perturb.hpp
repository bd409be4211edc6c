// SPDX-License-Identifier: MIT OR Apache-2.0
// The perturbed campaign (`verify --perturb`): cases of the pipelined bodies run on the perturbed
// kernel module (device/kernels/w8a16_timing.cuh), each under several timing seeds, every byte held
// to the emulator's. The product module's timing is one ordering of the pipeline's hand-overs out of
// many the protocol allows; the seeds move each hand-over, so a kernel that leans on one ordering
// (a stage released before its wgmmas finish, a refill before the release) changes bytes here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::props {

struct PerturbOptions {
  std::uint64_t seed = 1;            // the run's seed: every timing seed is drawn from it
  std::uint32_t seeds_per_case = 4;  // timing seeds each case runs under
  double time_budget_s = 0;          // seconds after which no case starts (0: none); a run cut short is INCOMPLETE
  std::uint64_t max_failures = 0;    // start no case after this many failed (0: no limit)
  ContractChoice contract;           // what the bytes are held to (NUMERICS.md 2.4): canonical by default
};

// The timing seed of launch j of case i: never 0 (0 is the module's "no delays").
std::uint64_t perturb_timing_seed(std::uint64_t run_seed, std::uint64_t case_index, std::uint32_t j);

struct PerturbFailure {
  golden::Case c;
  std::uint64_t case_index = 0;
  std::uint64_t timing_seed = 0;
  std::string body;  // the body its plan ran
  std::uint64_t mismatches = 0;
  std::string detail;        // the first differing element, or the launch's error
  std::uint32_t stalls = 0;  // the launch's waits that gave up: its protocol deadlocked
};

// One failure as every report prints it: the case line, the timing seed, the case's index and body,
// the waits that gave up and the elements that differ (or the launch's error).
std::string perturb_failure_text(const PerturbFailure& f);

// The perturbed module's controls (CudaBackend::set_timing_seed and take_timing_stalls): the seed,
// set before each launch, and the count of the launch's waits that gave up, taken after it.
struct TimingControl {
  std::function<device::Status(std::uint64_t)> set_seed;
  std::function<device::Status(std::uint32_t*)> take_stalls;
};

struct PerturbResult {
  std::uint64_t cases = 0, cases_run = 0, launches = 0;
  std::vector<PerturbFailure> failures;
  bool complete = true;  // every case ran under every seed
  double seconds = 0;
  bool pass() const { return complete && failures.empty() && cases_run > 0; }
};

// The listener of a run: each case as it ends (its failures already in the result).
using PerturbProgress = std::function<void(const golden::Case&, std::uint64_t case_index, std::uint64_t failures)>;

// Whether the perturbed module delays a body's hand-overs: the Hopper tier's (w8a16_timing.cuh) and
// the cp.async rings' (the tiles, the twins' tiles, the row-tile stream: w8a16_sync_timing.cuh).
bool perturbed_body(device::Body b);

// The cases of `candidates` whose plan on `registry` runs a body the perturbed module delays
// (perturbed_body), in their order, each once.
std::vector<golden::Case> pipelined_cases(const std::vector<golden::Case>& candidates,
                                          const device::KernelRegistry& registry, const device::DeviceLimits& limits);

// Runs each case under opt.seeds_per_case timing seeds: timing.set_seed(seed) before each launch,
// the launch through `launcher` (its deadline and hang watchdog), timing.take_stalls after one that
// ran, the bytes against expected_output, which a pool of threads emulates for the cases ahead
// while the earlier ones launch (case_pipeline.hpp). A launch fails if a byte differs or a wait
// gave up. An error of either control, or a hang, ends the run (complete = false).
PerturbResult run_perturbed(CaseLauncher& launcher, const std::vector<golden::Case>& cases, const TimingControl& timing,
                            const PerturbOptions& opt, const PerturbProgress& progress = {});

}  // namespace w8a16::props
