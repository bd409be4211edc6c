// SPDX-License-Identifier: MIT OR Apache-2.0
// The probe's inputs (mma_probe.hpp): deterministic, each regime producing what its name claims
// (checked through the sm90 emulator's results), and each targeted case giving, on the emulator,
// the value NUMERICS.md 1.1 states for it.
#include <gtest/gtest.h>

#include <cstring>

#include "w8a16/golden/mma_probe.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

using namespace w8a16::golden;
using w8a16::ref::kMmaSm90;
using w8a16::ref::mma_k16_bits;

std::uint32_t d_of(const MmavCase& c, int m, int n) {
  return mma_k16_bits(kMmaSm90, c.c[m * 8 + n], &c.a[m * 16], &c.bt[n * 16]);
}

bool same_bytes(const std::vector<MmavCase>& x, const std::vector<MmavCase>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(MmavCase)) == 0;
}

TEST(MmaProbeInputs, SameSeedSameBytesOtherSeedOtherBytesAndCountIsAPrefix) {
  for (int r = 0; r < kProbeRegimeCount - 1; ++r) {
    const auto regime = static_cast<ProbeRegime>(r);
    const auto a = probe_regime_cases(regime, 16, 7);
    EXPECT_EQ(a.size(), 16u);
    EXPECT_TRUE(same_bytes(a, probe_regime_cases(regime, 16, 7))) << probe_regime_name(regime);
    EXPECT_FALSE(same_bytes(a, probe_regime_cases(regime, 16, 8))) << probe_regime_name(regime);
    const auto longer = probe_regime_cases(regime, 20, 7);
    EXPECT_TRUE(same_bytes(a, std::vector<MmavCase>(longer.begin(), longer.begin() + 16))) << probe_regime_name(regime);
  }
}

// Counts, over 64 cases of a regime, emulated results in classes the regime is meant to reach.
struct Census {
  int nan = 0, inf = 0, pos_zero = 0, neg_zero = 0, subnormal = 0, normal = 0;
  int neg_zero_c_to_pos_zero = 0;  // c = -0 and the result +0 (NUMERICS.md 1.1 step 6)
};
Census census(ProbeRegime r) {
  Census s;
  for (const MmavCase& c : probe_regime_cases(r, 64, 1)) {
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        const std::uint32_t d = d_of(c, m, n), mag = d & 0x7FFFFFFFu;
        if (mag > 0x7F800000u) ++s.nan;
        else if (mag == 0x7F800000u) ++s.inf;
        else if (d == 0) ++s.pos_zero;
        else if (d == 0x80000000u) ++s.neg_zero;
        else if (mag < 0x00800000u) ++s.subnormal;
        else ++s.normal;
        if (c.c[m * 8 + n] == 0x80000000u && d == 0) ++s.neg_zero_c_to_pos_zero;
      }
  }
  return s;
}

TEST(MmaProbeInputs, RegimesReachWhatTheirNamesSay) {
  const Census uniform = census(ProbeRegime::uniform);
  EXPECT_GT(uniform.normal, 8000);
  EXPECT_EQ(uniform.nan + uniform.inf, 0);
  const Census specials = census(ProbeRegime::specials);
  EXPECT_GT(specials.nan, 100);
  EXPECT_GT(specials.inf, 50);
  EXPECT_GT(specials.normal, 1000);
  const Census sub = census(ProbeRegime::subnormal_outputs);
  EXPECT_GT(sub.subnormal, 1000);
  const Census zeros = census(ProbeRegime::signed_zeros);
  EXPECT_GT(zeros.neg_zero_c_to_pos_zero, 500);
  EXPECT_EQ(zeros.neg_zero, 0);  // the emulator never gives -0 (step 6): nothing here contradicts that
  const Census over = census(ProbeRegime::near_overflow);
  EXPECT_GT(over.inf, 500);
  EXPECT_GT(over.normal, 500);
  EXPECT_EQ(census(ProbeRegime::w8a16_realistic).nan, 0);  // no E4M3 NaN code is drawn
}

TEST(MmaProbeInputs, RoundingRegimeKeepsCDominant) {
  // Products are 2^(E0-30)..2^(E0-18) (significands below 4), their sum below 2^(E0-14): d stays
  // within 2^9 of C's ulps (2^(E0-23)) and keeps C's sign.
  for (const MmavCase& c : probe_regime_cases(ProbeRegime::rounding, 32, 3))
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        const std::uint32_t cc = c.c[m * 8 + n], d = d_of(c, m, n);
        EXPECT_EQ(cc >> 31, d >> 31);
        const std::int64_t diff = static_cast<std::int64_t>(d & 0x7FFFFFFF) -
                                  static_cast<std::int64_t>(cc & 0x7FFFFFFF);
        EXPECT_LE(diff < 0 ? -diff : diff, 1 << 10) << std::hex << cc << " " << d;
      }
}

TEST(MmaProbeInputs, TargetedCasesGiveWhatNumericsStatesOnTheSm90Emulator) {
  const auto& targets = probe_targets();
  const auto cases = probe_targeted_cases();
  ASSERT_EQ(cases.size(), targets.size());
  ASSERT_GE(targets.size(), 20u);
  for (std::size_t i = 0; i < targets.size(); ++i)
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n)
        EXPECT_EQ(d_of(cases[i], m, n), targets[i].numerics_d) << targets[i].what << " at (" << m << ", " << n << ")";
}

}  // namespace
