// SPDX-License-Identifier: MIT OR Apache-2.0
// The launch layer's repack of W into the packed layout that gemm_packed_strided reads
// (NUMERICS.md 2.3; the layout's constants: geometry.hpp). Done once per weight, offline, on the
// host: the emulator reads the result with its own reader (reference/.../packed.hpp), so the two
// sides of the layout are written independently and each checks the other.
#pragma once
#include <cstdint>
#include <vector>

#include "w8a16/device/geometry.hpp"

namespace w8a16::device {

// W [n][k] E4M3 codes, row-major, k a positive multiple of 128, n >= 1: its tiles in the fragment
// order, rows past n as code 0, then the NaN table (1 where a tile holds a 0x7F or 0xFF code).
// packed_weight_bytes(n, k) bytes; empty for a shape with no packed form.
std::vector<std::uint8_t> pack_weights(const std::uint8_t* w, std::uint32_t n, std::uint32_t k);

}  // namespace w8a16::device
