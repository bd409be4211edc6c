// SPDX-License-Identifier: MIT OR Apache-2.0
// A case's inputs, regenerated from its line on any machine, and the special values they hold.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::golden {

// Operands in the layout of NUMERICS.md 2 (the view reference::GemmView takes).
struct CaseInputs {
  std::vector<std::uint16_t> a_bits;  // BF16 [m][a_row_stride]; columns >= k hold kAPaddingBits
  std::vector<std::uint8_t> w_e4m3;   // E4M3 codes [n][k]
  std::vector<float> s_f32;           // FP32 [ceil(n/128)][k/128], set from exact bit patterns
};

// The emulator's view of a case's operands (pointers into `in`, which must outlive it).
inline ref::GemmView case_view(const Case& c, const CaseInputs& in) {
  return ref::gemm_view(in.a_bits.data(), c.a_row_stride, in.w_e4m3.data(), in.s_f32.data(), c.m, c.n, c.k);
}

// A row pitch's unread tail is a NaN: a kernel that reads past k turns its outputs into NaN.
inline constexpr std::uint16_t kAPaddingBits = 0xFFC1;
// What C holds before a launch. A NaN payload no kernel writes (their NaNs are 0x7FFF,
// NUMERICS.md 1.2), so an output left unwritten, or a pitch gap written, shows.
inline constexpr std::uint16_t kOutputSentinelBits = 0x7FA5;

// Regenerates the inputs for c.gen (every version this build knows keeps producing its bytes).
// On failure (an invalid case, an unknown version) returns false, says why, leaves *out alone.
bool regenerate_inputs(const Case& c, CaseInputs* out, std::string* error);

// C before a launch: [m][c_row_stride] of kOutputSentinelBits.
std::vector<std::uint16_t> sentinel_output(const Case& c);
// Rows of C past m that a launch is given and must leave alone: the campaign, the replays and the
// GPU tests allocate C as [m + kOutputGuardRows][c_row_stride], so a write one row past M shows.
inline constexpr std::uint32_t kOutputGuardRows = 2;
// C before a launch with its guard rows: [m + kOutputGuardRows][c_row_stride] of kOutputSentinelBits.
std::vector<std::uint16_t> guarded_sentinel_output(const Case& c);

// FNV-1a 64 over A's bits, W's codes and S's bits (little-endian): pins the generator in tests.
std::uint64_t inputs_digest(const CaseInputs& in);

// Special values present in the read part of the inputs, one bit each. The names are stable
// (they label RC_CLASSIFY output and the campaign's table).
enum SpecialClass : std::uint32_t {
  kSpecialANan = 1u << 0,
  kSpecialAInf = 1u << 1,
  kSpecialASubnormal = 1u << 2,
  kSpecialANegZero = 1u << 3,
  kSpecialAMax = 1u << 4,  // +-0x7F7F, the largest finite BF16
  kSpecialWNan = 1u << 5,  // E4M3 0x7F / 0xFF
  kSpecialWMax = 1u << 6,  // E4M3 0x7E / 0xFE (448)
  kSpecialWSubnormal = 1u << 7,
  kSpecialWNegZero = 1u << 8,  // E4M3 0x80
  kSpecialSZero = 1u << 9,
  kSpecialSNegZero = 1u << 10,
  kSpecialSNegative = 1u << 11,  // finite and < 0
  kSpecialSSubnormal = 1u << 12,
  kSpecialSInf = 1u << 13,
  kSpecialSNan = 1u << 14,
};
inline constexpr int kSpecialClassCount = 15;
std::string_view special_class_name(int bit_index);  // "a_nan", ..., "s_nan"
std::uint32_t special_classes(const Case& c, const CaseInputs& in);

}  // namespace w8a16::golden
