// SPDX-License-Identifier: MIT OR Apache-2.0
// `.mmav` files: tensor-core MMAs recorded on hardware, inputs and outputs (format:
// golden/mma/README.md). Reading and writing; malformed input is an error value, never a crash.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::golden {

inline constexpr char kMmavMagic[8] = {'M', 'M', 'A', 'V', '0', '0', '0', '1'};
// The instruction a file recorded. Every kind stores the same case: 16 x 8 dot products of length 16,
// D[m][n] = MMA(C[m][n]; A[m][0..15], Bt[n][0..15]), so every kind replays the same way.
inline constexpr std::uint32_t kMmavKindM16n8k16Bf16 = 1;  // mma.sync m16n8k16 row.col f32 <- bf16 x bf16 + f32
// wgmma.mma_async m64n8k16 f32 <- bf16 x bf16, its 64 rows the case's 16 four times (all four
// warps' results equal, or the probe records nothing). A from shared memory (ss) or registers (rs);
// scale-d = 1 adds C, scale-d = 0 reads no C and the file stores C = +0 (what it computed).
inline constexpr std::uint32_t kMmavKindWgmmaSsD1 = 2;
inline constexpr std::uint32_t kMmavKindWgmmaRsD1 = 3;
inline constexpr std::uint32_t kMmavKindWgmmaSsD0 = 4;
inline constexpr std::uint32_t kMmavKindWgmmaRsD0 = 5;
// The instruction of a kind as text ("" for an unknown kind), e.g.
// "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16, A from registers, scale-d 0".
const char* mmav_kind_instruction(std::uint32_t kind);
inline constexpr std::size_t kMmavHeaderBytes = 16;
inline constexpr std::size_t kMmavCaseBytes = 1792;

// One recorded mma.sync m16n8k16: D[m][n] = MMA(C[m][n]; A[m][0..15], Bt[n][0..15]).
struct MmavCase {
  std::array<std::uint16_t, 16 * 16> a;  // BF16 bits, row m, column k
  std::array<std::uint16_t, 8 * 16> bt;  // BF16 bits, row n, column k (B transposed)
  std::array<std::uint32_t, 16 * 8> c;   // FP32 bits, row m, column n
  std::array<std::uint32_t, 16 * 8> d;   // FP32 bits: the device's result
};

struct MmavFile {
  std::uint32_t kind = kMmavKindM16n8k16Bf16;
  std::vector<MmavCase> cases;
};

// Parses bytes; on failure returns false and says why in *error (names the offset or field).
bool parse_mmav(const std::uint8_t* data, std::size_t size, MmavFile* out, std::string* error);
// A regular file of at most kMaxInputFileBytes (files.hpp); *error says why without the path.
bool read_mmav_file(const std::string& path, MmavFile* out, std::string* error);
std::vector<std::uint8_t> serialize_mmav(const MmavFile& file);

}  // namespace w8a16::golden
