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
  index_overflow,  // a 32-bit element offset would wrap (plan.hpp: kMaxElementOffsets)
  gemv_too_many_rows,
  grid_too_large,
  smem_too_large,
  output_overlaps_input,
  kernel_missing,  // the entry's kernel resolved to a zero handle and nothing can stand in
  // Backends.
  backend_error,       // the driver or the host refused (message carries its own code)
  simulation_finding,  // SimBackend: the plan's geometry broke a rule (sim_backend.hpp)
  // What the kernel under test did to the run (device/README.md, "When a kernel hangs or faults").
  context_lost,    // a sticky error (illegal address, misaligned address, illegal instruction,
                   // launch failure, ...): the context is unusable and every later call fails
                   // with it, so the case that raised it is the culprit and the rest must run
                   // in a fresh context (the CUDA driver API's CUresult documentation: "the
                   // process must be terminated and relaunched")
  launch_timeout,  // the launch did not complete within its deadline: the kernel hangs
  // A backend that cannot start.
  no_device,  // this machine has no GPU to run on: no CUDA driver (libcuda.so.1), or a driver
              // that sees no device (CUDA_ERROR_NO_DEVICE, or the toolkit's stub library);
              // the CLI's exit status 77 (README "Exit status"): nothing was checked
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
