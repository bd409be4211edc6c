// SPDX-License-Identifier: MIT OR Apache-2.0
// Names of the error codes, for messages and test output.
#include "w8a16/device/status.hpp"

namespace w8a16::device {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::m_zero: return "m_zero";
    case Errc::k_not_block_multiple: return "k_not_block_multiple";
    case Errc::a_pitch_short: return "a_pitch_short";
    case Errc::c_pitch_short: return "c_pitch_short";
    case Errc::a_pitch_misaligned: return "a_pitch_misaligned";
    case Errc::n_zero: return "n_zero";
    case Errc::null_pointer: return "null_pointer";
    case Errc::misaligned_pointer: return "misaligned_pointer";
    case Errc::index_overflow: return "index_overflow";
    case Errc::gemv_too_many_rows: return "gemv_too_many_rows";
    case Errc::grid_too_large: return "grid_too_large";
    case Errc::smem_too_large: return "smem_too_large";
    case Errc::output_overlaps_input: return "output_overlaps_input";
    case Errc::kernel_missing: return "kernel_missing";
    case Errc::backend_error: return "backend_error";
    case Errc::simulation_finding: return "simulation_finding";
    case Errc::context_lost: return "context_lost";
    case Errc::launch_timeout: return "launch_timeout";
    case Errc::no_device: return "no_device";
  }
  return "unknown";
}

}  // namespace w8a16::device
