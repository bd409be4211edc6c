// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU tests' cases: shapes aimed at each body's edges, input distributions, and their inputs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/device/plan.hpp"

namespace w8a16::gputest {

// SplitMix64 (Steele, Lea, Flood 2014): every input byte is a function of the case's seed alone.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // [0, bound), bound >= 1 (modulo bias is irrelevant here: only reproducibility matters).
  std::uint32_t below(std::uint32_t bound) { return static_cast<std::uint32_t>(next() % bound); }
  std::int32_t in_range(std::int32_t lo, std::int32_t hi) { return lo + static_cast<std::int32_t>(below(hi - lo + 1)); }
  bool chance(std::uint32_t num, std::uint32_t den) { return below(den) < num; }

 private:
  std::uint64_t state_;
};

enum class Dist : std::uint8_t {
  activation,      // BF16 activations around 2^-4..2^2, realistic E4M3 weights (extremes included), small positive scales
  wide_exponents,  // A exponents over 2^-60..2^60, every finite E4M3 code, scales 2^-40..2^40 of either sign
  cancellation,    // pairs of products that cancel to a few bits: truncation and signed-zero territory
  specials,        // activation data with NaN, Inf, subnormal, -0 sprinkled in A, W (0x7F/0xFF/0x80/0x7E) and S
  near_overflow,   // A near 2^127, weights near 448: sums and folds that reach Inf (and Inf - Inf)
  tiny,            // A near 2^-126 (BF16 subnormals included), small weights and scales: subnormal outputs
};
inline constexpr Dist kAllDists[] = {Dist::activation,   Dist::wide_exponents, Dist::cancellation,
                                     Dist::specials,     Dist::near_overflow,  Dist::tiny};
const char* dist_name(Dist d);

// What a case is aimed at: the body it should reach through its entry point.
struct GpuCase {
  device::Entry entry;
  device::Body target;
  std::uint32_t m = 0, n = 0, k = 0, a_row_stride = 0, c_row_stride = 0;
  Dist dist = Dist::activation;
  std::uint64_t seed = 0;
  std::string describe() const;  // everything needed to regenerate it
};

struct Inputs {
  std::vector<std::uint16_t> a;  // [m][a_row_stride] BF16 bits; pitch padding holds NaN (never read)
  std::vector<std::uint8_t> w;   // [n][k] E4M3 codes
  std::vector<float> s;          // [ceil(n/128)][k/128]
};
Inputs make_inputs(const GpuCase& c);

// `count` cases of `entry` aimed at `target`, deterministic in `seed`. `work_cap` bounds m * n * k
// (the emulator's cost) by shrinking n. Contiguous entry points (device::entry_is_contiguous) get
// a_row_stride = k and c_row_stride = n.
std::vector<GpuCase> make_cases(device::Entry entry, device::Body target, std::uint32_t count, std::uint64_t seed,
                                std::uint64_t work_cap);

}  // namespace w8a16::gputest
