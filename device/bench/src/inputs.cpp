// SPDX-License-Identifier: MIT OR Apache-2.0
// The timing's operands (inputs.hpp), drawn in parallel chunks.
#include "w8a16/bench/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::bench {
namespace {

std::uint64_t splitmix(std::uint64_t* s) {
  std::uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint16_t to_bf16(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return ref::f32_bits_to_bf16_rne(bits);
}

}  // namespace

std::uint64_t inputs_seed(std::uint64_t seed, Shape sh) {
  return seed ^ (static_cast<std::uint64_t>(sh.n) << 32) ^ sh.k;
}

HostInputs make_host_inputs(std::uint32_t max_m, Shape sh, std::uint64_t seed) {
  HostInputs in;
  in.a.resize(static_cast<std::size_t>(max_m) * sh.k);
  in.w.resize(static_cast<std::size_t>(sh.n) * sh.k);
  in.s.resize(static_cast<std::size_t>((sh.n + 127) / 128) * (sh.k / 128));
  constexpr std::size_t kChunk = 1u << 20;
  const auto chunks = [](std::size_t size) { return static_cast<std::uint32_t>((size + kChunk - 1) / kChunk); };
  ref::parallel_for(chunks(in.w.size()), 0, [&](std::uint32_t c) {
    std::uint64_t st = seed ^ (0x57ull << 56) ^ (static_cast<std::uint64_t>(c) * 0xD1B54A32D192ED03ull);
    const std::size_t end = std::min(in.w.size(), (c + 1) * kChunk);
    for (std::size_t i = c * kChunk; i < end; i += 8) {
      std::uint64_t r = splitmix(&st);
      for (std::size_t j = i; j < std::min(end, i + 8); ++j, r >>= 8) {
        std::uint8_t code = static_cast<std::uint8_t>(r);
        if (ref::e4m3fn_is_nan(code)) code = static_cast<std::uint8_t>(code - 1);  // 0x7F -> 0x7E (448)
        in.w[j] = code;
      }
    }
  });
  ref::parallel_for(chunks(in.a.size()), 0, [&](std::uint32_t c) {
    std::uint64_t st = seed ^ (0xA1ull << 56) ^ (static_cast<std::uint64_t>(c) * 0xD1B54A32D192ED03ull);
    const std::size_t end = std::min(in.a.size(), (c + 1) * kChunk);
    for (std::size_t i = c * kChunk; i < end; ++i)
      in.a[i] = to_bf16(static_cast<float>(static_cast<double>(splitmix(&st) >> 11) * 0x1.0p-53 * 4.0 - 2.0));
  });
  std::uint64_t st = seed ^ (0x5Cull << 56);
  for (float& x : in.s) {
    // The exponent's draw first, then the mantissa's: the order g++ gave the two draws when they
    // were arguments of one call (unspecified in C++, and clang's is the other), kept so that the
    // inputs of the recorded bench runs are the inputs of every build.
    const int exponent = -8 + static_cast<int>(splitmix(&st) % 4);
    const double mantissa = 1.0 + static_cast<double>(splitmix(&st) >> 11) * 0x1.0p-53;
    x = static_cast<float>(std::ldexp(mantissa, exponent));
  }
  return in;
}

std::vector<std::uint16_t> dequantize_bf16(const HostInputs& in, Shape sh) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(sh.n) * sh.k);
  const std::uint32_t steps = sh.k / 128;
  ref::parallel_for(sh.n, 0, [&](std::uint32_t n) {
    for (std::uint32_t k = 0; k < sh.k; ++k)
      out[static_cast<std::size_t>(n) * sh.k + k] = to_bf16(
          ref::e4m3fn_to_f32(in.w[static_cast<std::size_t>(n) * sh.k + k]) *
          in.s[static_cast<std::size_t>(n / 128) * steps + k / 128]);
  });
  return out;
}

}  // namespace w8a16::bench
