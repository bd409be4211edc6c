// SPDX-License-Identifier: MIT OR Apache-2.0
// The emulator's reader of the packed weight layout (packed.hpp, NUMERICS.md 2.3) against a packer
// written here from the specification the other way round: it walks each tile's bytes and computes
// from a byte's offset which code (r, c) belongs there (the inverse of packed_code_offset), and
// sets the NaN table by scanning W itself.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "w8a16/reference/packed.hpp"

namespace {

namespace ref = w8a16::ref;

struct TileCoord {
  std::uint32_t r, c;
};

// Byte o of a tile = (r/16)*2048 + j*256 + lane*8 + h*4 + p*2 + b, lane = 4g + t, read backwards.
TileCoord code_at_tile_byte(std::uint32_t o) {
  const std::uint32_t group = o / 2048, j = (o / 256) % 8, lane = (o / 8) % 32;
  const std::uint32_t h = (o / 4) % 2, p = (o / 2) % 2, b = o % 2;
  const std::uint32_t g = lane / 4, t = lane % 4;
  return {16 * group + 8 * h + g, 16 * j + 8 * p + 2 * t + b};
}

bool is_nan_code(std::uint8_t x) { return x == 0x7F || x == 0xFF; }

// W [n][k] packed: tiles (u, s) in order u * steps + s, then the table. Padding rows get `pad`.
std::vector<std::uint8_t> pack(const std::vector<std::uint8_t>& w, std::uint32_t n, std::uint32_t k,
                               std::uint8_t pad = 0x00) {
  const std::uint32_t units = (n + 127) / 128, steps = k / 128;
  const std::size_t tiles = std::size_t{units} * steps;
  std::vector<std::uint8_t> out(tiles * 16385);
  for (std::uint32_t u = 0; u < units; ++u)
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::size_t tile = std::size_t{u} * steps + s;
      for (std::uint32_t o = 0; o < 16384; ++o) {
        const TileCoord rc = code_at_tile_byte(o);
        const std::size_t row = 128 * std::size_t{u} + rc.r;
        out[tile * 16384 + o] = row < n ? w[row * k + 128 * s + rc.c] : pad;
      }
      bool nan = false;
      for (std::size_t row = 128 * std::size_t{u}; row < n && row < 128 * std::size_t{u} + 128; ++row)
        for (std::uint32_t col = 128 * s; col < 128 * s + 128; ++col) nan = nan || is_nan_code(w[row * k + col]);
      out[tiles * 16384 + tile] = nan ? 1 : 0;
    }
  return out;
}

std::vector<std::uint8_t> random_codes(std::size_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> w(count);
  for (auto& x : w) x = static_cast<std::uint8_t>(gen());  // every code, NaN included (2 in 256)
  return w;
}

// A W with no NaN code at all, so every table byte is 0.
std::vector<std::uint8_t> finite_codes(std::size_t count, std::uint32_t seed) {
  std::vector<std::uint8_t> w = random_codes(count, seed);
  for (auto& x : w)
    if (is_nan_code(x)) x = 0x7E;
  return w;
}

std::size_t table_at(std::uint32_t n, std::uint32_t k) { return std::size_t{(n + 127) / 128} * (k / 128) * 16384; }

TEST(PackedLayout, HandComputedOffsets) {
  EXPECT_EQ(ref::packed_code_offset(0, 0), 0u);
  EXPECT_EQ(ref::packed_code_offset(0, 1), 1u);        // b = 1
  EXPECT_EQ(ref::packed_code_offset(0, 8), 2u);        // p = 1: K 2t+8
  EXPECT_EQ(ref::packed_code_offset(8, 0), 4u);        // h = 1: row g + 8, same lane
  EXPECT_EQ(ref::packed_code_offset(1, 0), 32u);       // g = 1: lane 4
  EXPECT_EQ(ref::packed_code_offset(0, 2), 8u);        // t = 1: lane 1
  EXPECT_EQ(ref::packed_code_offset(16, 0), 2048u);    // next 16-row group (next warp)
  EXPECT_EQ(ref::packed_code_offset(0, 16), 256u);     // next 16-K window
  EXPECT_EQ(ref::packed_code_offset(0, 9), 3u);        // p = 1, b = 1
  EXPECT_EQ(ref::packed_code_offset(9, 9), 32u + 7);   // lane 4, last byte of the lane's 8
  EXPECT_EQ(ref::packed_code_offset(15, 15), 255u);    // g 7, t 3: lane 31, h p b all 1: window 0's end
  EXPECT_EQ(ref::packed_code_offset(15, 127), 2047u);  // the same in window 7: the 16-row group's end
  EXPECT_EQ(ref::packed_code_offset(127, 127), 16383u);
  EXPECT_EQ(ref::packed_code_offset(70, 37), 4u * 2048 + 2 * 256 + (4 * 6 + 2) * 8 + 0 + 0 + 1);
}

TEST(PackedLayout, OffsetMapIsABijectionOnATileAndInvertsTheTestsMap) {
  std::vector<int> hits(16384, 0);
  for (std::uint32_t r = 0; r < 128; ++r)
    for (std::uint32_t c = 0; c < 128; ++c) {
      const std::uint64_t o = ref::packed_code_offset(r, c);
      ASSERT_LT(o, 16384u) << "r=" << r << " c=" << c;
      ++hits[o];
    }
  for (std::uint32_t o = 0; o < 16384; ++o) {
    ASSERT_EQ(hits[o], 1) << "offset " << o;
    const TileCoord rc = code_at_tile_byte(o);
    ASSERT_EQ(ref::packed_code_offset(rc.r, rc.c), o) << "offset " << o;
  }
}

TEST(PackedLayout, OneWarpWindowIs256ContiguousBytesOf8PerLane) {
  // Warp w (rows 16w .. 16w+15), window j: lane 4g + t's 8 bytes are rows g, g+8 at K 2t, 2t+1, 2t+8, 2t+9.
  for (std::uint32_t w = 0; w < 8; ++w)
    for (std::uint32_t j = 0; j < 8; ++j) {
      std::set<std::uint64_t> offsets;
      for (std::uint32_t g = 0; g < 8; ++g)
        for (std::uint32_t t = 0; t < 4; ++t) {
          const std::uint64_t base = w * 2048 + j * 256 + (4 * g + t) * 8;
          const std::uint32_t ks[4] = {2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9};
          for (std::uint32_t i = 0; i < 8; ++i) {
            const std::uint32_t row = 16 * w + g + (i < 4 ? 0 : 8), col = 16 * j + ks[i % 4];
            EXPECT_EQ(ref::packed_code_offset(row, col), base + i);
            offsets.insert(ref::packed_code_offset(row, col));
          }
        }
      EXPECT_EQ(offsets.size(), 256u);
      EXPECT_EQ(*offsets.begin(), w * 2048 + j * 256);
      EXPECT_EQ(*offsets.rbegin(), w * 2048 + j * 256 + 255);
    }
}

TEST(PackedLayout, SizeIsTilesTimes16385AndZeroWithoutAPackedForm) {
  EXPECT_EQ(ref::packed_weight_bytes(1, 128), 16385u);
  EXPECT_EQ(ref::packed_weight_bytes(128, 128), 16385u);
  EXPECT_EQ(ref::packed_weight_bytes(129, 384), 2u * 3 * 16385);
  EXPECT_EQ(ref::packed_weight_bytes(300, 256), 3u * 2 * 16385);
  EXPECT_EQ(ref::packed_weight_bytes(0, 128), 0u);
  EXPECT_EQ(ref::packed_weight_bytes(1, 0), 0u);
  EXPECT_EQ(ref::packed_weight_bytes(1, 100), 0u);
  EXPECT_EQ(ref::packed_weight_bytes(1, 129), 0u);
  // 2^25 units * (2^25 - 1) steps * 16385 bytes is past 2^64.
  EXPECT_EQ(ref::packed_weight_bytes(0xFFFFFFFFu, 0xFFFFFF80u), 0u);
  static_assert(ref::packed_weight_bytes(77, 384) == 3u * 16385, "usable in constant expressions");
}

TEST(PackedLayout, RoundTripsEveryShape) {
  std::uint32_t seed = 1;
  for (std::uint32_t n : {1u, 77u, 128u, 129u, 300u})
    for (std::uint32_t k : {128u, 384u}) {
      const std::vector<std::uint8_t> w = random_codes(std::size_t{n} * k, seed++);
      const std::vector<std::uint8_t> packed = pack(w, n, k);
      ASSERT_EQ(packed.size(), ref::packed_weight_bytes(n, k));
      const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
      ASSERT_TRUE(got.ok) << "n=" << n << " k=" << k << ": " << got.error;
      EXPECT_TRUE(got.error.empty());
      EXPECT_EQ(got.w, w) << "n=" << n << " k=" << k;
    }
}

RC_GTEST_PROP(PackedLayout, RoundTripsRandomShapesAndCodes, ()) {
  const std::uint32_t n = *rc::gen::inRange(1u, 400u), k = 128 * *rc::gen::inRange(1u, 4u);
  const std::vector<std::uint8_t> w = random_codes(std::size_t{n} * k, *rc::gen::arbitrary<std::uint32_t>());
  const auto pad = *rc::gen::arbitrary<std::uint8_t>();
  const std::vector<std::uint8_t> packed = pack(w, n, k, pad);
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  RC_ASSERT(got.ok);
  RC_ASSERT(got.w == w);
}

TEST(PackedLayout, EachCodeLandsWhereTheFormulaSays) {
  // One nonzero code in an all-zero W, at a spread of positions: the packed buffer has exactly that
  // byte set, at tile (u, s) and packed_code_offset(r, c), and the reader puts it back.
  const std::uint32_t n = 300, k = 384;
  for (std::uint32_t row : {0u, 1u, 8u, 15u, 16u, 127u, 128u, 200u, 299u})
    for (std::uint32_t col : {0u, 1u, 2u, 8u, 9u, 16u, 127u, 128u, 255u, 383u}) {
      std::vector<std::uint8_t> w(std::size_t{n} * k, 0);
      w[std::size_t{row} * k + col] = 0x42;
      const std::vector<std::uint8_t> packed = pack(w, n, k);
      const std::size_t at = (std::size_t{row / 128} * (k / 128) + col / 128) * 16384 +
                             ref::packed_code_offset(row % 128, col % 128);
      for (std::size_t i = 0; i < packed.size(); ++i)
        ASSERT_EQ(packed[i], i == at ? 0x42 : 0x00) << "W[" << row << "][" << col << "], byte " << i;
      const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
      ASSERT_TRUE(got.ok) << got.error;
      ASSERT_EQ(got.w, w);
    }
}

TEST(PackedNanTable, ANanCodeSetsItsTilesByteAndTheReaderKeepsTheCode) {
  const std::uint32_t n = 200, k = 384;
  std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 7);
  w[150 * k + 130] = 0x7F;  // tile (1, 1)
  w[3 * k + 300] = 0xFF;    // tile (0, 2)
  const std::vector<std::uint8_t> packed = pack(w, n, k);
  const std::size_t t = table_at(n, k);
  const std::vector<std::uint8_t> table(packed.begin() + t, packed.end());
  EXPECT_EQ(table, (std::vector<std::uint8_t>{0, 0, 1, 0, 1, 0}));
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(got.w, w);
}

TEST(PackedNanTable, AFlagOnATileWithoutNanIsAccepted) {
  // 1 only makes the kernel probe the tile; it cannot change a value.
  const std::uint32_t n = 77, k = 256;
  const std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 8);
  std::vector<std::uint8_t> packed = pack(w, n, k);
  packed[table_at(n, k) + 1] = 1;
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(got.w, w);
}

TEST(PackedNanTable, AZeroOnATileWithANanCodeIsRefusedNamingTheTileAndTheCode) {
  const std::uint32_t n = 300, k = 384;
  std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 9);
  w[std::size_t{260} * k + 140] = 0xFF;  // tile (2, 1), a real row of the last, partial unit
  w[std::size_t{259} * k + 200] = 0x7F;  // same tile, an earlier row: named first
  std::vector<std::uint8_t> packed = pack(w, n, k);
  ASSERT_EQ(packed[table_at(n, k) + 2 * 3 + 1], 1);
  packed[table_at(n, k) + 2 * 3 + 1] = 0;
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  EXPECT_FALSE(got.ok);
  EXPECT_TRUE(got.w.empty());
  EXPECT_EQ(got.error, "NaN table byte of tile (u=2, s=1) is 0 but the tile holds NaN code 0x7F at W[259][200]");
}

TEST(PackedNanTable, ATableByteOtherThan0Or1IsRefused) {
  const std::uint32_t n = 129, k = 128;
  const std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 10);
  for (std::uint8_t bad : {std::uint8_t{2}, std::uint8_t{7}, std::uint8_t{0xFF}}) {
    std::vector<std::uint8_t> packed = pack(w, n, k);
    packed[table_at(n, k) + 1] = bad;
    const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
    EXPECT_FALSE(got.ok);
    EXPECT_TRUE(got.w.empty());
    EXPECT_EQ(got.error, "NaN table byte of tile (u=1, s=0) is " + std::to_string(bad) + ": must be 0 or 1");
  }
}

TEST(PackedNanTable, TheFirstBadTableByteIsTheOneReported) {
  const std::uint32_t n = 256, k = 256;
  std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 11);
  w[std::size_t{5} * k + 130] = 0x7F;  // tile (0, 1)
  std::vector<std::uint8_t> packed = pack(w, n, k);
  packed[table_at(n, k) + 1] = 0;  // tile (0, 1) lies
  packed[table_at(n, k) + 3] = 2;  // tile (1, 1) is out of range, later
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  EXPECT_FALSE(got.ok);
  EXPECT_EQ(got.error, "NaN table byte of tile (u=0, s=1) is 0 but the tile holds NaN code 0x7F at W[5][130]");
}

TEST(PackedNanTable, ANanCodeInAPaddingRowNeedsNoFlag) {
  const std::uint32_t n = 77, k = 384;
  const std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 12);
  std::vector<std::uint8_t> packed = pack(w, n, k);
  packed[2 * 16384 + ref::packed_code_offset(77, 5)] = 0x7F;  // tile (0, 2), first padding row
  packed[0 * 16384 + ref::packed_code_offset(127, 127)] = 0xFF;
  ASSERT_EQ(packed[table_at(n, k) + 2], 0);
  const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), packed.size(), n, k);
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(got.w, w);
}

TEST(PackedLayout, PaddingBytesAreIgnored) {
  for (std::uint32_t n : {1u, 77u, 129u, 300u}) {
    const std::uint32_t k = 384;
    const std::vector<std::uint8_t> w = random_codes(std::size_t{n} * k, 13 + n);
    const std::vector<std::uint8_t> zero_pad = pack(w, n, k, 0x00), odd_pad = pack(w, n, k, 0xAB);
    ASSERT_NE(zero_pad, odd_pad);
    const ref::UnpackedWeights a = ref::unpack_weights(zero_pad.data(), zero_pad.size(), n, k);
    const ref::UnpackedWeights b = ref::unpack_weights(odd_pad.data(), odd_pad.size(), n, k);
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_EQ(a.w, w);
    EXPECT_EQ(b.w, w);
  }
}

TEST(PackedLayout, AWrongSizeIsRefused) {
  const std::uint32_t n = 129, k = 384;
  const std::vector<std::uint8_t> w = finite_codes(std::size_t{n} * k, 14);
  std::vector<std::uint8_t> packed = pack(w, n, k);
  const std::size_t right = packed.size();  // 2 * 3 * 16385 = 98310
  packed.push_back(0);
  for (std::size_t bytes : {right - 1, right + 1, table_at(n, k), std::size_t{0}}) {
    const ref::UnpackedWeights got = ref::unpack_weights(packed.data(), bytes, n, k);
    EXPECT_FALSE(got.ok);
    EXPECT_TRUE(got.w.empty());
    EXPECT_EQ(got.error, "packed W holds " + std::to_string(bytes) + " bytes; n=129, k=384 need 98310");
  }
  // The right size for another shape is the wrong one for this one.
  const ref::UnpackedWeights other = ref::unpack_weights(packed.data(), right, 128, k);
  EXPECT_FALSE(other.ok);
  EXPECT_EQ(other.error, "packed W holds 98310 bytes; n=128, k=384 need 49155");
}

TEST(PackedLayout, AShapeWithoutAPackedFormIsRefused) {
  const std::vector<std::uint8_t> buf(16385, 0);
  for (auto [n, k] : {std::pair{0u, 128u}, std::pair{1u, 0u}, std::pair{1u, 100u}, std::pair{1u, 192u}}) {
    const ref::UnpackedWeights got = ref::unpack_weights(buf.data(), buf.size(), n, k);
    EXPECT_FALSE(got.ok) << "n=" << n << " k=" << k;
    EXPECT_NE(got.error.find("n=" + std::to_string(n) + ", k=" + std::to_string(k)), std::string::npos) << got.error;
  }
  const ref::UnpackedWeights null = ref::unpack_weights(nullptr, 16385, 1, 128);
  EXPECT_FALSE(null.ok);
  EXPECT_FALSE(null.error.empty());
}

}  // namespace
