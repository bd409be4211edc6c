// SPDX-License-Identifier: MIT OR Apache-2.0
// pack_weights (packed.hpp): each tile's 128 rows x 128 K codes to their fragment positions
// (geometry.hpp packed_code_offset), and the NaN table the packed symbols' decode trusts.
#include "w8a16/device/packed.hpp"

namespace w8a16::device {

std::vector<std::uint8_t> pack_weights(const std::uint8_t* w, std::uint32_t n, std::uint32_t k) {
  if (n == 0 || k < kKBlock || k % kKBlock != 0) return {};
  std::vector<std::uint8_t> out(packed_weight_bytes(n, k), 0);
  const std::uint32_t steps = k / kKBlock, units = (n + kPackedTileRows - 1) / kPackedTileRows;
  std::uint8_t* table = out.data() + packed_table_offset(n, k);
  // The offsets of one tile row's 128 codes, the same for every row of a 16-row group position.
  std::uint32_t col_offset[kKBlock];
  for (std::uint32_t u = 0; u < units; ++u)
    for (std::uint32_t r = 0; r < kPackedTileRows && std::uint64_t{u} * kPackedTileRows + r < n; ++r) {
      for (std::uint32_t c = 0; c < kKBlock; ++c) col_offset[c] = packed_code_offset(r, c);
      const std::uint8_t* row = w + (std::uint64_t{u} * kPackedTileRows + r) * k;
      for (std::uint32_t s = 0; s < steps; ++s) {
        std::uint8_t* tile = out.data() + packed_tile_offset(u, s, steps);
        bool nan = false;
        for (std::uint32_t c = 0; c < kKBlock; ++c) {
          const std::uint8_t code = row[s * kKBlock + c];
          tile[col_offset[c]] = code;
          nan |= (code & 0x7F) == 0x7F;  // E4M3 NaN: S.1111.111 (NUMERICS.md 1.2)
        }
        if (nan) table[packed_tile_index(u, s, steps)] = 1;
      }
    }
  return out;
}

}  // namespace w8a16::device
