// SPDX-License-Identifier: MIT OR Apache-2.0
// Internals of the simulation backend shared by its two source files.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "w8a16/device/sim_backend.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::device::sim {

// Collects findings; keeps the first kKeepPerKind of each kind and counts the rest, so a plan
// that misplaces a million outputs still yields a short report.
class FindingLog {
 public:
  static constexpr std::size_t kKeepPerKind = 8;
  explicit FindingLog(std::vector<Finding>& out) : out_(out) {}
  void add(FindingKind kind, std::string message);
  // Appends "... and N more" lines for the kinds that overflowed.
  void finish();

 private:
  std::vector<Finding>& out_;
  std::size_t counts_[32] = {};
};

void check_launch_shape(const Plan& p, const DeviceLimits& lim, FindingLog& log);

// The persistent stream_units map (geometry.hpp, wgmma_cta_pieces): runs the plan's CTAs in index
// order over their pieces, checks that every unit's 128-K steps are folded exactly once and in
// order (a head's workspace slot read by the next CTA's tail of the same unit, from the step it
// ended at), and calls write(cta, r0, r1, c0, c1) for each unit at the CTA that folds its last step.
using UnitWrite = std::function<void(std::uint32_t cta, std::uint64_t r0, std::uint64_t r1, std::uint64_t c0,
                                     std::uint64_t c1)>;
void run_stream_units(const Plan& p, FindingLog& log, const UnitWrite& write);

// C = the emulator's whole output, [m][n], for the contract (sim_expected.cpp): computed once per
// distinct operands, shape and contract, and remembered within a bound.
std::vector<std::uint16_t> expected_output(const ref::GemmView& v, Contract contract);

// C = [m][n] under a stand-in's conventions and bug (sim_stand_ins.cpp), never remembered: empty
// with *error when its conventions do not define the output (NUMERICS.md 2.4, fold period end
// over scales that change along K).
// `execution` counts the backend's executes: what the nondeterministic variation draws from.
std::vector<std::uint16_t> stand_in_output(const ref::GemmView& v, Contract contract, const BodyStandIn& si,
                                           std::uint64_t execution, std::string* error);

}  // namespace w8a16::device::sim
