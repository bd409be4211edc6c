// SPDX-License-Identifier: MIT OR Apache-2.0
// The one random source of saved cases: SplitMix64 seeding xoshiro256**, and integer-only draws.
#pragma once
#include <cstdint>

namespace w8a16::golden {

// Why our own: std::uniform_*_distribution and std::normal_distribution are specified by their
// results' distribution, not their bits, so libstdc++, libc++ and MSVC give different inputs for
// the same seed. Everything here is integer arithmetic with a written-out definition, so a case
// line regenerates the same bytes on every machine and compiler (case.hpp, the stability rule).

// SplitMix64 (Steele, Lea, Flood 2014; the reference `splitmix64.c` by Vigna): a seed expander.
constexpr std::uint64_t splitmix64_next(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// The value SplitMix64 gives for a state of x: a well-mixed 64-bit hash of one value.
constexpr std::uint64_t splitmix64(std::uint64_t x) { return splitmix64_next(&x); }

// xoshiro256** 1.0 (Blackman and Vigna, `xoshiro256starstar.c`), state from SplitMix64 as its
// authors recommend.
class Xoshiro256ss {
 public:
  constexpr explicit Xoshiro256ss(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64_next(&sm);
  }
  constexpr std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // An integer in [0, bound), bound >= 1: the high 64 bits of next() * bound (Lemire's
  // multiply-shift without the rejection step; its bias is below bound / 2^64, and it is exactly
  // defined, which is what matters here).
  constexpr std::uint64_t below(std::uint64_t bound) { return mul_high(next(), bound); }
  // An integer in [lo, hi], lo <= hi.
  constexpr std::int64_t in_range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // True with probability num / den.
  constexpr bool chance(std::uint64_t num, std::uint64_t den) { return below(den) < num; }
  constexpr std::uint32_t bits32() { return static_cast<std::uint32_t>(next() >> 32); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  // 64 x 64 -> high 64 bits, portable (no __int128).
  static constexpr std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
    const std::uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
    return hi_hi + (hi_lo >> 32) + (cross >> 32);
  }
  std::uint64_t s_[4]{};
};

// An independent stream for one purpose of one case: the seed and a fixed tag, mixed.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t tag) {
  std::uint64_t s = seed ^ (tag * 0xD1B54A32D192ED03ull);
  return splitmix64_next(&s);
}

}  // namespace w8a16::golden
