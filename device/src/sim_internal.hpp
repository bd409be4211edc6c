// SPDX-License-Identifier: MIT OR Apache-2.0
// Internals of the simulation backend shared by its two source files.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "w8a16/device/sim_backend.hpp"

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

}  // namespace w8a16::device::sim
