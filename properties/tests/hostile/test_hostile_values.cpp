// SPDX-License-Identifier: MIT OR Apache-2.0
// Hostile values and shapes that every entry point must run with exactly the emulator's bytes:
// NaN, Inf, subnormals and -0 in each operand; all 256 E4M3 codes; every special scale; K at 128
// and 65536; N = 1; every M from 1 to 129. Where NUMERICS.md fixes a result outright (a NaN
// operand makes its row, column or scale block 0x7FFF; all -0 operands give +0), that is checked
// too, so a case cannot pass by the special never reaching the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hostile_support.hpp"

namespace w8a16::hostile {
namespace {

constexpr std::uint16_t kBf16NanOut = 0x7FFF;  // every NaN output (NUMERICS.md 1.2)

std::uint32_t rows_for(Entry e) { return is_gemv(e) ? 3 : 5; }

float f32_of_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// ---- NaN, Inf, subnormal, -0 in A ---------------------------------------------------------
TEST(HostileValues, SpecialActivations) {
  ClassCounter counter("specials in A");
  const struct {
    const char* name;
    std::uint16_t bits;
    bool nan;
  } kinds[] = {{"quiet NaN", 0x7FC0, true},
               {"negative NaN with payload", 0xFFC1, true},
               {"signalling NaN", 0x7F81, true},
               {"+Inf", 0x7F80, false},
               {"-Inf", 0xFF80, false},
               {"smallest subnormal", 0x0001, false},
               {"largest negative subnormal", 0x807F, false},
               {"-0", 0x8000, false},
               {"largest finite", 0x7F7F, false}};
  for (Entry e : kEntries)
    for (const auto& kd : kinds) {
      Problem p = make_problem(e, rows_for(e), 33, 256, 8, 3, 21);
      p.a_at(1, 37) = kd.bits;   // row 1, first scale block
      p.a_at(2, 200) = kd.bits;  // row 2, second block
      const auto c = expect_emulator_bytes(e, p, kd.name);
      if (kd.nan && !c.empty()) {
        for (std::uint32_t r : {1u, 2u})
          for (std::uint32_t n = 0; n < p.n; ++n) ASSERT_EQ(c_at(c, p, r, n), kBf16NanOut) << kd.name << " row " << r;
      }
      counter.add();
    }
}

TEST(HostileValues, AllSubnormalAndAllNegativeZeroActivations) {
  ClassCounter counter("specials in A");
  for (Entry e : kEntries) {
    // Every A a subnormal (2^-133 .. 2^-126), scales 2^100: the products reach the output.
    Problem sub = make_problem(e, rows_for(e), 17, 256, 8, 1, 22);
    for (std::uint32_t r = 0; r < sub.m; ++r)
      for (std::uint32_t k = 0; k < sub.k; ++k)
        sub.a_at(r, k) = static_cast<std::uint16_t>((r + k) % 2 << 15 | (1 + (r * 7 + k) % 127));
    for (float& s : sub.s) s = std::ldexp(1.0f, 100);
    const auto c = expect_emulator_bytes(e, sub, "all-subnormal A");
    bool any_nonzero = false;
    for (std::size_t i = 0; i < c.size(); ++i) any_nonzero |= (c[i] & 0x7FFF) != 0 && c[i] != kPoison16;
    EXPECT_TRUE(c.empty() || any_nonzero) << "every output zero: the subnormal products never reached C";
    // Every A -0: every output is +0 (NUMERICS.md 1.1 rule 6; the GEMV's fma chain from +0 too).
    Problem nz = make_problem(e, rows_for(e), 17, 256, 8, 1, 23);
    for (std::uint32_t r = 0; r < nz.m; ++r)
      for (std::uint32_t k = 0; k < nz.k; ++k) nz.a_at(r, k) = 0x8000;
    const auto z = expect_emulator_bytes(e, nz, "all -0 A");
    if (!z.empty()) {
      for (std::uint32_t r = 0; r < nz.m; ++r)
        for (std::uint32_t n = 0; n < nz.n; ++n) ASSERT_EQ(c_at(z, nz, r, n), 0x0000) << "r=" << r << " n=" << n;
    }
    counter.add(2);
  }
}

// ---- NaN, -0, subnormals in W (E4M3 has no Inf) -------------------------------------------
TEST(HostileValues, SpecialWeights) {
  ClassCounter counter("specials in W");
  for (Entry e : kEntries) {
    for (std::uint8_t nan_code : {std::uint8_t{0x7F}, std::uint8_t{0xFF}}) {
      Problem p = make_problem(e, rows_for(e), 33, 256, 8, 3, 31);
      p.w_at(5, 130) = nan_code;
      const auto c = expect_emulator_bytes(e, p, "W NaN");
      if (!c.empty()) {
        for (std::uint32_t r = 0; r < p.m; ++r) ASSERT_EQ(c_at(c, p, r, 5), kBf16NanOut) << "row " << r;
      }
      counter.add();
    }
    Problem nz = make_problem(e, rows_for(e), 33, 256, 8, 3, 32);
    for (auto& b : nz.w) b = 0x80;  // -0 everywhere: every output +0
    const auto z = expect_emulator_bytes(e, nz, "all -0 W");
    if (!z.empty()) {
      for (std::uint32_t r = 0; r < nz.m; ++r)
        for (std::uint32_t n = 0; n < nz.n; ++n) ASSERT_EQ(c_at(z, nz, r, n), 0x0000);
    }
    Problem sub = make_problem(e, rows_for(e), 33, 256, 8, 3, 33);
    for (std::size_t i = 0; i < sub.w.size(); ++i) sub.w[i] = static_cast<std::uint8_t>((i % 2) << 7 | (1 + i % 7));
    expect_emulator_bytes(e, sub, "all-subnormal W");
    counter.add(2);
  }
}

// ---- all 256 E4M3 codes ------------------------------------------------------------------
// Row j of W holds code j in every even column (odd columns ordinary), so column j of C shows
// what code j does; only the NaN codes' columns are NaN.
TEST(HostileValues, EveryE4m3CodeInW) {
  ClassCounter counter("all 256 E4M3 codes in W (1 launch)");
  for (Entry e : kEntries) {
    Problem p = make_problem(e, rows_for(e), 256, 128, 8, 2, 41);
    for (std::uint32_t j = 0; j < 256; ++j)
      for (std::uint32_t k = 0; k < p.k; k += 2) p.w_at(j, k) = static_cast<std::uint8_t>(j);
    const auto c = expect_emulator_bytes(e, p, "all codes");
    if (!c.empty()) {
      for (std::uint32_t r = 0; r < p.m; ++r)
        for (std::uint32_t j = 0; j < 256; ++j) {
          const bool nan_code = (j & 0x7F) == 0x7F;
          ASSERT_EQ(c_at(c, p, r, j) == kBf16NanOut, nan_code) << "code 0x" << std::hex << j << " row " << r;
        }
    }
    counter.add();  // one launch per entry point, holding all 256 codes
  }
}

// ---- special scales ------------------------------------------------------------------------
TEST(HostileValues, SpecialScales) {
  ClassCounter counter("special scales");
  const struct {
    const char* name;
    std::uint32_t bits;
  } kinds[] = {{"+0", 0x00000000u},
               {"-0", 0x80000000u},
               {"negative", 0xBFC00000u},
               {"smallest subnormal", 0x00000001u},
               {"negative subnormal", 0x807FFFFFu},
               {"+Inf", 0x7F800000u},
               {"-Inf", 0xFF800000u},
               {"quiet NaN", 0x7FC00000u},
               {"negative NaN with payload", 0xFFC00123u},
               {"largest finite", 0x7F7FFFFFu}};
  for (Entry e : kEntries)
    for (const auto& kd : kinds) {
      // N = 300: three scale rows; K = 384: three steps. S[1][1] is the special one.
      Problem p = make_problem(e, rows_for(e), 300, 384, 8, 5, 51);
      p.s_at(1, 1) = f32_of_bits(kd.bits);
      const auto c = expect_emulator_bytes(e, p, kd.name);
      const bool nan = (kd.bits & 0x7F800000u) == 0x7F800000u && (kd.bits & 0x7FFFFFu) != 0;
      if (nan && !c.empty()) {
        for (std::uint32_t r = 0; r < p.m; ++r)
          for (std::uint32_t n = 0; n < p.n; ++n)
            ASSERT_EQ(c_at(c, p, r, n) == kBf16NanOut, n >= 128 && n < 256) << "r=" << r << " n=" << n;
      }
      counter.add();
    }
}

// ---- shapes ----------------------------------------------------------------------------------
TEST(HostileShapes, KAt128AndAt65536) {
  ClassCounter counter("K = 128 and K = 65536");
  for (Entry e : kEntries)
    for (std::uint32_t k : {128u, 65536u}) {
      expect_emulator_bytes(e, make_problem(e, rows_for(e), 5, k, 16, 3, 61), "K extreme");
      counter.add();
    }
}

TEST(HostileShapes, NEqualsOne) {
  ClassCounter counter("N = 1");
  for (Entry e : kEntries)
    for (std::uint32_t m : {1u, 2u, 4u, 16u, 17u, 33u, 65u, 129u}) {
      if (m > max_rows(e)) continue;
      expect_emulator_bytes(e, make_problem(e, m, 1, 256, 8, 1, 71), "N = 1");
      counter.add();
    }
}

TEST(HostileShapes, EveryMFrom1To129) {
  ClassCounter counter("M = 1..129");
  for (Entry e : kEntries)
    for (std::uint32_t m = 1; m <= 129 && m <= max_rows(e); ++m) {
      expect_emulator_bytes(e, make_problem(e, m, 9, 128, 8, 2, 81), "every M");
      counter.add();
    }
}

}  // namespace
}  // namespace w8a16::hostile
