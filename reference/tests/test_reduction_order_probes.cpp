// SPDX-License-Identifier: MIT OR Apache-2.0
// The two contracts' K-reduction trees, pinned by crafted inputs (after FPRev: Xie et al., ISSTA
// 2025; reports/python/w8a16check/order.py builds the same probes for the kernels). For a set L of
// K positions (leaves) and each pair (i, j) one row of A holds +2^40 at leaf i, -2^40 at leaf j and
// 1 on the other leaves, W = 1.0 and S = 1: a unit that meets a partial sum holding +-2^40 is lost
// (FP32 keeps 24 bits; the MMA step truncates on the grid 2^(E-25)), and the two cancel exactly at
// their lowest common ancestor, so the output counts the leaves outside LCA(i, j). These sizes
// determine the tree: a different tree, any other reduction order over these leaves, gives other
// outputs. The trees are compared with the documented orders (NUMERICS.md 2.1, reference/gemv.hpp)
// written out here as sets of leaves, with no arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace {

namespace ref = w8a16::ref;
using Cluster = std::vector<int>;  // sorted leaf indices (positions in L)
using Clusters = std::set<Cluster>;

constexpr std::uint16_t kPlusM = 0x5380, kMinusM = 0xD380, kOne = 0x3F80;  // 2^40, -2^40, 1.0 (BF16)
constexpr std::uint8_t kOneE4m3 = 0x38;
// The GEMV's shape as reference/gemv.hpp documents it, written here so that the header's own
// constants are under test too: 16-element chunks, one warp of 32 lanes.
constexpr std::uint32_t kChunk = 16, kLanes = 32;

struct Probe {
  std::uint32_t k = 0;
  std::vector<std::uint32_t> leaves;       // K positions, increasing
  std::vector<std::pair<int, int>> pairs;  // row r probes pairs[r]
  std::vector<std::uint16_t> a;            // [pairs][k]
  std::vector<std::uint8_t> w;             // [1][k]
  std::vector<float> s;                    // [1][k/128]
  ref::GemmView view() const {
    return ref::gemm_view(a.data(), k, w.data(), s.data(), static_cast<std::uint32_t>(pairs.size()), 1, k);
  }
};

Probe make_probe(std::uint32_t k, std::vector<std::uint32_t> leaves) {
  Probe p;
  p.k = k;
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  p.leaves = leaves;
  const int count = static_cast<int>(leaves.size());
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j) p.pairs.push_back({i, j});
  p.a.assign(p.pairs.size() * k, 0);
  for (std::size_t r = 0; r < p.pairs.size(); ++r) {
    std::uint16_t* row = p.a.data() + r * k;
    for (std::uint32_t pos : leaves) row[pos] = kOne;
    row[leaves[p.pairs[r].first]] = kPlusM;
    row[leaves[p.pairs[r].second]] = kMinusM;
  }
  p.w.assign(k, kOneE4m3);
  p.s.assign(k / 128, 1.0f);
  return p;
}

// The tree's clusters from one output per probe row (sizes[i][j] = leaves under LCA(i, j)).
Clusters clusters_from_outputs(const Probe& p, const std::vector<std::uint16_t>& out) {
  const int count = static_cast<int>(p.leaves.size());
  std::vector<std::vector<int>> size(count, std::vector<int>(count, 1));
  for (std::size_t r = 0; r < p.pairs.size(); ++r) {
    const float survivors = ref::f32_from_bits(ref::bf16_bits_to_f32_bits(out[r]));
    EXPECT_TRUE(survivors >= 0 && survivors <= count - 2 &&
                survivors == static_cast<float>(static_cast<int>(survivors)))
        << "probe row " << r << " gave 0x" << std::hex << out[r] << ": not a count of units";
    const auto [i, j] = p.pairs[r];
    size[i][j] = size[j][i] = count - static_cast<int>(survivors);
  }
  Clusters out_clusters;
  for (int i = 0; i < count; ++i) {
    std::set<int> thresholds(size[i].begin(), size[i].end());
    for (int t : thresholds) {
      if (t < 2) continue;
      Cluster c;
      for (int l = 0; l < count; ++l)
        if (size[i][l] <= t) c.push_back(l);
      EXPECT_EQ(static_cast<int>(c.size()), t) << "inconsistent probe at leaf " << i;
      out_clusters.insert(c);
    }
  }
  return out_clusters;
}

// ---- the documented orders as trees of leaf sets (a node with one child is invisible) ---------
struct TreeBuilder {
  const Probe& p;
  Clusters clusters;
  // A node over children (leaf sets); records it when it joins two or more non-empty children.
  Cluster node(const std::vector<Cluster>& children) {
    Cluster n;
    int parts = 0;
    for (const Cluster& c : children) {
      if (c.empty()) continue;
      ++parts;
      n.insert(n.end(), c.begin(), c.end());
    }
    std::sort(n.begin(), n.end());
    if (parts >= 2) clusters.insert(n);
    return n;
  }
  Cluster leaf(std::uint32_t pos) const {
    const auto it = std::lower_bound(p.leaves.begin(), p.leaves.end(), pos);
    return it != p.leaves.end() && *it == pos ? Cluster{static_cast<int>(it - p.leaves.begin())} : Cluster{};
  }
  // Only the output's subtree counts: keep the clusters under the root.
  Clusters under(const Cluster& root) const {
    Clusters out;
    for (const Cluster& c : clusters)
      if (c.size() >= 2 && std::includes(root.begin(), root.end(), c.begin(), c.end())) out.insert(c);
    return out;
  }
};

// NUMERICS.md 2.1: per 128-K step, 8 chained k16 MMAs from +0, each one fused node over its 16
// products and the running p; then acc = fma(p, S, acc). steps_reversed: the fold over the steps in
// the other order (a wrong tree the probe must tell apart).
Clusters canonical_tree(const Probe& p, bool steps_reversed = false) {
  TreeBuilder b{p, {}};
  Cluster acc;
  const std::uint32_t steps = p.k / 128;
  for (std::uint32_t i = 0; i < steps; ++i) {
    const std::uint32_t s = steps_reversed ? steps - 1 - i : i;
    Cluster part;
    for (std::uint32_t j = 0; j < 8; ++j) {
      std::vector<Cluster> kids{part};
      for (std::uint32_t t = 0; t < 16; ++t) kids.push_back(b.leaf(128 * s + 16 * j + t));
      part = b.node(kids);
    }
    acc = b.node({part, acc});
  }
  return b.under(acc);
}

// reference/gemv.hpp: lane l folds chunks l, l + 32, ... (16 products each, one fma per product
// from +0, then fma(p, S, acc)); the lanes meet in an xor butterfly at 16, 8, 4, 2, 1, and lane
// 0's value is the output. butterfly_reversed: the levels at 1, 2, 4, 8, 16 (a wrong tree).
Clusters gemv_tree(const Probe& p, bool butterfly_reversed = false) {
  TreeBuilder b{p, {}};
  std::vector<Cluster> lanes(kLanes);
  const std::uint32_t chunks = p.k / kChunk;
  for (std::uint32_t lane = 0; lane < kLanes; ++lane) {
    Cluster acc;
    for (std::uint32_t c = lane; c < chunks; c += kLanes) {
      Cluster part;
      for (std::uint32_t j = 0; j < kChunk; ++j) part = b.node({part, b.leaf(c * kChunk + j)});
      acc = b.node({part, acc});
    }
    lanes[lane] = acc;
  }
  for (int level = 0; level < 5; ++level) {
    const std::uint32_t off = butterfly_reversed ? 1u << level : 16u >> level;
    std::vector<Cluster> next(kLanes);
    for (std::uint32_t lane = 0; lane < kLanes; ++lane) next[lane] = b.node({lanes[lane], lanes[lane ^ off]});
    lanes = next;
  }
  return b.under(lanes[0]);
}

// Leaves for the canonical fold over 24 steps: one in each step (its window and offset moving),
// one in each window of step 0, three in one window of step 2 (the fused node's siblings).
Probe canonical_probe() {
  std::vector<std::uint32_t> leaves;
  for (std::uint32_t s = 0; s < 24; ++s) leaves.push_back(128 * s + 16 * (s % 8) + (3 * s) % 16);
  for (std::uint32_t j = 0; j < 8; ++j) leaves.push_back(16 * j + 15 - j);
  for (std::uint32_t t : {0u, 7u, 15u}) leaves.push_back(256 + 16 * 5 + t);
  return make_probe(24 * 128, leaves);
}

// Leaves for the GEMV order over K = 2048 (128 chunks, four per lane): one in the first and second
// chunk of every lane, one in the third of lanes 0..7, and all 16 of chunk 0 (the product chain).
Probe gemv_probe() {
  std::vector<std::uint32_t> leaves;
  for (std::uint32_t l = 0; l < 32; ++l) {
    leaves.push_back(16 * l + l % 16);
    leaves.push_back(16 * (l + 32) + (l + 5) % 16);
    if (l < 8) leaves.push_back(16 * (l + 64) + (2 * l + 1) % 16);
  }
  for (std::uint32_t j = 0; j < 16; ++j) leaves.push_back(j);
  return make_probe(2048, leaves);
}

TEST(ReductionOrderProbe, PinsTheCanonicalFoldOrderInTheModelAndTheFastPath) {
  const Probe p = canonical_probe();
  ASSERT_LE(p.leaves.size(), 258u);  // BF16 counts are exact to 256
  const ref::GemmView v = p.view();
  std::vector<std::uint16_t> model(p.pairs.size()), fast(p.pairs.size());
  for (std::uint32_t r = 0; r < v.m; ++r) model[r] = ref::canonical_element_bf16(v, ref::Arch::sm90, r, 0);
  ref::gemm_canonical(v, ref::Arch::sm90, fast.data(), 1);
  const Clusters documented = canonical_tree(p);
  EXPECT_EQ(clusters_from_outputs(p, model), documented) << "the model's canonical fold is not NUMERICS.md 2.1's tree";
  EXPECT_EQ(clusters_from_outputs(p, fast), documented)
      << "the fast path's canonical fold is not NUMERICS.md 2.1's tree";
  // The probe tells the documented tree from the fold in reverse step order.
  EXPECT_NE(canonical_tree(p, true), documented);
}

TEST(ReductionOrderProbe, PinsTheGemvOrderInTheModelAndTheFastPath) {
  const Probe p = gemv_probe();
  ASSERT_LE(p.leaves.size(), 258u);
  const ref::GemmView v = p.view();
  std::vector<std::uint16_t> model(p.pairs.size()), fast(p.pairs.size());
  for (std::uint32_t r = 0; r < v.m; ++r) model[r] = ref::gemv_element_bf16(v, r, 0);
  ref::gemm_gemv(v, fast.data(), 1);
  const Clusters documented = gemv_tree(p);
  EXPECT_EQ(clusters_from_outputs(p, model), documented) << "the model's GEMV order is not reference/gemv.hpp's tree";
  EXPECT_EQ(clusters_from_outputs(p, fast), documented)
      << "the fast path's GEMV order is not reference/gemv.hpp's tree";
  // A swapped butterfly level is a different tree: the probe rejects it whatever the data.
  EXPECT_NE(gemv_tree(p, true), documented);
}

}  // namespace
