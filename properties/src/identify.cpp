// SPDX-License-Identifier: MIT OR Apache-2.0
// Which contract of the family a kernel keeps (identify.hpp): every candidate of NUMERICS.md 2.4's
// fields emulated on the probes' operands and compared with the device's bytes, raw bits.
#include "w8a16/properties/identify.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "w8a16/device/bodies.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::props {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The library names whose part of the given kind equals c's.
std::string library_name(const ref::Conventions& c, bool gemv) {
  std::vector<std::string> names;
  for (const ref::Conventions& lib : ref::conventions_library())
    if (gemv ? lib.gemv == c.gemv : lib.tc == c.tc) names.push_back(lib.name);
  return join(names, " = ");
}

IdentifyCandidate candidate(ref::Conventions c, bool gemv) {
  IdentifyCandidate out;
  out.gemv = gemv;
  out.description = gemv ? ref::describe(c.gemv) : ref::describe(c.tc);
  out.name = library_name(c, gemv);
  if (out.name.empty()) out.name = out.description;
  c.name = out.name;
  out.conventions = std::move(c);
  return out;
}

constexpr ref::NanCodes kNans[] = {ref::NanCodes::propagate, ref::NanCodes::zero, ref::NanCodes::finite};

std::vector<IdentifyCandidate> build_tc() {
  const ref::Conventions* rows = ref::find_conventions("seed-rows");
  std::vector<IdentifyCandidate> out;
  for (ref::NanCodes nan : kNans)
    for (ref::Fold fold : {ref::Fold::fma, ref::Fold::mul_add, ref::Fold::prescale})
      for (std::uint32_t bias : {0u, 60u})
        for (bool permuted : {false, true}) {
          ref::Conventions c = ref::canonical_conventions();
          c.tc.nan = nan;
          c.tc.fold = fold;
          c.tc.bias = bias;
          if (permuted) c.tc.k_order = rows->tc.k_order;
          out.push_back(candidate(std::move(c), false));
        }
  return out;
}

std::vector<IdentifyCandidate> build_gemv() {
  std::vector<IdentifyCandidate> out;
  for (ref::NanCodes nan : kNans)
    for (std::uint32_t lanes : {32u, 64u})
      for (std::uint32_t chunk : {8u, 16u, 32u})
        for (ref::GemvScale scale : {ref::GemvScale::chunk, ref::GemvScale::element})
          for (ref::Mac mac : {ref::Mac::fma, ref::Mac::mul_add})
            for (ref::GemvTree tree : {ref::GemvTree::xor_butterfly, ref::GemvTree::shfl_down}) {
              ref::Conventions c = ref::canonical_conventions();
              c.gemv.nan = nan;
              c.gemv.lanes = lanes;
              c.gemv.chunk = chunk;
              c.gemv.scale = scale;
              c.gemv.mac = mac;
              c.gemv.tree = tree;
              out.push_back(candidate(std::move(c), true));
            }
  return out;
}

std::uint64_t case_elements(const golden::Case& c) { return std::uint64_t{c.m} * c.n * c.k; }

std::uint64_t splitmix(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One candidate's element, raw bits.
std::uint16_t emulate_element(const IdentifyCandidate& cand, const ref::GemmView& v, std::uint32_t r,
                              std::uint32_t col) {
  return cand.gemv ? ref::gemv_conv_element_bf16(cand.conventions.gemv, v, r, col)
                   : ref::tc_element_bf16(cand.conventions.tc, v, ref::Arch::sm90, r, col);
}

// The candidate's conventions with the NaN decode set to propagate: where a W row holds no NaN
// code, candidates that differ only in their NaN decode give that row's outputs the same bits.
bool equal_but_nan(const IdentifyCandidate& x, const IdentifyCandidate& y) {
  if (x.gemv != y.gemv) return false;
  ref::Conventions a = x.conventions, b = y.conventions;
  a.tc.nan = b.tc.nan = a.gemv.nan = b.gemv.nan = ref::NanCodes::propagate;
  a.gemv.tree = b.gemv.tree = ref::GemvTree::xor_butterfly;
  return x.gemv ? a.gemv == b.gemv : a.tc == b.tc;
}

// Per candidate, the first candidate that always gives its bytes (itself when none before it).
std::vector<std::size_t> always_equal_reps(const std::vector<IdentifyCandidate>& cands) {
  std::vector<std::size_t> rep(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    rep[i] = i;
    for (std::size_t j = 0; j < i; ++j)
      if (rep[j] == j && always_equal(cands[j], cands[i])) {
        rep[i] = j;
        break;
      }
  }
  return rep;
}

// The elements of a probe compared: all, or `most` spread evenly over [0, m*n).
std::vector<std::uint64_t> element_sample(const golden::Case& c, std::size_t most) {
  const std::uint64_t all = std::uint64_t{c.m} * c.n;
  std::vector<std::uint64_t> e;
  const std::uint64_t take = most == 0 || all <= most ? all : most;
  for (std::uint64_t i = 0; i < take; ++i) e.push_back(take == all ? i : i * all / take);
  return e;
}

bool row_has_nan_code(const golden::CaseInputs& in, const golden::Case& c, std::uint32_t n) {
  const std::uint8_t* w = in.w_e4m3.data() + std::size_t{n} * c.k;
  for (std::uint32_t k = 0; k < c.k; ++k)
    if ((w[k] & 0x7F) == 0x7F) return true;
  return false;
}

// The GEMV split search's budget: tries, each a fresh seed, alternating K = 4096 and 8192 (a lane
// then takes at least two chunks under every candidate, 64 lanes x chunk 32 = 2048).
constexpr unsigned kGemvSplitTries = 6;

}  // namespace

bool always_equal(const IdentifyCandidate& x, const IdentifyCandidate& y) {
  if (x.gemv != y.gemv) return false;
  if (!x.gemv) return x.conventions.tc == y.conventions.tc;
  ref::GemvConventions a = x.conventions.gemv, b = y.conventions.gemv;
  a.tree = b.tree = ref::GemvTree::xor_butterfly;  // lane 0's sum is the same under both trees
  return a == b;
}

golden::CaseInputs gemv_split_inputs(const golden::Case& c, std::uint64_t seed) {
  golden::CaseInputs in;
  std::uint64_t st = seed;
  auto rnd = [&] { return splitmix(&st); };
  const std::uint32_t steps = c.k / ref::kKStep, units = (c.n + 127) / 128;
  // Scales in [0.5, 2) with a random, odd mantissa: p * s and w * s are inexact, so where they
  // round (fma or mul-add, per chunk or per element) shows.
  in.s_f32.resize(std::size_t{units} * steps);
  for (float& s : in.s_f32) {
    const std::uint32_t bits = ((126u + static_cast<std::uint32_t>(rnd() % 2)) << 23) |
                               (static_cast<std::uint32_t>(rnd()) & 0x7FFFFFu) | 1u;
    std::memcpy(&s, &bits, sizeof s);
  }
  // Small terms: A of magnitude 2^-3 .. 2^3, W codes of exponent field 4 .. 10 (never a NaN code).
  in.a_bits.assign(std::size_t{c.m} * c.a_row_stride, golden::kAPaddingBits);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t k = 0; k < c.k; ++k) {
      const std::uint64_t x = rnd();
      in.a_bits[std::size_t{r} * c.a_row_stride + k] = static_cast<std::uint16_t>(((x & 1) << 15) |
                                                                                  ((124 + (x >> 1) % 7) << 7) |
                                                                                  ((x >> 8) & 0x7F));
    }
  in.w_e4m3.resize(std::size_t{c.n} * c.k);
  for (std::uint8_t& w : in.w_e4m3) {
    const std::uint64_t x = rnd();
    w = static_cast<std::uint8_t>(((x & 1) << 7) | ((4 + (x >> 1) % 7) << 3) | ((x >> 8) & 7));
  }
  // Spike pairs: in about half the scale blocks two K of the block get A = +X and -X in each row
  // (X about 2^20 .. 2^24, its own per row) and one W code in each W row. The pair cancels in every
  // candidate's sum, so the output is the small terms' sum plus the rounding at the spike's ulp of
  // whatever a lane, chunk or scale placement added while the spike was in its accumulator.
  std::vector<bool> spike(c.k, false);
  for (std::uint32_t s = 0; s < steps; ++s) {
    if (rnd() % 2) continue;
    const std::uint32_t k1 = s * ref::kKStep + static_cast<std::uint32_t>(rnd() % ref::kKStep);
    std::uint32_t k2 = s * ref::kKStep + static_cast<std::uint32_t>(rnd() % ref::kKStep);
    if (k2 == k1) k2 = s * ref::kKStep + (k1 + 1) % ref::kKStep;
    spike[k1] = spike[k2] = true;
    for (std::uint32_t r = 0; r < c.m; ++r) {
      const std::uint64_t x = rnd();
      const auto big = static_cast<std::uint16_t>(((147 + x % 5) << 7) | ((x >> 8) & 0x7F));
      in.a_bits[std::size_t{r} * c.a_row_stride + k1] = big;
      in.a_bits[std::size_t{r} * c.a_row_stride + k2] = static_cast<std::uint16_t>(big | 0x8000);
    }
    for (std::uint32_t n = 0; n < c.n; ++n) in.w_e4m3[std::size_t{n} * c.k + k2] = in.w_e4m3[std::size_t{n} * c.k + k1];
  }
  // NaN codes: one in every fourth W row, at a K with a small A (no spike), where the three
  // decodes give NaN, a zero term, or +-480 * a * s, larger than the small terms' sum.
  for (std::uint32_t n = 1; n < c.n; n += 4) {
    std::uint32_t k = static_cast<std::uint32_t>(rnd() % c.k);
    while (spike[k]) k = (k + 1) % c.k;
    in.w_e4m3[std::size_t{n} * c.k + k] = static_cast<std::uint8_t>(rnd() % 2 ? 0xFF : 0x7F);
  }
  return in;
}

std::vector<std::vector<std::size_t>> candidate_groups(const std::vector<IdentifyCandidate>& cands,
                                                       const std::vector<golden::Case>& cases,
                                                       const std::vector<const golden::CaseInputs*>& inputs,
                                                       std::size_t max_elements, unsigned threads) {
  const std::vector<std::size_t> rep = always_equal_reps(cands);
  // Per candidate, the first candidate equal to it but for the NaN decode: on a W row without a
  // NaN code the two give the same bits, and that one's are reused.
  std::vector<std::size_t> nan_rep(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    nan_rep[i] = rep[i];
    for (std::size_t j = 0; j < i; ++j)
      if (rep[j] == j && equal_but_nan(cands[j], cands[i])) {
        nan_rep[i] = j;
        break;
      }
  }
  std::vector<std::vector<std::uint16_t>> sig(cands.size());
  for (std::size_t pi = 0; pi < cases.size(); ++pi) {
    const golden::Case& c = cases[pi];
    const golden::CaseInputs& in = *inputs[pi];
    const ref::GemmView v = golden::case_view(c, in);
    const std::vector<std::uint64_t> elems = element_sample(c, max_elements);
    std::vector<char> nan_row(c.n);
    for (std::uint32_t n = 0; n < c.n; ++n) nan_row[n] = row_has_nan_code(in, c, n);
    const std::size_t base = sig.front().size();
    for (auto& s : sig) s.resize(base + elems.size());
    ref::parallel_for(elems.size(), threads, [&](std::size_t e) {
      const auto r = static_cast<std::uint32_t>(elems[e] / c.n), col = static_cast<std::uint32_t>(elems[e] % c.n);
      for (std::size_t ci = 0; ci < cands.size(); ++ci) {
        const std::size_t from = nan_row[col] ? rep[ci] : nan_rep[ci];
        sig[ci][base + e] = from == ci ? emulate_element(cands[ci], v, r, col) : sig[from][base + e];
      }
    });
  }
  std::map<std::vector<std::uint16_t>, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t ci = 0; ci < cands.size(); ++ci) {
    auto it = group_of.emplace(sig[ci], groups.size()).first;
    if (it->second == groups.size()) groups.emplace_back();
    groups[it->second].push_back(ci);
  }
  return groups;
}

const std::vector<IdentifyCandidate>& tc_candidates() {
  static const std::vector<IdentifyCandidate> c = build_tc();
  return c;
}

const std::vector<IdentifyCandidate>& gemv_candidates() {
  static const std::vector<IdentifyCandidate> c = build_gemv();
  return c;
}

const std::vector<golden::Distribution>& identify_distributions() {
  using D = golden::Distribution;
  static const std::vector<D> d{D::fold_ties,      D::zero_signs,    D::cancelling_steps, D::nan_codes,
                                D::wide_exponents, D::mid_exponents, D::every_special};
  return d;
}

namespace {

// The GEMV split search (NUMERICS.md 2.4, "The GEMV"): the golden distributions are built for the
// tensor-core tiers' 128-K steps and leave GEMV candidates together on a GEMV's few rows, so the
// plan adds probes until every group of candidates the probes' bytes leave together is one
// candidate with its always-equal twin, or the budget is spent. Each try is gemv_split_inputs on
// the body's cheapest aimed shape with K = 4096 or 8192 (a lane takes several chunks under every
// candidate, the second warp some) and a seed drawn from the plan's: a try is kept only when it
// splits a group, and the choice reads the candidates' emulation alone, never a kernel's bytes,
// so the probes are a function of the seed and a run replays. The groups come from these probes
// alone; the distributions' probes, which run too, can only split them further.
void add_gemv_split_probes(const golden::Case& shape, device::Body b, std::uint64_t seed,
                           std::vector<IdentifyProbe>* probes, std::vector<std::vector<std::size_t>>* unsplit) {
  const std::vector<IdentifyCandidate>& cands = gemv_candidates();
  const std::vector<std::size_t> rep = always_equal_reps(cands);
  // group[ci]: the group's id; candidates start in one group and are split try by try.
  std::vector<std::size_t> group(cands.size(), 0);
  auto open = [&] {
    for (std::size_t i = 0; i < cands.size(); ++i)
      for (std::size_t j = i + 1; j < cands.size(); ++j)
        if (group[i] == group[j] && rep[i] != rep[j]) return true;
    return false;
  };
  std::uint64_t st = seed ^ (0x6e6d7673ull + static_cast<std::uint64_t>(b));
  for (unsigned t = 0; t < kGemvSplitTries && open(); ++t) {
    golden::Case c = shape;
    const std::uint32_t k = t % 2 == 0 ? 4096 : 8192;
    c.a_row_stride = c.a_row_stride - c.k + k;
    c.k = k;
    c.seed = splitmix(&st);
    auto in = std::make_shared<const golden::CaseInputs>(gemv_split_inputs(c, c.seed));
    const std::vector<std::vector<std::size_t>> by_bytes = candidate_groups(cands, {c}, {in.get()});
    std::vector<std::size_t> bytes_group(cands.size());
    for (std::size_t g = 0; g < by_bytes.size(); ++g)
      for (std::size_t ci : by_bytes[g]) bytes_group[ci] = g;
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> refined;
    std::vector<std::size_t> next(cands.size());
    for (std::size_t ci = 0; ci < cands.size(); ++ci)
      next[ci] = refined.emplace(std::make_pair(group[ci], bytes_group[ci]), refined.size()).first->second;
    std::set<std::size_t> before(group.begin(), group.end());
    if (refined.size() == before.size()) continue;  // split nothing: not kept
    group = std::move(next);
    char what[96];
    std::snprintf(what, sizeof what, "gemv_split seed=0x%016llx", static_cast<unsigned long long>(c.seed));
    probes->push_back({c, b, std::move(in), what});
  }
  std::map<std::size_t, std::vector<std::size_t>> left;
  for (std::size_t ci = 0; ci < cands.size(); ++ci) left[group[ci]].push_back(ci);
  for (auto& [g, members] : left) {
    bool twins = true;
    for (std::size_t ci : members) twins = twins && rep[ci] == rep[members.front()];
    if (!twins) unsplit->push_back(members);
  }
}

}  // namespace

std::vector<EntryProbes> identify_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                       const std::vector<golden::EntryPoint>& entries, std::uint64_t seed) {
  std::vector<EntryProbes> out;
  for (golden::EntryPoint e : entries) {
    EntryProbes ep;
    ep.entry = e;
    std::vector<CoverageKey> unreached;
    const std::vector<AimedCase> aimed = coverage_plan(registry, limits, {e}, identify_distributions(), seed,
                                                       &unreached);
    for (const CoverageKey& k : unreached) ep.unreached.push_back(coverage_key_text(k));
    // Per body and distribution, the cheapest case aimed at any of the body's cells.
    std::map<std::pair<device::Body, golden::Distribution>, golden::Case> best;
    for (const AimedCase& a : aimed) {
      auto key = std::make_pair(a.target.body, a.c.dist);
      auto it = best.find(key);
      if (it == best.end() || case_elements(a.c) < case_elements(it->second)) best[key] = a.c;
    }
    for (device::Body b : device::kAllBodies) {
      bool any = false;
      const golden::Case* shape = nullptr;
      for (golden::Distribution d : identify_distributions()) {
        auto it = best.find({b, d});
        if (it == best.end()) continue;
        any = true;
        ep.probes.push_back({it->second, b, nullptr, std::string(golden::distribution_name(d))});
        if (!shape || case_elements(it->second) < case_elements(*shape)) shape = &it->second;
      }
      if (!any) continue;
      ep.bodies.push_back(b);
      ep.unsplit.emplace_back();
      if (device::body_contract(b) == device::Contract::gemv)
        add_gemv_split_probes(*shape, b, seed, &ep.probes, &ep.unsplit.back());
    }
    out.push_back(std::move(ep));
  }
  return out;
}

void keep_bodies(EntryProbes* ep, const std::vector<device::Body>& bodies) {
  auto wanted = [&](device::Body b) { return std::find(bodies.begin(), bodies.end(), b) != bodies.end(); };
  std::vector<std::vector<std::vector<std::size_t>>> unsplit;
  for (std::size_t i = 0; i < ep->bodies.size(); ++i)
    if (wanted(ep->bodies[i]) && i < ep->unsplit.size()) unsplit.push_back(std::move(ep->unsplit[i]));
  ep->unsplit = std::move(unsplit);
  ep->bodies.erase(std::remove_if(ep->bodies.begin(), ep->bodies.end(), [&](device::Body b) { return !wanted(b); }),
                   ep->bodies.end());
  ep->probes.erase(std::remove_if(ep->probes.begin(), ep->probes.end(),
                                  [&](const IdentifyProbe& p) { return !wanted(p.body); }),
                   ep->probes.end());
  ep->unreached.erase(std::remove_if(ep->unreached.begin(), ep->unreached.end(),
                                     [&](const std::string& u) {
                                       for (device::Body b : bodies)
                                         if (u.find(std::string(" / ") + device::body_name(b) + " / ") !=
                                             std::string::npos)
                                           return false;
                                       return true;
                                     }),
                      ep->unreached.end());
}

BodyMatch match_candidates(const std::vector<IdentifyCandidate>& candidates, const std::vector<ProbeRun>& probes,
                           unsigned threads) {
  BodyMatch m;
  const std::size_t np = probes.size();
  // Outside the output every element must still be the sentinel, whatever the candidate.
  std::uint64_t outside_total = 0;
  for (const ProbeRun& p : probes) {
    const golden::Case& c = p.c;
    std::uint64_t outside = 0;
    const std::size_t rows = std::size_t{c.m} + golden::kOutputGuardRows;
    const std::size_t all = rows * c.c_row_stride;
    for (std::size_t i = 0; i < all && i < p.produced->size(); ++i) {
      const std::size_t r = i / c.c_row_stride, col = i % c.c_row_stride;
      if ((r >= c.m || col >= c.n) && (*p.produced)[i] != golden::kOutputSentinelBits) ++outside;
    }
    if (p.produced->size() < all) outside += all - p.produced->size();
    m.elements.push_back(all);
    m.outside.push_back(outside);
    outside_total += outside;
  }
  std::vector<ref::GemmView> views;
  for (const ProbeRun& p : probes) views.push_back(golden::case_view(p.c, *p.in));

  // Candidates that always give the same bytes are emulated once (their representative's result).
  const std::vector<std::size_t> rep = always_equal_reps(candidates);
  // The screen: each representative on a few elements of every probe, stopping at its first
  // difference. Only those that pass are emulated on every element: a kernel that keeps one
  // candidate costs one full emulation, not one per candidate.
  constexpr std::size_t kScreenElements = 48;
  std::vector<std::vector<std::uint64_t>> screen;
  for (const ProbeRun& p : probes) screen.push_back(element_sample(p.c, kScreenElements));
  auto differs_at = [&](std::size_t ci, std::size_t pi, std::uint32_t r, std::uint32_t col) {
    const std::vector<std::uint16_t>& got = *probes[pi].produced;
    const std::size_t at = std::size_t{r} * probes[pi].c.c_row_stride + col;
    return at >= got.size() || got[at] != emulate_element(candidates[ci], views[pi], r, col);
  };
  std::vector<char> passed(candidates.size(), 0);
  ref::parallel_for(candidates.size(), threads, [&](std::size_t ci) {
    if (rep[ci] != ci || outside_total != 0) return;
    for (std::size_t pi = 0; pi < np; ++pi)
      for (std::uint64_t e : screen[pi])
        if (differs_at(ci, pi, static_cast<std::uint32_t>(e / probes[pi].c.n),
                       static_cast<std::uint32_t>(e % probes[pi].c.n)))
          return;
    passed[ci] = 1;
  });

  constexpr std::uint64_t kPruned = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> total(candidates.size(), kPruned);
  std::vector<std::vector<std::uint64_t>> per_probe(candidates.size(), std::vector<std::uint64_t>(np, 0));
  // Every element of the given representatives, in parallel; one that has already passed the
  // fewest differences seen stops there (it can be neither kept nor the nearest).
  auto full = [&](const std::vector<char>& which) {
    std::atomic<std::uint64_t> best{kPruned};
    ref::parallel_for(candidates.size(), threads, [&](std::size_t ci) {
      if (!which[ci]) return;
      std::uint64_t count = outside_total;
      if (count > best.load()) return;
      for (std::size_t pi = 0; pi < np; ++pi) {
        const golden::Case& c = probes[pi].c;
        std::uint64_t differ = m.outside[pi];
        for (std::uint32_t r = 0; r < c.m; ++r)
          for (std::uint32_t col = 0; col < c.n; ++col)
            if (differs_at(ci, pi, r, col)) {
              ++differ;
              if (++count > best.load()) return;
            }
        per_probe[ci][pi] = differ;
      }
      total[ci] = count;
      for (std::uint64_t b = best.load(); count < b && !best.compare_exchange_weak(b, count);) {}
    });
  };
  // The survivors (the kept candidate, as a rule) as whole outputs: gemm_conventions takes the
  // reference's fast paths for the canonical values and splits the elements over the threads.
  for (std::size_t ci = 0; ci < candidates.size(); ++ci) {
    if (!passed[ci]) continue;
    std::uint64_t count = outside_total;
    for (std::size_t pi = 0; pi < np; ++pi) {
      const golden::Case& c = probes[pi].c;
      const std::vector<std::uint16_t>& got = *probes[pi].produced;
      std::vector<std::uint16_t> want(std::size_t{c.m} * c.c_row_stride, 0);
      if (candidates[ci].gemv)
        ref::gemm_conventions(candidates[ci].conventions.gemv, views[pi], want.data(), c.c_row_stride, threads);
      else
        ref::gemm_conventions(candidates[ci].conventions.tc, views[pi], ref::Arch::sm90, want.data(), c.c_row_stride,
                              threads);
      std::uint64_t differ = m.outside[pi];
      for (std::uint32_t r = 0; r < c.m; ++r)
        for (std::uint32_t col = 0; col < c.n; ++col) {
          const std::size_t at = std::size_t{r} * c.c_row_stride + col;
          differ += at >= got.size() || got[at] != want[at];
        }
      per_probe[ci][pi] = differ;
      count += differ - m.outside[pi];
    }
    total[ci] = count;
  }
  bool kept = false;
  for (std::size_t ci = 0; ci < candidates.size(); ++ci) kept = kept || total[ci] == 0;
  if (!kept) {
    // Nothing kept: the nearest is searched over every representative.
    std::vector<char> all(candidates.size(), 0);
    for (std::size_t ci = 0; ci < candidates.size(); ++ci) all[ci] = rep[ci] == ci && total[ci] == kPruned;
    full(all);
  }
  for (std::size_t ci = 0; ci < candidates.size(); ++ci) {
    total[ci] = total[rep[ci]];
    per_probe[ci] = per_probe[rep[ci]];
  }
  std::size_t nearest = candidates.size();
  for (std::size_t ci = 0; ci < candidates.size(); ++ci) {
    if (total[ci] == 0) m.keeps.push_back(ci);
    if (total[ci] != kPruned && (nearest == candidates.size() || total[ci] < total[nearest])) nearest = ci;
  }
  if (nearest < candidates.size()) {
    m.nearest = nearest;
    m.nearest_total = total[nearest];
    m.nearest_differ = per_probe[nearest];
  }
  return m;
}

std::vector<EntryVerdict> identify(CaseLauncher& launcher, const std::vector<EntryProbes>& plan, unsigned threads,
                                   bool* hung, const std::function<void(const std::string&)>& progress) {
  if (hung) *hung = false;
  std::vector<EntryVerdict> out;
  for (const EntryProbes& ep : plan) {
    EntryVerdict ev;
    ev.entry = ep.entry;
    ev.unreached = ep.unreached;
    ev.every_body_keeps = !ep.bodies.empty();
    for (const device::Body& b : ep.bodies) {
      BodyVerdict bv;
      bv.body = b;
      bv.gemv = device::body_contract(b) == device::Contract::gemv;
      if (progress) progress(std::string(golden::entry_point_name(ep.entry)) + " / " + device::body_name(b));
      std::vector<golden::CaseInputs> inputs;
      std::vector<std::vector<std::uint16_t>> outputs;
      std::vector<golden::Case> cases;
      std::vector<const IdentifyProbe*> mine;
      for (const IdentifyProbe& p : ep.probes)
        if (p.body == b) cases.push_back(p.c), mine.push_back(&p);
      const std::size_t bi = static_cast<std::size_t>(&b - ep.bodies.data());
      if (bi < ep.unsplit.size()) bv.unsplit = ep.unsplit[bi];
      inputs.reserve(cases.size());
      outputs.reserve(cases.size());
      for (std::size_t pi = 0; pi < cases.size(); ++pi) {
        const golden::Case& c = cases[pi];
        bv.probes.push_back(c);
        bv.probe_data.push_back(mine[pi]->data.empty() ? std::string(golden::distribution_name(c.dist))
                                                       : mine[pi]->data);
        golden::CaseInputs in;
        std::string why;
        if (mine[pi]->inputs) {
          in = *mine[pi]->inputs;
        } else if (!golden::regenerate_inputs(c, &in, &why)) {
          bv.error = golden::format_case(c) + ": " + why;
          break;
        }
        Launched got = launcher.launch(c, in);
        if (!got.status.ok()) {
          const bool hang = got.status.code == device::Errc::launch_timeout;
          bv.error = std::string(hang                                            ? "HANG: "
                                 : got.status.code == device::Errc::context_lost ? "FAULT: "
                                                                                 : "") +
                     got.status.message + " (" + golden::format_case(c) + ")";
          if (hang && hung) *hung = true;
          break;
        }
        if (!got.planned || got.plan.body != b) {
          bv.error = golden::format_case(c) + ": planned on " +
                     (got.planned ? std::string(device::body_name(got.plan.body)) : std::string("nothing")) +
                     ", not on " + device::body_name(b);
          break;
        }
        inputs.push_back(std::move(in));
        outputs.push_back(std::move(got.c_bits));
      }
      if (bv.error.empty()) {
        std::vector<ProbeRun> runs;
        for (std::size_t i = 0; i < cases.size(); ++i) runs.push_back({cases[i], &inputs[i], &outputs[i]});
        const std::vector<IdentifyCandidate>& cands = bv.gemv ? gemv_candidates() : tc_candidates();
        bv.match = match_candidates(cands, runs, threads);
        for (std::size_t i : bv.match.keeps) bv.keeps.push_back(cands[i].name);
      }
      if (!bv.error.empty() || bv.keeps.empty()) ev.every_body_keeps = false;
      ev.bodies.push_back(std::move(bv));
      if (hung && *hung) break;
    }
    // The candidates every body keeps (names: one kind of body per entry point, but a name is a name).
    if (!ev.bodies.empty() && ev.every_body_keeps) {
      std::vector<std::string> common = ev.bodies.front().keeps;
      for (const BodyVerdict& bv : ev.bodies) {
        std::vector<std::string> next;
        for (const std::string& n : common)
          if (std::find(bv.keeps.begin(), bv.keeps.end(), n) != bv.keeps.end()) next.push_back(n);
        common = std::move(next);
      }
      ev.common = std::move(common);
    }
    out.push_back(std::move(ev));
    if (hung && *hung) break;
  }
  return out;
}

std::string identify_text(const std::vector<EntryVerdict>& verdicts) {
  std::string t;
  for (const EntryVerdict& ev : verdicts) {
    t += std::string(golden::entry_point_name(ev.entry)) + "\n";
    for (const BodyVerdict& bv : ev.bodies) {
      const std::vector<IdentifyCandidate>& cands = bv.gemv ? gemv_candidates() : tc_candidates();
      std::uint64_t elements = 0;
      for (std::uint64_t e : bv.match.elements) elements += e;
      t += "  " + std::string(device::body_name(bv.body)) + ": ";
      // Said in both verdicts: a budget spent with groups left is a limit of these probes.
      std::string unsplit;
      for (const std::vector<std::size_t>& g : bv.unsplit) {
        std::vector<std::string> names;
        for (std::size_t i : g) names.push_back(cands[i].name);
        unsplit += "    the split search's budget ran out; the probes could not tell these apart: " +
                   join(names, ", ") + "\n";
      }
      if (!bv.error.empty()) {
        t += "NO VERDICT: " + bv.error + "\n";
        continue;
      }
      if (!bv.keeps.empty()) {
        t += "KEEPS " + join(bv.keeps, ", ");
        if (bv.keeps.size() > 1) {
          bool twins = true;
          for (std::size_t i : bv.match.keeps) twins = twins && always_equal(cands[i], cands[bv.match.keeps.front()]);
          t += twins ? " (no data tells these apart: NUMERICS.md 2.4)" : " (the probes could not tell these apart)";
        }
        t += "\n    " + std::to_string(bv.probes.size()) + " probes, " + std::to_string(elements) +
             " elements, every byte equal";
        if (bv.keeps.size() == 1 && bv.keeps.front() != cands[bv.match.keeps.front()].description)
          t += "; " + cands[bv.match.keeps.front()].description;
        t += "\n" + unsplit;
        continue;
      }
      const IdentifyCandidate& near = cands[bv.match.nearest];
      t += "KEEPS NONE (nearest: " + near.name + ": " + std::to_string(bv.match.nearest_total) + " of " +
           std::to_string(elements) + " elements differ)\n" + unsplit;
      if (near.name != near.description) t += "    nearest is " + near.description + "\n";
      for (std::size_t pi = 0; pi < bv.probes.size(); ++pi) {
        if (bv.match.nearest_differ[pi] == 0) continue;
        t += "    " + std::to_string(bv.match.nearest_differ[pi]) + " of " + std::to_string(bv.match.elements[pi]) +
             " differ on " + bv.probe_data[pi] + ": " + golden::format_case(bv.probes[pi]) + "\n";
        if (bv.match.outside[pi] != 0)
          t += "      of them " + std::to_string(bv.match.outside[pi]) +
               " outside the output (pitch padding or guard rows not left as the sentinel)\n";
      }
    }
    for (const std::string& u : ev.unreached) t += "  UNREACHED cell: " + u + "\n";
    if (ev.ok()) {
      t += "  => every body keeps " + join(ev.common, ", ") + "\n";
    } else if (ev.tier_break()) {
      t += "  => TIER BREAK: the bodies keep different contracts:";
      for (const BodyVerdict& bv : ev.bodies)
        t += " " + std::string(device::body_name(bv.body)) + " keeps " + join(bv.keeps, ", ") + ";";
      t.back() = '\n';
    } else if (ev.bodies.empty()) {
      t += "  => no body of this entry point runs on this module\n";
    } else {
      t += "  => FAIL: ";
      std::vector<std::string> bad;
      for (const BodyVerdict& bv : ev.bodies)
        if (!bv.error.empty() || bv.keeps.empty()) bad.push_back(device::body_name(bv.body));
      t += bad.empty() ? "cells unreached"
                       : join(bad, ", ") + " keep" + (bad.size() == 1 ? "s" : "") + " no contract of the family";
      t += "\n";
    }
  }
  return t;
}

}  // namespace w8a16::props
