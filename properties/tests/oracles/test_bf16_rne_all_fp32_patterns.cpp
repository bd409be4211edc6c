// SPDX-License-Identifier: MIT OR Apache-2.0
// FP32 -> BF16 round-to-nearest-even (NUMERICS.md 1.2) over all 2^32 FP32 bit patterns, against
// CUDA's host __float2bfloat16_rn (every pattern) and Eigen::bfloat16 (every non-NaN pattern).
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "w8a16/reference/bf16.hpp"

#if W8A16_HAVE_CUDA_HOST_HEADERS
#include <cuda_bf16.h>
#endif

namespace {

using w8a16::ref::f32_bits_to_bf16_rne;

struct Mismatches {
  std::atomic<std::uint64_t> count{0};
  std::mutex mutex;
  std::vector<std::string> first;
  void add(std::uint32_t x, std::uint16_t ours, std::uint16_t theirs) {
    if (count.fetch_add(1) >= 8) return;
    std::ostringstream s;
    s << std::hex << "f32 0x" << x << ": emulator 0x" << ours << ", oracle 0x" << theirs;
    std::lock_guard<std::mutex> lock(mutex);
    first.push_back(s.str());
  }
};

// Splits [0, 2^32) into 256 slices handed out to every core; check(x) says whether it compared x.
// Returns how many patterns were compared.
template <class Check>
std::uint64_t for_all_f32_patterns(Check check) {
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint64_t> compared{0};
  auto worker = [&] {
    std::uint64_t local = 0;
    for (std::uint32_t slice; (slice = next.fetch_add(1)) < 256;) {
      const std::uint32_t begin = slice << 24;
      for (std::uint32_t low = 0; low < (1u << 24); ++low) local += check(begin | low) ? 1 : 0;
    }
    compared += local;
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return compared.load();
}

std::string report(Mismatches& m) {
  std::string s;
  for (const auto& line : m.first) s += line + "\n";
  return s;
}

TEST(Bf16RneAllPatterns, EveryNonNanPatternMatchesEigenBfloat16) {
  Mismatches bad;
  const std::uint64_t compared = for_all_f32_patterns([&](std::uint32_t x) {
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return false;
    float f;
    std::memcpy(&f, &x, sizeof f);
    const std::uint16_t theirs = Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
    const std::uint16_t ours = f32_bits_to_bf16_rne(x);
    if (ours != theirs) bad.add(x, ours, theirs);
    return true;
  });
  EXPECT_EQ(bad.count.load(), 0u) << report(bad);
  EXPECT_EQ(compared, (1ull << 32) - 2 * ((1ull << 23) - 1));  // all but the 2 * (2^23 - 1) NaNs
}

#if W8A16_HAVE_CUDA_HOST_HEADERS
TEST(Bf16RneAllPatterns, EveryPatternMatchesCudaHostFloat2Bfloat16Rn) {
  Mismatches bad;
  const std::uint64_t compared = for_all_f32_patterns([&](std::uint32_t x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    const __nv_bfloat16_raw raw = __float2bfloat16_rn(f);
    const std::uint16_t ours = f32_bits_to_bf16_rne(x);
    if (ours != raw.x) bad.add(x, ours, raw.x);
    return true;
  });
  EXPECT_EQ(bad.count.load(), 0u) << report(bad);
  EXPECT_EQ(compared, 1ull << 32);
}
#else
TEST(Bf16RneAllPatterns, EveryPatternMatchesCudaHostFloat2Bfloat16Rn) {
  GTEST_SKIP() << "cuda_bf16.h not found at configure time: the CUDA host oracle was not checked";
}
#endif

TEST(Bf16RneAllPatterns, NanBecomes7fffAndRoundingLandmarksHold) {
  EXPECT_EQ(f32_bits_to_bf16_rne(0x7FC00000u), 0x7FFF);
  EXPECT_EQ(f32_bits_to_bf16_rne(0xFF800001u), 0x7FFF);
  EXPECT_EQ(f32_bits_to_bf16_rne(0x3F808000u), 0x3F80);  // tie, even stays
  EXPECT_EQ(f32_bits_to_bf16_rne(0x3F818000u), 0x3F82);  // tie, odd goes up
  EXPECT_EQ(f32_bits_to_bf16_rne(0x7F7FFFFFu), 0x7F80);  // FLT_MAX rounds to Inf
  EXPECT_EQ(f32_bits_to_bf16_rne(0x00008000u), 0x0000);  // subnormal tie to even zero
  EXPECT_EQ(f32_bits_to_bf16_rne(0x80018000u), 0x8002);  // negative subnormal tie up
}

}  // namespace
