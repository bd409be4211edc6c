// SPDX-License-Identifier: MIT OR Apache-2.0
// The operands a timing runs on: random, never all zero (zeros can run faster than real data and
// hide unwritten outputs), the same bytes on every machine for a seed.
#pragma once
#include <cstdint>
#include <vector>

#include "w8a16/bench/method.hpp"

namespace w8a16::bench {

// A uniform in [-2, 2) rounded to BF16 (so -2 and 2 themselves occur); W every finite E4M3 code
// (the NaN codes 0x7F and 0xFF moved to the largest finite ones below them); S positive in
// [2^-8, 2^-4). Chunks of 2^20 elements draw from their own SplitMix64 streams, so the bytes do not
// depend on the thread count.
struct HostInputs {
  std::vector<std::uint16_t> a;  // [max_m][k] BF16 bits
  std::vector<std::uint8_t> w;   // [n][k] E4M3 codes
  std::vector<float> s;          // [ceil(n/128)][k/128]
};
HostInputs make_host_inputs(std::uint32_t max_m, Shape sh, std::uint64_t seed);
// The seed of a shape's inputs in a run seeded with `seed`: each shape draws its own.
std::uint64_t inputs_seed(std::uint64_t seed, Shape sh);

// W * S rounded to BF16 (round to nearest even), [n][k]: the same weights in the form a BF16 GEMM
// (cuBLAS) takes.
std::vector<std::uint16_t> dequantize_bf16(const HostInputs& in, Shape sh);

}  // namespace w8a16::bench
