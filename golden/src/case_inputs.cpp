// SPDX-License-Identifier: MIT OR Apache-2.0
// Input generators of saved cases, by version: integer draws mapped to bit patterns, never floats.
#include "w8a16/golden/case_inputs.hpp"

#include <cstring>

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

struct Weighted { int value; unsigned weight; };  // weights of a table sum to 256

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
constexpr Weighted kActivationExponent[] = {{1, 12}, {0, 70}, {-1, 77}, {-2, 50}, {-3, 25},
                                            {-4, 12}, {-5, 5}, {-6, 3}, {-7, 1}, {-8, 1}};
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
    case 0: return 0x00000000u;                                                        // +0
    case 1: return 0x80000000u;                                                        // -0
    case 2: return f32_from_fields(true, static_cast<int>(r.in_range(-17, -10)), r.bits32());  // negative
    case 3: return (r.chance(1, 2) ? 0x80000000u : 0) | (1 + static_cast<std::uint32_t>(r.below(0x7FFFFF)));  // subnormal
    case 4: return r.chance(1, 2) ? 0x7F800000u : 0xFF800000u;                        // +-Inf
    case 5: return r.chance(1, 2) ? 0x7FC00000u : 0xFF800001u;                        // quiet / signalling NaN
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
          a[k] = bf16_from_fields(r.chance(1, 2), static_cast<int>(r.in_range(-100, 100)), static_cast<std::uint32_t>(r.below(128)));
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
        default:
          a[k] = activation_bf16(r);
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
        default:
          w[k] = realistic_e4m3(r);
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
      const int t = offsets[i]; offsets[i] = offsets[j]; offsets[j] = t;
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
        case Distribution::special_scales:
          row[i] = special_scale_bits(r);
          break;
        default:
          row[i] = realistic_scale_bits(r);
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

void generate(const Case& c, CaseInputs* in) {
  in->a_bits.assign(static_cast<std::size_t>(c.m) * c.a_row_stride, kAPaddingBits);
  in->w_e4m3.assign(static_cast<std::size_t>(c.n) * c.k, 0);
  std::vector<std::uint32_t> s_bits(static_cast<std::size_t>((c.n + 127) / 128) * (c.k / 128));
  fill_a(c, in);
  fill_w(c, in);
  fill_s(c, &s_bits);
  if (c.dist == Distribution::specials) sprinkle_specials(c, in);
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

std::uint64_t inputs_digest(const CaseInputs& in) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::uint16_t v : in.a_bits) { fnv1a(&h, static_cast<std::uint8_t>(v)); fnv1a(&h, static_cast<std::uint8_t>(v >> 8)); }
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
      "a_nan", "a_inf", "a_subnormal", "a_neg_zero", "a_max", "w_nan", "w_max", "w_subnormal",
      "w_neg_zero", "s_zero", "s_neg_zero", "s_negative", "s_subnormal", "s_inf", "s_nan"};
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

}  // namespace w8a16::golden
