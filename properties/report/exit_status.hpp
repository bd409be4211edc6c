// SPDX-License-Identifier: MIT OR Apache-2.0
// The CLI's exit statuses, on their own so that the report writers (report_files.cpp, which the
// report tests compile without the properties library) share them with every subcommand.
#pragma once

namespace w8a16::cli {

// The exit statuses of every subcommand (README "Exit status"): 0 the check passed, 1 a mismatch or
// a failed check, 2 a usage or input error (nothing was checked, or a report could not be written),
// 77 no GPU here for a command that needs one.
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;
// 77: nothing was checked because the command asked for a GPU (--backend cuda, or --module) and this
// machine has none: no CUDA driver, or a driver that sees no device (device::Errc::no_device). A
// GPU gate on a machine without one must read as skipped, never as passed; 77 is the code CTest's
// SKIP_RETURN_CODE and the Automake test harness take for "skipped".
inline constexpr int kExitNoGpu = 77;

}  // namespace w8a16::cli
