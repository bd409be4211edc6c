// SPDX-License-Identifier: MIT OR Apache-2.0
// Inputs for the calibration probe (`w8a16check probe`): the 10 regimes of golden/mma/README.md
// and the targeted cases of NUMERICS.md 1.1 and 3, as .mmav cases whose D is still to be recorded.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "w8a16/golden/mmav.hpp"

namespace w8a16::golden {

// The regimes in file order (file i is "<gpu>_<i>_<name>.mmav"), then the targeted set.
enum class ProbeRegime : std::uint8_t {
  uniform,            // BF16 exponents 2^-3..2^3; C random, a quarter zeros
  wide_exponents,     // A, B exponents 2^-30..2^30; C 2^-60..2^60
  cancellation,       // products in near-cancelling pairs (k = 2j, 2j+1)
  w8a16_realistic,    // A activations, B decoded E4M3 weights, C partial sums
  specials,           // zeros, subnormals, Inf, NaN, max sprinkled in; rows that overflow
  rounding,           // C dominant, products 2^-20..2^-30 below it: the final truncation
  exact_ties,         // short significands: exact sums and ties
  subnormal_outputs,  // products in the FP32 subnormal range, C zero or subnormal
  signed_zeros,       // exact cancellation, -0 operands and -0 accumulators
  near_overflow,      // sums crossing 2^128
  targeted,           // NUMERICS.md 1.1 / 3 one by one (probe_targeted_cases)
};
inline constexpr int kProbeRegimeCount = 11;
std::string_view probe_regime_name(ProbeRegime r);

// `count` cases of regime r (not `targeted`), D zero-filled. A pure function of (r, count, seed):
// integer draws only (case_rng.hpp), so the same inputs on every machine.
std::vector<MmavCase> probe_regime_cases(ProbeRegime r, std::uint32_t count, std::uint64_t seed);

// One targeted dot product: what NUMERICS.md states for it, to be checked against hardware.
struct ProbeTarget {
  std::string_view what;       // e.g. "c = +0 does not join E: 8 x 2^-152 -> 0x00000001"
  std::uint32_t c;             // FP32 bits
  std::uint16_t a[16], b[16];  // BF16 bits
  std::uint32_t numerics_d;    // the result NUMERICS.md 1.1 states (the probe records what the GPU gives)
};
const std::vector<ProbeTarget>& probe_targets();
// One case per target: every row of A is the target's a, every row of Bt its b, all of C its c,
// so all 128 outputs of the case are that dot product. D zero-filled.
std::vector<MmavCase> probe_targeted_cases();

}  // namespace w8a16::golden
