// SPDX-License-Identifier: MIT OR Apache-2.0
// Property 7: a scale-indexing oracle that needs no bit model. With A = 1.0 and W = 1.0 every
// 128-K step's partial sum is exactly 128, so C[m][n] = 128 * sum_s S[n/128][s], which integer
// arithmetic gives exactly when the scales are powers of two; the emulator and the simulation
// backend must produce it for every entry point.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "property_support.hpp"
#include "w8a16/device/sim_backend.hpp"
#include "w8a16/reference/contract.hpp"

namespace {

namespace golden = w8a16::golden;
namespace device = w8a16::device;
namespace props = w8a16::props;

int bit_length(std::uint64_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}

// C[*][n] for scale row `b`, by hand. Each scale is 2^e (the generator's ones_pow2_scales, checked
// here: a positive normal with a zero significand). With e0 the smallest exponent of the row,
//   C = 128 * sum_s 2^e_s = I * 2^(e0 + 7),  I = sum_s 2^(e_s - e0)  (an integer),
// and BF16 keeps 8 significant bits of I, rounded to nearest, ties to even (NUMERICS.md 1.2).
// Exactness of the FP32 path: the canonical fold's partial sums are multiples of 2^(e0 + 7) below
// I * 2^(e0 + 7), so I < 2^24 keeps every one exact; the GEMV's chunks of 16 put them on a grid 8
// times finer, so it needs I < 2^21. *why says what failed when the precondition does not hold.
bool expected_bf16_by_hand(const golden::CaseInputs& in, std::uint32_t steps, std::uint32_t b, bool gemv,
                           std::uint16_t* out, std::string* why) {
  int e[1024];
  if (steps > 1024) {
    *why = "too many steps for the oracle";
    return false;
  }
  int e0 = 1000;
  for (std::uint32_t s = 0; s < steps; ++s) {
    std::uint32_t bits;
    std::memcpy(&bits, &in.s_f32[std::size_t{b} * steps + s], 4);
    if ((bits & 0x807FFFFFu) != 0 || (bits >> 23) == 0 || (bits >> 23) == 0xFF) {
      *why = "scale is not a positive normal power of two";
      return false;
    }
    e[s] = static_cast<int>(bits >> 23) - 127;
    e0 = e[s] < e0 ? e[s] : e0;
  }
  std::uint64_t sum = 0;
  for (std::uint32_t s = 0; s < steps; ++s) sum += std::uint64_t{1} << (e[s] - e0);
  if (sum >= (std::uint64_t{1} << (gemv ? 21 : 24))) {
    *why = "the scale exponents spread too far for exact FP32 partial sums";
    return false;
  }
  // Round I to 8 significant bits: keep q = I >> shift, round half to even on the rest.
  int shift = bit_length(sum) > 8 ? bit_length(sum) - 8 : 0;
  std::uint64_t q = sum >> shift;
  if (shift > 0) {
    const std::uint64_t rest = sum & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    if (q == 256) {
      q = 128;
      ++shift;
    }
  }
  // value = q * 2^(e0 + 7 + shift) with q in [1, 255]: normalise q to 1.xxxxxxx.
  const int q_bits = bit_length(q);
  const int exponent = e0 + 7 + shift + q_bits - 1;
  if (exponent < -126 || exponent > 127) {
    *why = "the output leaves BF16's normal range";
    return false;
  }
  const std::uint32_t frac = static_cast<std::uint32_t>((q << (8 - q_bits)) & 0x7F);
  *out = static_cast<std::uint16_t>(static_cast<std::uint32_t>(exponent + 127) << 7 | frac);
  return true;
}

std::vector<std::uint16_t> oracle_output(const golden::Case& c, const golden::CaseInputs& in) {
  std::vector<std::uint16_t> out = golden::guarded_sentinel_output(c);  // C and its guard rows, as launched
  const std::uint32_t steps = c.k / 128;
  for (std::uint32_t b = 0; b * 128 < c.n; ++b) {
    std::uint16_t v = 0;
    std::string why;
    props::test::require(expected_bf16_by_hand(in, steps, b, golden::entry_point_is_gemv(c.entry), &v, &why), c,
                         "oracle precondition: " + why);
    for (std::uint32_t m = 0; m < c.m; ++m)
      for (std::uint32_t n = b * 128; n < c.n && n < b * 128 + 128; ++n) out[std::size_t{m} * c.c_row_stride + n] = v;
  }
  return out;
}

// The GEMV needs I < 2^21 (above): up to 20 steps the generator's offsets are distinct in 0..19.
props::DrawOptions oracle_options() {
  props::DrawOptions opt = props::only_dist(golden::Distribution::ones_pow2_scales);
  opt.max_macs = std::uint64_t{1} << 21;
  return opt;
}

RC_GTEST_PROP(ScaleOracle, EmulatorGivesTheHandComputedSumOfPowerOfTwoScales, ()) {
  const golden::Case c = *props::gen_case(oracle_options());
  RC_PRE(!golden::entry_point_is_gemv(c.entry) || c.k <= 20 * 128);
  const golden::CaseInputs in = props::test::inputs_for(c);
  props::test::require_bits_equal(c, props::compare_output(c, oracle_output(c, in), props::expected_output(c, in)),
                                  "emulator vs hand-computed scale sums");
}

RC_GTEST_PROP(ScaleOracle, SimulationGivesTheHandComputedSumOfPowerOfTwoScalesForEveryEntryPoint, ()) {
  const golden::Case c = *props::gen_case(oracle_options());
  RC_PRE(!golden::entry_point_is_gemv(c.entry) || c.k <= 20 * 128);
  const golden::CaseInputs in = props::test::inputs_for(c);
  device::SimBackend sim;
  const props::Launched got = props::launch_case(sim, c, in);
  props::test::require(got.status.ok(), c, "simulation: " + got.status.message);
  props::test::require_bits_equal(c, props::compare_output(c, oracle_output(c, in), got.c_bits),
                                  "simulation vs hand-computed scale sums");
}

// The oracle itself, on numbers worked by hand: a single step of 2^0 gives 128 (0x4300); steps
// 2^0 + 2^1 give 384 = 1.5 * 2^8 (0x43C0); 2^0 + 2^8 + 2^9 gives 128 * 769, whose 8-bit rounding
// 768 + 1 -> 768 (below half) is 98304 = 1.5 * 2^16 (0x47C0); 2^1 + 2^0 + 2^9 + 2^8 is 128 * 771,
// 771 -> 772 (above half), 98816 (0x47C1). Ties: 2^1 + 2^9 is 128 * 257 * 2,
// 257 -> 256 (to even) gives 2^16 (0x4780); 2^1 + 2^2 + 2^9 gives 259 -> 260 (to even), 66560 (0x4782).
TEST(ScaleOracle, HandComputationMatchesWorkedExamples) {
  struct Worked {
    std::vector<int> exps;
    std::uint16_t bf16;
  };
  const Worked worked[] = {{{0}, 0x4300},          {{0, 1}, 0x43C0}, {{0, 8, 9}, 0x47C0},
                           {{1, 0, 9, 8}, 0x47C1}, {{1, 9}, 0x4780}, {{1, 2, 9}, 0x4782}};
  for (const Worked& w : worked) {
    golden::CaseInputs in;
    for (int e : w.exps) {
      const std::uint32_t bits = static_cast<std::uint32_t>(e + 127) << 23;
      float f;
      std::memcpy(&f, &bits, 4);
      in.s_f32.push_back(f);
    }
    std::uint16_t v = 0;
    std::string why;
    ASSERT_TRUE(expected_bf16_by_hand(in, static_cast<std::uint32_t>(w.exps.size()), 0, false, &v, &why)) << why;
    EXPECT_EQ(v, w.bf16) << "exponents " << ::testing::PrintToString(w.exps);
  }
}

}  // namespace
