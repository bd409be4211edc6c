// SPDX-License-Identifier: MIT OR Apache-2.0
// The packed weight layout of `gemm_packed_strided` (NUMERICS.md 2.3), read back into W [n][k] row-major.
// The emulator's own reading of the specification, sharing nothing with device/: the packed entry
// point's contract is 2.1 on the W this returns.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::ref {

inline constexpr std::uint32_t kPackedTileSide = 128;                                 // rows and K
inline constexpr std::uint64_t kPackedTileBytes = kPackedTileSide * kPackedTileSide;  // 16,384

// units * steps tiles of 16,384 bytes, then one NaN-table byte per tile. 0 when (n, k) has no
// packed form: n == 0, k not a positive multiple of 128, or a size past 2^64.
constexpr std::uint64_t packed_weight_bytes(std::uint32_t n, std::uint32_t k) {
  if (n == 0 || k == 0 || k % kPackedTileSide != 0) return 0;
  const std::uint64_t units = (std::uint64_t{n} + kPackedTileSide - 1) / kPackedTileSide;
  const std::uint64_t steps = k / kPackedTileSide;
  const std::uint64_t tiles = units * steps;  // < 2^50
  if (tiles > UINT64_MAX / (kPackedTileBytes + 1)) return 0;
  return tiles * (kPackedTileBytes + 1);
}

// The byte inside its tile of code W[128u + r][128s + c], r and c in [0, 128): one thread's wgmma
// A fragment (PTX ISA 9.7.15.5.1, m64nNk16 .bf16 from registers). Warp w of a warpgroup takes rows
// [16w, 16w + 16); its lane 4g + t holds, for each 16-K window j, row 16w + g's codes at K 2t,
// 2t+1, 2t+8, 2t+9 and then row 16w + g + 8's at the same K: one 8-byte load per lane and window,
// 256 contiguous bytes per warp.
constexpr std::uint64_t packed_code_offset(std::uint32_t r, std::uint32_t c) {
  const std::uint32_t rr = r % 16, g = rr % 8, h = rr / 8;
  const std::uint32_t j = c / 16, cc = c % 16, p = cc / 8, t = (cc % 8) / 2, b = cc % 2;
  const std::uint32_t lane = 4 * g + t;
  return std::uint64_t{r / 16} * 2048 + j * 256 + lane * 8 + h * 4 + p * 2 + b;
}

struct UnpackedWeights {
  bool ok = false;
  std::string error;            // what is wrong when !ok
  std::vector<std::uint8_t> w;  // W [n][k] row-major when ok; empty otherwise
};

// W from `bytes` bytes of packed W. Refuses (ok = false, w empty, `error` naming the first fault) a
// shape with no packed form, a size other than packed_weight_bytes(n, k), and a NaN-table byte
// that is neither 0 nor 1 or is 0 for a tile whose real rows hold a NaN code (0x7F, 0xFF): a kernel
// trusting that byte would decode those codes as +-480, which no contract models. A table byte of
// 1 on a tile without NaN only costs the kernel its probe and is accepted. Padding rows
// (128u + r >= n) are not read.
UnpackedWeights unpack_weights(const std::uint8_t* packed, std::size_t bytes, std::uint32_t n, std::uint32_t k);

}  // namespace w8a16::ref
