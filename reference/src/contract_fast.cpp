// SPDX-License-Identifier: MIT OR Apache-2.0
// The canonical fold (NUMERICS.md 2.1, sm90) and the GEMV order (2.2) for a whole output, 16
// output columns at a time in SIMD lanes. Checked byte for byte against the model (contract.cpp,
// mma.cpp) in reference/tests/test_fast_path_equals_model.cpp.
//
// Why the canonical path equals the model (mma.cpp, rules of NUMERICS.md 1.1):
//  * A BF16 operand a is (sign, exponent field ea, integer significand sa with 7 fraction bits; a
//    subnormal has ea = -126 and no hidden bit), exactly as mma.cpp unpacks it. A weight is first
//    decoded to BF16 (the model does the same), whose significand is sb = (8 + f) << 4 for the
//    E4M3 fraction f: only its top 3 fraction bits can be set. Writing sb4 = 8 + f, the product
//    a*b = sa*sb4 * 2^(ea + eb - 10), and its exponent is ea + eb, the model's (rule 1).
//  * Rule 2: E is the max of ea + eb over nonzero products and of c's field if c != 0. Zero
//    operands carry the exponent kZeroExp, far below any real one, so they never win the max.
//    E is clamped to at least the sm90 floor (mma.hpp, kSm90MinAlignExp = -133) as mma.cpp does,
//    although with E4M3 weights the clamp never changes a result: E falls below a floor F <= -126
//    only when c = 0 and every product has ea + eb < F; a product's lowest bit then weighs at
//    least 2^(-135 - 10) (E4M3 significands have 4 bits), which lies on both grids 2^(E - 25) and
//    2^(F - 25), so both sum the same exact value and round it alike. An all-zero step still sums
//    to 0 (+0). A policy with a floor above -126 goes to the model.
//  * Rule 3: on the grid 2^(E - 25) a product is sa*sb4 * 2^(15 - d), d = E - (ea + eb) >= 0;
//    the model's truncation toward zero of the magnitude is floor((sa*sb4 << 15) / 2^d) =
//    (sa*sb4 << 15) >> d, and any d >= 27 gives 0, so d is clamped to 31. c = csig * 2^(ec - 23)
//    becomes (csig << 2) >> (E - ec) the same way.
//  * Rule 4: sa*sb4 <= 255 * 15, so a product term is at most 3825 * 2^15 and a c term below
//    2^26: 16 * 3825 * 2^15 + 2^26 < 2^31, so an int32 holds the exact sum.
//  * Rules 5, 6: the sum's magnitude is normalised once with its bit length, truncated to 24 bits
//    (or to the 2^-149 grid below 2^-126), and a zero result is +0: mma.cpp's round_rz_to_f32.
//    The result is carried to the next MMA as (sign, field, significand), the same fields
//    unpack_f32 would take from its bits.
//  * Rule 7 and overflow: a step whose A slice holds NaN/Inf, whose weights hold a NaN code, or in
//    which some sum reaches 2^128, is recomputed for that output by the model
//    (canonical_step_partial_bits). The fold acc = fma(p, S, acc) is the IEEE fused multiply-add
//    per lane, as in f32_fma_rne_bits; only a NaN's payload can differ from the model's
//    0x7FFFFFFF, a NaN stays NaN through every later FMA, and the final BF16 rounding (the
//    model's own function) maps every NaN to 0x7FFF.
//  * Lanes are independent output columns; each output is computed once, by one thread, so the
//    bytes do not depend on the thread count.
#include "contract_fast.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/gemv.hpp"
#include "w8a16/reference/parallel.hpp"

// One copy of each hot loop per x86-64 level, picked at load time; other targets get the default.
// The tests also build this file with one fixed level each (W8A16_SIMD_ONE_TARGET, or
// W8A16_SIMD_BASELINE for the plain default) so that every copy is checked, not only the one
// the test machine picks.
#if defined(W8A16_SIMD_ONE_TARGET)
#define W8A16_SIMD_CLONES __attribute__((target(W8A16_SIMD_ONE_TARGET)))
#elif defined(W8A16_SIMD_BASELINE)
#define W8A16_SIMD_CLONES
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define W8A16_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define W8A16_SIMD_CLONES
#endif
#define W8A16_INLINE inline __attribute__((always_inline))

// The vector helpers are always inlined: no vector crosses a call boundary, so GCC's note that a
// 64-byte vector return would change the ABI without AVX-512 does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace w8a16::ref::fast {
namespace {

constexpr int kLanes = 16;
typedef std::int32_t VecI __attribute__((vector_size(4 * kLanes)));
typedef std::uint32_t VecU __attribute__((vector_size(4 * kLanes)));  // for shifts that may wrap
typedef float VecF __attribute__((vector_size(4 * kLanes)));
typedef std::uint8_t VecU8 __attribute__((vector_size(kLanes)));

// Exponents of zero operands and of a zero accumulator (rule 2: they take no part). A product
// with a zero factor has te <= -4096 + 135; real products have te >= -135. A zero accumulator
// sits between the two, so E >= kZeroAccExp and every shift count E - te is >= 0.
constexpr std::int32_t kZeroExp = -4096;
constexpr std::int32_t kZeroAccExp = -2048;
constexpr std::uint32_t kRowTile = 64;                         // rows of one task (its accumulators)
constexpr std::size_t kUnpackElements = std::size_t{1} << 22;  // A elements unpacked at a time (48 MiB)

// Lane-wise mask ? a : b, for masks of all ones or all zeros (what vector comparisons give). Written
// with bitwise operations because GCC lowers some vector ?: forms lane by lane.
W8A16_INLINE VecI select(VecI mask, VecI a, VecI b) { return (a & mask) | (b & ~mask); }
W8A16_INLINE VecI vmin(VecI a, VecI b) { return select(a < b, a, b); }
W8A16_INLINE VecI vmax(VecI a, VecI b) { return select(a > b, a, b); }
W8A16_INLINE VecI clamp_shift(VecI s) { return vmin(vmax(s, VecI{} + 0), VecI{} + 31); }

// A BF16 operand's fields; sign as 0 or -1.
struct Fields {
  std::int32_t exp, sig, sign;
};
Fields bf16_fields(std::uint16_t b) {
  const std::int32_t field = (b >> 7) & 0xFF, frac = b & 0x7F, sign = (b & 0x8000) ? -1 : 0;
  if ((b & 0x7FFF) == 0) return {kZeroExp, 0, 0};
  if (field == 0) return {-126, frac, sign};
  return {field - 127, 0x80 | frac, sign};
}

// 16 E4M3 codes -> the fields of their BF16 decodes (the model decodes to BF16 first), with the
// significand as sb4 = 8 + (top 3 BF16 fraction bits), already shifted left by 15 (rule 3):
//   normal    e = 1..15:  1.fff * 2^(e-7)  -> sb4 = 8 + f,  exponent e - 7
//   subnormal e = 0:      0.fff * 2^-6     -> normalised: f << lz with lz = 3, 2, 1 for f = 1,
//                                             2..3, 4..7, exponent -6 - lz
// (BF16 has the range to make every E4M3 subnormal a normal.) NaN codes are flagged, their fields
// unused. The decode is checked against the table of e4m3fn.hpp through the model in the tests.
struct WeightFields {
  VecI exp, sig15, sign, nan;
};
W8A16_INLINE WeightFields decode_e4m3_lanes(VecI code) {
  const VecI e = (code >> 3) & 15, f = code & 7;
  const VecI lz = 3 + (f >= 2) + (f >= 4);  // each true comparison is -1
  const VecI normal = e != 0, zero = (code & 0x7F) == 0;
  WeightFields w;
  w.exp = select(zero, VecI{} + kZeroExp, select(normal, e - 7, -6 - lz));
  w.sig15 = select(normal, f + 8, f << lz) << 15 & ~zero;
  w.sign = -(code >> 7) & ~zero;
  w.nan = (code & 0x7F) == 0x7F;
  return w;
}

// 16 E4M3 codes -> FP32 bits of their exact values (the GEMV's weight operand): the fields of
// decode_e4m3_lanes written as an FP32 pattern, 1.fff * 2^exp; zeros keep their sign (0x80 is
// -0); NaN codes give a quiet NaN (its payload never reaches an output: NaN -> BF16 0x7FFF).
W8A16_INLINE VecI decode_e4m3_f32_bits_lanes(VecI code) {
  const WeightFields w = decode_e4m3_lanes(code);
  const VecI sign = (code & 0x80) << 24;
  const VecI finite = ((w.exp + 127) << 23) | (((w.sig15 >> 15) - 8) << 20);
  const VecI zero = (code & 0x7F) == 0;
  return sign | select(w.nan, VecI{} + 0x7FC00000, finite & ~zero);
}

// Transposes a 16 x 16 byte matrix held as 16 row vectors: four perfect shuffles (interleave row
// i with row i + 8, low halves then high halves) move element (r, c) to (c, r).
W8A16_INLINE void transpose_16x16(VecU8* rows) {
  const VecU8 lo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  const VecU8 hi = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  for (int stage = 0; stage < 4; ++stage) {
    VecU8 out[16];
    for (int i = 0; i < 8; ++i) {
      out[2 * i] = __builtin_shuffle(rows[i], rows[i + 8], lo);
      out[2 * i + 1] = __builtin_shuffle(rows[i], rows[i + 8], hi);
    }
    for (int i = 0; i < 16; ++i) rows[i] = out[i];
  }
}

// A's rows [m0, m0 + rows), unpacked once and shared by every column task.
struct UnpackedA {
  std::uint32_t k = 0;
  std::vector<std::int32_t> exp, sig, sign;  // [row][k]
  std::vector<std::uint8_t> special;         // [row][step]: a NaN or Inf in that 128-K slice
};

UnpackedA unpack_a(const GemmView& v, std::uint32_t m0, std::uint32_t rows, unsigned threads) {
  UnpackedA u;
  u.k = v.k;
  const std::size_t count = static_cast<std::size_t>(rows) * v.k;
  u.exp.resize(count);
  u.sig.resize(count);
  u.sign.resize(count);
  u.special.assign(static_cast<std::size_t>(rows) * v.k_steps(), 0);
  parallel_for(rows, threads, [&](std::uint32_t r) {
    const std::uint16_t* a = v.a + static_cast<std::size_t>(m0 + r) * v.a_row_stride;
    for (std::uint32_t k = 0; k < v.k; ++k) {
      const Fields f = bf16_fields(a[k]);
      const std::size_t i = static_cast<std::size_t>(r) * v.k + k;
      u.exp[i] = f.exp;
      u.sig[i] = f.sig;
      u.sign[i] = f.sign;
      if ((a[k] & 0x7F80) == 0x7F80) u.special[static_cast<std::size_t>(r) * v.k_steps() + k / kKStep] = 1;
    }
  });
  return u;
}

// One 128-K step for 16 columns of one row: the 8 chained MMAs from c = +0. Writes p's FP32 bits
// per lane and, per lane, -1 where some sum reached 2^128 (the caller then asks the model).
W8A16_INLINE void step_partials(const std::int32_t* ea, const std::int32_t* sa, const std::int32_t* sga, const VecI* eb,
                                const VecI* sb15, const VecI* sgb, VecI* p_bits, VecI* overflow) {
  VecI c_neg = VecI{} + 0, c_exp = VecI{} + kZeroAccExp, c_sig = VecI{} + 0, ovf = VecI{} + 0;
  for (int j = 0; j < 8; ++j) {
    const int k0 = 16 * j;
    VecI te[16];
    VecI e_max = c_exp;  // rule 2
    for (int t = 0; t < 16; ++t) {
      te[t] = ea[k0 + t] + eb[k0 + t];
      e_max = vmax(e_max, te[t]);
    }
    e_max = vmax(e_max, VecI{} + kSm90MinAlignExp);                  // the grid's floor (mma.hpp)
    const VecI c_term = (c_sig << 2) >> clamp_shift(e_max - c_exp);  // rule 3 for c
    VecI sum = (c_term ^ c_neg) - c_neg;
    for (int t = 0; t < 16; ++t) {  // rules 3 and 4 for the products
      const VecI mag = (sa[k0 + t] * sb15[k0 + t]) >> vmin(e_max - te[t], VecI{} + 31);
      const VecI s = sga[k0 + t] ^ sgb[k0 + t];
      sum += (mag ^ s) - s;
    }
    // Rules 5 and 6: normalise once, truncate to FP32, +0 for zero.
    const VecI neg = sum < 0;
    const VecI mag = (sum ^ neg) - neg;
    // floor(log2(mag)) from the float exponent; clearing the low 8 bits above 2^24 keeps the
    // int -> float conversion exact, so it cannot round up to the next power of two.
    const VecI exact = mag & ~((mag > 0xFFFFFF) & 0xFF);
    const VecF as_float = __builtin_convertvector(exact, VecF);
    const VecI top = (reinterpret_cast<VecI>(as_float) >> 23) - 127;
    const VecI lead = top + e_max - 25;
    const VecI len = top + 1;
    const VecI sig_normal = (mag >> clamp_shift(len - 24)) << clamp_shift(24 - len);
    const VecI sub_shift = e_max + 124;  // grid 2^(E - 25) onto 2^-149
    // One of the two counts is 0; lanes where the left shift wraps are not subnormal, and unused.
    const VecI sig_sub = reinterpret_cast<VecI>(reinterpret_cast<VecU>(mag)
                                                << reinterpret_cast<VecU>(clamp_shift(sub_shift))) >>
                         clamp_shift(-sub_shift);
    const VecI normal = lead >= -126;
    c_sig = select(normal, sig_normal, sig_sub);
    const VecI zero = c_sig == 0;
    ovf |= (lead >= 128) & ~zero;
    c_exp = select(zero, VecI{} + kZeroAccExp, select(normal, lead, VecI{} - 126));
    c_neg = neg & ~zero;
  }
  const VecU field = reinterpret_cast<VecU>(c_exp + 126) << 23;  // garbage only in zero lanes, masked
  const VecI bits = (c_neg & static_cast<std::int32_t>(0x80000000u)) |
                    reinterpret_cast<VecI>(field + reinterpret_cast<VecU>(c_sig));
  *p_bits = bits & ~(c_sig == 0);
  *overflow = ovf;
}

struct CanonicalTask {
  const GemmView* v;
  Arch arch;
  const UnpackedA* a;  // rows m0, m0 + 1, ... of A
  std::uint32_t m0;
  std::uint16_t* c;
  std::size_t c_row_stride;
};

// Columns [16 nb, 16 nb + 16) of the unpacked rows [r0, r0 + rows), i.e. rows m0 + r0, ... of C.
W8A16_SIMD_CLONES void canonical_columns(const CanonicalTask& task, std::uint32_t nb, std::uint32_t r0,
                                         std::uint32_t rows) {
  const GemmView& v = *task.v;
  const std::uint32_t n0 = nb * kLanes, lanes = std::min<std::uint32_t>(kLanes, v.n - n0);
  alignas(64) VecI eb[kKStep], sb15[kKStep], sgb[kKStep];
  alignas(64) float scale[kLanes];
  std::vector<float> acc(static_cast<std::size_t>(rows) * kLanes, 0.0f);  // +0 per output
  for (std::uint32_t s = 0; s < v.k_steps(); ++s) {
    // The step's weights, 16 k at a time, transposed to [k][lane]; missing lanes hold code 0 (+0).
    VecI w_nan = VecI{} + 0;
    for (std::uint32_t k0 = 0; k0 < kKStep; k0 += 16) {
      VecU8 codes[16];
      for (std::uint32_t l = 0; l < kLanes; ++l) {
        codes[l] = VecU8{};
        if (l < lanes) std::memcpy(&codes[l], v.w + static_cast<std::size_t>(n0 + l) * v.k + s * kKStep + k0, 16);
      }
      transpose_16x16(codes);
      for (std::uint32_t kk = 0; kk < 16; ++kk) {
        const WeightFields f = decode_e4m3_lanes(__builtin_convertvector(codes[kk], VecI));
        eb[k0 + kk] = f.exp;
        sb15[k0 + kk] = f.sig15;
        sgb[k0 + kk] = f.sign;
        w_nan |= f.nan;
      }
    }
    for (std::uint32_t l = 0; l < kLanes; ++l) scale[l] = l < lanes ? v.scale(n0 + l, s) : 0.0f;
    for (std::uint32_t r = 0; r < rows; ++r) {
      const std::size_t base = static_cast<std::size_t>(r0 + r) * task.a->k + s * kKStep;
      const bool a_special = task.a->special[static_cast<std::size_t>(r0 + r) * v.k_steps() + s] != 0;
      VecI p = VecI{} + 0, fallback = VecI{} - 1;
      if (!a_special) {
        step_partials(&task.a->exp[base], &task.a->sig[base], &task.a->sign[base], eb, sb15, sgb, &p, &fallback);
        fallback |= w_nan;
      }
      alignas(64) std::uint32_t p_bits[kLanes];
      std::memcpy(p_bits, &p, sizeof p_bits);
      alignas(64) std::int32_t redo[kLanes];
      std::memcpy(redo, &fallback, sizeof redo);
      for (std::uint32_t l = 0; l < lanes; ++l)
        if (redo[l]) p_bits[l] = canonical_step_partial_bits(v, task.arch, task.m0 + r0 + r, n0 + l, s);
      // acc = fma.rn(p, S, acc) per lane: IEEE fused, as f32_fma_rne_bits; only a NaN's payload
      // may differ from the model's 0x7FFFFFFF, and every NaN ends as BF16 0x7FFF.
      alignas(64) float p_f[kLanes];
      std::memcpy(p_f, p_bits, sizeof p_f);
      float* acc_r = &acc[static_cast<std::size_t>(r) * kLanes];
      for (int l = 0; l < kLanes; ++l) acc_r[l] = __builtin_fmaf(p_f[l], scale[l], acc_r[l]);
    }
  }
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t l = 0; l < lanes; ++l)
      task.c[(task.m0 + r0 + r) * task.c_row_stride + n0 + l] = f32_bits_to_bf16_rne(
          f32_to_bits(acc[static_cast<std::size_t>(r) * kLanes + l]));
}

// ---- GEMV order (gemv.hpp) -----------------------------------------------------------------
// 16 output columns of one row per vector: each lane runs the model's FMA chain for its column
// in the model's order. NaN payloads may differ from the model's 0x7FFFFFFF on the way, but a
// NaN stays NaN through every later fma/add and the BF16 rounding maps every NaN to 0x7FFF.
struct GemvTask {
  const GemmView* v;
  std::uint16_t* c;
  std::size_t c_row_stride;
};

W8A16_SIMD_CLONES void gemv_columns(const GemvTask& task, std::uint32_t nb) {
  const GemmView& v = *task.v;
  const std::uint32_t n0 = nb * kLanes, lanes = std::min<std::uint32_t>(kLanes, v.n - n0);
  // The 16 weight rows decoded to FP32, k-major: w_dec[k][lane] (exact, NUMERICS 1.2).
  std::vector<float> w_dec(static_cast<std::size_t>(v.k) * kLanes, 0.0f);
  for (std::uint32_t k0 = 0; k0 < v.k; k0 += 16) {
    VecU8 codes[16];
    for (std::uint32_t l = 0; l < kLanes; ++l) {
      codes[l] = VecU8{};
      if (l < lanes) std::memcpy(&codes[l], v.w + static_cast<std::size_t>(n0 + l) * v.k + k0, 16);
    }
    transpose_16x16(codes);
    for (std::uint32_t kk = 0; kk < 16; ++kk) {
      const VecI bits = decode_e4m3_f32_bits_lanes(__builtin_convertvector(codes[kk], VecI));
      std::memcpy(&w_dec[static_cast<std::size_t>(k0 + kk) * kLanes], &bits, sizeof bits);
    }
  }
  std::vector<float> scales(static_cast<std::size_t>(v.k_steps()) * kLanes, 0.0f);
  for (std::uint32_t l = 0; l < lanes; ++l)
    for (std::uint32_t s = 0; s < v.k_steps(); ++s)
      scales[static_cast<std::size_t>(s) * kLanes + l] = v.scale(n0 + l, s);
  const std::uint32_t chunks = v.k / kGemvChunk;
  for (std::uint32_t m = 0; m < v.m; ++m) {
    const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
    alignas(64) float acc[kGemvLanes][kLanes] = {};  // every warp lane starts at +0
    for (std::uint32_t ch = 0; ch < chunks; ++ch) {
      float* acc_lane = acc[ch % kGemvLanes];
      alignas(64) float p[kLanes] = {};
      for (std::uint32_t j = 0; j < kGemvChunk; ++j) {
        const std::uint32_t k = ch * kGemvChunk + j;
        const float a = f32_from_bits(bf16_bits_to_f32_bits(a_row[k]));
        const float* w = &w_dec[static_cast<std::size_t>(k) * kLanes];
        for (int l = 0; l < kLanes; ++l) p[l] = __builtin_fmaf(a, w[l], p[l]);
      }
      const float* sc = &scales[static_cast<std::size_t>(ch * kGemvChunk / kKStep) * kLanes];
      for (int l = 0; l < kLanes; ++l) acc_lane[l] = __builtin_fmaf(p[l], sc[l], acc_lane[l]);
    }
    for (std::uint32_t off = kGemvLanes / 2; off >= 1; off /= 2) {  // the xor butterfly
      alignas(64) float next[kGemvLanes][kLanes];
      for (std::uint32_t wl = 0; wl < kGemvLanes; ++wl)
        for (int l = 0; l < kLanes; ++l) next[wl][l] = acc[wl][l] + acc[wl ^ off][l];
      std::memcpy(acc, next, sizeof acc);
    }
    for (std::uint32_t l = 0; l < lanes; ++l)
      task.c[m * task.c_row_stride + n0 + l] = f32_bits_to_bf16_rne(f32_to_bits(acc[0][l]));
  }
}

}  // namespace

bool gemm_canonical_sm90(const GemmView& v, Arch arch, std::uint16_t* c, std::size_t c_row_stride, unsigned threads) {
  const MmaPolicy& policy = mma_policy(arch);
  if (policy.blocks != 1 || policy.extra_bits != 2) return false;  // the grid and bounds above are sm90's
  if (policy.min_align_exp > -126) return false;                   // see rule 2 above
  if (gemm_view_problem(v) != nullptr) return false;               // the layout assumptions below need a valid view
  const std::uint32_t blocks = (v.n + kLanes - 1) / kLanes;
  // Rows of A are unpacked a bounded slab at a time; each slab is cut into (64-row tile, 16-column
  // block) tasks, columns fastest, so that concurrent tasks share the same rows of A.
  const std::uint32_t slab = static_cast<std::uint32_t>(std::max<std::size_t>(kRowTile, kUnpackElements / v.k /
                                                                                            kRowTile * kRowTile));
  for (std::uint32_t m0 = 0; m0 < v.m; m0 += slab) {
    const std::uint32_t rows = std::min(slab, v.m - m0);
    const UnpackedA a = unpack_a(v, m0, rows, threads);
    const CanonicalTask task{&v, arch, &a, m0, c, c_row_stride};
    const std::uint32_t tiles = (rows + kRowTile - 1) / kRowTile;
    parallel_for(tiles * blocks, threads, [&](std::uint32_t i) {
      const std::uint32_t r0 = i / blocks * kRowTile;
      canonical_columns(task, i % blocks, r0, std::min(kRowTile, rows - r0));
    });
  }
  return true;
}

bool gemm_gemv(const GemmView& v, std::uint16_t* c, std::size_t c_row_stride, unsigned threads) {
  if (gemm_view_problem(v) != nullptr) return false;  // the layout assumptions below need a valid view
  const GemvTask task{&v, c, c_row_stride};
  parallel_for((v.n + kLanes - 1) / kLanes, threads, [&](std::uint32_t nb) { gemv_columns(task, nb); });
  return true;
}

}  // namespace w8a16::ref::fast
