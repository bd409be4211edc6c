// SPDX-License-Identifier: MIT OR Apache-2.0
// Which contract of the family a kernel keeps (NUMERICS.md 2.4), found by running it: each entry
// point's bodies on data built to tell the conventions apart (fold ties, zero signs, cancelling
// steps, NaN codes, wide exponents, every special class), and every candidate of the family
// emulated on the same operands. A candidate is named only when every byte of every probe of a
// body matches it; two candidates the probes cannot tell apart are both named; a body that keeps
// none is reported with the nearest candidate and its differing elements per probe.
// `w8a16check identify` (properties/README.md, "identify") and w8a16check.identify (Python) use it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::props {

class CaseLauncher;

// One candidate: the part of a contract one kind of body keeps (tensor-core or GEMV), and its
// name: the library names whose part equals it (NUMERICS.md 2.4 "Named values"; several library
// values share one GEMV part), else its short description (ref::describe).
struct IdentifyCandidate {
  ref::Conventions conventions;  // the part that is not the candidate's kind stays canonical
  bool gemv = false;
  std::string name;         // "canonical", "seed-skinny", "seed-tile = seed-skinny = seed-rows", or the description
  std::string description;  // ref::describe of its part
};

// The tensor-core candidates: nan {propagate, zero, finite} x fold {fma, mul-add, prescale} x
// bias {0, 60} x k-order {contiguous, seed-rows'} at fold period step: 36. Fold period end is left
// out: it is defined only for per-channel scales (NUMERICS.md 2.4), and the probes' scales change
// along K, which is what tells the fold apart.
const std::vector<IdentifyCandidate>& tc_candidates();
// The GEMV candidates: nan x lanes {32, 64} x chunk {8, 16, 32} x scale {chunk, element} x mac
// {fma, mul-add} x tree {xor, down}: 144. Lane 0 holds the same sum under both trees, so the two
// trees are never told apart: every GEMV verdict names both.
const std::vector<IdentifyCandidate>& gemv_candidates();

// The data of the probes, in the order they run: each a golden distribution built to separate
// conventions (case.hpp): fold_ties (one rounding or two), zero_signs (the accumulator's start and
// signed zeros), cancelling_steps (order across steps), nan_codes (the NaN codes' decode),
// wide_exponents (order inside a step, and a bias that overflows: |a| up to 2^100), mid_exponents,
// every_special.
const std::vector<golden::Distribution>& identify_distributions();

// One probe: a case that the plan runs on `body`. Its operands are the case's distribution
// regenerated from its seed, or (inputs set) operands the plan built to split candidates that the
// distributions leave together: gemv_split_inputs from the seed in `data`, a function of the plan's
// seed alone, so a run replays.
struct IdentifyProbe {
  golden::Case c;
  device::Body body = device::Body::gemm128_tile;
  std::shared_ptr<const golden::CaseInputs> inputs;  // null: golden::regenerate_inputs(c)
  std::string data;                                  // what the operands are, for reports
};

// The GEMV probes that split candidates (NUMERICS.md 2.4, "The GEMV"): the case's shape with
// operands built from `seed` so that lane partition, chunk width, scale placement and fma versus
// mul-add round differently and show in BF16. Scales with every mantissa bit set at random (a
// product with them is inexact); small random products; in every A row pairs of spikes +X, -X at
// two K of one scale block (the same code in every W row there), so a lane that holds a spike adds
// its later chunks' small terms at the spike's ulp and the spike cancels in the end, leaving the
// rounding errors of which lane took which chunk, when, and how; and in every fourth W row one NaN
// code, where the three NaN decodes differ (NaN, 0, +-480 times a sizeable A).
golden::CaseInputs gemv_split_inputs(const golden::Case& shape, std::uint64_t seed);

// Candidates grouped by their emulated bytes on the given operands, raw bits: two candidates share
// a group exactly when no compared element tells them apart. max_elements > 0 compares that many
// elements per probe, spread over the output (a group may then be split further by the rest).
// Equivalent candidates (the GEMV's two trees) are emulated once.
std::vector<std::vector<std::size_t>> candidate_groups(const std::vector<IdentifyCandidate>& candidates,
                                                       const std::vector<golden::Case>& cases,
                                                       const std::vector<const golden::CaseInputs*>& inputs,
                                                       std::size_t max_elements = 0, unsigned threads = 0);
// True for two candidates that no data tells apart (NUMERICS.md 2.4: the GEMV's xor and down trees
// give lane 0 the same sum): never a gap of the probes.
bool always_equal(const IdentifyCandidate& x, const IdentifyCandidate& y);
// Per entry point: each body its dispatch reaches on this registry (coverage's expected cells) with
// its probes: per distribution the cheapest case of the coverage plan aimed at one of the body's cells.
struct EntryProbes {
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  std::vector<device::Body> bodies;    // in Body order
  std::vector<IdentifyProbe> probes;   // grouped by body, in the same order
  std::vector<std::string> unreached;  // cells no aimed shape reaches
  // Per GEMV body (in `bodies` order, empty for a tensor-core body): the groups of candidates
  // (indices into gemv_candidates) that the split search's budget ran out before telling apart,
  // always-equal twins aside. Empty when every pair that can be told apart is.
  std::vector<std::vector<std::vector<std::size_t>>> unsplit;
};
std::vector<EntryProbes> identify_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                       const std::vector<golden::EntryPoint>& entries, std::uint64_t seed);

// Keeps only the given bodies (and their probes), and no unreached cell of another body.
void keep_bodies(EntryProbes* ep, const std::vector<device::Body>& bodies);

// One probe as run: its operands and all of C afterwards ([m + guard rows][c_row_stride], the
// sentinel outside the output, as launch_case gives it).
struct ProbeRun {
  golden::Case c;
  const golden::CaseInputs* in = nullptr;
  const std::vector<std::uint16_t>* produced = nullptr;
};

// What one body keeps, from its probes.
struct BodyMatch {
  std::vector<std::size_t> keeps;  // indices into the candidate list: every byte of every probe matches
  // When keeps is empty: the candidate with the fewest differing elements over all probes.
  std::size_t nearest = 0;
  std::vector<std::uint64_t> nearest_differ;  // per probe: elements of C (output, padding, guard rows) that differ
  std::uint64_t nearest_total = 0;
  std::vector<std::uint64_t> elements;  // per probe: elements compared (all of C)
  std::vector<std::uint64_t> outside;   // per probe: padding or guard-row elements not left as the sentinel
};
// Matches the probes against every candidate, raw bits, no tolerance. threads = 0: every core.
// Every candidate is first compared on a few elements of each probe, and only those that pass are
// emulated on every element; the nearest of a body that keeps none is searched over all.
BodyMatch match_candidates(const std::vector<IdentifyCandidate>& candidates, const std::vector<ProbeRun>& probes,
                           unsigned threads = 0);

// The verdict of one body and one entry point.
struct BodyVerdict {
  device::Body body = device::Body::gemm128_tile;
  std::vector<golden::Case> probes;
  std::vector<std::string> probe_data;            // per probe: its distribution, or the split operands' seed
  std::vector<std::vector<std::size_t>> unsplit;  // EntryProbes::unsplit of this body
  std::string error;  // a probe that did not run (refused, HANG, FAULT, another body): no verdict
  BodyMatch match;
  std::vector<std::string> keeps;  // candidate names
  bool gemv = false;
};
struct EntryVerdict {
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  std::vector<BodyVerdict> bodies;
  std::vector<std::string> unreached;
  std::vector<std::string> common;  // candidates every body keeps
  bool every_body_keeps = false;    // every body ran and keeps at least one candidate
  bool ok() const { return every_body_keeps && !common.empty() && unreached.empty(); }
  bool tier_break() const { return every_body_keeps && common.empty(); }
};

// Runs every probe through the launcher and matches it. `progress` (when given) is told each
// (entry, body) before it runs. Stops at a HANG (every later launch could hang as long): *hung set.
std::vector<EntryVerdict> identify(CaseLauncher& launcher, const std::vector<EntryProbes>& plan, unsigned threads,
                                   bool* hung = nullptr, const std::function<void(const std::string&)>& progress = {});

// The text report: per entry point, per body "KEEPS <names>" or "KEEPS NONE (nearest: ...)", and
// whether the bodies agree (a tier break names each body and what it keeps).
std::string identify_text(const std::vector<EntryVerdict>& verdicts);

}  // namespace w8a16::props
