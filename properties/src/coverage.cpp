// SPDX-License-Identifier: MIT OR Apache-2.0
// The coverage cells, the cases aimed at them, and the gaps of a campaign's table (coverage.hpp).
#include "w8a16/properties/coverage.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <tuple>

#include "w8a16/device/bodies.hpp"
#include "w8a16/device/geometry.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_runner.hpp"

namespace w8a16::props {
namespace {

using device::Body;
using device::KernelId;
using golden::EntryPoint;

constexpr std::uint32_t bit(KernelId id) { return device::kernel_bit(id); }
// golden/case.hpp and the launch layer read bodies.def each with macros of their own: the two
// readings of its tier and layout columns agree.
static_assert(device::tier_kernels(device::Tier::first) == golden::kWithoutHopperTier &&
                  device::packed_layout_kernels() == golden::kPackedLayoutSymbols,
              "golden/case.hpp reads bodies.def as the launch layer does");

struct Shape {
  std::uint32_t m, n, k;
};

// The twin (or the 128-row tile) an entry point's own rules reach at m rows: by_m's are the seed's
// prefers_m32 / prefers_m64 row ranges (plan.hpp). A body of Tier::twin_first runs only through it.
KernelId route_kernel(EntryPoint e, std::uint32_t m) {
  const auto own = static_cast<KernelId>(golden::entry_point_own_symbol(e));
  if (e != EntryPoint::gemm_pipelined_by_m) return own;
  return m <= device::kM32TileRows   ? KernelId::gemm_pipelined_m32
         : m <= device::kM64TileRows ? KernelId::gemm_pipelined_m64
                                     : own;
}

// The configuration of a cell in its body's row (bodies.hpp cells); nullptr if none is named so.
const device::BodyConfig* config_named(Body b, const std::string& name) {
  for (const device::BodyConfig& c : device::body_info(b).cells())
    if (c.name == name) return &c;
  return nullptr;
}

// Shapes aimed at a cell, cheapest first; the plan decides which (if any) lands there.
std::vector<Shape> aimed_shapes(const CoverageKey& key) {
  std::vector<Shape> out;
  if (const device::BodyConfig* c = config_named(key.body, key.config))
    for (const device::BodyShapeMNK& s : c->shapes) out.push_back({s.m, s.n, s.k});
  return out;
}

std::uint32_t present_mask(const device::KernelRegistry& registry) {
  std::uint32_t m = 0;
  for (KernelId id : device::kAllKernels)
    if (registry.resolve(id)) m |= bit(id);
  return m;
}

golden::Case make_case(EntryPoint e, const Shape& s, std::uint32_t without, golden::Distribution d,
                       std::uint64_t seed) {
  // Strided entry points get padded pitches (A by 8, C by 3: a pitch that is no multiple of 8).
  const bool contiguous = golden::entry_point_is_contiguous(e);
  return golden::CaseSpec{}
      .entry(e)
      .shape(s.m, s.n, s.k)
      .strides(contiguous ? s.k : s.k + 8, contiguous ? s.n : s.n + 3)
      .dist(d)
      .seed(seed)
      .without(without);
}

// A case's multiply-adds: what the plans are ordered by, cheapest first.
std::uint64_t work(const golden::Case& c) { return std::uint64_t{c.m} * c.n * c.k; }

// The least K at which a distribution shows what it is built for: fold_ties needs two steps (a
// pair), and eight on the scalar GEMVs (its pairs are then 4 steps apart, one lane's chunks,
// reference/gemv.hpp); cancelling_steps four (one +P, small, -P, small group).
std::uint32_t least_k(golden::Distribution d, EntryPoint e) {
  switch (d) {
    case golden::Distribution::fold_ties: return golden::entry_point_is_gemv(e) ? 1024 : 256;
    case golden::Distribution::cancelling_steps: return 512;
    default: return 128;
  }
}

}  // namespace

std::string coverage_key_text(const CoverageKey& k) {
  return std::string(golden::entry_point_name(k.entry)) + " / " + device::body_name(k.body) + " / " + k.config;
}

std::string configuration_of(const device::Plan& plan) {
  const device::BodyInfo* row = device::find_body(plan.body);
  return row ? row->config(plan) : "unknown";
}

std::vector<CoverageKey> expected_cells(const device::KernelRegistry& registry,
                                        const std::vector<golden::EntryPoint>& entries) {
  const std::uint32_t present = present_mask(registry);
  auto has = [&](KernelId id) { return (present & bit(id)) != 0; };
  std::vector<CoverageKey> out;
  for (EntryPoint e : entries) {
    if (!(present & golden::entry_point_own_mask(e))) continue;  // refused before anything runs
    const device::Entry entry = to_device_entry(e);
    for (Body b : device::kAllBodies) {
      const device::BodyInfo& row = device::body_info(b);
      if (!(row.entries & device::entry_bit(entry))) continue;
      for (const device::BodyConfig& c : row.cells()) {
        // The symbol that runs this configuration, and for a body below the first tier the twin
        // through which this entry point reaches it at the configuration's rows.
        const Shape s = {c.shapes.front().m, c.shapes.front().n, c.shapes.front().k};
        if (!has(row.plan(device::BodyShape{entry, c.m, s.n, s.k, 1}).kernel)) continue;
        // (gemm_packed_strided reaches each of its bodies straight, by shape: plan.hpp packed_body.)
        if (row.tier != device::Tier::first && e != EntryPoint::gemm_packed_strided && !has(route_kernel(e, c.m)))
          continue;
        out.push_back({e, b, c.name});
      }
    }
  }
  // By entry point and body; each body's configurations in the order written above.
  std::stable_sort(out.begin(), out.end(), [](const CoverageKey& a, const CoverageKey& b) {
    return std::tie(a.entry, a.body) < std::tie(b.entry, b.body);
  });
  return out;
}

std::vector<golden::Distribution> coverage_distributions(bool order_data) {
  if (!order_data) return {golden::Distribution::every_special};
  // Appended, never inserted: a cell's case seed comes from the distribution's index here.
  return {golden::Distribution::every_special, golden::Distribution::fold_ties, golden::Distribution::zero_signs,
          golden::Distribution::cancelling_steps, golden::Distribution::nan_codes};
}

std::vector<AimedCase> coverage_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                     const std::vector<golden::EntryPoint>& entries,
                                     const std::vector<golden::Distribution>& dists, std::uint64_t seed,
                                     std::vector<CoverageKey>* unreached) {
  const std::uint32_t present = present_mask(registry);
  const std::vector<CoverageKey> cells = expected_cells(registry, entries);
  std::vector<AimedCase> out;
  for (std::size_t ci = 0; ci < cells.size(); ++ci) {
    const CoverageKey& cell = cells[ci];
    const std::uint32_t own = golden::entry_point_own_mask(cell.entry);
    // The first shape (and the fewest kernels taken away) whose plan lands in the cell; shapes at
    // the distribution's least K first, where that keeps the cell.
    auto find = [&](std::uint32_t min_k, golden::Case* found) {
      std::vector<Shape> shapes;
      for (const Shape& s : aimed_shapes(cell))
        if (s.k < min_k) shapes.push_back({s.m, s.n, min_k});
      for (const Shape& s : aimed_shapes(cell)) shapes.push_back(s);
      for (const Shape& s : shapes) {
        std::vector<std::uint32_t> tried;
        for (std::uint32_t mask : device::kernels_before(cell.body)) {
          mask &= present & ~own;
          if (std::find(tried.begin(), tried.end(), mask) != tried.end()) continue;
          tried.push_back(mask);
          const golden::Case c = make_case(cell.entry, s, mask, golden::Distribution::every_special, 0);
          if (!golden::case_problem(c).empty()) continue;
          const device::Planned p = plan_case(c, registry, limits);
          if (p.ok() && p.plan.body == cell.body && configuration_of(p.plan) == cell.config) {
            *found = c;
            return true;
          }
        }
      }
      return false;
    };
    bool reached = false;
    for (std::size_t di = 0; di < dists.size(); ++di) {
      golden::Case c;
      if (!find(least_k(dists[di], cell.entry), &c)) continue;
      reached = true;
      c.dist = dists[di];
      c.seed = golden::derive_seed(seed, 0x200000000ull + 64 * ci + di);
      out.push_back({c, cell});
    }
    if (!reached && unreached) unreached->push_back(cell);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AimedCase& a, const AimedCase& b) { return work(a.c) < work(b.c); });
  return out;
}

std::vector<AimedCase> quick_coverage_plan(const std::vector<AimedCase>& plan) {
  // Each body's cells (over every entry point that reaches it) numbered in the order they first
  // appear among the cases of coverage_plan (the lone specials' cases, each in a cell of its body's
  // that has its own cases, take no part, so that they change no rotation).
  const auto lone = [](const AimedCase& x) { return x.c.dist == golden::Distribution::lone_specials; };
  std::map<CoverageKey, std::size_t> rank;
  std::map<device::Body, std::size_t> cells_of;
  for (const AimedCase& x : plan)
    if (!lone(x) && !rank.count(x.target)) rank[x.target] = cells_of[x.target.body]++;
  const std::vector<golden::Distribution> dists = coverage_distributions(true);
  const std::vector<golden::Distribution> order(dists.begin() + 1, dists.end());
  std::vector<AimedCase> out;
  for (const AimedCase& x : plan) {
    const bool few_cells = cells_of[x.target.body] < order.size();
    if (lone(x) || x.c.dist == golden::Distribution::every_special || few_cells ||
        x.c.dist == order[rank[x.target] % order.size()])
      out.push_back(x);
  }
  return out;
}

std::string lone_cell_text(const LoneCell& c) {
  return std::string(device::body_name(c.body)) + " x " + std::string(golden::lone_kind_name(c.kind)) + " at the " +
         std::string(golden::lone_step_name(c.step)) + " K-step";
}

std::uint32_t lone_bits(const golden::Case& c, const golden::LoneSpecial& lone, Body body) {
  const device::BodyInfo* row = device::find_body(body);
  if (!lone.found || !row || c.k / device::kKBlock <= row->long_range().stride_steps) return 0;
  return lone_bit(lone.kind, lone.where);
}

std::vector<LoneCell> expected_lone_cells(const std::vector<CoverageKey>& expected) {
  std::vector<LoneCell> out;
  for (Body b : device::kAllBodies) {
    if (std::none_of(expected.begin(), expected.end(), [&](const CoverageKey& k) { return k.body == b; })) continue;
    for (golden::LoneKind kind : golden::kLoneKinds)
      for (golden::LoneStep step : golden::kLoneSteps) out.push_back({b, kind, step});
  }
  return out;
}

std::vector<AimedCase> lone_specials_plan(const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                          const std::vector<EntryPoint>& entries, std::uint64_t seed,
                                          std::vector<device::Body>* unreached) {
  const std::uint32_t present = present_mask(registry);
  const std::vector<CoverageKey> cells = expected_cells(registry, entries);
  const auto expected = [&](const CoverageKey& k) { return std::find(cells.begin(), cells.end(), k) != cells.end(); };
  std::vector<AimedCase> out;
  for (Body b : device::kAllBodies) {
    std::vector<EntryPoint> reaching;  // the entry points with a cell of the body, in the cells' order
    for (const CoverageKey& k : cells)
      if (k.body == b && std::find(reaching.begin(), reaching.end(), k.entry) == reaching.end())
        reaching.push_back(k.entry);
    if (reaching.empty()) continue;
    // The first long-range shape, entry point and fewest kernels taken away whose plan lands in one
    // of the body's expected cells.
    bool found = false;
    golden::Case c;
    CoverageKey target;
    for (const device::BodyShapeMNK& shape : device::body_info(b).long_range().shapes) {
      for (EntryPoint e : reaching) {
        const std::uint32_t own = golden::entry_point_own_mask(e);
        std::vector<std::uint32_t> tried;
        for (std::uint32_t mask : device::kernels_before(b)) {
          mask &= present & ~own;
          if (std::find(tried.begin(), tried.end(), mask) != tried.end()) continue;
          tried.push_back(mask);
          const golden::Case x = make_case(e, {shape.m, shape.n, shape.k}, mask, golden::Distribution::lone_specials,
                                           0);
          if (!golden::case_problem(x).empty()) continue;
          const device::Planned p = plan_case(x, registry, limits);
          if (!p.ok() || p.plan.body != b || !expected({e, b, configuration_of(p.plan)})) continue;
          found = true, c = x, target = {e, b, configuration_of(p.plan)};
          break;
        }
        if (found) break;
      }
      if (found) break;
    }
    if (!found) {
      if (unreached) unreached->push_back(b);
      continue;
    }
    std::uint64_t i = 0;
    for (golden::LoneKind kind : golden::kLoneKinds)
      for (golden::LoneStep step : golden::kLoneSteps) {
        const std::uint64_t tag = 0x300000000ull + 16 * static_cast<std::uint64_t>(b) + i++;
        c.seed = golden::lone_specials_seed(golden::derive_seed(seed, tag), kind, step);
        out.push_back({c, target});
      }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AimedCase& a, const AimedCase& b) { return work(a.c) < work(b.c); });
  return out;
}

std::vector<AimedCase> merged_plans(const std::vector<AimedCase>& a, const std::vector<AimedCase>& b) {
  std::vector<AimedCase> out;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
             [](const AimedCase& x, const AimedCase& y) { return work(x.c) < work(y.c); });
  return out;
}

std::vector<std::string> coverage_gaps(const std::vector<CoverageKey>& expected, const CoverageTable& table) {
  std::vector<std::string> gaps;
  const std::uint32_t all = (1u << golden::kSpecialClassCount) - 1;
  for (const CoverageKey& k : expected) {
    const auto it = table.find(k);
    if (it == table.end() || it->second.cases == 0) {
      gaps.push_back("empty cell: " + coverage_key_text(k) +
                     " (no case ran there: that configuration was not verified)");
      continue;
    }
    if ((it->second.specials_seen & all) != all) {
      std::string missing;
      for (int b = 0; b < golden::kSpecialClassCount; ++b)
        if (!((it->second.specials_seen >> b) & 1u))
          missing += (missing.empty() ? "" : ", ") + std::string(golden::special_class_name(b));
      gaps.push_back("empty cells: " + coverage_key_text(k) + " x {" + missing + "} (no case there held them)");
    }
  }
  // The lone cells, by body: filled through any of the body's cells.
  const std::vector<LoneCell> lone = expected_lone_cells(expected);
  for (std::size_t i = 0; i < lone.size();) {
    const Body b = lone[i].body;
    std::uint32_t seen = 0;
    for (const auto& [k, cell] : table)
      if (k.body == b) seen |= cell.lone_seen;
    std::string missing;
    for (; i < lone.size() && lone[i].body == b; ++i)
      if (!(seen & lone_bit(lone[i].kind, lone[i].step)))
        missing += (missing.empty() ? "" : ", ") + std::string(golden::lone_kind_name(lone[i].kind)) + " at the " +
                   std::string(golden::lone_step_name(lone[i].step)) + " K-step";
    if (!missing.empty())
      gaps.push_back("empty cells: " + std::string(device::body_name(b)) + " x {" + missing +
                     "} (no case of more than " + std::to_string(device::body_info(b).long_range().stride_steps) +
                     " K-steps ran there with that one special)");
  }
  for (const auto& [k, cell] : table)
    if (std::find(expected.begin(), expected.end(), k) == expected.end())
      gaps.push_back("a case ran in " + coverage_key_text(k) +
                     ", a cell the coverage list does not name (coverage.cpp)");
  return gaps;
}

}  // namespace w8a16::props
