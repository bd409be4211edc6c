// SPDX-License-Identifier: MIT OR Apache-2.0
// Test operands for the simulation tests: deterministic random A, W, S per shape, and the bytes a
// whole C buffer must hold after a launch (the emulator's values inside [M, N), poison elsewhere).
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "w8a16/device/plan.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::device::testing {

inline constexpr std::uint16_t kPoison16 = 0xA5A5;
inline constexpr std::uint32_t kRowsPastM = 2;  // C has rows beyond M that must stay poisoned

struct Shape {
  std::uint32_t m, n, k, lda, ldc;
  bool operator<(const Shape& o) const { return std::tie(m, n, k, lda, ldc) < std::tie(o.m, o.n, o.k, o.lda, o.ldc); }
};

struct Operands {
  std::vector<std::uint16_t> a;  // [m][lda], padding filled with NaN bits a kernel must not read into C
  std::vector<std::uint8_t> w;   // [n][k]
  std::vector<float> s;          // [ceil(n/128)][k/128]
};

inline std::vector<std::uint16_t> expected_buffer(const Shape& sh, const ref::GemmView& v, bool gemv) {
  std::vector<std::uint16_t> c(std::size_t{sh.m + kRowsPastM} * sh.ldc, kPoison16);
  if (gemv) ref::gemm_gemv(v, c.data(), sh.ldc);
  else ref::gemm_canonical(v, ref::Arch::sm90, c.data(), sh.ldc);
  return c;
}

// Cached per shape: the expected outputs are the slow part, and several entry points share them.
inline const Operands& operands_for(const Shape& sh) {
  static std::map<Shape, Operands> cache;
  auto it = cache.find(sh);
  if (it != cache.end()) return it->second;
  Operands o;
  std::mt19937 rng(sh.m * 1000003u ^ sh.n * 7919u ^ sh.k * 31u ^ sh.lda);
  o.a.assign(std::size_t{sh.m} * sh.lda, 0x7FC1);  // NaN in the pitch padding
  for (std::uint32_t r = 0; r < sh.m; ++r)
    for (std::uint32_t c = 0; c < sh.k; ++c) {
      const std::uint32_t sign = rng() & 1, exp = 120 + rng() % 15, man = rng() & 0x7F;
      o.a[std::size_t{r} * sh.lda + c] = static_cast<std::uint16_t>(sign << 15 | exp << 7 | man);
    }
  o.w.resize(std::size_t{sh.n} * sh.k);
  for (auto& b : o.w) {
    b = static_cast<std::uint8_t>(rng());
    if ((b & 0x7F) == 0x7F) b ^= 1;  // finite codes only (0x7F / 0xFF are NaN)
  }
  o.s.resize(std::size_t{(sh.n + 127) / 128} * (sh.k / 128));
  for (auto& f : o.s) f = std::ldexp(1.0f + (rng() % 256) / 256.0f, -4 + static_cast<int>(rng() % 5));
  return cache.emplace(sh, std::move(o)).first->second;
}

// The whole C buffer, [(m + kRowsPastM)][ldc], after a correct launch under the given contract.
inline const std::vector<std::uint16_t>& expected_for(const Shape& sh, bool gemv) {
  static std::map<std::pair<Shape, bool>, std::vector<std::uint16_t>> cache;
  auto it = cache.find({sh, gemv});
  if (it != cache.end()) return it->second;
  const Operands& o = operands_for(sh);
  const ref::GemmView v = ref::gemm_view(o.a.data(), sh.lda, o.w.data(), o.s.data(), sh.m, sh.n, sh.k);
  return cache.emplace(std::make_pair(sh, gemv), expected_buffer(sh, v, gemv)).first->second;
}

}  // namespace w8a16::device::testing
