// SPDX-License-Identifier: MIT OR Apache-2.0
// The work limits of the commands that run cases (--max-macs, --max-bytes) and what one case costs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"

namespace w8a16::props {

// The work limits of the commands that run cases: no case starts whose multiply-adds or host
// memory exceed them; the command refuses, names the case and says how to raise the limit.
// Defaults fit a laptop: 2^34 multiply-adds (four times the largest committed case, the model
// shapes 16 x 51200 x 5120; minutes of emulation on two cores) and 4 GiB.
inline constexpr std::uint64_t kDefaultMaxMacs = std::uint64_t{1} << 34;
inline constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{4} << 30;
struct WorkLimits {
  std::uint64_t max_macs = kDefaultMaxMacs;
  std::uint64_t max_bytes = kDefaultMaxBytes;
};
// What running one case costs: m * n * k multiply-adds (the emulator computes every output on the
// host, whatever the backend), and the host bytes of its inputs, the backend's copies, the expected
// and produced C and the simulation's bookkeeping, at their largest at one time.
struct CaseCost {
  std::uint64_t macs = 0;
  std::uint64_t host_bytes = 0;
  std::uint64_t a_bytes = 0, w_bytes = 0, s_bytes = 0;  // the operands as regenerated (case_inputs.hpp)
};
CaseCost case_cost(const golden::Case& c);

// "" when every case fits the limits; else one line per case over a limit (at most 5, then a
// count), each naming its source, what it needs, the limit and the option value that admits it.
std::string over_limits(const std::vector<golden::Case>& cases, const std::vector<std::string>& sources,
                        const WorkLimits& limits);
// The same for work described by its totals (an operand bundle, a benchmark's host buffers).
std::string over_limits(const std::string& what, const CaseCost& cost, const WorkLimits& limits);

// The same rule for the cases of a callable's run (Python's identify and invariance, which have
// no --max-macs): "" when each is a case (golden::case_problem) within the default limits, else the
// first that is not, named by its source, with what to ask for less of.
std::string callable_over_limits(const std::vector<golden::Case>& cases, const std::vector<std::string>& sources);

// 17179869184 -> "17179869184 (2^34)", 5000000000 -> "5000000000 (about 5.0e9)".
std::string count_text(std::uint64_t v);

}  // namespace w8a16::props
