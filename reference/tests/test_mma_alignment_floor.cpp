// SPDX-License-Identifier: MIT OR Apache-2.0
// The sm90 alignment floor (mma.hpp, kSm90MinAlignExp): the H200's own results where every term
// is tiny, and why the W8A16 contract (E4M3 weights) never reaches it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>

#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/mma.hpp"

namespace {

using w8a16::ref::Arch;

struct RecordedDot {
  std::uint32_t c;
  std::uint16_t a[16], b[16];
  std::uint32_t device;  // D as the H200 produced it (golden/mma/h200/h200_7_subnormal_outputs.mmav)
};

// Three of the four dot products of our H200 probe that NUMERICS.md 1.1's rule 3 as written (a grid
// of 2^(E-25) for any E) gets wrong: subnormal BF16 activations times small weights with c = +-0, so
// that E = max(ea + eb) < -133. The device truncates the terms on the grid of E = -133 (2^-158).
const RecordedDot kRecorded[] = {
    {0x80000000u,
     {0x802B, 0x8045, 0x005D, 0x8008, 0x0050, 0x805F, 0x803D, 0x001B, 0x000D, 0x8005, 0x006A, 0x000F, 0x0025, 0x0074,
      0x806B, 0x0009},
     {0xB509, 0xB268, 0x3800, 0x3A31, 0x3AEA, 0xB615, 0x32A1, 0x3AAE, 0x35F7, 0xB59D, 0xBB49, 0x3432, 0x3795, 0xBA7F,
      0xB3CE, 0xB438},
     0x800042CBu},
    {0x80000000u,
     {0x804F, 0x8023, 0x8076, 0x8066, 0x007B, 0x0079, 0x000A, 0x0067, 0x0012, 0x8028, 0x804A, 0x8046, 0x0013, 0x803D,
      0x800B, 0x8011},
     {0x36F5, 0x3647, 0x33FB, 0x360F, 0x3501, 0x3AF0, 0xB589, 0xB769, 0x3980, 0x36C8, 0x3BA3, 0xB0AE, 0x3833, 0xBA64,
      0xB086, 0x345C},
     0x8000173Fu},
    {0x00000000u,
     {0x0045, 0x8044, 0x8027, 0x0047, 0x8039, 0x8033, 0x8025, 0x8022, 0x0051, 0x8025, 0x807E, 0x000F, 0x0023, 0x006B,
      0x8078, 0x8054},
     {0x3562, 0xB5AD, 0xB236, 0xB635, 0xB447, 0x343F, 0x310C, 0x3324, 0xB779, 0xB426, 0x3918, 0xBA44, 0x3742, 0xB852,
      0xB2E9, 0xB4A9},
     0x80000920u},
};

TEST(MmaAlignmentFloor, Sm90ReproducesTheH200WhereEveryTermIsTiny) {
  for (const RecordedDot& r : kRecorded)
    EXPECT_EQ(w8a16::ref::mma_k16_bits(Arch::sm90, r.c, r.a, r.b), r.device) << std::hex << "device " << r.device;
}

TEST(MmaAlignmentFloor, WithoutTheFloorRule3AloneWouldMissThem) {
  // Shows the floor is what the cases test: the same step with the floor removed differs.
  int differing = 0;
  for (const RecordedDot& r : kRecorded)
    differing += w8a16::ref::mma_fused_step_bits(r.c, r.a, r.b, 16, 2, w8a16::ref::kNoAlignFloor) != r.device;
  EXPECT_EQ(differing, 3);
}

// Why the W8A16 contract never meets the floor: a product loses bits to it only when its exponent
// field is below -133 - 11 = -144, but a BF16 activation (field >= -126, subnormals included) times a
// decoded E4M3 weight (field >= -9) has a field >= -135, and a nonzero c has a field >= -126. So with
// E4M3-derived B the step gives the same bits with the floor and without it: the tensor-core tiers'
// outputs do not depend on it, and only the general BF16 x BF16 MMA (the probe, `vectors`) does.
RC_GTEST_PROP(MmaAlignmentFloor, NeverChangesAStepWhoseBComesFromE4m3, ()) {
  std::uint16_t a[16], b[16];
  for (int k = 0; k < 16; ++k) {
    // Any finite BF16, subnormals and zeros included, and any finite E4M3 code.
    const auto bits = *rc::gen::inRange<std::uint32_t>(0, 0xFF00);
    a[k] = static_cast<std::uint16_t>(((bits & 0x7F00) == 0x7F00 ? bits & 0x807F : bits) |
                                      (*rc::gen::arbitrary<bool>() ? 0x8000 : 0));
    std::uint8_t code = *rc::gen::arbitrary<std::uint8_t>();
    if ((code & 0x7F) == 0x7F) code = static_cast<std::uint8_t>(code & 0xF0);
    b[k] = w8a16::ref::e4m3fn_to_bf16_bits(code);
  }
  const bool c_zero = *rc::gen::arbitrary<bool>();
  std::uint32_t c = c_zero ? 0u : *rc::gen::inRange<std::uint32_t>(0, 0x7F800000u);
  if (*rc::gen::arbitrary<bool>()) c |= 0x80000000u;
  RC_ASSERT(w8a16::ref::mma_fused_step_bits(c, a, b, 16, 2, w8a16::ref::kSm90MinAlignExp) ==
            w8a16::ref::mma_fused_step_bits(c, a, b, 16, 2, w8a16::ref::kNoAlignFloor));
}

}  // namespace
