// SPDX-License-Identifier: MIT OR Apache-2.0
// One measurement of one plan: its output checked against the emulator's bytes first, then its
// launches timed rotating over the weight copies, then the output the timed launches left checked
// to be the checked one. Over any backend and timer (the CUDA backend and GpuSession on the GPU;
// the simulation and a stand-in timer in the tests).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/bench/check.hpp"
#include "w8a16/bench/timer.hpp"
#include "w8a16/device/backend.hpp"

namespace w8a16::bench {

// A shape's operands on the device: A [max_m][k], C [max_m][n], and `copies` identical copies of W
// and S (method.hpp rotation_copies) that launch i reads copy i % copies of.
struct DeviceOperands {
  std::unique_ptr<device::Buffer> a, c;
  std::vector<std::unique_ptr<device::Buffer>> w, s;
  int copies() const { return static_cast<int>(w.size()); }
};
// False with *why (the backend's message) when an allocation or upload fails.
bool upload_operands(device::Backend& backend, const HostInputs& in, Shape sh, std::uint32_t max_m, int copies,
                     DeviceOperands* out, std::string* why);

struct MeasureOptions {
  int reps = 20;      // launches per timed batch (at least one per weight copy)
  int batches = 15;   // timed batches; the median is reported
  bool graph = true;  // try a CUDA graph of the launches
};

// The plan's launches timed on `timer` (on its stream), launch i with the weights and scales of copy
// i % copies.
Timing time_plan(device::Backend& backend, Timer& timer, const device::Plan& plan, const DeviceOperands& ops,
                 const MeasureOptions& opt);

struct Measurement {
  bool launched = false;  // the checking launch ran
  Check check;            // its output against the emulator
  Timing timing;
  bool stable = false;  // C after the timed launches == C that was checked
  std::string error;
  // The bytes are right: launched, no mismatch, and the timed launches left them unchanged.
  bool bytes_ok() const { return launched && check.mismatches == 0 && stable; }
};
// Correct first: C is poisoned (0xFF bytes: 0xFFFF is a NaN no output of these inputs has), the plan
// launched once on copy 0 and compared with `expected` for its contract; then timed
// (max(reps, copies) launches per batch, so every copy is read); then C is read back again. The
// plan goes to the timer's stream; its weight and scale pointers are the copies'.
Measurement measure_plan(device::Backend& backend, Timer& timer, device::Plan plan, const DeviceOperands& ops,
                         Expected& expected, const MeasureOptions& opt);

}  // namespace w8a16::bench
