// SPDX-License-Identifier: MIT OR Apache-2.0
// Replaying one recorded .mmav file against an MMA policy (used by `vectors` and `verify`).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/golden/mmav.hpp"
#include "w8a16/reference/mma.hpp"

namespace w8a16::props {

struct MmavReplay {
  std::uint64_t dot_products = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> details;  // the first few mismatches: inputs and both results in hex
};

MmavReplay replay_mmav(const golden::MmavFile& file, const ref::MmaPolicy& policy, int max_details);

}  // namespace w8a16::props
