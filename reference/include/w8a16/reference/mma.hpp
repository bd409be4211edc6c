// SPDX-License-Identifier: MIT OR Apache-2.0
// The tensor-core inner product of mma.sync m16n8k16 (BF16 x BF16 + FP32 -> FP32), one output
// element at a time, as a per-architecture policy (NUMERICS.md 1.1 and 3).
#pragma once
#include <cstdint>
#include <string_view>

namespace w8a16::ref {

enum class Arch { sm90, sm80 };

// How one k16 instruction forms d = c + sum a_k*b_k. The instruction is `blocks` chained fused
// steps of 16/blocks products each; a step aligns its nonzero terms to the largest exponent field
// E, truncates each to a grid of 2^(E - 23 - extra_bits), sums exactly and rounds the sum toward
// zero to FP32 (the step is spelled out in mma.cpp).
struct MmaPolicy {
  std::string_view name;
  int blocks;         // fused steps per k16 instruction
  int extra_bits;     // grid bits below FP32's 23 fraction bits
  int min_align_exp;  // E is clamped to at least this (the grid never gets finer than
                      // 2^(min_align_exp - 23 - extra_bits))
  bool verified;      // true only where recordings from that hardware confirm every rule
  std::string_view evidence;
};

// The alignment exponent's floor on sm_90, measured by this project's probe (golden/mma/h200/,
// regime h200_7_subnormal_outputs): when every term is tiny (subnormal BF16 activations times
// small weights, c = +-0), E = max(ea + eb) can fall below -133, yet the H200 aligns on the grid of
// E = -133, i.e. 2^-158, the exponent of BF16's smallest subnormal (2^-133) less 25 (NUMERICS.md
// 1.1 rule 3). Without the floor the model misses 4 of 32,768 dot products there; a floor at
// E = -133 is the only one consistent with all 1,641,856 recorded dot products (-132 .. -128 break
// hundreds of golden/mma/h200-vectors, -134 and -135 leave 4 and 2 of the probe's).
inline constexpr int kSm90MinAlignExp = -133;
inline constexpr int kNoAlignFloor = -(1 << 20);  // below every exponent a term can have

// sm_90 (H100/H200): one fused step of 17 terms, 2 extra bits. Verified: NUMERICS.md 1.1, the
// 10 recorded regimes of golden/mma/h200-vectors/, and the project's probe recordings of both
// instructions the kernels use: mma.sync m16n8k16 and wgmma m64n8k16 (A from shared memory and
// from registers, scale-d 1 and 0), golden/mma/h200/.
inline constexpr MmaPolicy kMmaSm90{
    "sm90",
    1,
    2,
    kSm90MinAlignExp,
    true,
    "H200 recordings of mma.sync.m16n8k16 (golden/mma/h200-vectors, NUMERICS.md 1.1; golden/mma/h200/h200_<i>_*.mmav) "
    "and wgmma.mma_async.m64n8k16 ss/rs, scale-d 1/0 (golden/mma/h200/h200_wgmma_m64n8k16_*.mmav)"};
// sm_80 (A100): two chained blocks of 8 products with 1 extra bit, as published; NOT verified
// here: no A100 recording confirms it.
// Its alignment floor is unknown: no floor is assumed.
inline constexpr MmaPolicy kMmaSm80{"sm80",        2,     1,
                                    kNoAlignFloor, false, "published model only; no recording in this project"};

constexpr const MmaPolicy& mma_policy(Arch arch) { return arch == Arch::sm90 ? kMmaSm90 : kMmaSm80; }
bool parse_arch(std::string_view text, Arch* out);

// One fused step of `count` products plus c (count <= 16). a and b are BF16 bits, c FP32 bits.
std::uint32_t mma_fused_step_bits(std::uint32_t c_bits, const std::uint16_t* a, const std::uint16_t* b, int count,
                                  int extra_bits, int min_align_exp);

// d = mma(c, a[0..15], b[0..15]) for one output element under `policy`. FP32 bits in and out.
std::uint32_t mma_k16_bits(const MmaPolicy& policy, std::uint32_t c_bits, const std::uint16_t a[16],
                           const std::uint16_t b[16]);
inline std::uint32_t mma_k16_bits(Arch arch, std::uint32_t c_bits, const std::uint16_t a[16],
                                  const std::uint16_t b[16]) {
  return mma_k16_bits(mma_policy(arch), c_bits, a, b);
}

}  // namespace w8a16::ref
