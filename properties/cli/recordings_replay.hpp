// SPDX-License-Identifier: MIT OR Apache-2.0
// `replay --recordings`: the emulator (and the device, when one is given) against recorded outputs.
#pragma once
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"

namespace w8a16::cli {

// Every .rec file under `paths` (files or folders, sorted). For each recorded case: the emulator's
// output (NUMERICS.md 2.1 / 2.2) and, when `device` is not null, the device's, each against the
// recorded digest (and the full bytes when stored). `gpu` non-empty: every recording must be from
// that GPU (recording.hpp, recording_is_from_gpu). Returns the exit status: 0 all equal, 1 some
// output differs, 2 a path missing, a recording unreadable or from another GPU, or nothing to check.
int replay_recordings(const std::vector<std::string>& paths, const std::string& gpu, device::Backend* device);

}  // namespace w8a16::cli
