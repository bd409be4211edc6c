// SPDX-License-Identifier: MIT OR Apache-2.0
// Errors as values: every entry point, plan and backend call returns a Status (code + a message
// that names the argument, its value and the rule it broke); nothing in the launch layer throws.
#pragma once
#include <string>
#include <utility>

namespace w8a16::device {

enum class Errc {
  ok = 0,
  // The seed's checks (docs/KERNEL_ABI.md 3; seed lines 105-123).
  m_zero,                // m >= 1
  k_not_block_multiple,  // K a positive multiple of 128
  a_pitch_short,         // a_row_stride >= k
  c_pitch_short,         // c_row_stride >= n
  a_pitch_misaligned,    // a_row_stride % 8 == 0
  // What a real user also needs.
  n_zero,
  null_pointer,
  misaligned_pointer,
  index_overflow,        // a 32-bit element offset would wrap (plan.hpp: kMaxElementOffsets)
  gemv_too_many_rows,
  grid_too_large,
  smem_too_large,
  output_overlaps_input,
  kernel_missing,        // the entry's kernel resolved to a zero handle and nothing can stand in
  // Backends.
  backend_error,         // the driver or the host refused (message carries its own code)
  simulation_finding,    // SimBackend: the plan's geometry broke a rule (sim_backend.hpp)
};

const char* errc_name(Errc code);

struct Status {
  Errc code = Errc::ok;
  std::string message;

  bool ok() const { return code == Errc::ok; }
  static Status success() { return {}; }
  static Status error(Errc c, std::string msg) { return {c, std::move(msg)}; }
};

}  // namespace w8a16::device
