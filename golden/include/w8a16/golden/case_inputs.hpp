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

// lone_specials: the activation_like bulk and exactly one special operand of a kind, at a 128-K
// step (a scale block's column of S, NUMERICS.md 2), both named by the seed's low four bits, so that
// a coverage case asks for one (properties/coverage.hpp) and its line says which it holds:
//   seed bits 0-1, the kind:  0 a NaN code of W (0x7F or 0xFF), 1 a NaN activation, 2 an Inf or
//                              NaN scale, 3 one of the three drawn from the seed;
//   seed bits 2-3, the step:  0 the first, 1 a middle one (drawn strictly between the first and the
//                              last; with fewer than three steps, step steps/2), 2 the last,
//                              3 any step drawn from the seed.
// Everything else about the special (the row or column, the K inside the step, the value and its
// sign) is drawn from the seed (case_inputs.cpp).
enum class LoneKind : std::uint8_t { w_nan, a_nan, s_inf_nan };
enum class LoneStep : std::uint8_t { first, middle, last };
inline constexpr LoneKind kLoneKinds[] = {LoneKind::w_nan, LoneKind::a_nan, LoneKind::s_inf_nan};
inline constexpr LoneStep kLoneSteps[] = {LoneStep::first, LoneStep::middle, LoneStep::last};
std::string_view lone_kind_name(LoneKind k);  // "w_nan", "a_nan", "s_inf_nan"
std::string_view lone_step_name(LoneStep s);  // "first", "middle", "last"
// `seed` with its low four bits set to name the kind and the step (the other 60 bits kept).
std::uint64_t lone_specials_seed(std::uint64_t seed, LoneKind kind, LoneStep step);

// The one special operand a case's inputs hold, read back from the operands (never from the
// line): found only when the read part of A, W and S holds exactly one NaN or Inf activation,
// NaN code or Inf or NaN scale, and it is of a LoneKind (an Inf activation is none). `step` is its
// 128-K step (for a scale: its column of S); `where` is first at step 0, last at the last step
// (steps >= 2), else middle.
struct LoneSpecial {
  bool found = false;
  LoneKind kind = LoneKind::w_nan;
  std::uint32_t step = 0;
  LoneStep where = LoneStep::first;
};
LoneSpecial find_lone_special(const Case& c, const CaseInputs& in);

}  // namespace w8a16::golden
