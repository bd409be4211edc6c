// SPDX-License-Identifier: MIT OR Apache-2.0
// Input generators of saved cases, by version: integer draws mapped to bit patterns, never floats.
#include "w8a16/golden/case_inputs.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "w8a16/golden/case_rng.hpp"

namespace w8a16::golden {
namespace {

// ===== generator version 1 =======================================================================
// Frozen: a change here that alters one byte breaks every saved gen=1 case. Write gen 2 beside it
// instead (case.hpp, the stability rule); the pinned digests in golden/tests catch accidents.
//
// Streams: A row r draws from derive_seed(derive_seed(seed, 1), r), W row n from tag 2, scale row
// from tag 3, so a row's values do not depend on m or n (a smaller case is a corner of a larger
// one with the same seed), and specials are placed from tag 4 after the bulk values.
namespace v1 {

struct Weighted {
  int value;
  unsigned weight;
};  // weights of a table sum to 256

template <std::size_t N>
int draw_weighted(Xoshiro256ss& r, const Weighted (&table)[N]) {
  unsigned u = static_cast<unsigned>(r.below(256));
  for (const Weighted& w : table) {
    if (u < w.weight) return w.value;
    u -= w.weight;
  }
  return table[N - 1].value;
}

// log2 of |x| for x ~ N(0, 1), binned per power of two, in 1/256.
constexpr Weighted kActivationExponent[] = {{1, 12},  {0, 70}, {-1, 77}, {-2, 50}, {-3, 25},
                                            {-4, 12}, {-5, 5}, {-6, 3},  {-7, 1},  {-8, 1}};
// E4M3 exponent fields of weights quantised so that a block's largest lands near 448.
constexpr Weighted kWeightExponentField[] = {{15, 8}, {14, 20}, {13, 40}, {12, 60}, {11, 50}, {10, 35},
                                             {9, 20}, {8, 10},  {7, 4},   {6, 2},   {5, 1},   {4, 1},
                                             {3, 1},  {2, 1},   {1, 1},   {0, 2}};
constexpr std::uint8_t kWeightExtremes[] = {0x7E, 0xFE, 0x01, 0x81, 0x00, 0x80, 0x08, 0x88};

std::uint16_t bf16_from_fields(bool negative, int exponent, std::uint32_t frac7) {
  return static_cast<std::uint16_t>((negative ? 0x8000 : 0) | ((exponent + 127) << 7) | (frac7 & 0x7F));
}

std::uint32_t f32_from_fields(bool negative, int exponent, std::uint32_t frac23) {
  return (negative ? 0x80000000u : 0) | static_cast<std::uint32_t>(exponent + 127) << 23 | (frac23 & 0x7FFFFF);
}

// Activation-like BF16: |N(0, 1)|-shaped exponents, 1 in 512 an outlier up to 2^8, 1 in 128 a zero.
std::uint16_t activation_bf16(Xoshiro256ss& r) {
  if (r.chance(1, 128)) return 0;
  const bool negative = r.chance(1, 2);
  const int e = r.chance(1, 512) ? static_cast<int>(r.in_range(2, 8)) : draw_weighted(r, kActivationExponent);
  return bf16_from_fields(negative, e, static_cast<std::uint32_t>(r.below(128)));
}

// Realistic E4M3: a quantised weight, 1 in 128 one of the extremes (+-448, +-2^-9, +-0, +-2^-6).
std::uint8_t realistic_e4m3(Xoshiro256ss& r) {
  if (r.chance(1, 128)) return kWeightExtremes[r.below(8)];
  const unsigned e = static_cast<unsigned>(draw_weighted(r, kWeightExponentField));
  unsigned f = static_cast<unsigned>(r.below(8));
  if (e == 15 && f == 7) f = 6;  // 0x7F is NaN, not a weight
  return static_cast<std::uint8_t>((r.chance(1, 2) ? 0x80 : 0) | e << 3 | f);
}

// amax / 448 for block maxima between 2^-8 and 2^-1: 2^-17 .. 2^-10, any significand, positive.
std::uint32_t realistic_scale_bits(Xoshiro256ss& r) {
  return f32_from_fields(false, static_cast<int>(r.in_range(-17, -10)), static_cast<std::uint32_t>(r.below(1u << 23)));
}

std::uint32_t special_scale_bits(Xoshiro256ss& r) {
  switch (r.below(8)) {
    case 0: return 0x00000000u;                                                                // +0
    case 1: return 0x80000000u;                                                                // -0
    case 2: return f32_from_fields(true, static_cast<int>(r.in_range(-17, -10)), r.bits32());  // negative
    case 3:
      return (r.chance(1, 2) ? 0x80000000u : 0) | (1 + static_cast<std::uint32_t>(r.below(0x7FFFFF)));  // subnormal
    case 4: return r.chance(1, 2) ? 0x7F800000u : 0xFF800000u;                                          // +-Inf
    case 5: return r.chance(1, 2) ? 0x7FC00000u : 0xFF800001u;  // quiet / signalling NaN
    default: return realistic_scale_bits(r);
  }
}

void fill_a(const Case& c, CaseInputs* in) {
  const std::uint64_t seed_a = derive_seed(c.seed, 1);
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r(derive_seed(seed_a, row));
    std::uint16_t* a = in->a_bits.data() + static_cast<std::size_t>(row) * c.a_row_stride;
    for (std::uint32_t k = 0; k < c.k; ++k) {
      switch (c.dist) {
        case Distribution::wide_exponents:
          a[k] = bf16_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-100, 100)),
                                  static_cast<std::uint32_t>(r.below(128)));
          break;
        case Distribution::cancellation:
          // Pairs (x, x') with x' = x up to its last two significand bits: with W's pairs (w, -w)
          // every k16 window sums near-cancelling products (NUMERICS.md 1.1, rules 2 and 3).
          if (k % 2 == 0) a[k] = activation_bf16(r);
          else a[k] = static_cast<std::uint16_t>(a[k - 1] ^ static_cast<std::uint16_t>(r.below(4)));
          break;
        case Distribution::ones_pow2_scales:
          a[k] = 0x3F80;  // 1.0
          break;
        default: a[k] = activation_bf16(r);
      }
    }
  }
}

void fill_w(const Case& c, CaseInputs* in) {
  const std::uint64_t seed_w = derive_seed(c.seed, 2);
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r(derive_seed(seed_w, n));
    std::uint8_t* w = in->w_e4m3.data() + static_cast<std::size_t>(n) * c.k;
    for (std::uint32_t k = 0; k < c.k; ++k) {
      switch (c.dist) {
        case Distribution::wide_exponents: {
          const std::uint64_t v = r.below(254);  // every code but the two NaNs
          w[k] = static_cast<std::uint8_t>(v < 0x7F ? v : v + 1);
          break;
        }
        case Distribution::cancellation:
          w[k] = k % 2 == 0 ? realistic_e4m3(r) : static_cast<std::uint8_t>(w[k - 1] ^ 0x80);
          break;
        case Distribution::ones_pow2_scales:
          w[k] = 0x38;  // 1.0
          break;
        default: w[k] = realistic_e4m3(r);
      }
    }
  }
}

// ones_pow2_scales: scale row b gets exponents base_b + offset, base_b in [-40, 20]. Up to 20
// steps the offsets are distinct (a random subset of 0..19), so a scale read from the wrong step
// or row changes the sum; beyond, offsets repeat within 0..14. Either way every partial sum
// 128 * sum 2^e is a multiple of 2^(base_b + 7) below 2^(base_b + 7 + 24): exact in FP32.
void fill_ones_pow2_row(Xoshiro256ss& r, std::uint32_t steps, std::uint32_t* row) {
  const int base = static_cast<int>(r.in_range(-40, 20));
  if (steps <= 20) {
    int offsets[20];
    for (int i = 0; i < 20; ++i) offsets[i] = i;
    for (std::uint32_t i = 0; i < steps; ++i) {  // partial Fisher-Yates
      const std::uint32_t j = i + static_cast<std::uint32_t>(r.below(20 - i));
      const int t = offsets[i];
      offsets[i] = offsets[j];
      offsets[j] = t;
      row[i] = f32_from_fields(false, base + offsets[i], 0);
    }
  } else {
    for (std::uint32_t i = 0; i < steps; ++i) row[i] = f32_from_fields(false, base + static_cast<int>(r.below(15)), 0);
  }
}

void fill_s(const Case& c, std::vector<std::uint32_t>* s_bits) {
  const std::uint64_t seed_s = derive_seed(c.seed, 3);
  const std::uint32_t steps = c.k / 128, rows = (c.n + 127) / 128;
  for (std::uint32_t b = 0; b < rows; ++b) {
    Xoshiro256ss r(derive_seed(seed_s, b));
    std::uint32_t* row = s_bits->data() + static_cast<std::size_t>(b) * steps;
    if (c.dist == Distribution::ones_pow2_scales) {
      fill_ones_pow2_row(r, steps, row);
      continue;
    }
    for (std::uint32_t i = 0; i < steps; ++i) {
      switch (c.dist) {
        case Distribution::wide_exponents:
          row[i] = f32_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-60, 60)), r.bits32());
          break;
        case Distribution::pow2_scales:
          row[i] = f32_from_fields(r.chance(1, 8), static_cast<int>(r.in_range(-20, 20)), 0);
          break;
        case Distribution::special_scales: row[i] = special_scale_bits(r); break;
        default: row[i] = realistic_scale_bits(r);
      }
    }
  }
}

// specials: every class at least once in A and in W, then about one more per 256 elements.
constexpr std::uint16_t kASpecials[] = {0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x0001, 0x807F, 0x8000, 0x7F7F, 0xFF7F};
constexpr std::uint8_t kWSpecials[] = {0x7F, 0xFF, 0x7E, 0xFE, 0x80, 0x01, 0x87};

void sprinkle_specials(const Case& c, CaseInputs* in) {
  Xoshiro256ss r(derive_seed(c.seed, 4));
  const std::uint64_t a_count = sizeof kASpecials / sizeof kASpecials[0] + std::uint64_t{c.m} * c.k / 256;
  for (std::uint64_t i = 0; i < a_count; ++i) {
    const std::uint16_t v = i < sizeof kASpecials / 2 ? kASpecials[i] : kASpecials[r.below(sizeof kASpecials / 2)];
    const std::uint64_t row = r.below(c.m), col = r.below(c.k);
    in->a_bits[row * c.a_row_stride + col] = v;
  }
  const std::uint64_t w_count = sizeof kWSpecials + std::uint64_t{c.n} * c.k / 256;
  for (std::uint64_t i = 0; i < w_count; ++i) {
    const std::uint8_t v = i < sizeof kWSpecials ? kWSpecials[i] : kWSpecials[r.below(sizeof kWSpecials)];
    in->w_e4m3[r.below(std::uint64_t{c.n} * c.k)] = v;
  }
}

// ----- distributions added to gen 1 after its first seven -----------------------------------------
// Each is a new name: the seven above keep their bytes (case.hpp, the stability rule). Same
// streams: A row r from tag 1, W row n from tag 2, scale row b from tag 3 (so a smaller case is a
// corner of a larger one), placements over the whole extent from tag 4, per-row placements from
// tags 5 (A), 6 (W) and 7 (S).

Xoshiro256ss row_stream(const Case& c, std::uint64_t tag, std::uint32_t row) {
  return Xoshiro256ss(derive_seed(derive_seed(c.seed, tag), row));
}

// A BF16 with the given sign and exponent; below -126 the subnormal with the same leading bits
// (at least the smallest one).
std::uint16_t bf16_any(bool negative, int exponent, std::uint32_t frac7) {
  if (exponent >= -126) return bf16_from_fields(negative, exponent, frac7);
  const int shift = -126 - exponent;
  std::uint32_t frac = shift >= 8 ? 0 : ((0x80u | (frac7 & 0x7F)) >> shift);
  if (frac == 0) frac = 1;
  return static_cast<std::uint16_t>((negative ? 0x8000u : 0u) | frac);
}
std::uint8_t any_finite_e4m3(Xoshiro256ss& r) {
  const std::uint64_t v = r.below(254);  // every code but the two NaNs
  return static_cast<std::uint8_t>(v < 0x7F ? v : v + 1);
}
// 2^f as E4M3 (f in -6..8, normal), with a sign.
std::uint8_t e4m3_pow2(bool negative, int f) { return static_cast<std::uint8_t>((negative ? 0x80 : 0) | (f + 7) << 3); }

struct Operands {  // the bulk being filled: A rows, W rows, scale bits
  const Case& c;
  CaseInputs* in;
  std::vector<std::uint32_t>* s_bits;
  std::uint32_t steps() const { return c.k / 128; }
  std::uint32_t scale_rows() const { return (c.n + 127) / 128; }
  std::uint16_t* a(std::uint32_t row) { return in->a_bits.data() + static_cast<std::size_t>(row) * c.a_row_stride; }
  std::uint8_t* w(std::uint32_t n) { return in->w_e4m3.data() + static_cast<std::size_t>(n) * c.k; }
  std::uint32_t* s(std::uint32_t b) { return s_bits->data() + static_cast<std::size_t>(b) * steps(); }
};

// near_overflow: A 2^96..2^127 (1 in 10 zero), weights with exponent fields 8..15 (2^1..448),
// scales 2^-8..2^8 of either sign: products near 2^136 and sums of them reach Inf, and Inf - Inf.
// tiny: A 2^-133..2^-110 (BF16 subnormals below -126; 1 in 20 a signed zero), weights with
// exponent fields 0..6 (subnormal to 2^-1), scales 2^-30..2^-5 of either sign: subnormal outputs.
// mid_exponents: A 2^-60..2^60 (1 in 20 zero), every finite E4M3 code, scales 2^-40..2^40 of
// either sign: products over a range where the fold's sums stay mostly finite.
void fill_exponent_regime(Operands o) {
  const Case& c = o.c;
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 1, row);
    std::uint16_t* a = o.a(row);
    for (std::uint32_t k = 0; k < c.k; ++k) {
      switch (c.dist) {
        case Distribution::near_overflow:
          a[k] = r.chance(1, 10) ? 0
                                 : bf16_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(96, 127)),
                                                    static_cast<std::uint32_t>(r.below(128)));
          break;
        case Distribution::tiny:
          a[k] = r.chance(1, 20) ? static_cast<std::uint16_t>(r.chance(1, 2) ? 0x8000 : 0)
                                 : bf16_any(r.chance(1, 2), static_cast<int>(r.in_range(-133, -110)),
                                            static_cast<std::uint32_t>(r.below(128)));
          break;
        default:  // mid_exponents
          a[k] = r.chance(1, 20) ? 0
                                 : bf16_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-60, 60)),
                                                    static_cast<std::uint32_t>(r.below(128)));
      }
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 2, n);
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; ++k) {
      switch (c.dist) {
        case Distribution::near_overflow: {
          const auto e = static_cast<std::uint32_t>(r.in_range(8, 15));
          const auto f = static_cast<std::uint32_t>(r.below(e == 15 ? 7 : 8));  // 0x7F is NaN
          w[k] = static_cast<std::uint8_t>((r.chance(1, 2) ? 0x80 : 0) | e << 3 | f);
          break;
        }
        case Distribution::tiny:
          w[k] = static_cast<std::uint8_t>((r.chance(1, 2) ? 0x80 : 0) |
                                           static_cast<std::uint32_t>(r.in_range(0, 6)) << 3 |
                                           static_cast<std::uint32_t>(r.below(8)));
          break;
        default: w[k] = any_finite_e4m3(r);
      }
    }
  }
  const int lo = c.dist == Distribution::near_overflow ? -8 : c.dist == Distribution::tiny ? -30 : -40;
  const int hi = c.dist == Distribution::near_overflow ? 8 : c.dist == Distribution::tiny ? -5 : 40;
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 3, b);
    for (std::uint32_t i = 0; i < o.steps(); ++i)
      o.s(b)[i] = f32_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(lo, hi)), r.bits32());
  }
}

// cancellation_pairs: pairs (k, k+1) of A equal or one ulp apart against weights (w, -w) seven
// times in eight, so each pair's products cancel to nothing or to a few bits, and 1 pair in 16 a
// large term (2^4..2^10) that the small ones truncate against; scales 2^-8..2^8 of either sign.
void fill_cancellation_pairs(Operands o) {
  const Case& c = o.c;
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 1, row);
    std::uint16_t* a = o.a(row);
    for (std::uint32_t k = 0; k < c.k; k += 2) {
      const std::uint16_t x = r.chance(1, 16) ? bf16_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(4, 10)),
                                                                 static_cast<std::uint32_t>(r.below(128)))
                                              : activation_bf16(r);
      a[k] = x;
      a[k + 1] = r.chance(1, 2) ? x : static_cast<std::uint16_t>(x ^ 1u);
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 2, n);
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; k += 2) {
      w[k] = realistic_e4m3(r);
      w[k + 1] = r.chance(7, 8) ? static_cast<std::uint8_t>(w[k] ^ 0x80) : realistic_e4m3(r);
    }
  }
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 3, b);
    for (std::uint32_t i = 0; i < o.steps(); ++i)
      o.s(b)[i] = f32_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-8, 8)), r.bits32());
  }
}

// The activation_like bulk (the same bytes activation_like draws for this seed).
void fill_activation_bulk(Operands o) {
  Case base = o.c;
  base.dist = Distribution::activation_like;
  fill_a(base, o.in);
  fill_w(base, o.in);
  fill_s(base, o.s_bits);
}

// row_specials: the activation_like bulk, then per A row: 1 row in 10 all signed zeros (mixed
// signs: the MMA's +0 rule, NUMERICS.md 1.1), else each element a special with probability 2/k
// (about two per row): quiet and signalling NaNs of both signs, +-Inf, subnormals, -0, +0, +-max;
// per W row each code a special with probability 2/k: NaN 0x7F/0xFF, -0, +-448, 0, +-2^-9; per
// scale row each scale a special with probability 1/12: +-0, -1, -120, subnormals of both signs,
// +-Inf, quiet and signalling NaNs, the largest finite FP32.
constexpr std::uint16_t kRowSpecialsA[] = {0x7FC0, 0xFFC1, 0x7F81, 0x7F80, 0xFF80, 0x0001,
                                           0x8035, 0x007F, 0x8000, 0x0000, 0x7F7F, 0xFF7F};
constexpr std::uint8_t kRowSpecialsW[] = {0x7F, 0xFF, 0x80, 0x7E, 0xFE, 0x00, 0x01, 0x81};
constexpr std::uint32_t kRowSpecialsS[] = {0x00000000u, 0x80000000u, 0xBF800000u, 0xC2F00000u, 0x00000001u,
                                           0x007FFFFFu, 0x80000005u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                           0xFFC00001u, 0x7F800001u, 0x7F7FFFFFu};
void fill_row_specials(Operands o) {
  const Case& c = o.c;
  fill_activation_bulk(o);
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 5, row);
    std::uint16_t* a = o.a(row);
    const bool zero_row = r.chance(1, 10);
    for (std::uint32_t k = 0; k < c.k; ++k) {
      if (zero_row) a[k] = static_cast<std::uint16_t>(r.chance(1, 2) ? 0x8000 : 0);
      else if (r.chance(2, c.k)) a[k] = kRowSpecialsA[r.below(std::size(kRowSpecialsA))];
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 6, n);
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; ++k)
      if (r.chance(2, c.k)) w[k] = kRowSpecialsW[r.below(std::size(kRowSpecialsW))];
  }
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 7, b);
    for (std::uint32_t i = 0; i < o.steps(); ++i)
      if (r.chance(1, 12)) o.s(b)[i] = kRowSpecialsS[r.below(std::size(kRowSpecialsS))];
  }
}

// fold_ties: the fold's rounding (NUMERICS.md 2.1, acc = fma.rn(p, S, acc): rounded once) decides
// every output. Steps are paired (s, s + d), d = 4 from 8 steps on (so that the scalar GEMV's two
// chunks of a pair are the same lane's, reference/gemv.hpp), else d = 1; the lead steps are the s
// with floor(s / d) even and s + d < steps. Row m takes one pair (t, t + d) and an exponent e:
// A[m][128t] = 2^e, A[m][128t + 1] = 2^(e-8), A[m][128(t+d)] = 2^e, A[m][128(t+d) + 1] = 2^(e-12),
// one sign for the row, A at offsets 0 and 1 of every other step zero, the rest of A any
// activation. W[n][128s] = W[n][128s + 1] = +-2^f for every step s, every other weight a signed
// zero: so p_t = 2^(e+f) (1 + 2^-8) and p_(t+d) = 2^(e+f) (1 + 2^-12), exactly, and every other
// step's partial is +0. Scales: S[t] = +-2^g, S[t+d] = S[t] (1 - 2^-12 + 2^-24) 2^-24 (bits
// 0x7FF001 below the exponent), so that p_(t+d) S[t+d] = 2^(E-24) (1 + 2^-36), E = e + f + g, a
// hair above half an FP32 ulp of acc = 2^E (1 + 2^-8), which itself is a BF16 midpoint. Rounded
// once the sum goes up, to 2^E (1 + 2^-8 + 2^-23), and the BF16 output to 2^E (1 + 2^-7);
// rounded twice (the product first) it is an FP32 tie, kept at 2^E (1 + 2^-8), and the BF16 tie
// goes to 2^E. Folding the pair in the other order rounds twice as well. One step (k = 128): each
// row's A[m][0..1] = 2^e, 2^(e-8), every output a BF16 tie.
std::uint32_t fold_pair_offset(std::uint32_t steps) { return steps >= 8 ? 4 : 1; }
bool fold_lead(std::uint32_t s, std::uint32_t steps) {
  const std::uint32_t d = fold_pair_offset(steps);
  return (s / d) % 2 == 0 && s + d < steps;
}
void fill_fold_ties(Operands o) {
  const Case& c = o.c;
  const std::uint32_t steps = o.steps(), d = fold_pair_offset(steps);
  std::vector<std::uint32_t> leads;
  for (std::uint32_t s = 0; s < steps; ++s)
    if (fold_lead(s, steps)) leads.push_back(s);
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 1, row);
    const bool neg = r.chance(1, 2);
    const int e = static_cast<int>(r.in_range(-12, 12));
    const std::uint32_t t = leads.empty() ? 0 : leads[r.below(leads.size())];
    std::uint16_t* a = o.a(row);
    for (std::uint32_t k = 0; k < c.k; ++k) a[k] = k % 128 < 2 ? 0 : activation_bf16(r);
    a[128 * t] = bf16_from_fields(neg, e, 0);
    a[128 * t + 1] = bf16_from_fields(neg, e - 8, 0);
    if (!leads.empty()) {
      a[128 * (t + d)] = bf16_from_fields(neg, e, 0);
      a[128 * (t + d) + 1] = bf16_from_fields(neg, e - 12, 0);
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 2, n);
    const std::uint8_t code = e4m3_pow2(r.chance(1, 2), static_cast<int>(r.in_range(-6, 8)));
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; ++k)
      w[k] = k % 128 < 2 ? code : static_cast<std::uint8_t>(r.chance(1, 2) ? 0x80 : 0);
  }
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 3, b);
    std::uint32_t* s = o.s(b);
    for (std::uint32_t i = 0; i < steps; ++i)  // steps without a pair: any power of two (their p is +0)
      s[i] = f32_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-10, 10)), 0);
    for (std::uint32_t t : leads) {
      const bool neg = r.chance(1, 2);
      const int g = static_cast<int>(r.in_range(-10, 10));
      s[t] = f32_from_fields(neg, g, 0);
      s[t + d] = (neg ? 0x80000000u : 0u) | static_cast<std::uint32_t>(g - 25 + 127) << 23 | 0x7FF001u;
    }
  }
}

// zero_signs: the sign of a zero result. W pairs (w, -w) (k even, k + 1); three A rows in four
// all negative with A[k + 1] = A[k], so every product pair cancels exactly and every step's
// partial is +0 (NUMERICS.md 1.1: +0 for any zero result), the fourth with A[k + 1] one to three
// ulps from A[k] (small residues). Every scale is -0 (1 in 4) or negative: acc = fma(+0, S, acc)
// adds -0 at every step, so the output is +0 (0x0000) from acc = +0 and -0 (0x8000) from acc = -0.
void fill_zero_signs(Operands o) {
  const Case& c = o.c;
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 1, row);
    const bool exact = !r.chance(1, 4);
    std::uint16_t* a = o.a(row);
    for (std::uint32_t k = 0; k < c.k; k += 2) {
      const auto x = static_cast<std::uint16_t>(activation_bf16(r) | 0x8000u);
      a[k] = x;
      a[k + 1] = exact ? x : static_cast<std::uint16_t>(x ^ (1u + static_cast<std::uint32_t>(r.below(3))));
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 2, n);
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; k += 2) {
      w[k] = realistic_e4m3(r);
      w[k + 1] = static_cast<std::uint8_t>(w[k] ^ 0x80);
    }
  }
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 3, b);
    for (std::uint32_t i = 0; i < o.steps(); ++i)
      o.s(b)[i] = r.chance(1, 4) ? 0x80000000u
                                 : f32_from_fields(true, static_cast<int>(r.in_range(-17, -10)), r.bits32());
  }
}

// cancelling_steps: every fold point rounds. Steps go in groups of four: +P, small, -P, small.
// Row m has a large value L_m = +-2^(e+kCancellingBig) (random significand) at offset 0 of the +P
// and -P steps, alone in their first k16 window, and small activations around 2^e everywhere from
// their second window on and in the small steps; W[n][128s] = +-2^f (f in 0..4) at the +P steps and
// its negation at the -P steps, realistic weights elsewhere. A scale row has one exponent g: the +P
// and -P steps of a group share the scale +-2^g, so that their products cancel exactly, and the
// small steps have scales of any significand at 2^(g-1)..2^(g+1), so that P stays about 2^16 times
// the small steps' contributions in every group. Inside a +-P step the seven windows
// after the first meet P in the MMA chain (NUMERICS.md 2.1), each truncated on P's grid. acc swings
// between about P = L_m 2^f S, where the
// FP32 fold keeps only the small steps' bits above ulp(P), and the small remainder, where the -P
// step cancels P to within its rounding. A group of four is formed only where its -P step exists
// (steps % 4 = 1 or 2 leave the last one or two steps small, 2 steps have no group), so the
// output is a remainder carrying the rounding of every fold point: folding the steps in another
// order, as a tree, or with a cut moved changes most outputs (properties/tests/test_distribution_power.cpp).
constexpr int kCancellingBig = 30;
enum class StepRole { plus, minus, small };
StepRole cancelling_role(std::uint32_t s, std::uint32_t steps) {
  if (s % 4 == 0 && s + 2 < steps) return StepRole::plus;
  if (s % 4 == 2) return StepRole::minus;
  return StepRole::small;
}
void fill_cancelling_steps(Operands o) {
  const Case& c = o.c;
  const std::uint32_t steps = o.steps();
  for (std::uint32_t row = 0; row < c.m; ++row) {
    Xoshiro256ss r = row_stream(c, 1, row);
    const int e = static_cast<int>(r.in_range(-20, 20));
    const std::uint16_t big = bf16_from_fields(r.chance(1, 2), e + kCancellingBig,
                                               static_cast<std::uint32_t>(r.below(128)));
    std::uint16_t* a = o.a(row);
    for (std::uint32_t k = 0; k < c.k; ++k) {
      if (cancelling_role(k / 128, steps) != StepRole::small && k % 128 < 16) a[k] = k % 128 == 0 ? big : 0;
      else if (r.chance(1, 64)) a[k] = 0;
      else
        a[k] = bf16_from_fields(r.chance(1, 2), e + static_cast<int>(r.in_range(-8, 1)),
                                static_cast<std::uint32_t>(r.below(128)));
    }
  }
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 2, n);
    const bool neg = r.chance(1, 2);
    const int f = static_cast<int>(r.in_range(0, 4));
    std::uint8_t* w = o.w(n);
    for (std::uint32_t k = 0; k < c.k; ++k) {
      const StepRole role = cancelling_role(k / 128, steps);
      w[k] = role == StepRole::small || k % 128 != 0 ? realistic_e4m3(r)
                                                     : e4m3_pow2(neg != (role == StepRole::minus), f);
    }
  }
  for (std::uint32_t b = 0; b < o.scale_rows(); ++b) {
    Xoshiro256ss r = row_stream(c, 3, b);
    std::uint32_t* s = o.s(b);
    const int g = static_cast<int>(r.in_range(-10, 10));
    for (std::uint32_t i = 0; i < steps; ++i) {
      switch (cancelling_role(i, steps)) {
        case StepRole::plus: s[i] = f32_from_fields(r.chance(1, 2), g, 0); break;
        case StepRole::minus: s[i] = s[i - 2]; break;
        case StepRole::small:
          s[i] = f32_from_fields(r.chance(1, 2), g + static_cast<int>(r.in_range(-1, 1)), r.bits32());
      }
    }
  }
}

// every_special: the activation_like bulk with exactly one element of each special class
// (case_inputs.hpp SpecialClass) at distinct places: A NaN, Inf, subnormal, -0, max; W NaN, max
// (448), subnormal, -0; and, as far as there are scales (ceil(n/128) (k/128) of them), one scale
// each of +0, -0, negative, subnormal, Inf, NaN. Few outputs become NaN or Inf, and every case
// with six scales or more shows all fifteen classes: the campaign's coverage cases use it.
void fill_every_special(Operands o) {
  const Case& c = o.c;
  fill_activation_bulk(o);
  Xoshiro256ss r(derive_seed(c.seed, 4));
  static constexpr std::uint16_t kA[] = {0x7FC0, 0x7F80, 0x0001, 0x8000, 0x7F7F};
  static constexpr std::uint8_t kW[] = {0x7F, 0x7E, 0x01, 0x80};
  std::vector<std::uint64_t> used;
  auto place = [&](std::uint64_t extent) {  // a position not used yet (extent >= 128 > the count)
    std::uint64_t at;
    do at = r.below(extent);
    while (std::find(used.begin(), used.end(), at) != used.end());
    used.push_back(at);
    return at;
  };
  for (std::uint16_t v : kA) {
    const std::uint64_t at = place(std::uint64_t{c.m} * c.k);
    o.a(static_cast<std::uint32_t>(at / c.k))[at % c.k] = v;
  }
  used.clear();
  for (std::uint8_t v : kW) o.in->w_e4m3[place(std::uint64_t{c.n} * c.k)] = v;
  used.clear();
  const std::uint64_t slots = std::uint64_t{o.scale_rows()} * o.steps();
  const std::uint32_t kS[] = {0x00000000u,
                              0x80000000u,
                              f32_from_fields(true, static_cast<int>(r.in_range(-17, -10)), r.bits32()),
                              1u + static_cast<std::uint32_t>(r.below(0x7FFFFF)),
                              r.chance(1, 2) ? 0x7F800000u : 0xFF800000u,
                              0x7FC00000u};
  for (std::size_t i = 0; i < std::size(kS) && i < slots; ++i) (*o.s_bits)[place(slots)] = kS[i];
}

// nan_codes: the activation_like bulk, then in one W row in eight one code at a random k becomes a
// NaN code, 0x7F or 0xFF (NUMERICS.md 1.2: cvt gives NaN for both). Every output of such a column is
// NaN (1.1, rule 7), so a kernel whose fast integer decode turns a NaN code into a number changes m
// outputs per such column; and a kernel round that holds one decodes its other, finite codes through
// the kernel's NaN path too, whose outputs must be exact all the same.
void fill_nan_codes(Operands o) {
  const Case& c = o.c;
  fill_activation_bulk(o);
  for (std::uint32_t n = 0; n < c.n; ++n) {
    Xoshiro256ss r = row_stream(c, 6, n);
    if (!r.chance(1, 8)) continue;
    const std::uint64_t k = r.below(c.k);
    o.w(n)[k] = r.chance(1, 2) ? 0x7F : 0xFF;
  }
}

// lone_specials: the activation_like bulk (which holds no NaN, no Inf and no NaN code), then one
// special operand, its kind and 128-K step named by the seed's low four bits (case_inputs.hpp);
// draws from tag 4, in this order: the kind when drawn, the step when drawn, then the K inside the
// step, the row (A's row, W's row or the scale row) and the value. A NaN code makes every output of
// its column NaN, a NaN activation every output of its row, an Inf or NaN scale every output of its
// 128 columns (NUMERICS.md 1.1 rule 7, 1.2, 2.1), so a body that misses the one special at that
// step (a scan, probe or decode that loses an early or a late pass over a long K range) changes M
// or N outputs or more.
constexpr std::uint8_t kLoneW[] = {0x7F, 0xFF};
constexpr std::uint16_t kLoneA[] = {0x7FC0, 0xFFC1, 0x7F81, 0xFFFF};  // quiet and signalling, both signs
constexpr std::uint32_t kLoneS[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFF800001u};
void fill_lone_specials(Operands o) {
  const Case& c = o.c;
  fill_activation_bulk(o);
  Xoshiro256ss r(derive_seed(c.seed, 4));
  const auto kind_bits = static_cast<unsigned>(c.seed & 3), step_bits = static_cast<unsigned>((c.seed >> 2) & 3);
  const unsigned kind = kind_bits == 3 ? static_cast<unsigned>(r.below(3)) : kind_bits;
  const std::uint32_t steps = o.steps();
  std::uint32_t step = 0;
  switch (step_bits) {
    case 0: step = 0; break;
    case 1: step = steps >= 3 ? 1 + static_cast<std::uint32_t>(r.below(steps - 2)) : steps / 2; break;
    case 2: step = steps - 1; break;
    default: step = static_cast<std::uint32_t>(r.below(steps));
  }
  const std::uint32_t k = 128 * step + static_cast<std::uint32_t>(r.below(128));
  switch (kind) {
    case 0: {
      const auto n = static_cast<std::uint32_t>(r.below(c.n));
      o.w(n)[k] = kLoneW[r.below(std::size(kLoneW))];
      break;
    }
    case 1: {
      const auto row = static_cast<std::uint32_t>(r.below(c.m));
      o.a(row)[k] = kLoneA[r.below(std::size(kLoneA))];
      break;
    }
    default: {
      const auto b = static_cast<std::uint32_t>(r.below(o.scale_rows()));
      o.s(b)[step] = kLoneS[r.below(std::size(kLoneS))];
    }
  }
}

void generate(const Case& c, CaseInputs* in) {
  in->a_bits.assign(static_cast<std::size_t>(c.m) * c.a_row_stride, kAPaddingBits);
  in->w_e4m3.assign(static_cast<std::size_t>(c.n) * c.k, 0);
  std::vector<std::uint32_t> s_bits(static_cast<std::size_t>((c.n + 127) / 128) * (c.k / 128));
  const Operands o{c, in, &s_bits};
  switch (c.dist) {
    case Distribution::near_overflow:
    case Distribution::tiny:
    case Distribution::mid_exponents: fill_exponent_regime(o); break;
    case Distribution::cancellation_pairs: fill_cancellation_pairs(o); break;
    case Distribution::row_specials: fill_row_specials(o); break;
    case Distribution::fold_ties: fill_fold_ties(o); break;
    case Distribution::zero_signs: fill_zero_signs(o); break;
    case Distribution::cancelling_steps: fill_cancelling_steps(o); break;
    case Distribution::every_special: fill_every_special(o); break;
    case Distribution::nan_codes: fill_nan_codes(o); break;
    case Distribution::lone_specials: fill_lone_specials(o); break;
    default:  // the first seven, exactly as they were written
      fill_a(c, in);
      fill_w(c, in);
      fill_s(c, &s_bits);
      if (c.dist == Distribution::specials) sprinkle_specials(c, in);
  }
  in->s_f32.resize(s_bits.size());
  if (!s_bits.empty()) std::memcpy(in->s_f32.data(), s_bits.data(), s_bits.size() * sizeof(float));
}

}  // namespace v1

void fnv1a(std::uint64_t* h, std::uint8_t byte) {
  *h ^= byte;
  *h *= 0x100000001B3ull;
}

}  // namespace

bool regenerate_inputs(const Case& c, CaseInputs* out, std::string* error) {
  const std::string problem = case_problem(c);
  if (!problem.empty()) {
    *error = problem;
    return false;
  }
  CaseInputs in;
  switch (c.gen) {
    case 1: v1::generate(c, &in); break;
    default:  // unreachable: case_problem() rejects unknown versions
      *error = "generator version " + std::to_string(c.gen) + " has no implementation";
      return false;
  }
  *out = std::move(in);
  return true;
}

std::vector<std::uint16_t> sentinel_output(const Case& c) {
  return std::vector<std::uint16_t>(static_cast<std::size_t>(c.m) * c.c_row_stride, kOutputSentinelBits);
}

std::vector<std::uint16_t> guarded_sentinel_output(const Case& c) {
  return std::vector<std::uint16_t>(static_cast<std::size_t>(c.m + kOutputGuardRows) * c.c_row_stride,
                                    kOutputSentinelBits);
}

std::uint64_t inputs_digest(const CaseInputs& in) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::uint16_t v : in.a_bits) {
    fnv1a(&h, static_cast<std::uint8_t>(v));
    fnv1a(&h, static_cast<std::uint8_t>(v >> 8));
  }
  for (std::uint8_t v : in.w_e4m3) fnv1a(&h, v);
  for (float f : in.s_f32) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    for (int i = 0; i < 4; ++i) fnv1a(&h, static_cast<std::uint8_t>(b >> (8 * i)));
  }
  return h;
}

std::string_view special_class_name(int bit_index) {
  static constexpr std::string_view kNames[kSpecialClassCount] = {
      "a_nan",      "a_inf",  "a_subnormal", "a_neg_zero", "a_max",       "w_nan", "w_max", "w_subnormal",
      "w_neg_zero", "s_zero", "s_neg_zero",  "s_negative", "s_subnormal", "s_inf", "s_nan"};
  return bit_index >= 0 && bit_index < kSpecialClassCount ? kNames[bit_index] : "?";
}

std::uint32_t special_classes(const Case& c, const CaseInputs& in) {
  std::uint32_t seen = 0;
  for (std::uint32_t row = 0; row < c.m; ++row)
    for (std::uint32_t k = 0; k < c.k; ++k) {
      const std::uint16_t v = in.a_bits[static_cast<std::size_t>(row) * c.a_row_stride + k];
      const std::uint16_t mag = v & 0x7FFF;
      if (mag > 0x7F80) seen |= kSpecialANan;
      else if (mag == 0x7F80) seen |= kSpecialAInf;
      else if (mag == 0x7F7F) seen |= kSpecialAMax;
      else if (mag != 0 && mag < 0x0080) seen |= kSpecialASubnormal;
      if (v == 0x8000) seen |= kSpecialANegZero;
    }
  for (std::uint8_t w : in.w_e4m3) {
    const std::uint8_t mag = w & 0x7F;
    if (mag == 0x7F) seen |= kSpecialWNan;
    else if (mag == 0x7E) seen |= kSpecialWMax;
    else if (mag != 0 && mag < 0x08) seen |= kSpecialWSubnormal;
    if (w == 0x80) seen |= kSpecialWNegZero;
  }
  for (float f : in.s_f32) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    const std::uint32_t mag = b & 0x7FFFFFFFu;
    if (mag > 0x7F800000u) seen |= kSpecialSNan;
    else if (mag == 0x7F800000u) seen |= kSpecialSInf;
    else if (b == 0) seen |= kSpecialSZero;
    else if (b == 0x80000000u) seen |= kSpecialSNegZero;
    else {
      if (mag < 0x00800000u) seen |= kSpecialSSubnormal;
      if (b >> 31) seen |= kSpecialSNegative;
    }
  }
  return seen;
}

std::string_view lone_kind_name(LoneKind k) {
  switch (k) {
    case LoneKind::w_nan: return "w_nan";
    case LoneKind::a_nan: return "a_nan";
    case LoneKind::s_inf_nan: return "s_inf_nan";
  }
  return "?";
}

std::string_view lone_step_name(LoneStep s) {
  switch (s) {
    case LoneStep::first: return "first";
    case LoneStep::middle: return "middle";
    case LoneStep::last: return "last";
  }
  return "?";
}

std::uint64_t lone_specials_seed(std::uint64_t seed, LoneKind kind, LoneStep step) {
  return (seed & ~std::uint64_t{0xF}) | static_cast<std::uint64_t>(step) << 2 | static_cast<std::uint64_t>(kind);
}

LoneSpecial find_lone_special(const Case& c, const CaseInputs& in) {
  LoneSpecial one;
  int count = 0;
  bool other = false;  // a special of no LoneKind (an Inf activation)
  auto seen = [&](LoneKind kind, std::uint32_t step) {
    if (++count == 1) one.kind = kind, one.step = step;
  };
  for (std::uint32_t row = 0; row < c.m; ++row)
    for (std::uint32_t k = 0; k < c.k; ++k) {
      const std::uint16_t mag = in.a_bits[static_cast<std::size_t>(row) * c.a_row_stride + k] & 0x7FFF;
      if (mag > 0x7F80) seen(LoneKind::a_nan, k / 128);
      else if (mag == 0x7F80) ++count, other = true;
    }
  for (std::uint32_t n = 0; n < c.n; ++n)
    for (std::uint32_t k = 0; k < c.k; ++k)
      if ((in.w_e4m3[static_cast<std::size_t>(n) * c.k + k] & 0x7F) == 0x7F) seen(LoneKind::w_nan, k / 128);
  const std::uint32_t steps = c.k / 128;
  for (std::size_t i = 0; i < in.s_f32.size(); ++i) {
    std::uint32_t b;
    std::memcpy(&b, &in.s_f32[i], sizeof b);
    if ((b & 0x7FFFFFFFu) >= 0x7F800000u) seen(LoneKind::s_inf_nan, static_cast<std::uint32_t>(i % steps));
  }
  if (count != 1 || other) return LoneSpecial{};
  one.found = true;
  one.where = one.step == 0 ? LoneStep::first : one.step + 1 == steps ? LoneStep::last : LoneStep::middle;
  return one;
}

}  // namespace w8a16::golden
