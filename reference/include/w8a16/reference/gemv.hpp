// SPDX-License-Identifier: MIT OR Apache-2.0
// The scalar GEMV order (NUMERICS.md 2.2): the exact sequence of FP32 operations that
// w8a16_gemv_batch4_strided / w8a16_gemv_batch16_strided perform, which contract.hpp's
// gemv_element_bf16 and gemm_gemv emulate bit for bit.
//
// One warp computes one output column n for each of its rows m. K is cut into 16-element chunks
// (chunk c covers k in [16c, 16c + 16)): one chunk of a weight row is one 16-byte load, and a
// chunk never straddles a 128-K scale block (16 divides 128). Lane l of the warp owns chunks
// c = l, l + 32, l + 64, ... (a warp-wide pass reads 512 contiguous bytes of the weight row:
// fully coalesced 16-byte loads) and processes them in increasing c:
//
//   acc[l] = +0
//   for c = l, l + 32, ... < K/16:                       # lane l, in order
//     p = +0
//     for j = 0 .. 15:                                   # the chunk, in k order
//       p = fma.rn(float(A[m][16c + j]), float(W[n][16c + j]), p)
//     acc[l] = fma.rn(p, S[n/128][16c/128], acc[l])      # scale once per chunk
//   for off = 16, 8, 4, 2, 1:                            # xor butterfly (shfl.sync.bfly)
//     acc[l] = add.rn(acc[l], acc[l ^ off])              # every lane ends with the same value
//   C[m][n] = bf16_rne(acc[0])
//
// BF16 -> FP32 and E4M3 -> FP32 are exact. NaN results are 0x7FFFFFFF in FP32 and 0x7FFF in
// BF16, as on the hardware (NUMERICS.md 1.2). Lanes that own no chunk (K < 512) keep +0 and take
// part in the butterfly: x + (+0) is x except that -0 + +0 = +0, which the emulation reproduces
// by performing the same additions. Against 2.1 this reassociates the K reduction: each product
// rounds (RNE) into a 16-term chain instead of a truncating 17-term fused step, the scale is applied
// per 16 instead of per 128, and the 32 lanes' partial sums meet in a tree.
#pragma once
#include <cstdint>

namespace w8a16::ref {

inline constexpr std::uint32_t kGemvChunk = 16;  // K elements per lane per step (one 16 B load)
inline constexpr std::uint32_t kGemvLanes = 32;  // one warp per output column
inline constexpr std::uint32_t kGemvBatch4MaxRows = 4;
inline constexpr std::uint32_t kGemvBatch16MaxRows = 16;

}  // namespace w8a16::ref
