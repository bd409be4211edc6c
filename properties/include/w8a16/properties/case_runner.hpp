// SPDX-License-Identifier: MIT OR Apache-2.0
// Running one case: its launch on any backend, the emulator's expected bytes, and their comparison.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"

namespace w8a16::props {

device::Entry to_device_entry(golden::EntryPoint e);

// The call a case makes: the entry's own kernel handle from the backend's registry (by_m: the
// 128-row tile's, plus the twins'), the case's shape and pitches, and the given buffers.
device::Call case_call(const golden::Case& c, const device::KernelRegistry& registry, device::DevPtr a,
                       device::DevPtr w, device::DevPtr s, device::DevPtr out);

struct Launched {
  device::Status status;              // of allocation, upload, launch, synchronize or download
  std::vector<std::uint16_t> c_bits;  // C [m][c_row_stride] after the launch (sentinel before it)
};

// Allocates A, W, S and C on the backend, uploads the inputs, fills C with the sentinel
// (case_inputs.hpp), launches the case's entry point, synchronizes and downloads C.
Launched launch_case(device::Backend& backend, const golden::Case& c, const golden::CaseInputs& in);

// What C must hold afterwards: the emulator's contract for the entry point (NUMERICS.md 2.1 on
// sm_90 for every tensor-core entry, 2.2 for the GEMVs) in the first n of each row, the sentinel
// in the pitch padding. threads = 0 uses every core.
std::vector<std::uint16_t> expected_output(const golden::Case& c, const golden::CaseInputs& in, unsigned threads = 0);

struct Comparison {
  std::uint64_t bytes_compared = 0;  // all of C, padding included
  std::uint64_t mismatches = 0;      // elements whose bits differ
  std::vector<std::string> details;  // the first few: position, expected and produced bits
  bool equal() const { return mismatches == 0; }
};
// Raw bits, element by element; no tolerance anywhere.
Comparison compare_output(const golden::Case& c, const std::vector<std::uint16_t>& expected,
                          const std::vector<std::uint16_t>& produced, std::size_t max_details = 4);

}  // namespace w8a16::props
