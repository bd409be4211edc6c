// SPDX-License-Identifier: MIT OR Apache-2.0
// Which contract of the family a kernel keeps (NUMERICS.md 2.4), determined by running it: each
// entry point's bodies on data built to tell the conventions apart (fold ties, zero signs,
// cancelling steps, NaN codes, wide exponents, every special class; the order probes, the bias
// ladder, the fold probe, the GEMV's split probes), and every candidate of the whole space
// emulated on the same operands, then confirmed at other M. A candidate is named only when every
// byte of every probe of a body matches it; two candidates the probes cannot tell apart are both
// named; a body that keeps none is reported with the nearest candidate and its differing elements
// per probe.
// `w8a16check identify` (properties/README.md, "identify") and w8a16check.identify (Python) use it.
#pragma once
#include <array>
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

// The tensor-core space over the given K orders (NUMERICS.md 2.4, every field over its whole
// range): nan {propagate, zero, finite} x fold and period {fma, mul-add, prescale at step; prescale
// at end} x bias 0..62 x scales {fp32, bf16}: 1,512 per order. Period end with fma or mul-add is
// defined only for per-channel scales, which the probes' block scales are not: a kernel keeping it
// is reported KEEPS NONE, never named as another. The K order comes from the order probes
// (determine_k_order); the library's orders stand in when the probes determine none.
std::vector<IdentifyCandidate> tc_space(const std::vector<std::array<std::uint8_t, 128>>& orders);
// tc_space over the contiguous order alone (for tests and Python's listing).
const std::vector<IdentifyCandidate>& tc_candidates();
// The GEMV candidates: nan x lanes {32, 64} x chunk {8, 16, 32} x scale {chunk, element} x mac
// {fma, mul-add} x tree {xor, down}: 144. Lane 0 holds the same sum under both trees, so the two
// trees are never told apart: every GEMV verdict names both.
const std::vector<IdentifyCandidate>& gemv_candidates();
// The GEMV's whole space (NUMERICS.md 2.4): nan x lanes 32, 64, ..., 1024 x chunk 1, 2, ..., 128 x
// scale x mac x tree: 6,144. identify matches a GEMV body against it, adding split probes (K from
// 4096 up to 262144, seeded from the plan) while the kept candidates differ in more than their
// tree; gemv_candidates is the part the plan's split search separates ahead of any launch.
const std::vector<IdentifyCandidate>& gemv_space();

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

// ---- the K order inside a step, determined (FPRev's pairs over NUMERICS.md 1.1) ---------------
// An order probe's operands on a case's shape: in step 0, row r of A holds +2^40 at pairs[r].first,
// -2^40 at pairs[r].second and +1 at every other K (rows past the pairs repeat them); column c of W
// holds 1.0 at every K of step 0 but zero_at[c] (-1: none), where it holds +0; every later step is
// zero and every scale 1. The big pair cancels in the MMA window that holds the later of the two,
// and a term of 1 in that window or an earlier one is truncated away under it (1.1, 3.), so column
// c of row r gives the count of ones in the windows after the pair's last: 16 (7 - t) for the
// column with no zero, one less where the zeroed K lies in such a window. Every field but the
// order leaves these bytes alone (powers of two, exact products, no NaN code, scale 1).
golden::CaseInputs order_probe_inputs(const golden::Case& shape,
                                      const std::vector<std::pair<unsigned, unsigned>>& pairs,
                                      const std::vector<int>& zero_at);

// What the order probes found: the MMA window (0..7) of every K position of a step, or the
// bounds still standing where the probes ran out.
struct OrderFinding {
  bool determined = false;
  bool consistent = true;                    // every output fit the windowed chain of NUMERICS.md 2.4
  std::string why;                           // not determined / not consistent: why, naming the probe
  std::array<std::uint8_t, 128> lo{}, hi{};  // window bounds per K position
  std::array<std::uint8_t, 128> k_order{};   // determined: window t's positions ascending at [16t, 16t+16)
  std::vector<golden::Case> probes;          // the order probes that ran
  std::vector<std::string> probe_data;       // "order pairs (i,j) ...": what each held
};
// Runs order probes on `shape` through `run` (one launch each, the bytes as Launched::c_bits
// gives them) until every position's window is determined, the outputs leave the model, or
// `max_launches` is spent. The pairs of each round are chosen from the bounds the earlier rounds
// left (the first round spreads them over K), so a run is a function of the kernel's bytes.
using ProbeLaunch = std::function<bool(const golden::Case&, const golden::CaseInputs&, std::vector<std::uint16_t>*,
                                       std::string*)>;
OrderFinding determine_k_order(const golden::Case& shape, const ProbeLaunch& run, unsigned max_launches = 24);

// The bias ladder (NUMERICS.md 2.4, tc.bias): in step 0, row r holds the activations 2^(127 - t),
// t = r * width + k for K = k < width = min(n, 128) (0 past t = 62), and column c of W holds -2^-6
// at K < c and +2^-6 from there. A bias e turns exactly the activations with t < e into Inf, so
// output (r, c >= 1) is NaN (+Inf meets -Inf, 1.1) exactly when e > r * width + c, and column 0 is
// +Inf exactly when e > r * width; without a bias every product is finite and small. So every bias
// 0..62 gives its own bytes where m * width >= 63.
golden::CaseInputs bias_ladder_inputs(const golden::Case& shape);

// The fold probe (tc.fold, fma against mul-add, at any bias and either scale precision): in row r,
// step 1's partial is a random 24-bit p (three BF16 terms, summed exactly) and its scale s a BF16
// value with a random fraction, and step 0 leaves acc = -RN(p * s) exactly (scale 1). One rounding,
// fma(p, s, acc), leaves the product's rounding error, which is not zero; two, RN(p * s) + acc,
// leave +0. Needs k >= 256; every scale BF16-exact and every product exact, so neither tc.scales
// nor tc.bias moves these bytes.
golden::CaseInputs fold_probe_inputs(const golden::Case& shape, std::uint64_t seed);

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
  // The confirmation (identify): its shape, and the M values it runs (every dispatch edge's M - 1,
  // M, M + 1 at that shape and kConfirmExtraMs, up to the entry point's row limit).
  golden::Case confirm_base;
  std::vector<std::uint32_t> confirm_ms;
  // False once keep_bodies took some away: a confirmation case that plans on a body left out is
  // skipped, not a failure.
  bool all_bodies = true;
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
  // When keeps is empty: of the candidates closest on a sample of every probe (a dozen), the one
  // with the fewest differing elements over all probes.
  std::size_t nearest = 0;
  std::vector<std::uint64_t> nearest_differ;  // per probe: elements of C (output, padding, guard rows) that differ
  std::uint64_t nearest_total = 0;
  std::vector<std::uint64_t> elements;  // per probe: elements compared (all of C)
  std::vector<std::uint64_t> outside;   // per probe: padding or guard-row elements not left as the sentinel
};
// Matches the probes against every candidate, raw bits, no tolerance. threads = 0: every core.
// Every candidate is first compared on a few elements of each probe, and only those that pass are
// emulated on every element; the nearest of a body that keeps none is counted on every element
// among the candidates closest on a sample.
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
  std::vector<IdentifyCandidate> candidates;  // the space matched (match's indices point here)
  OrderFinding order;                         // tensor-core bodies: what the order probes found
  // Per field of the part (NUMERICS.md 2.4's text-form keys): the values the kept candidates hold.
  // One value: determined; several: undetermined, the values still standing.
  std::vector<std::pair<std::string, std::vector<std::string>>> fields;
  // The confirmation (identify's second campaign): cases at other M run twice each.
  std::uint64_t confirm_cases = 0;
  std::string confirm_failure;  // the first case, element and bytes that broke a kept candidate
  // When the probes keep nothing: the first probe the nearest candidate differs on, as a case line,
  // and its first differing element with both bytes (what a user replays first).
  std::string nearest_first;
};
struct EntryVerdict {
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  std::vector<BodyVerdict> bodies;
  std::vector<std::string> unreached;
  std::vector<std::uint32_t> confirm_ms;    // the M values the confirmation ran
  std::vector<std::string> confirm_errors;  // confirmation launches that gave no bytes or reached an unprobed body
  std::vector<std::string> common;          // candidates every body keeps
  bool every_body_keeps = false;            // every body ran and keeps at least one candidate
  bool ok() const { return every_body_keeps && !common.empty() && unreached.empty() && confirm_errors.empty(); }
  bool tier_break() const { return every_body_keeps && common.empty(); }
};

// Runs every probe through the launcher and matches it: per tensor-core body the order probes
// first, then the plan's probes and the bias ladder against tc_space of the order found. Then the
// confirmation: per entry point, cases of the confirmation data classes (every_special, fold_ties,
// cancelling_steps, wide_exponents, nan_codes, lone_specials, each at each M) at every dispatch edge's
// M - 1, M, M + 1 and at confirm_extra_ms, each run twice; a case whose two runs differ, or whose
// bytes a kept candidate does not give, removes that candidate, and a body left with none keeps
// NONE, naming the case, the element and both bytes. `progress` (when given) is told each
// (entry, body) before it runs. Stops at a HANG (every later launch could hang as long): *hung set.
inline constexpr std::uint32_t kConfirmExtraMs[] = {1, 2, 3, 5, 8, 13, 24, 40, 100};
std::vector<EntryVerdict> identify(CaseLauncher& launcher, const std::vector<EntryProbes>& plan, unsigned threads,
                                   bool* hung = nullptr, const std::function<void(const std::string&)>& progress = {});

// The text report: per entry point, per body "KEEPS <names>" or "KEEPS NONE (nearest: ...)", and
// whether the bodies agree (a tier break names each body and what it keeps).
std::string identify_text(const std::vector<EntryVerdict>& verdicts);

// identify for a kernel that no module holds (a Python callable): one body of one kind, launched
// through `run` (whose bytes are [m + guard rows][c_row_stride], as launch_case gives them), with
// the same engine as identify(): the identify distributions at (m, n, k) (and the GEMV's split
// probes from the seed), the order probes, the bias ladder and the fold probe, the match over the
// whole space, and the confirmation: each of confirm_ms with every confirmation data class at
// (n, max(k, 512)), each case twice. `entry` only names the cases (their operands depend
// on the shape, distribution and seed alone).
struct CallableIdentifyOptions {
  bool gemv = false;
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  std::uint32_t m = 1, n = 128, k = 256;
  std::uint64_t seed = 0x1de7;
  std::vector<std::uint32_t> confirm_ms;
  unsigned threads = 0;
};
BodyVerdict identify_callable(const ProbeLaunch& run, const CallableIdentifyOptions& options);
// "" when identify_callable's cases are cases (golden::case_problem) and each fits the default
// work limits (work_limits.hpp: the probes, the GEMV's split probes at K = 8192, the confirmation
// at its largest M); else why not, before anything runs.
std::string identify_callable_problem(const CallableIdentifyOptions& options);

// One body's verdict as identify_text prints it (its lines after the body's name).
std::string body_verdict_text(const BodyVerdict& bv);

// The contract identify determined, in the text form `verify --contract` takes: per part, the
// value every body of every entry point of that kind keeps (ties of candidates no data tells
// apart resolved to the first). False, with *why, when a body keeps none, a field is undetermined,
// or the bodies of one part keep different values (a tier break): nothing to write.
bool determined_contract(const std::vector<EntryVerdict>& verdicts, std::string* text, std::string* why);

}  // namespace w8a16::props
