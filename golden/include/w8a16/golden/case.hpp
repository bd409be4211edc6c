// SPDX-License-Identifier: MIT OR Apache-2.0
// Saved cases: one launch of one entry point on inputs regenerated from a seed, as one line of text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace w8a16::golden {

// The line (format 1), keys in this order, single spaces, nothing else:
//
//   case/1 w8a16_gemm_pipelined_m32_strided m=17 n=257 k=5248 a_row_stride=5256 c_row_stride=263
//          dist=specials seed=0x0123456789abcdef gen=1
//
// and, only when the case takes kernels away from the module before it is planned, one more key:
//
//          without=w8a16_wgmma_rows,w8a16_wgmma_rows_n128_x2
//
// `case/1` is the line syntax; `gen=` the version of the input generator (case_inputs.hpp).
// `without=` names kernel symbols (kKernelSymbols, in that order, each once) that the launch
// resolves to the zero handle, as a module without them would: how a case reaches a body that an
// entry point's dispatch would otherwise pass over (the Hopper tier goes before every other
// tensor-core body on an sm_90a module). A line without it is a launch over the whole module.
// Stability rule: the inputs of a case are a pure function of (m, n, k, strides, dist, seed, gen).
// Any change to what a generator produces, even one bit of one distribution, adds a new `gen`
// version and leaves the old one replaying as before (case_inputs.cpp keeps every version); a
// version this build does not know is a parse error that says so, never a silent re-interpretation.
// Names of entry points and distributions are stable: they can be added, never renamed.
inline constexpr std::string_view kCaseFormatTag = "case/1";
inline constexpr std::uint32_t kCaseGeneratorVersion = 1;  // what new cases are written with
inline constexpr std::uint32_t kCaseOldestGeneratorVersion = 1;

// Entry points of the kernel family, by the seed's launch-function names
// (docs/KERNEL_ABI.md 2).
enum class EntryPoint : std::uint8_t {
  gemm_pipelined,              // the 128-row tile, contiguous (a_row_stride = k, c_row_stride = n)
  gemm_pipelined_m32,          // the 32-row twin, contiguous
  gemm_pipelined_m32_strided,  // the 32-row twin (tries the row-tile kernel first)
  gemm_pipelined_m64,          // the 64-row twin, contiguous
  gemm_pipelined_m64_strided,  // the 64-row twin (tries the row-tile kernel first)
  gemm_pipelined_by_m,         // dispatch: m32, else m64, else the 128-row tile; contiguous
  gemv_batch4_strided,         // scalar GEMV, m <= 4 (NUMERICS.md 2.2)
  gemv_batch16_strided,        // scalar GEMV, m <= 16
  gemm_packed_strided,         // W repacked (NUMERICS.md 2.3) before the launch; the packed symbols
};
inline constexpr EntryPoint kAllEntryPoints[] = {
    EntryPoint::gemm_pipelined,      EntryPoint::gemm_pipelined_m32,         EntryPoint::gemm_pipelined_m32_strided,
    EntryPoint::gemm_pipelined_m64,  EntryPoint::gemm_pipelined_m64_strided, EntryPoint::gemm_pipelined_by_m,
    EntryPoint::gemv_batch4_strided, EntryPoint::gemv_batch16_strided,       EntryPoint::gemm_packed_strided,
};

std::string_view entry_point_name(EntryPoint e);  // "w8a16_gemm_pipelined_m32_strided"
bool parse_entry_point(std::string_view name, EntryPoint* out);
bool entry_point_is_contiguous(EntryPoint e);      // pitches fixed to k and n
bool entry_point_is_gemv(EntryPoint e);            // NUMERICS.md 2.2 instead of 2.1
std::uint32_t entry_point_max_rows(EntryPoint e);  // 4 or 16 for the GEMVs; 0 = no limit

// How a case's inputs are drawn (case_inputs.cpp describes each). Names are never renamed or
// reused; a new distribution is a new name appended here, and the bytes of every old one stay.
enum class Distribution : std::uint8_t {
  activation_like,   // BF16 activations ~ N(0, 1) shape with outliers; realistic E4M3 incl. extremes
  wide_exponents,    // A exponents over 2^-100..2^100, every finite E4M3 code, scales 2^-60..2^60
  cancellation,      // column pairs whose products cancel to the last bits in every row
  specials,          // activation_like plus NaN, Inf, subnormal, -0, max in A; 0x7F/0xFF, max, -0 in W
  pow2_scales,       // activation_like operands, every scale a signed power of two
  special_scales,    // activation_like operands, scales 0, -0, negative, subnormal, Inf, NaN, normal
  ones_pow2_scales,  // A = 1.0, W = 1.0, powers of two distinct within a scale row of <= 20 blocks (oracle)
  // The GPU tests' regimes, in the golden generator:
  near_overflow,       // A near 2^96..2^127, weights 2^1..448: products, sums and folds that reach Inf
  tiny,                // A 2^-133..2^-110 (BF16 subnormals), small weights and scales: subnormal outputs
  mid_exponents,       // A 2^-60..2^60, every finite E4M3 code, scales 2^-40..2^40 of either sign
  cancellation_pairs,  // pairs equal or one ulp apart against negated weights, 1 in 16 a large term
  row_specials,        // about two specials per A row and W row, A rows of signed zeros, 1 scale in 12 special
  // Built so that one reduction order, one rounding and one zero sign give these bytes: another
  // order, an extra rounding or another start changes most outputs, not one:
  fold_ties,         // per row two steps whose fold lands acc on a BF16 midpoint only if rounded once
  zero_signs,        // rows whose every step sums to exactly zero, scales negative or -0: acc's sign shows
  cancelling_steps,  // steps +P, small, -P, small: acc swings by a large P, every fold point rounds
  every_special,     // activation_like with exactly one of each of the 15 special classes (case_inputs.hpp)
  nan_codes,         // activation_like with a NaN code (0x7F, 0xFF) in one W row in eight: a kernel's NaN path
  lone_specials,     // activation_like with exactly one NaN code, NaN activation or Inf/NaN scale, at the first,
                     // a middle or the last 128-K step, which one named by the seed (case_inputs.hpp)
};
inline constexpr Distribution kAllDistributions[] = {
    Distribution::activation_like,  Distribution::wide_exponents,     Distribution::cancellation,
    Distribution::specials,         Distribution::pow2_scales,        Distribution::special_scales,
    Distribution::ones_pow2_scales, Distribution::near_overflow,      Distribution::tiny,
    Distribution::mid_exponents,    Distribution::cancellation_pairs, Distribution::row_specials,
    Distribution::fold_ties,        Distribution::zero_signs,         Distribution::cancelling_steps,
    Distribution::every_special,    Distribution::nan_codes,          Distribution::lone_specials,
};
std::string_view distribution_name(Distribution d);
bool parse_distribution(std::string_view name, Distribution* out);

// The kernel symbols of the family (docs/KERNEL_ABI.md 1.1): what `without=` may name, bit i for
// symbol i. Read from the launch layer's one table (bodies.def's W8A16_KERNEL rows, in KernelId's
// order, append only), so that a new symbol is one row there and a case can name it at once.
namespace detail {
enum class KernelSymbol : std::uint8_t {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) id,
#include "w8a16/device/bodies.def"
};
constexpr std::uint32_t symbol_bit(KernelSymbol s) { return 1u << static_cast<unsigned>(s); }
}  // namespace detail
inline constexpr std::string_view kKernelSymbols[] = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) "w8a16_" #id,
#include "w8a16/device/bodies.def"
};
inline constexpr int kKernelSymbolCount = static_cast<int>(sizeof kKernelSymbols / sizeof kKernelSymbols[0]);
static_assert(kKernelSymbolCount <= 32, "a case's `without` is a 32-bit mask");
// The symbol an entry point is called with (its `kernel` argument; by_m's is the 128-row tile):
// a case may not take it away, since the launch would then be a refusal, not a case.
int entry_point_own_symbol(EntryPoint e);
// The symbols that read W in the packed layout (bodies.def's layout column): the only ones
// gemm_packed_strided may be called on (it picks one by shape), and no other entry point's.
inline constexpr std::uint32_t kPackedLayoutSymbols = 0
#define W8A16_KERNEL(id, file, arch, params, variant, layout) | W8A16_GOLDEN_PACKED_##layout(id)
#define W8A16_GOLDEN_PACKED_row_major(id) 0u
#define W8A16_GOLDEN_PACKED_packed(id) detail::symbol_bit(detail::KernelSymbol::id)
#include "w8a16/device/bodies.def"
#undef W8A16_GOLDEN_PACKED_row_major
#undef W8A16_GOLDEN_PACKED_packed
    ;
// Every symbol the entry point may be called on, as a `without` mask: its own, and for
// gemm_packed_strided every packed-layout symbol.
std::uint32_t entry_point_own_mask(EntryPoint e);
// The Hopper tier (the bodies bodies.def puts in the tier every tensor-core entry point tries
// first), as a `without` mask.
inline constexpr std::uint32_t kWithoutHopperTier = 0
#define K(id) detail::symbol_bit(detail::KernelSymbol::id)
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) | W8A16_GOLDEN_TIER_##tier(kernels)
#define W8A16_GOLDEN_TIER_first(kernels) (kernels)
#define W8A16_GOLDEN_TIER_twin_first(kernels) 0u
#define W8A16_GOLDEN_TIER_own(kernels) 0u
#include "w8a16/device/bodies.def"
#undef K
#undef W8A16_GOLDEN_TIER_first
#undef W8A16_GOLDEN_TIER_twin_first
#undef W8A16_GOLDEN_TIER_own
    ;

struct Case {
  EntryPoint entry = EntryPoint::gemm_pipelined_by_m;
  std::uint32_t m = 1, n = 1, k = 128;
  std::uint32_t a_row_stride = 128, c_row_stride = 1;
  Distribution dist = Distribution::activation_like;
  std::uint64_t seed = 0;
  std::uint32_t gen = kCaseGeneratorVersion;
  std::uint32_t without = 0;  // bit i: kKernelSymbols[i] is taken away before planning

  friend bool operator==(const Case& x, const Case& y) {
    return x.entry == y.entry && x.m == y.m && x.n == y.n && x.k == y.k && x.a_row_stride == y.a_row_stride &&
           x.c_row_stride == y.c_row_stride && x.dist == y.dist && x.seed == y.seed && x.gen == y.gen &&
           x.without == y.without;
  }
  friend bool operator!=(const Case& x, const Case& y) { return !(x == y); }
};

// A case by its fields' names, for code that writes one out (C++17 has no designated initialisers):
//
//   const Case c = CaseSpec{}.entry(e).shape(m, n, k).strides(lda, ldc).dist(d).seed(s);
//
// A field not named keeps Case's default, but for the pitches: without strides() they are k and n,
// the only pitches a contiguous entry point takes (case_problem), whatever order the calls come in.
class CaseSpec {
 public:
  CaseSpec& entry(EntryPoint e) {
    c_.entry = e;
    return *this;
  }
  CaseSpec& shape(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
    c_.m = m, c_.n = n, c_.k = k;
    return *this;
  }
  CaseSpec& strides(std::uint32_t a_row_stride, std::uint32_t c_row_stride) {
    c_.a_row_stride = a_row_stride, c_.c_row_stride = c_row_stride;
    strided_ = true;
    return *this;
  }
  CaseSpec& dist(Distribution d) {
    c_.dist = d;
    return *this;
  }
  CaseSpec& seed(std::uint64_t s) {
    c_.seed = s;
    return *this;
  }
  CaseSpec& gen(std::uint32_t g) {
    c_.gen = g;
    return *this;
  }
  CaseSpec& without(std::uint32_t mask) {
    c_.without = mask;
    return *this;
  }
  operator Case() const {
    Case c = c_;
    if (!strided_) c.a_row_stride = c.k, c.c_row_stride = c.n;
    return c;
  }

 private:
  Case c_;
  bool strided_ = false;
};

// Limits a case may not exceed, so that a line can never ask for more memory than a replay can
// sensibly hold (the largest model shape, 51200 x 5120, is far inside them).
inline constexpr std::uint32_t kCaseMaxM = 65536;
inline constexpr std::uint32_t kCaseMaxN = 1u << 20;
inline constexpr std::uint32_t kCaseMaxK = 1u << 20;
inline constexpr std::uint64_t kCaseMaxElements = std::uint64_t{1} << 31;  // per operand

// What makes a case unusable, or an empty string when it is a valid launch of its entry point:
// m >= 1, n >= 1, k a positive multiple of 128, a_row_stride >= k and a multiple of 8,
// c_row_stride >= n, contiguous entry points with a_row_stride == k and c_row_stride == n, the
// GEMVs' row limits, the size limits above, a known generator version, and a `without` mask that
// names only known symbols and not the entry point's own.
std::string case_problem(const Case& c);

std::string format_case(const Case& c);  // the canonical line, without a newline
// "w8a16_wgmma_rows,w8a16_wgmma_rows_n128" for a mask (empty for 0).
std::string without_text(std::uint32_t without);
// Parses one line (a trailing '\r' or '\n' is ignored). On failure returns false, leaves *out
// unchanged and says in *error which field is wrong and why.
bool parse_case(std::string_view line, Case* out, std::string* error);

// A case file: lines that are cases, blank, or comments starting with '#'. On failure returns
// false with "path:line: why" in *error and leaves *out unchanged.
bool parse_case_text(std::string_view text, const std::string& source_name, std::vector<Case>* out, std::string* error);
bool read_case_file(const std::string& path, std::vector<Case>* out, std::string* error);
// Appends `comment` (as '#' lines, may be empty) and the case line; creates the file if needed.
bool append_case_file(const std::string& path, const Case& c, const std::string& comment, std::string* error);

}  // namespace w8a16::golden
