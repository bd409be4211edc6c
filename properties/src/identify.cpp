// SPDX-License-Identifier: MIT OR Apache-2.0
// Which contract of the family a kernel keeps (identify.hpp): every candidate of NUMERICS.md 2.4's
// fields emulated on the probes' operands and compared with the device's bytes, raw bits.
#include "w8a16/properties/identify.hpp"

#include <algorithm>
#include <atomic>
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

constexpr std::uint32_t kGemvProbeK = 4096;

std::uint64_t case_elements(const golden::Case& c) { return std::uint64_t{c.m} * c.n * c.k; }

}  // namespace

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
      for (golden::Distribution d : identify_distributions()) {
        auto it = best.find({b, d});
        if (it == best.end()) continue;
        any = true;
        const golden::Case c = it->second;
        ep.probes.push_back({c, b});
        // The GEMV's lanes meet their scale with mac(p, s, acc) only from a lane's second chunk on
        // (acc = mac(p, s, +0) is one rounding either way), and 32 or 64 lanes differ only where a
        // chunk reaches the second warp: both need K past lanes x chunk, up to 64 x 32 among the
        // candidates. So each GEMV probe runs again at K = 4096 (besides, not instead: the aimed K's
        // data tells other pairs apart).
        if (device::body_contract(b) == device::Contract::gemv && c.k < kGemvProbeK) {
          golden::Case wide = c;
          wide.a_row_stride += kGemvProbeK - c.k;
          wide.k = kGemvProbeK;
          ep.probes.push_back({wide, b});
        }
      }
      if (any) ep.bodies.push_back(b);
    }
    out.push_back(std::move(ep));
  }
  return out;
}

void keep_bodies(EntryProbes* ep, const std::vector<device::Body>& bodies) {
  auto wanted = [&](device::Body b) { return std::find(bodies.begin(), bodies.end(), b) != bodies.end(); };
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

  constexpr std::uint64_t kPruned = std::numeric_limits<std::uint64_t>::max();
  std::atomic<std::uint64_t> best{kPruned};
  std::vector<std::uint64_t> total(candidates.size(), kPruned);
  std::vector<std::vector<std::uint64_t>> per_probe(candidates.size(), std::vector<std::uint64_t>(np, 0));
  // Candidates in parallel; one that has already passed the fewest differences seen stops there
  // (it can be neither kept nor the nearest), so a kernel that keeps one candidate costs one full
  // emulation and a first difference for each other.
  ref::parallel_for(candidates.size(), threads, [&](std::size_t ci) {
    const IdentifyCandidate& cand = candidates[ci];
    std::uint64_t count = outside_total;
    if (count > best.load()) return;
    for (std::size_t pi = 0; pi < np; ++pi) {
      const golden::Case& c = probes[pi].c;
      const std::vector<std::uint16_t>& got = *probes[pi].produced;
      std::uint64_t differ = probes.empty() ? 0 : m.outside[pi];
      for (std::uint32_t r = 0; r < c.m; ++r)
        for (std::uint32_t col = 0; col < c.n; ++col) {
          const std::size_t at = std::size_t{r} * c.c_row_stride + col;
          const std::uint16_t want = cand.gemv ? ref::gemv_conv_element_bf16(cand.conventions.gemv, views[pi], r, col)
                                               : ref::tc_element_bf16(cand.conventions.tc, views[pi], ref::Arch::sm90,
                                                                      r, col);
          if (at >= got.size() || got[at] != want) {
            ++differ;
            if (++count > best.load()) return;
          }
        }
      per_probe[ci][pi] = differ;
    }
    total[ci] = count;
    for (std::uint64_t b = best.load(); count < b && !best.compare_exchange_weak(b, count);) {}
  });
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
    for (device::Body b : ep.bodies) {
      BodyVerdict bv;
      bv.body = b;
      bv.gemv = device::body_contract(b) == device::Contract::gemv;
      if (progress) progress(std::string(golden::entry_point_name(ep.entry)) + " / " + device::body_name(b));
      std::vector<golden::CaseInputs> inputs;
      std::vector<std::vector<std::uint16_t>> outputs;
      std::vector<golden::Case> cases;
      for (const IdentifyProbe& p : ep.probes)
        if (p.body == b) cases.push_back(p.c);
      inputs.reserve(cases.size());
      outputs.reserve(cases.size());
      for (const golden::Case& c : cases) {
        bv.probes.push_back(c);
        golden::CaseInputs in;
        std::string why;
        if (!golden::regenerate_inputs(c, &in, &why)) {
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
      if (!bv.error.empty()) {
        t += "NO VERDICT: " + bv.error + "\n";
        continue;
      }
      if (!bv.keeps.empty()) {
        t += "KEEPS " + join(bv.keeps, ", ");
        if (bv.keeps.size() > 1) t += " (the probes cannot tell these apart)";
        t += "\n    " + std::to_string(bv.probes.size()) + " probes, " + std::to_string(elements) +
             " elements, every byte equal";
        if (bv.keeps.size() == 1 && bv.keeps.front() != cands[bv.match.keeps.front()].description)
          t += "; " + cands[bv.match.keeps.front()].description;
        t += "\n";
        continue;
      }
      const IdentifyCandidate& near = cands[bv.match.nearest];
      t += "KEEPS NONE (nearest: " + near.name + ": " + std::to_string(bv.match.nearest_total) + " of " +
           std::to_string(elements) + " elements differ)\n";
      if (near.name != near.description) t += "    nearest is " + near.description + "\n";
      for (std::size_t pi = 0; pi < bv.probes.size(); ++pi) {
        if (bv.match.nearest_differ[pi] == 0) continue;
        t += "    " + std::to_string(bv.match.nearest_differ[pi]) + " of " + std::to_string(bv.match.elements[pi]) +
             " differ on " + std::string(golden::distribution_name(bv.probes[pi].dist)) + ": " +
             golden::format_case(bv.probes[pi]) + "\n";
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
