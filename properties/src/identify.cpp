// SPDX-License-Identifier: MIT OR Apache-2.0
// Which contract of the family a kernel keeps (identify.hpp): every candidate of NUMERICS.md 2.4's
// fields emulated on the probes' operands and compared with the device's bytes, raw bits.
#include "w8a16/properties/identify.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "w8a16/device/bodies.hpp"
#include "w8a16/golden/case_rng.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/coverage.hpp"
#include "w8a16/properties/invariance.hpp"
#include "w8a16/properties/launcher.hpp"
#include "w8a16/properties/work_limits.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::props {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::array<std::uint8_t, 128> window_sorted(std::array<std::uint8_t, 128> o);

// Two tensor-core parts that give the same bytes on every input: equal but for the order inside
// a window.
bool same_tc_bytes(ref::TensorCoreConventions a, ref::TensorCoreConventions b) {
  a.k_order = window_sorted(a.k_order);
  b.k_order = window_sorted(b.k_order);
  return a == b;
}

// The library names whose part of the given kind equals c's.
std::string library_name(const ref::Conventions& c, bool gemv) {
  std::vector<std::string> names;
  for (const ref::Conventions& lib : ref::conventions_library())
    if (gemv ? lib.gemv == c.gemv : same_tc_bytes(lib.tc, c.tc)) names.push_back(lib.name);
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
constexpr std::uint32_t kMaxIdentifyBias = 62;  // NUMERICS.md 2.4: tc.bias = 0..62

// A K order with each MMA window's positions ascending: orders that put the same positions in
// the same windows give the same bytes (the order inside one fused step is invisible, 1.1).
std::array<std::uint8_t, 128> window_sorted(std::array<std::uint8_t, 128> o) {
  for (unsigned w = 0; w < 8; ++w) std::sort(o.begin() + 16 * w, o.begin() + 16 * w + 16);
  return o;
}

std::vector<IdentifyCandidate> build_gemv(const std::vector<std::uint32_t>& lane_counts,
                                          const std::vector<std::uint32_t>& chunks) {
  std::vector<IdentifyCandidate> out;
  for (ref::NanCodes nan : kNans)
    for (std::uint32_t lanes : lane_counts)
      for (std::uint32_t chunk : chunks)
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

// The one seed expander of seeded draws (golden/case_rng.hpp).
std::uint64_t splitmix(std::uint64_t* state) { return golden::splitmix64_next(state); }

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
// identify's adaptive split probes over the GEMV's whole space: at most this many, K from 4096 to
// kGemvMaxSplitK (lanes 1024 x chunk 128 x 2).
constexpr unsigned kGemvAdaptiveTries = 12;
constexpr std::uint32_t kGemvMaxSplitK = 262144;
constexpr std::uint32_t kGemvSplitMaxN = 64;

}  // namespace

bool always_equal(const IdentifyCandidate& x, const IdentifyCandidate& y) {
  if (x.gemv != y.gemv) return false;
  if (!x.gemv) return same_tc_bytes(x.conventions.tc, y.conventions.tc);
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

namespace {
constexpr std::uint16_t kBf16One = 0x3F80, kBf16Big = 0x5380, kBf16NegBig = 0xD380;  // 1, 2^40, -2^40
constexpr std::uint8_t kE4m3One = 0x38;

float bf16_value(std::uint16_t bits) {
  const std::uint32_t x = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
}  // namespace

golden::CaseInputs order_probe_inputs(const golden::Case& c, const std::vector<std::pair<unsigned, unsigned>>& pairs,
                                      const std::vector<int>& zero_at) {
  golden::CaseInputs in;
  in.a_bits.assign(std::size_t{c.m} * c.a_row_stride, golden::kAPaddingBits);
  for (std::uint32_t r = 0; r < c.m; ++r) {
    std::uint16_t* row = in.a_bits.data() + std::size_t{r} * c.a_row_stride;
    for (std::uint32_t k = 0; k < c.k; ++k) row[k] = k < ref::kKStep ? kBf16One : 0;
    if (pairs.empty()) continue;
    const auto& pr = pairs[r % pairs.size()];
    row[pr.first] = kBf16Big;
    row[pr.second] = kBf16NegBig;
  }
  in.w_e4m3.assign(std::size_t{c.n} * c.k, 0);
  for (std::uint32_t n = 0; n < c.n; ++n) {
    std::uint8_t* row = in.w_e4m3.data() + std::size_t{n} * c.k;
    for (std::uint32_t k = 0; k < ref::kKStep; ++k) row[k] = kE4m3One;
    if (n < zero_at.size() && zero_at[n] >= 0) row[zero_at[n]] = 0;
  }
  in.s_f32.assign(std::size_t{(c.n + 127) / 128} * (c.k / ref::kKStep), 1.0f);
  return in;
}

golden::CaseInputs bias_ladder_inputs(const golden::Case& c) {
  golden::CaseInputs in;
  in.a_bits.assign(std::size_t{c.m} * c.a_row_stride, golden::kAPaddingBits);
  const std::uint32_t width = std::min<std::uint32_t>(c.n, ref::kKStep);
  // Row r, K = k < width: 2^(127 - t), t = r * width + k, while t <= 62 (else 0). A bias e turns
  // exactly the activations with t < e into Inf (2^(127 - t + e) >= 2^128).
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t k = 0; k < c.k; ++k) {
      const std::uint32_t t = r * width + k;
      in.a_bits[std::size_t{r} * c.a_row_stride + k] = k < width && t <= kMaxIdentifyBias
                                                           ? static_cast<std::uint16_t>((127u + 127u - t) << 7)
                                                           : std::uint16_t{0};
    }
  // Column n: -2^-6 at K < n and +2^-6 at K >= n (K < width): every product is finite and small
  // without a bias (no sum overflows), and with one, row r's Inf activations at K < n meet the
  // others with both signs, +Inf + -Inf = NaN (1.1, 7.), exactly when e > r * width + n (n >= 1),
  // while column 0 sees +Inf alone when e > r * width.
  in.w_e4m3.assign(std::size_t{c.n} * c.k, 0);
  for (std::uint32_t n = 0; n < c.n; ++n)
    for (std::uint32_t k = 0; k < width; ++k) in.w_e4m3[std::size_t{n} * c.k + k] = k < n ? 0x88 : 0x08;
  in.s_f32.assign(std::size_t{(c.n + 127) / 128} * (c.k / ref::kKStep), 1.0f);
  return in;
}

golden::CaseInputs fold_probe_inputs(const golden::Case& c, std::uint64_t seed) {
  golden::CaseInputs in;
  std::uint64_t st = seed;
  auto rnd = [&] { return splitmix(&st); };
  const std::uint32_t steps = c.k / ref::kKStep, units = (c.n + 127) / 128;
  in.a_bits.assign(std::size_t{c.m} * c.a_row_stride, golden::kAPaddingBits);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t k = 0; k < c.k; ++k) in.a_bits[std::size_t{r} * c.a_row_stride + k] = 0;
  in.w_e4m3.assign(std::size_t{c.n} * c.k, 0);
  in.s_f32.assign(std::size_t{units} * steps, 1.0f);
  if (steps < 2) return in;
  // One scale for step 1 (S is per 128 columns, the same for every row): BF16-exact, 1.xxxxxxx with
  // a random odd fraction, so that p * s needs more than 24 bits.
  const auto s_bits = static_cast<std::uint32_t>(0x3F800000u | ((rnd() & 0x7Fu) | 1u) << 16);
  float s1;
  std::memcpy(&s1, &s_bits, sizeof s1);
  for (std::uint32_t u = 0; u < units; ++u) in.s_f32[std::size_t{u} * steps + 1] = s1;
  // The three BF16 terms of a 24-bit magnitude x in [1, 2) (bits 23..16, 15..8, 7..0 of its
  // significand), with a sign.
  auto split = [](std::uint32_t f32, std::uint16_t out[3]) {
    const std::uint32_t sign = f32 & 0x80000000u, e = (f32 >> 23) & 0xFF, sig = (f32 & 0x7FFFFFu) | 0x800000u;
    for (int i = 0; i < 3; ++i) {
      const std::uint32_t chunk = (sig >> (16 - 8 * i)) & 0xFF;  // 8 bits, weight 2^(e - 127 - 7 - 8i)
      if (chunk == 0) {
        out[i] = 0;
        continue;
      }
      float v = std::ldexp(static_cast<float>(chunk), static_cast<int>(e) - 127 - 7 - 8 * i);
      std::uint32_t b;
      std::memcpy(&b, &v, sizeof b);
      out[i] = static_cast<std::uint16_t>(((b | sign) >> 16));
    }
  };
  for (std::uint32_t r = 0; r < c.m; ++r) {
    float p, q;
    std::uint32_t pb;
    do {
      pb = 0x3F800000u | (static_cast<std::uint32_t>(rnd()) & 0x7FFFFFu) | 1u;
      std::memcpy(&p, &pb, sizeof p);
      q = p * s1;  // RN, FP32 (the host's IEEE multiply)
    } while (std::fma(p, s1, -q) == 0.0f);
    std::uint32_t qb;
    std::memcpy(&qb, &q, sizeof qb);
    std::uint16_t pt[3], qt[3];
    split(pb, pt);
    split(qb ^ 0x80000000u, qt);
    std::uint16_t* row = in.a_bits.data() + std::size_t{r} * c.a_row_stride;
    for (int i = 0; i < 3; ++i) {
      row[i] = qt[i];                // step 0: -RN(p * s), scale 1
      row[ref::kKStep + i] = pt[i];  // step 1: p, scale s
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n)
    for (int i = 0; i < 3; ++i) {
      in.w_e4m3[std::size_t{n} * c.k + i] = kE4m3One;
      in.w_e4m3[std::size_t{n} * c.k + ref::kKStep + i] = kE4m3One;
    }
  return in;
}

OrderFinding determine_k_order(const golden::Case& shape, const ProbeLaunch& run, unsigned max_launches) {
  OrderFinding f;
  f.lo.fill(0);
  f.hi.fill(7);
  const std::uint32_t m = shape.m, n = shape.n;
  // Columns per launch that test a position: column 0 has no zero; 1 .. n-1 zero one position each.
  const std::uint32_t per_launch = std::min<std::uint32_t>(n - 1, ref::kKStep);
  if (n < 2 || shape.k < ref::kKStep) {
    f.consistent = true;
    f.why = "the probe shape has fewer than 2 columns";
    return f;
  }
  auto undetermined = [&] {
    std::vector<unsigned> u;
    for (unsigned k = 0; k < 128; ++k)
      if (f.lo[k] < f.hi[k]) u.push_back(k);
    return u;
  };
  // Every position's bounds after the rules: a pair's later member reaches its window, and a window
  // holds 16 positions (a window full of fixed positions excludes every other).
  auto propagate = [&](const std::vector<std::pair<std::pair<unsigned, unsigned>, unsigned>>& maxima) {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [pr, t] : maxima) {
        const unsigned i = pr.first, j = pr.second;
        if (f.hi[i] < t && (f.lo[j] != t || f.hi[j] != t))
          f.lo[j] = f.hi[j] = static_cast<std::uint8_t>(t), changed = true;
        if (f.hi[j] < t && (f.lo[i] != t || f.hi[i] != t))
          f.lo[i] = f.hi[i] = static_cast<std::uint8_t>(t), changed = true;
      }
      for (unsigned w = 0; w < 8; ++w) {
        unsigned fixed = 0, possible = 0;
        for (unsigned k = 0; k < 128; ++k) {
          fixed += f.lo[k] == w && f.hi[k] == w;
          possible += f.lo[k] <= w && w <= f.hi[k];
        }
        for (unsigned k = 0; k < 128; ++k) {
          if (f.lo[k] == f.hi[k]) continue;
          if (fixed == 16 && f.lo[k] <= w && w <= f.hi[k]) {
            // Window w is full: k is in another.
            if (f.lo[k] == w) ++f.lo[k], changed = true;
            else if (f.hi[k] == w) --f.hi[k], changed = true;
          } else if (possible == 16 && f.lo[k] <= w && w <= f.hi[k]) {
            f.lo[k] = f.hi[k] = static_cast<std::uint8_t>(w), changed = true;  // every candidate of w is in it
          }
        }
      }
      for (unsigned k = 0; k < 128; ++k)
        if (f.lo[k] > f.hi[k]) return false;
    }
    return true;
  };
  std::vector<std::pair<std::pair<unsigned, unsigned>, unsigned>> maxima;
  float unit = 0;            // the value of one counted term, once a zeroed position has shown it
  std::uint64_t tested = 0;  // positions tested, for the columns' rotation
  for (unsigned launch = 0; launch < max_launches; ++launch) {
    const std::vector<unsigned> open = undetermined();
    if (open.empty()) break;
    // The pairs: first round spread over K (8q, 8q + 4: for the contiguous order every window's
    // maximum once); later rounds pair open positions of least upper bound, so that the maxima
    // reach the windows still unseparated.
    std::vector<std::pair<unsigned, unsigned>> pairs;
    if (launch == 0) {
      for (unsigned q = 0; q < 16 && pairs.size() < m; ++q) pairs.push_back({8 * q, 8 * q + 4});
    } else {
      // Open positions grouped by their bounds. A group [lo, hi] is split by a pair whose maximum
      // is a window t in [lo, hi): the columns then tell which members lie past t. Such a pair is
      // two positions known to lie at or below t, one of them at t; where no position is known to
      // lie at any such t yet, two members of the group are paired instead (its maximum is inside
      // the bounds, and the pair's own bound tightens).
      std::map<std::pair<unsigned, unsigned>, std::vector<unsigned>> groups;
      for (unsigned k : open) groups[{f.lo[k], f.hi[k]}].push_back(k);
      std::set<std::pair<unsigned, unsigned>> asked;
      auto threshold_pair = [&](unsigned lo, unsigned hi, std::pair<unsigned, unsigned>* out) {
        for (unsigned d = 0; d < hi - lo; ++d) {
          const unsigned t = (lo + hi - 1) / 2 + (d % 2 ? (d + 1) / 2 : -(d / 2));  // the middle first
          if (t < lo || t >= hi) continue;
          int at = -1, below = -1;
          for (unsigned k = 0; k < 128; ++k) {
            if (f.lo[k] == t && f.hi[k] == t && at < 0) at = static_cast<int>(k);
            else if (f.hi[k] <= t && below < 0) below = static_cast<int>(k);
          }
          if (at >= 0 && below >= 0) {
            *out = {static_cast<unsigned>(at), static_cast<unsigned>(below)};
            return true;
          }
        }
        return false;
      };
      for (const auto& [bounds, members] : groups) {
        if (pairs.size() >= m) break;
        std::pair<unsigned, unsigned> tp;
        if (threshold_pair(bounds.first, bounds.second, &tp) && asked.insert(tp).second) pairs.push_back(tp);
      }
      std::vector<std::size_t> cursor;
      for (const auto& g : groups) cursor.push_back((launch * 5) % g.second.size());
      for (bool took = true; took && pairs.size() < m;) {
        took = false;
        std::size_t gi = 0;
        for (const auto& [bounds, members] : groups) {
          std::size_t& cur = cursor[gi++];
          if (pairs.size() >= m || members.size() < 2 || cur >= members.size() + (launch * 5) % members.size())
            continue;
          const unsigned a = members[cur % members.size()];
          const unsigned b = members[(cur + 1 + launch / 2) % members.size()];
          cur += 2;
          if (a != b && asked.insert({a, b}).second) pairs.push_back({a, b}), took = true;
        }
      }
      // An open position alone in its bounds: paired with a position no higher than its least window.
      for (const auto& [bounds, members] : groups) {
        if (members.size() != 1 || pairs.size() >= m) continue;
        for (unsigned k = 0; k < 128; ++k)
          if (k != members.front() && f.hi[k] <= bounds.first) {
            pairs.push_back({members.front(), k});
            break;
          }
      }
      if (pairs.empty()) break;
    }
    // Columns: 0 unzeroed, then the positions in turn (the open ones first).
    std::vector<int> zero_at(n, -1);
    std::vector<unsigned> order_cols = open;
    for (unsigned k = 0; k < 128; ++k)
      if (f.lo[k] == f.hi[k]) order_cols.push_back(k);
    // Every open position where the columns hold them all; else the next ones in turn.
    const std::uint64_t from = per_launch >= open.size() ? 0 : tested;
    for (std::uint32_t c = 1; c <= per_launch; ++c)
      zero_at[c] = static_cast<int>(
          order_cols[(from + c - 1) % (per_launch >= open.size() ? order_cols.size() : open.size())]);
    tested += per_launch < open.size() ? per_launch : 0;
    golden::Case c = shape;
    c.seed = 0x6f72646572ull + launch;  // "order": names the probe; its operands are built, not drawn
    const golden::CaseInputs in = order_probe_inputs(c, pairs, zero_at);
    std::vector<std::uint16_t> out;
    std::string why;
    char what[64];
    std::snprintf(what, sizeof what, "order pairs round %u", launch);
    std::string data = what;
    for (const auto& p : pairs) data += " " + std::to_string(p.first) + "/" + std::to_string(p.second);
    f.probes.push_back(c);
    f.probe_data.push_back(data);
    if (!run(c, in, &out, &why)) {
      f.why = why;
      return f;
    }
    // The unit of the counts: 1, or 2^-e where a bias e meets the prescale fold, which applies no
    // scale after the MMA (NUMERICS.md 2.4). Every zeroed position that counts changes its row by
    // one unit; a row with none is read once the unit is known.
    const std::uint32_t rows = std::min<std::uint32_t>(m, static_cast<std::uint32_t>(pairs.size()));
    auto at = [&](std::uint32_t r, std::uint32_t col) {
      return bf16_value(out[std::size_t{r} * c.c_row_stride + col]);
    };
    auto refuse = [&](const std::string& why) {
      f.consistent = false;
      f.why = "order probe round " + std::to_string(launch) + ": " + why;
      return f;
    };
    for (std::uint32_t r = 0; r < rows; ++r)
      for (std::uint32_t col = 1; col <= per_launch; ++col) {
        const auto l = static_cast<unsigned>(zero_at[col]);
        if (l == pairs[r].first || l == pairs[r].second) continue;  // a big term taken away
        const float d = at(r, 0) - at(r, col);
        if (d > 0 && unit == 0) unit = d;
        if (!(d == 0 || d == unit))
          return refuse("row " + std::to_string(r) + ", column " + std::to_string(col) + ": zeroing K " +
                        std::to_string(zero_at[col]) + " changed the count by " + std::to_string(d) +
                        (unit > 0 ? ", not by 0 or " + std::to_string(unit) : ""));
      }
    for (std::uint32_t r = 0; r < rows; ++r) {
      const float base = at(r, 0);
      const auto [i, j] = pairs[r];
      if (base != 0 && unit == 0) continue;  // its unit not yet known
      const float count = base == 0 ? 0 : base / unit;
      if (!(count >= 0 && count <= 112 && count == static_cast<float>(16 * static_cast<int>(count / 16))))
        return refuse("row " + std::to_string(r) + " (pair " + std::to_string(i) + "/" + std::to_string(j) + "): " +
                      std::to_string(base) + " is no count of whole windows (16 t units, t in 0..7): the step is not " +
                      "8 chained MMAs of 16 K");
      const unsigned t = 7 - static_cast<unsigned>(count / 16);
      maxima.push_back({{i, j}, t});
      f.hi[i] = std::min<std::uint8_t>(f.hi[i], static_cast<std::uint8_t>(t));
      f.hi[j] = std::min<std::uint8_t>(f.hi[j], static_cast<std::uint8_t>(t));
      for (std::uint32_t col = 1; col <= per_launch; ++col) {
        const auto l = static_cast<unsigned>(zero_at[col]);
        if (l == i || l == j) continue;
        if (base - at(r, col) != 0) f.lo[l] = std::max<std::uint8_t>(f.lo[l], static_cast<std::uint8_t>(t + 1));
        else f.hi[l] = std::min<std::uint8_t>(f.hi[l], static_cast<std::uint8_t>(t));
      }
    }
    if (!propagate(maxima)) {
      f.consistent = false;
      f.why = "the order probes contradict each other: no assignment of 16 K positions to each of 8 windows fits them";
      return f;
    }
  }
  if (!undetermined().empty()) {
    f.why = std::to_string(undetermined().size()) + " K positions left between windows after " +
            std::to_string(f.probes.size()) + " order probes";
    return f;
  }
  unsigned next[8] = {};
  for (unsigned k = 0; k < 128; ++k) {
    const unsigned w = f.lo[k];
    if (next[w] >= 16) {
      f.consistent = false;
      f.why = "window " + std::to_string(w) + " holds more than 16 K positions";
      return f;
    }
    f.k_order[16 * w + next[w]++] = static_cast<std::uint8_t>(k);
  }
  f.determined = true;
  return f;
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

std::vector<IdentifyCandidate> tc_space(const std::vector<std::array<std::uint8_t, 128>>& orders) {
  struct FoldPeriod {
    ref::Fold fold;
    ref::FoldPeriod period;
  };
  constexpr FoldPeriod kFolds[] = {{ref::Fold::fma, ref::FoldPeriod::step},
                                   {ref::Fold::mul_add, ref::FoldPeriod::step},
                                   {ref::Fold::prescale, ref::FoldPeriod::step},
                                   {ref::Fold::prescale, ref::FoldPeriod::end}};
  std::vector<IdentifyCandidate> out;
  out.reserve(orders.size() * 3 * 4 * (kMaxIdentifyBias + 1) * 2);
  for (const std::array<std::uint8_t, 128>& order : orders)
    for (ref::NanCodes nan : kNans)
      for (const FoldPeriod& fp : kFolds)
        for (std::uint32_t bias = 0; bias <= kMaxIdentifyBias; ++bias)
          for (ref::ScaleFormat scales : {ref::ScaleFormat::fp32, ref::ScaleFormat::bf16}) {
            ref::Conventions c = ref::canonical_conventions();
            c.tc.nan = nan;
            c.tc.fold = fp.fold;
            c.tc.period = fp.period;
            c.tc.bias = bias;
            c.tc.scales = scales;
            c.tc.k_order = order;
            out.push_back(candidate(std::move(c), false));
          }
  return out;
}

const std::vector<IdentifyCandidate>& tc_candidates() {
  static const std::vector<IdentifyCandidate> c = tc_space({ref::TensorCoreConventions::identity_k_order()});
  return c;
}

const std::vector<IdentifyCandidate>& gemv_candidates() {
  static const std::vector<IdentifyCandidate> c = build_gemv({32, 64}, {8, 16, 32});
  return c;
}

const std::vector<IdentifyCandidate>& gemv_space() {
  static const std::vector<IdentifyCandidate> c = [] {
    std::vector<std::uint32_t> lanes;
    for (std::uint32_t l = 32; l <= 1024; l += 32) lanes.push_back(l);
    return build_gemv(lanes, {1, 2, 4, 8, 16, 32, 64, 128});
  }();
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
    // The confirmation's shape: the plan's first drawn probe, with K long enough for lone_specials'
    // first, middle and last step.
    for (const IdentifyProbe& p : ep.probes)
      if (p.inputs == nullptr) {
        ep.confirm_base = p.c;
        break;
      }
    golden::Case& base = ep.confirm_base;
    if (base.k < 4 * ref::kKStep) {
      base.a_row_stride += 4 * ref::kKStep - base.k;
      base.k = 4 * ref::kKStep;
    }
    std::set<std::uint32_t> ms(std::begin(kConfirmExtraMs), std::end(kConfirmExtraMs));
    for (std::uint32_t m : edge_ms({dispatch_map(e, base.n, base.k, kEdgeScanMax, registry, limits)})) ms.insert(m);
    const std::uint32_t max_rows = golden::entry_point_max_rows(e);
    for (std::uint32_t m : ms)
      if (m >= 1 && (max_rows == 0 || m <= max_rows)) ep.confirm_ms.push_back(m);
    out.push_back(std::move(ep));
  }
  return out;
}

void keep_bodies(EntryProbes* ep, const std::vector<device::Body>& bodies) {
  ep->all_bodies = false;
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
    // Nothing kept: every representative is ranked by its differences on a sample of each probe,
    // and the closest few are counted on every element; the nearest is the one of those with the
    // fewest. (Counting all of a space of thousands on every element would cost a full emulation
    // each: most differ from a near miss in a handful of elements.)
    constexpr std::size_t kRankElements = 16, kNearestPool = 12;
    std::vector<std::vector<std::uint64_t>> sample;
    for (const ProbeRun& p : probes) sample.push_back(element_sample(p.c, kRankElements));
    std::vector<std::uint64_t> rank(candidates.size(), kPruned);
    ref::parallel_for(candidates.size(), threads, [&](std::size_t ci) {
      if (rep[ci] != ci || total[ci] != kPruned) return;
      std::uint64_t d = 0;
      for (std::size_t pi = 0; pi < np; ++pi)
        for (std::uint64_t e : sample[pi])
          d += differs_at(ci, pi, static_cast<std::uint32_t>(e / probes[pi].c.n),
                          static_cast<std::uint32_t>(e % probes[pi].c.n));
      rank[ci] = d;
    });
    std::vector<std::size_t> order;
    for (std::size_t ci = 0; ci < candidates.size(); ++ci)
      if (rank[ci] != kPruned) order.push_back(ci);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
    std::vector<char> pool(candidates.size(), 0);
    for (std::size_t i = 0; i < order.size() && i < kNearestPool; ++i) pool[order[i]] = 1;
    full(pool);
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

namespace {

// One launch's failure as identify reports it.
std::string launch_error(const Launched& got, const golden::Case& c, bool* hang) {
  *hang = got.status.code == device::Errc::launch_timeout;
  return std::string(*hang                                           ? "HANG: "
                     : got.status.code == device::Errc::context_lost ? "FAULT: "
                                                                     : "") +
         got.status.message + " (" + golden::format_case(c) + ")";
}

// The text-form key and value of every field of a part, for the field table.
std::vector<std::pair<std::string, std::string>> field_values(const ref::Conventions& c, bool gemv) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string prefix = gemv ? "gemv." : "tc.";
  for (auto [key, value] : ref::conventions_fields(c)) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    if (key == "tc.k-order" && value != "contiguous") {
      // The windows, not the order inside them (which no data shows).
      const auto o = window_sorted(c.tc.k_order);
      value.clear();
      for (unsigned i = 0; i < 128; ++i) value += (i ? (i % 16 ? "," : " | ") : "") + std::to_string(o[i]);
    }
    out.emplace_back(key, value);
  }
  return out;
}

void fill_fields(BodyVerdict* bv) {
  bv->fields.clear();
  for (std::size_t i : bv->match.keeps) {
    const auto kv = field_values(bv->candidates[i].conventions, bv->gemv);
    if (bv->fields.empty())
      for (const auto& [k, v] : kv) bv->fields.push_back({k, {}});
    for (std::size_t f = 0; f < kv.size() && f < bv->fields.size(); ++f) {
      auto& values = bv->fields[f].second;
      if (std::find(values.begin(), values.end(), kv[f].second) == values.end()) values.push_back(kv[f].second);
    }
  }
}

// The first element of C where the candidate's bytes and the run's differ (or the first element
// outside the output not left as the sentinel); false when none does.
bool first_difference(const IdentifyCandidate& cand, const golden::Case& c, const golden::CaseInputs& in,
                      const std::vector<std::uint16_t>& got, unsigned threads, std::string* what) {
  const std::size_t rows = std::size_t{c.m} + golden::kOutputGuardRows;
  char buf[160];
  for (std::size_t i = 0; i < rows * c.c_row_stride; ++i) {
    const std::size_t r = i / c.c_row_stride, col = i % c.c_row_stride;
    if (r < c.m && col < c.n) continue;
    const std::uint16_t g = i < got.size() ? got[i] : 0;
    if (i >= got.size() || g != golden::kOutputSentinelBits) {
      std::snprintf(buf, sizeof buf, "C[%zu][%zu] outside the output is 0x%04x, not the sentinel 0x%04x", r, col,
                    static_cast<unsigned>(g), static_cast<unsigned>(golden::kOutputSentinelBits));
      *what = buf;
      return true;
    }
  }
  const ref::GemmView v = golden::case_view(c, in);
  std::vector<std::uint16_t> want(std::size_t{c.m} * c.c_row_stride, 0);
  if (cand.gemv) ref::gemm_conventions(cand.conventions.gemv, v, want.data(), c.c_row_stride, threads);
  else ref::gemm_conventions(cand.conventions.tc, v, ref::Arch::sm90, want.data(), c.c_row_stride, threads);
  for (std::uint32_t r = 0; r < c.m; ++r)
    for (std::uint32_t col = 0; col < c.n; ++col) {
      const std::size_t at = std::size_t{r} * c.c_row_stride + col;
      if (got[at] == want[at]) continue;
      std::snprintf(buf, sizeof buf, "C[%u][%u] is 0x%04x, %s gives 0x%04x", r, col, static_cast<unsigned>(got[at]),
                    cand.name.c_str(), static_cast<unsigned>(want[at]));
      *what = buf;
      return true;
    }
  return false;
}

// The confirmation's data classes, in the order the M values take them.
constexpr golden::Distribution kConfirmData[] = {
    golden::Distribution::every_special,  golden::Distribution::fold_ties, golden::Distribution::cancelling_steps,
    golden::Distribution::wide_exponents, golden::Distribution::nan_codes, golden::Distribution::lone_specials};

}  // namespace

namespace {

// One body's probes through `run`: the plan's probes, then for a tensor-core body the order probes,
// the bias ladder and the fold probe, and the match over the space on the order found. Sets
// bv->error where a probe gave no bytes; *stop where `run` said the launches must stop (a hang).
void identify_body(BodyVerdict* bvp, const std::vector<const IdentifyProbe*>& mine, const ProbeLaunch& run,
                   unsigned threads) {
  BodyVerdict& bv = *bvp;
  std::vector<std::unique_ptr<golden::CaseInputs>> inputs;
  std::vector<std::vector<std::uint16_t>> outputs;
  // A probe that ran joins the match: its case, what it holds, its operands and its bytes.
  auto record = [&](const golden::Case& c, std::unique_ptr<golden::CaseInputs> in, std::string data,
                    std::vector<std::uint16_t> bytes) {
    bv.probes.push_back(c);
    bv.probe_data.push_back(std::move(data));
    inputs.push_back(std::move(in));
    outputs.push_back(std::move(bytes));
  };
  auto add = [&](const golden::Case& c, std::unique_ptr<golden::CaseInputs> in, std::string data) {
    std::vector<std::uint16_t> bytes;
    if (!bv.error.empty()) return;
    if (run(c, *in, &bytes, &bv.error)) record(c, std::move(in), std::move(data), std::move(bytes));
  };
  for (const IdentifyProbe* p : mine) {
    if (!bv.error.empty()) break;
    auto in = std::make_unique<golden::CaseInputs>();
    std::string why;
    if (p->inputs) {
      *in = *p->inputs;
    } else if (!golden::regenerate_inputs(p->c, in.get(), &why)) {
      bv.error = golden::format_case(p->c) + ": " + why;
      break;
    }
    add(p->c, std::move(in), p->data.empty() ? std::string(golden::distribution_name(p->c.dist)) : p->data);
  }
  if (!bv.gemv && bv.error.empty() && !mine.empty()) {
    // The K order first (its probes' bytes join the match), then the whole space over it.
    const golden::Case& shape = mine.front()->c;
    auto order_run = [&](const golden::Case& c, const golden::CaseInputs& in, std::vector<std::uint16_t>* bytes,
                         std::string* why) {
      if (!run(c, in, bytes, why)) return false;
      record(c, std::make_unique<golden::CaseInputs>(in), "order probe", *bytes);
      return true;
    };
    const std::size_t first_order = bv.probes.size();
    bv.order = determine_k_order(shape, order_run);
    for (std::size_t i = first_order, r = 0; i < bv.probes.size() && r < bv.order.probe_data.size(); ++i, ++r)
      bv.probe_data[i] = bv.order.probe_data[r];
    if (bv.order.probes.size() > bv.probes.size() - first_order) bv.error = bv.order.why;  // a launch failed
    golden::Case ladder = shape;
    ladder.seed = 0x6c6164646572ull;  // "ladder": names the probe; its operands are built
    add(ladder, std::make_unique<golden::CaseInputs>(bias_ladder_inputs(ladder)), "bias ladder");
    if (shape.k >= 2 * ref::kKStep) {
      golden::Case fold = shape;
      fold.seed = 0x666f6c64ull;  // "fold": names the probe and seeds its operands
      add(fold, std::make_unique<golden::CaseInputs>(fold_probe_inputs(fold, fold.seed)), "fold probe");
    }
    std::vector<std::array<std::uint8_t, 128>> orders;
    if (bv.order.determined) {
      orders.push_back(bv.order.k_order);
    } else {
      // Not determined: the library's orders stand (the verdict says the order is not determined).
      for (const ref::Conventions& lib : ref::conventions_library()) {
        const auto o = window_sorted(lib.tc.k_order);
        if (std::find(orders.begin(), orders.end(), o) == orders.end()) orders.push_back(o);
      }
    }
    bv.candidates = tc_space(orders);
  } else if (bv.gemv) {
    bv.candidates = gemv_space();
  }
  if (!bv.error.empty()) return;
  std::vector<ProbeRun> runs;
  for (std::size_t i = 0; i < bv.probes.size(); ++i) runs.push_back({bv.probes[i], inputs[i].get(), &outputs[i]});
  bv.match = match_candidates(bv.candidates, runs, threads);
  if (bv.gemv && !mine.empty()) {
    // The GEMV's whole space (lanes 32..1024, chunk 1..128): while the kept candidates differ in
    // more than their tree, another split probe runs, its K doubling from 4096 (every lane of the
    // largest partition takes two chunks of the widest at K = 262144), its seed from the plan's;
    // each is matched with the rest, so the kernel's bytes decide what runs next.
    auto open = [&] {
      for (std::size_t i : bv.match.keeps)
        for (std::size_t j : bv.match.keeps)
          if (!always_equal(bv.candidates[i], bv.candidates[j])) return true;
      return false;
    };
    std::uint64_t st = mine.front()->c.seed ^ 0x73706c6974ull;
    for (unsigned t = 0; t < kGemvAdaptiveTries && open() && bv.error.empty(); ++t) {
      golden::Case c = mine.front()->c;
      c.n = std::min<std::uint32_t>(c.n, kGemvSplitMaxN);  // one body whatever N: few columns suffice
      const std::uint32_t k = std::min<std::uint32_t>(4096u << (t / 2), kGemvMaxSplitK);
      c.a_row_stride = c.a_row_stride - c.k + k;
      c.k = k;
      c.seed = splitmix(&st);
      char what[96];
      std::snprintf(what, sizeof what, "gemv_split seed=0x%016llx", static_cast<unsigned long long>(c.seed));
      add(c, std::make_unique<golden::CaseInputs>(gemv_split_inputs(c, c.seed)), what);
      if (!bv.error.empty()) return;
      runs.clear();
      for (std::size_t i = 0; i < bv.probes.size(); ++i) runs.push_back({bv.probes[i], inputs[i].get(), &outputs[i]});
      bv.match = match_candidates(bv.candidates, runs, threads);
    }
    bv.unsplit.clear();  // what is left open shows as undetermined fields
  }
  for (std::size_t i : bv.match.keeps) bv.keeps.push_back(bv.candidates[i].name);
  if (bv.match.keeps.empty() && bv.match.nearest < bv.candidates.size())
    for (std::size_t pi = 0; pi < bv.probes.size() && pi < bv.match.nearest_differ.size(); ++pi) {
      std::string what;
      if (bv.match.nearest_differ[pi] == 0 ||
          !first_difference(bv.candidates[bv.match.nearest], bv.probes[pi], *inputs[pi], outputs[pi], threads, &what))
        continue;
      bv.nearest_first = golden::format_case(bv.probes[pi]) + ": " + what;
      break;
    }
  fill_fields(&bv);
}

// One confirmation case run twice on a body: its two runs must agree, and each kept candidate must
// give its bytes; a candidate that does not is dropped, and a body left with none keeps NONE.
void confirm_case(BodyVerdict* bv, const golden::Case& c, const golden::CaseInputs& in,
                  const std::vector<std::uint16_t>& first, const std::vector<std::uint16_t>& second, unsigned threads) {
  if (!bv->error.empty() || bv->match.keeps.empty()) return;
  ++bv->confirm_cases;
  if (first != second) {
    std::size_t i = 0;
    while (i < first.size() && i < second.size() && first[i] == second[i]) ++i;
    char buf[160];
    std::snprintf(buf, sizeof buf, "C[%zu][%zu] is 0x%04x in one run and 0x%04x in the other", i / c.c_row_stride,
                  i % c.c_row_stride, i < first.size() ? first[i] : 0u, i < second.size() ? second[i] : 0u);
    bv->confirm_failure = golden::format_case(c) + ": the same call twice: " + buf;
    bv->match.keeps.clear();
  }
  std::vector<std::size_t> still;
  std::string first_miss;
  for (std::size_t ci : bv->match.keeps) {
    std::string what;
    if (first_difference(bv->candidates[ci], c, in, first, threads, &what)) {
      if (first_miss.empty()) first_miss = golden::format_case(c) + ": " + what;
    } else {
      still.push_back(ci);
    }
  }
  if (still.empty() && bv->confirm_failure.empty()) bv->confirm_failure = first_miss;
  if (still.size() != bv->match.keeps.size() || still.empty()) {
    bv->match.keeps = still;
    bv->keeps.clear();
    for (std::size_t ci : still) bv->keeps.push_back(bv->candidates[ci].name);
    fill_fields(bv);
  }
}

}  // namespace

std::vector<EntryVerdict> identify(CaseLauncher& launcher, const std::vector<EntryProbes>& plan, unsigned threads,
                                   bool* hung, const std::function<void(const std::string&)>& progress) {
  if (hung) *hung = false;
  bool stop = false;
  std::vector<EntryVerdict> out;
  for (const EntryProbes& ep : plan) {
    EntryVerdict ev;
    ev.entry = ep.entry;
    ev.unreached = ep.unreached;
    for (const device::Body& b : ep.bodies) {
      BodyVerdict bv;
      bv.body = b;
      bv.gemv = device::body_contract(b) == device::Contract::gemv;
      if (progress) progress(std::string(golden::entry_point_name(ep.entry)) + " / " + device::body_name(b));
      std::vector<const IdentifyProbe*> mine;
      for (const IdentifyProbe& p : ep.probes)
        if (p.body == b) mine.push_back(&p);
      const std::size_t bi = static_cast<std::size_t>(&b - ep.bodies.data());
      if (bi < ep.unsplit.size()) bv.unsplit = ep.unsplit[bi];
      // One launch on this body: its bytes, or the error that gives no verdict.
      auto run = [&](const golden::Case& c, const golden::CaseInputs& in, std::vector<std::uint16_t>* bytes,
                     std::string* why) {
        if (stop) {
          *why = "not run: an earlier launch hung";
          return false;
        }
        Launched got = launcher.launch(c, in);
        if (!got.status.ok()) {
          bool hang = false;
          *why = launch_error(got, c, &hang);
          if (hang) stop = true;
          return false;
        }
        if (!got.planned || got.plan.body != b) {
          *why = golden::format_case(c) + ": planned on " +
                 (got.planned ? std::string(device::body_name(got.plan.body)) : std::string("nothing")) + ", not on " +
                 device::body_name(b);
          return false;
        }
        *bytes = std::move(got.c_bits);
        return true;
      };
      identify_body(&bv, mine, run, threads);
      ev.bodies.push_back(std::move(bv));
      if (stop) break;
    }
    // The confirmation: other M (every dispatch edge's neighbours and a spread), the data classes
    // in turn, each case twice; a kept candidate that any of them refutes is dropped.
    if (!stop && !ev.bodies.empty()) {
      const golden::Case& base = ep.confirm_base;
      const std::vector<std::uint32_t>& ms = ep.confirm_ms;
      std::size_t turn = 0;
      for (std::uint32_t m : ms) {
        if (stop) break;
        ev.confirm_ms.push_back(m);
        for (golden::Distribution d : kConfirmData) {
          if (stop) break;
          golden::Case c = base;
          c.m = m;
          c.without = 0;
          c.dist = d;
          c.seed = base.seed ^ (0xc0f1ull * (m + 1)) ^ turn;
          ++turn;
          golden::CaseInputs in;
          std::string why;
          if (!golden::regenerate_inputs(c, &in, &why)) {
            ev.confirm_errors.push_back(golden::format_case(c) + ": " + why);
            continue;
          }
          Launched first = launcher.launch(c, in), second;
          if (first.status.ok()) second = launcher.launch(c, in);
          const Launched& bad = first.status.ok() ? second : first;
          if (!bad.status.ok()) {
            bool hang = false;
            ev.confirm_errors.push_back(launch_error(bad, c, &hang));
            if (hang) stop = true;
            continue;
          }
          BodyVerdict* bv = nullptr;
          for (BodyVerdict& x : ev.bodies)
            if (first.planned && x.body == first.plan.body) bv = &x;
          if (!bv && !ep.all_bodies && first.planned) continue;  // a body --body left out
          if (!bv) {
            ev.confirm_errors.push_back(golden::format_case(c) + ": planned on " +
                                        (first.planned ? std::string(device::body_name(first.plan.body))
                                                       : std::string("nothing")) +
                                        ", a body the probes did not reach");
            continue;
          }
          confirm_case(bv, c, in, first.c_bits, second.c_bits, threads);
        }
      }
    }
    ev.every_body_keeps = !ev.bodies.empty();
    for (const BodyVerdict& bv : ev.bodies)
      if (!bv.error.empty() || bv.keeps.empty()) ev.every_body_keeps = false;
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
    if (stop) break;
  }
  if (hung) *hung = stop;
  return out;
}

std::string body_verdict_text(const BodyVerdict& bv) {
  std::string t;
  const std::vector<IdentifyCandidate>& cands = bv.candidates;
  std::uint64_t elements = 0;
  for (std::uint64_t e : bv.match.elements) elements += e;
  // Said in both verdicts: a budget spent with groups left is a limit of these probes.
  std::string unsplit;
  for (const std::vector<std::size_t>& g : bv.unsplit) {
    std::vector<std::string> names;
    for (std::size_t i : g) names.push_back(cands[i].name);
    unsplit += "    the split search's budget ran out; the probes could not tell these apart: " + join(names, ", ") +
               "\n";
  }
  if (!bv.error.empty()) {
    t += "NO VERDICT: " + bv.error + "\n";
    return t;
  }
  // What the order probes found, and the fields the kept candidates hold (several values: the
  // field is not determined, and every value still standing is printed).
  std::string order_line;
  if (!bv.gemv) {
    if (bv.order.determined)
      order_line = "    k-order determined by " + std::to_string(bv.order.probes.size()) + " order probes\n";
    else order_line = "    k-order NOT DETERMINED (" + bv.order.why + "); the library's orders stand in\n";
  }
  std::string field_lines;
  for (const auto& [key, values] : bv.fields) {
    if (values.size() == 1) {
      field_lines += "      " + key + " = " + values.front() + "\n";
    } else {
      field_lines += "      " + key + " UNDETERMINED: " + join(values, " | ") + "\n";
    }
  }
  std::string confirm_line;
  if (!bv.confirm_failure.empty()) confirm_line = "    the confirmation refuted it: " + bv.confirm_failure + "\n";
  else if (bv.confirm_cases)
    confirm_line = "    confirmed on " + std::to_string(bv.confirm_cases) + " cases at other M, each run twice\n";
  if (bv.keeps.empty() && !bv.confirm_failure.empty() && bv.match.nearest < cands.size()) {
    t += "KEEPS NONE (the probes' candidate " + cands[bv.match.nearest].name + " fails the confirmation)\n" +
         order_line + confirm_line;
    return t;
  }
  if (!bv.keeps.empty()) {
    t += "KEEPS " + join(bv.keeps, ", ");
    if (bv.keeps.size() > 1) {
      bool twins = true;
      for (std::size_t i : bv.match.keeps) twins = twins && always_equal(cands[i], cands[bv.match.keeps.front()]);
      t += twins ? " (no data tells these apart: NUMERICS.md 2.4)" : " (the probes could not tell these apart)";
    }
    t += "\n    " + std::to_string(bv.probes.size()) + " probes, " + std::to_string(elements) +
         " elements, every byte equal\n" + order_line + confirm_line + "    fields:\n" + field_lines + unsplit;
    return t;
  }
  const IdentifyCandidate& near = cands[bv.match.nearest];
  t += "KEEPS NONE (nearest: " + near.name + ": " + std::to_string(bv.match.nearest_total) + " of " +
       std::to_string(elements) + " elements differ)\n" + order_line + unsplit;
  if (near.name != near.description) t += "    nearest is " + near.description + "\n";
  if (!bv.nearest_first.empty()) t += "    first difference: " + bv.nearest_first + "\n";
  for (std::size_t pi = 0; pi < bv.probes.size(); ++pi) {
    if (bv.match.nearest_differ[pi] == 0) continue;
    t += "    " + std::to_string(bv.match.nearest_differ[pi]) + " of " + std::to_string(bv.match.elements[pi]) +
         " differ on " + bv.probe_data[pi] + ": " + golden::format_case(bv.probes[pi]) + "\n";
    if (bv.match.outside[pi] != 0)
      t += "      of them " + std::to_string(bv.match.outside[pi]) +
           " outside the output (pitch padding or guard rows not left as the sentinel)\n";
  }
  return t;
}

std::string identify_text(const std::vector<EntryVerdict>& verdicts) {
  std::string t;
  for (const EntryVerdict& ev : verdicts) {
    t += std::string(golden::entry_point_name(ev.entry)) + "\n";
    for (const BodyVerdict& bv : ev.bodies)
      t += "  " + std::string(device::body_name(bv.body)) + ": " + body_verdict_text(bv);
    for (const std::string& u : ev.unreached) t += "  UNREACHED cell: " + u + "\n";
    if (!ev.confirm_ms.empty()) {
      std::string ms;
      for (std::uint32_t m : ev.confirm_ms) ms += (ms.empty() ? "" : " ") + std::to_string(m);
      t += "  confirmation at M = " + ms + " (each case twice)\n";
    }
    for (const std::string& e : ev.confirm_errors) t += "  CONFIRMATION FAILED: " + e + "\n";
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

namespace w8a16::props {

bool determined_contract(const std::vector<EntryVerdict>& verdicts, std::string* text, std::string* why) {
  // Per part: each body's value (its kept candidates must all give the same bytes), counted.
  struct Seen {
    ref::Conventions value;
    std::vector<std::string> where;
  };
  std::vector<Seen> parts[2];
  std::string problems;
  for (const EntryVerdict& ev : verdicts)
    for (const BodyVerdict& bv : ev.bodies) {
      const std::string where = std::string(golden::entry_point_name(ev.entry)) + " / " + device::body_name(bv.body);
      if (!bv.error.empty() || bv.match.keeps.empty()) {
        problems += "  " + where + " keeps no contract\n";
        continue;
      }
      const IdentifyCandidate& first = bv.candidates[bv.match.keeps.front()];
      bool one = true;
      for (std::size_t i : bv.match.keeps) one = one && always_equal(bv.candidates[i], first);
      if (!one) {
        std::string fields;
        for (const auto& [key, values] : bv.fields)
          if (values.size() > 1) fields += (fields.empty() ? "" : ", ") + key;
        problems += "  " + where + ": " + fields + " not determined\n";
        continue;
      }
      std::vector<Seen>& seen = parts[bv.gemv ? 1 : 0];
      bool found = false;
      for (Seen& x : seen)
        if (bv.gemv ? always_equal(candidate(x.value, true), first) : same_tc_bytes(x.value.tc, first.conventions.tc)) {
          x.where.push_back(where);
          found = true;
        }
      if (!found) seen.push_back({first.conventions, {where}});
    }
  if (!problems.empty()) {
    *why = "nothing written: identify determined no contract for every body:\n" + problems;
    return false;
  }
  if (parts[0].empty() && parts[1].empty()) {
    *why = "nothing written: no body was identified";
    return false;
  }
  ref::Conventions c = ref::canonical_conventions();
  std::string notes;
  for (int part = 0; part < 2; ++part) {
    std::vector<Seen>& seen = parts[part];
    const char* name = part ? "gemv" : "tc";
    if (seen.empty()) {
      notes += std::string("# ") + name + ".*: no body of this kind was identified; canonical's values are written\n";
      continue;
    }
    std::stable_sort(seen.begin(), seen.end(),
                     [](const Seen& a, const Seen& b) { return a.where.size() > b.where.size(); });
    if (part) c.gemv = seen.front().value.gemv;
    else c.tc = seen.front().value.tc;
    notes += std::string("# ") + name + ".*: kept by " + join(seen.front().where, ", ") + "\n";
    for (std::size_t i = 1; i < seen.size(); ++i)
      notes += std::string("# TIER BREAK: ") + join(seen[i].where, ", ") + " keep" +
               (seen[i].where.size() == 1 ? "s " : " ") +
               (part ? ref::describe(seen[i].value.gemv) : ref::describe(seen[i].value.tc)) +
               ", not this; verify under this contract fails them\n";
  }
  c.name = "identified";
  for (const ref::Conventions& lib : ref::conventions_library())
    if (lib.gemv == c.gemv && same_tc_bytes(lib.tc, c.tc)) c.name = lib.name;
  *text = "# written by w8a16check identify --write-contract (NUMERICS.md 2.4)\n" + notes + ref::format_conventions(c);
  if (notes.find("TIER BREAK") != std::string::npos)
    *why = "the bodies keep different contracts: see the file's comments";
  return true;
}

}  // namespace w8a16::props

namespace w8a16::props {

std::string identify_callable_problem(const CallableIdentifyOptions& o) {
  std::vector<golden::Case> cases;
  std::vector<std::string> sources;
  const golden::Case shape = golden::CaseSpec{}.entry(o.entry).shape(o.m, o.n, o.k).strides(o.k, o.n);
  cases.push_back(shape), sources.push_back("the probes");
  if (o.gemv) {
    golden::Case split = shape;
    split.k = split.a_row_stride = kGemvMaxSplitK;
    split.n = split.c_row_stride = std::min(split.n, kGemvSplitMaxN);
    cases.push_back(split), sources.push_back("the GEMV split probes");
  }
  std::uint32_t m_max = 0;
  for (std::uint32_t m : o.confirm_ms) m_max = std::max(m_max, m);
  if (m_max > 0) {
    golden::Case c = shape;
    c.m = m_max;
    c.k = c.a_row_stride = std::max<std::uint32_t>(o.k, 4 * ref::kKStep);
    cases.push_back(c), sources.push_back("the confirmation");
  }
  return callable_over_limits(cases, sources);
}

BodyVerdict identify_callable(const ProbeLaunch& run, const CallableIdentifyOptions& o) {
  BodyVerdict bv;
  if (const std::string problem = identify_callable_problem(o); !problem.empty()) {
    bv.error = problem;
    return bv;
  }
  bv.gemv = o.gemv;
  bv.body = o.gemv ? device::Body::gemv_strip : device::Body::gemm128_tile;  // names no module's body
  std::vector<IdentifyProbe> probes;
  const golden::Case shape = golden::CaseSpec{}.entry(o.entry).shape(o.m, o.n, o.k).strides(o.k, o.n).seed(o.seed);
  if (const std::string problem = golden::case_problem(shape); !problem.empty()) {
    bv.error = golden::format_case(shape) + ": " + problem;
    return bv;
  }
  std::uint64_t st = o.seed;
  for (golden::Distribution d : identify_distributions()) {
    golden::Case c = shape;
    c.dist = d;
    c.seed = splitmix(&st);
    probes.push_back({c, bv.body, nullptr, std::string(golden::distribution_name(d))});
  }
  if (o.gemv) {
    std::vector<std::vector<std::size_t>> unsplit;
    add_gemv_split_probes(shape, bv.body, o.seed, &probes, &unsplit);
    bv.unsplit = std::move(unsplit);
  }
  std::vector<const IdentifyProbe*> mine;
  for (const IdentifyProbe& p : probes) mine.push_back(&p);
  identify_body(&bv, mine, run, o.threads);
  // The confirmation at the other M, every data class at each M, each case twice.
  golden::Case base = shape;
  if (base.k < 4 * ref::kKStep) base.k = base.a_row_stride = 4 * ref::kKStep;
  std::size_t turn = 0;
  for (std::uint32_t m : o.confirm_ms)
    for (golden::Distribution d : kConfirmData) {
      if (!bv.error.empty() || bv.match.keeps.empty()) break;
      golden::Case c = base;
      c.m = m;
      c.dist = d;
      c.seed = base.seed ^ (0xc0f1ull * (m + 1)) ^ turn;
      ++turn;
      golden::CaseInputs in;
      std::string why;
      if (!golden::case_problem(c).empty() || !golden::regenerate_inputs(c, &in, &why)) {
        bv.error = golden::format_case(c) + ": " + (why.empty() ? golden::case_problem(c) : why);
        break;
      }
      std::vector<std::uint16_t> first, second;
      if (!run(c, in, &first, &bv.error) || !run(c, in, &second, &bv.error)) break;
      confirm_case(&bv, c, in, first, second, o.threads);
    }
  return bv;
}

}  // namespace w8a16::props
