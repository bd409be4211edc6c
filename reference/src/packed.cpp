// SPDX-License-Identifier: MIT OR Apache-2.0
// The packed weight layout read back (NUMERICS.md 2.3), straight from the formula: each tile's real
// rows, code by code, through packed_code_offset, checking the tile's NaN-table byte on the way.
#include "w8a16/reference/packed.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "w8a16/reference/e4m3fn.hpp"

namespace w8a16::ref {
namespace {

UnpackedWeights refuse(std::string why) {
  UnpackedWeights out;
  out.error = std::move(why);
  return out;
}

std::string hex_code(std::uint8_t code) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", static_cast<unsigned>(code));
  return buf;
}

std::string tile_name(std::uint64_t u, std::uint64_t s) {
  return "tile (u=" + std::to_string(u) + ", s=" + std::to_string(s) + ")";
}

}  // namespace

UnpackedWeights unpack_weights(const std::uint8_t* packed, std::size_t bytes, std::uint32_t n, std::uint32_t k) {
  const std::string shape = "n=" + std::to_string(n) + ", k=" + std::to_string(k);
  if (n == 0) return refuse(shape + ": W needs at least one row");
  if (k == 0 || k % kPackedTileSide != 0) return refuse(shape + ": k is not a positive multiple of 128");
  const std::uint64_t need = packed_weight_bytes(n, k);
  if (need == 0) return refuse(shape + " need more than 2^64 bytes");
  if (bytes != need)
    return refuse("packed W holds " + std::to_string(bytes) + " bytes; " + shape + " need " + std::to_string(need));
  if (packed == nullptr)
    return refuse("packed W is a null pointer; " + shape + " need " + std::to_string(need) + " bytes");

  const std::uint64_t units = (std::uint64_t{n} + kPackedTileSide - 1) / kPackedTileSide;
  const std::uint64_t steps = k / kPackedTileSide;
  const std::uint8_t* table = packed + units * steps * kPackedTileBytes;

  // The formula once per tile position, not once per code (the reader runs on operands of ~300 MB).
  std::vector<std::uint16_t> offset(kPackedTileBytes);
  for (std::uint32_t r = 0; r < kPackedTileSide; ++r)
    for (std::uint32_t c = 0; c < kPackedTileSide; ++c)
      offset[r * kPackedTileSide + c] = static_cast<std::uint16_t>(packed_code_offset(r, c));

  UnpackedWeights out;
  out.w.resize(std::size_t{n} * k);
  for (std::uint64_t u = 0; u < units; ++u) {
    // Rows of this unit that exist in W; the rest are padding and never read.
    const std::uint64_t real_rows = std::min<std::uint64_t>(kPackedTileSide, n - u * kPackedTileSide);
    for (std::uint64_t s = 0; s < steps; ++s) {
      const std::uint8_t flag = table[u * steps + s];
      if (flag > 1)
        return refuse("NaN table byte of " + tile_name(u, s) + " is " + std::to_string(flag) + ": must be 0 or 1");
      const std::uint8_t* tile = packed + (u * steps + s) * kPackedTileBytes;
      for (std::uint32_t r = 0; r < real_rows; ++r) {
        const std::uint64_t row = u * kPackedTileSide + r;
        std::uint8_t* dst = out.w.data() + row * k + s * kPackedTileSide;
        const std::uint16_t* row_offset = offset.data() + r * kPackedTileSide;
        for (std::uint32_t c = 0; c < kPackedTileSide; ++c) dst[c] = tile[row_offset[c]];
        if (flag != 0) continue;
        // Rows in order, columns in order: the NaN named is the tile's first in W's row-major order.
        for (std::uint32_t c = 0; c < kPackedTileSide; ++c)
          if (e4m3fn_is_nan(dst[c]))
            return refuse("NaN table byte of " + tile_name(u, s) + " is 0 but the tile holds NaN code " +
                          hex_code(dst[c]) + " at W[" + std::to_string(row) + "][" +
                          std::to_string(s * kPackedTileSide + c) + "]");
      }
    }
  }
  out.ok = true;
  return out;
}

}  // namespace w8a16::ref
