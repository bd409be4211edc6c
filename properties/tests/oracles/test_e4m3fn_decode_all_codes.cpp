// SPDX-License-Identifier: MIT OR Apache-2.0
// All 256 E4M3 codes decode exactly (NUMERICS.md 1.2), checked on raw bits against two independent decodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "w8a16/reference/e4m3fn.hpp"

#if W8A16_HAVE_CUDA_HOST_HEADERS
#include <cuda_fp8.h>
#endif

namespace {

using w8a16::ref::e4m3fn_to_bf16_bits;
using w8a16::ref::e4m3fn_to_f32;

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The OCP FP8 definition of E4M3 (bias 7, no Inf, S.1111.111 is NaN), written out with ldexp.
float naive_ocp_e4m3_value(unsigned code) {
  const int s = (code >> 7) & 1, e = (code >> 3) & 0xF, f = code & 7;
  if (e == 15 && f == 7) return std::numeric_limits<float>::quiet_NaN();
  const float magnitude = e == 0 ? std::ldexp(static_cast<float>(f), -6 - 3)
                                 : std::ldexp(static_cast<float>(8 + f), e - 7 - 3);
  return s ? -magnitude : magnitude;
}

// IEEE binary16 bits to float, by the definition (bias 15, 10 fraction bits).
float naive_half_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, f = h & 0x3FF;
  if (e == 31) return f ? std::numeric_limits<float>::quiet_NaN() : (s ? -INFINITY : INFINITY);
  const float magnitude = e == 0 ? std::ldexp(static_cast<float>(f), -14 - 10)
                                 : std::ldexp(static_cast<float>(1024 + f), e - 15 - 10);
  return s ? -magnitude : magnitude;
}

TEST(E4m3fnDecode, EveryFiniteCodeEqualsTheOcpDefinitionBitForBit) {
  int finite = 0;
  for (unsigned code = 0; code < 256; ++code) {
    const float want = naive_ocp_e4m3_value(code);
    if (std::isnan(want)) continue;
    ++finite;
    const std::uint32_t want_bits = bits_of(want);
    ASSERT_EQ(want_bits & 0xFFFFu, 0u) << "code " << code << " would not be exact in BF16";
    EXPECT_EQ(e4m3fn_to_bf16_bits(static_cast<std::uint8_t>(code)), want_bits >> 16) << "code 0x" << std::hex << code;
    EXPECT_EQ(bits_of(e4m3fn_to_f32(static_cast<std::uint8_t>(code))), want_bits) << "code 0x" << std::hex << code;
  }
  EXPECT_EQ(finite, 254);
}

TEST(E4m3fnDecode, OnlyTheTwoAllOnesCodesAreNanAndTheyKeepTheirSign) {
  for (unsigned code = 0; code < 256; ++code) {
    const bool nan = (code & 0x7F) == 0x7F;
    EXPECT_EQ(w8a16::ref::e4m3fn_is_nan(static_cast<std::uint8_t>(code)), nan) << code;
    EXPECT_EQ(std::isnan(e4m3fn_to_f32(static_cast<std::uint8_t>(code))), nan) << code;
  }
  EXPECT_EQ(e4m3fn_to_bf16_bits(0x7F), 0x7FC0);
  EXPECT_EQ(e4m3fn_to_bf16_bits(0xFF), 0xFFC0);
}

TEST(E4m3fnDecode, LandmarksOfTheFormat) {
  EXPECT_EQ(bits_of(e4m3fn_to_f32(0x7E)), bits_of(448.0f));
  EXPECT_EQ(bits_of(e4m3fn_to_f32(0xFE)), bits_of(-448.0f));
  EXPECT_EQ(bits_of(e4m3fn_to_f32(0x01)), bits_of(std::ldexp(1.0f, -9)));
  EXPECT_EQ(bits_of(e4m3fn_to_f32(0x08)), bits_of(std::ldexp(1.0f, -6)));
  EXPECT_EQ(e4m3fn_to_bf16_bits(0x80), 0x8000);  // -0 stays -0
  EXPECT_EQ(e4m3fn_to_bf16_bits(0x78), 0x4380);  // 256: 0x78..0x7E are normals, there is no Inf
}

#if W8A16_HAVE_CUDA_HOST_HEADERS
TEST(E4m3fnDecode, EveryCodeMatchesCudaHostHalfConversion) {
  for (unsigned code = 0; code < 256; ++code) {
    const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), __NV_E4M3);
    const float cuda_value = naive_half_value(h.x);
    if ((code & 0x7F) == 0x7F) {
      // NUMERICS.md 1.2: both NaN codes become 0x7FFF as f16 (sign dropped); the emulator keeps a NaN.
      EXPECT_EQ(h.x, 0x7FFF) << code;
      EXPECT_TRUE(std::isnan(e4m3fn_to_f32(static_cast<std::uint8_t>(code)))) << code;
      continue;
    }
    EXPECT_EQ(bits_of(e4m3fn_to_f32(static_cast<std::uint8_t>(code))), bits_of(cuda_value))
        << "code 0x" << std::hex << code << " cuda half 0x" << h.x;
  }
}
#else
TEST(E4m3fnDecode, EveryCodeMatchesCudaHostHalfConversion) {
  GTEST_SKIP() << "cuda_fp8.h not found at configure time: the CUDA host oracle was not checked";
}
#endif

}  // namespace
