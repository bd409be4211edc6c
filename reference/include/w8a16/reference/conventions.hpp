// SPDX-License-Identifier: MIT OR Apache-2.0
// The contract as data (NUMERICS.md 2.4): every convention a kernel of the W8A16 family keeps, as
// fields of one description, a text form users write in a file, the named values, and the
// emulation of every combination bit for bit from the verified pieces (the MMA step of mma.hpp,
// fma.rn, mul.rn, add.rn, cvt.rn). The default value, `canonical`, is NUMERICS.md 2.1 for the
// tensor-core tiers and 2.2 for the GEMV; under it the functions below give contract.hpp's bytes.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "w8a16/reference/contract.hpp"

namespace w8a16::ref {

// What the E4M3 NaN codes 0x7F / 0xFF decode to.
enum class NanCodes : std::uint8_t {
  propagate,  // NaN (NUMERICS.md 1.2): every output that reads the code is NaN
  zero,       // +0 / -0 (the code's sign): a decode table that treats them as zeros
  finite,     // +480 / -480: the code's fields read as a normal number (exponent 15, fraction 7),
              // as a decode by bit placement with no NaN check gives
};

// How a product meets an accumulator, where a kernel writes `acc += x * y`: fma.rn, or mul.rn
// then add.rn (a build with FMA contraction off, nvcc --fmad=false).
enum class Mac : std::uint8_t { fma, mul_add };

// How a step's partial p meets its scale s (NUMERICS.md 2.4).
enum class Fold : std::uint8_t {
  fma,       // acc = fma.rn(p, s, acc): one rounding (2.1)
  mul_add,   // acc = add.rn(mul.rn(p, s), acc): two roundings
  prescale,  // each decoded weight is scaled and rounded to BF16 before the MMA,
             // b = cvt.rn.bf16(mul.rn(w, s)); the partials are added, acc = add.rn(acc, p)
};

// Where the scale is applied.
enum class FoldPeriod : std::uint8_t {
  step,  // every 128-K step: one fold point per scale block (2.1)
  end,   // once, after the whole K range (per-channel scales: every S[u][s] of a row block equal)
};

// The precision the scales are used in: FP32 as given (2.1), or each rounded to BF16 first,
// s = cvt.rn.bf16(s), by a kernel whose scale operand is BF16.
enum class ScaleFormat : std::uint8_t { fp32, bf16 };

struct TensorCoreConventions {
  NanCodes nan = NanCodes::propagate;
  Fold fold = Fold::fma;
  FoldPeriod period = FoldPeriod::step;
  // Operand exponent bias: 0, or b > 0 for a kernel that feeds the MMA a' = cvt.rn.bf16(a * 2^b)
  // and w' = w * 2^-2b (a decode by bit placement) and folds with s' = mul.rn(s, 2^b): the same
  // value where nothing overflows or leaves BF16's range, other bytes where something does.
  std::uint32_t bias = 0;
  ScaleFormat scales = ScaleFormat::fp32;
  // The K positions inside a 128-K step, in MMA order: MMA j of a step sums the 16 products at
  // positions k_order[16j .. 16j + 15] (their order inside the one fused step is invisible). A
  // permutation of 0..127; the identity is 2.1's contiguous ascending windows.
  std::array<std::uint8_t, 128> k_order = identity_k_order();

  static constexpr std::array<std::uint8_t, 128> identity_k_order() {
    std::array<std::uint8_t, 128> o{};
    for (unsigned i = 0; i < 128; ++i) o[i] = static_cast<std::uint8_t>(i);
    return o;
  }
  bool contiguous() const { return k_order == identity_k_order(); }
  bool operator==(const TensorCoreConventions& o) const {
    return nan == o.nan && fold == o.fold && period == o.period && bias == o.bias && scales == o.scales &&
           k_order == o.k_order;
  }
  bool operator!=(const TensorCoreConventions& o) const { return !(*this == o); }
};

// Where the GEMV applies the scale.
enum class GemvScale : std::uint8_t {
  chunk,    // a chain of unscaled products per chunk, p = mac(a, w, p), then acc = mac(p, s, acc) (2.2)
  element,  // every decoded weight scaled first, ws = mul.rn(w, s), then acc = mac(a, ws, acc)
};

// How the lanes of one warp are summed.
enum class GemvTree : std::uint8_t {
  xor_butterfly,  // off = 16, 8, 4, 2, 1: v[l] = add.rn(v[l], v[l ^ off])  (shfl.sync.bfly)
  shfl_down,      // off = 16, 8, 4, 2, 1: v[l] = add.rn(v[l], v[l + off]), a lane past 31 reading
                  // its own value (shfl.sync.down); lane 0 holds the warp's sum
};

struct GemvConventions {
  NanCodes nan = NanCodes::propagate;
  std::uint32_t lanes = 32;  // lanes that share one output: a multiple of 32 (warps = lanes / 32)
  std::uint32_t chunk = 16;  // K elements a lane takes at a time; divides 128
  GemvScale scale = GemvScale::chunk;
  Mac mac = Mac::fma;  // every `acc += x * y` of the lane loop (the chunk's chain and its scale)
  GemvTree tree = GemvTree::xor_butterfly;
  // Chunk c (K in [chunk*c, chunk*c + chunk)) belongs to lane c % lanes, and a lane takes its
  // chunks in increasing c. The warps' sums meet in warp order: r = w0; r = add.rn(r, w1); ...
  bool operator==(const GemvConventions& o) const {
    return nan == o.nan && lanes == o.lanes && chunk == o.chunk && scale == o.scale && mac == o.mac && tree == o.tree;
  }
  bool operator!=(const GemvConventions& o) const { return !(*this == o); }
};

// A whole contract: what every tensor-core body and what the GEMV of one entry point must give.
struct Conventions {
  std::string name;  // a library name, a file's `contract =` line, or the text form's short form
  TensorCoreConventions tc;
  GemvConventions gemv;
  bool same_numerics(const Conventions& o) const { return tc == o.tc && gemv == o.gemv; }
};

// ---- names and the text form ------------------------------------------------------------------
// The named values, `canonical` (the default) first. NUMERICS.md 2.4 lists them.
const std::vector<Conventions>& conventions_library();
const Conventions& canonical_conventions();
// The library entry called `name`; nullptr when there is none.
const Conventions* find_conventions(std::string_view name);

// The text form (NUMERICS.md 2.4): `key = value` lines, `#` comments, every key at most once:
//   contract = NAME          its name (optional)
//   base = NAME              the library value the other lines change (default: canonical)
//   tc.nan = propagate|zero|finite   gemv.nan = propagate|zero|finite
//   tc.fold = fma|mul-add|prescale   gemv.lanes = 32|64|... (a multiple of 32, at most 1024)
//   tc.period = step|end             gemv.chunk = 1|2|4|8|16|32|64|128
//   tc.bias = 0..62                  gemv.scale = chunk|element
//   tc.scales = fp32|bf16
//   tc.k-order = contiguous|I0 I1 ... I127 (a permutation of 0..127, spaces or commas)
//   gemv.mac = fma|mul-add           gemv.tree = xor|down
// An unknown key, a repeated key, a bad value or a k-order that is no permutation is an error
// naming the line; so is `contract = NAME` with a library name whose fields differ from the
// file's (a name is a fact: reports print it for those fields). *out is then unchanged.
bool parse_conventions(std::string_view text, Conventions* out, std::string* error);
// The text form of c: every field, so parse_conventions(format_conventions(c)) == c.
std::string format_conventions(const Conventions& c);
// Every field of c as the text form writes it, in its order: ("tc.nan", "propagate"), ...,
// ("gemv.tree", "xor").
std::vector<std::pair<std::string, std::string>> conventions_fields(const Conventions& c);
// One line each, for reports: "nan=propagate fold=fma period=step k-order=contiguous".
std::string describe(const TensorCoreConventions& tc);
std::string describe(const GemvConventions& g);

// ---- what the operands must be for a contract to define the output -----------------------------
// "" when every output of v is defined under tc, else why not (FoldPeriod::end with scales that
// change along K: a per-channel kernel's contract says nothing of block scales).
std::string conventions_view_problem(const TensorCoreConventions& tc, const GemmView& v);
std::string conventions_view_problem(const GemvConventions& g, const GemmView& v);

// ---- emulation ---------------------------------------------------------------------------------
// The decoded weight under a NaN policy (BF16 bits).
std::uint16_t decode_weight_bf16(NanCodes nan, std::uint8_t code);

// One element's FP32 accumulator before the BF16 rounding, and the element, straight from the
// pseudo-code of NUMERICS.md 2.4. The view must pass conventions_view_problem.
std::uint32_t tc_acc_bits(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m,
                          std::uint32_t n);
std::uint16_t tc_element_bf16(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m,
                              std::uint32_t n);
std::uint32_t gemv_conv_acc_bits(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n);
std::uint16_t gemv_conv_element_bf16(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n);

// Whole outputs into c[m][c_row_stride], as gemm_canonical / gemm_gemv (which they call for the
// canonical values, so the default keeps its fast paths and its bytes).
void gemm_conventions(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint16_t* c,
                      std::size_t c_row_stride, unsigned threads = 0);
void gemm_conventions(const GemvConventions& g, const GemmView& v, std::uint16_t* c, std::size_t c_row_stride,
                      unsigned threads = 0);

// ---- the intermediate values, for explanations --------------------------------------------------
// Every FP32 value one element's emulation forms, in order, so that two contracts (or a contract
// and a device's bytes) can be compared point by point.
struct TcTrace {
  std::vector<std::uint32_t> window_partials;  // after each MMA: 8 per step (steps * 8)
  std::vector<std::uint32_t> fold_acc;         // acc after each fold point (steps, or 1 for period end)
  std::uint32_t acc = 0;
};
TcTrace tc_trace(const TensorCoreConventions& tc, const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n);

struct GemvTrace {
  std::vector<std::uint32_t> lane_acc;                 // each lane's sum before the tree (lanes)
  std::vector<std::vector<std::uint32_t>> tree_level;  // per level (16, 8, 4, 2, 1): every lane's value
  std::vector<std::uint32_t> warp_sum;                 // each warp's lane 0 after the tree
  std::uint32_t acc = 0;
};
GemvTrace gemv_trace(const GemvConventions& g, const GemmView& v, std::uint32_t m, std::uint32_t n);

}  // namespace w8a16::ref
