// SPDX-License-Identifier: MIT OR Apache-2.0
// The GPU tests' cases: golden case lines (golden/case.hpp) whose shapes are aimed at each body's edges.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"

namespace w8a16::gputest {

// A case line and the body its shape (and its without= kernels) are aimed at. Everything a
// failure needs to be replayed is the line: `w8a16check repro '<line>'` on any machine.
struct GpuCase {
  golden::Case c;
  device::Body target = device::Body::gemm128_tile;
  std::string line() const { return golden::format_case(c); }
};

// Every kernel of the family, as a without= mask (bit i: golden::kKernelSymbols[i]).
inline constexpr std::uint32_t kAllKernelsMask = (1u << golden::kKernelSymbolCount) - 1;

// The kernels a case aimed at `target` is planned without: the Hopper tier's symbols it is not
// aimed at (every tensor-core entry tries the tier first, and its 128-column symbol goes before the
// 64-column one where both take a shape), so that each symbol, and each body below the tier, is
// reached at any shape. Only kernels in `present` (the module's) are named.
std::uint32_t without_for(device::Body target, std::uint32_t present);

// `count` cases of `entry` aimed at `target`, deterministic in `seed`: M weighted to the tile edges
// of every body, N off multiples of 8/32/128 most of the time, K 128..32768 with the skinny limit's
// edges, padded pitches on strided entries, and the distributions of golden::kAllDistributions in
// turn. `work_cap` bounds m * n * k (the emulator's cost) by shrinking n where the body allows.
std::vector<GpuCase> make_cases(golden::EntryPoint entry, device::Body target, std::uint32_t count, std::uint64_t seed,
                                std::uint64_t work_cap, std::uint32_t present = kAllKernelsMask);

// One awkward shape per body and configuration (tile edges crossed, N off every multiple, padded
// pitches, a partial last round for the row-tile kernel, each of its strip widths and row-block
// counts, each of the Hopper tier's row tiles with units whole and cut): small enough for
// compute-sanitizer.
std::vector<GpuCase> awkward_cases(std::uint32_t present = kAllKernelsMask);

}  // namespace w8a16::gputest
