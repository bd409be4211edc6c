// SPDX-License-Identifier: MIT OR Apache-2.0
// The hostile-input catalogue's harness: operands, one launch through the seed's named entry points
// on the simulation backend, the emulator's expected bytes, and a per-class count of cases.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "w8a16/device/api.hpp"
#include "w8a16/device/sim_backend.hpp"

namespace w8a16::hostile {

using device::DevPtr;
using device::Entry;

// Every entry point, the packed one with W packed as its callers pack it (device_weight).
inline constexpr const auto& kEntries = device::kAllEntries;

inline constexpr std::uint16_t kPoison16 = 0xA5A5;  // C before a launch: a NaN payload no kernel writes
inline constexpr std::uint16_t kAPadding = 0xFFC1;  // A's unread pitch tail: a NaN that shows if read
inline constexpr std::uint32_t kRowsPastM = 2;      // C rows beyond M that must stay poisoned

// ---- the catalogue's count ------------------------------------------------------------------
// Cases per class, printed by each test as it ends and, for a whole run, by hostile_main.cpp.
std::map<std::string, int>& catalogue();
inline void count_case(const std::string& cls, int n = 1) { catalogue()[cls] += n; }

// Counts the cases one test adds to its class and prints the line when the test ends, so that a
// CTest log (one test per process) shows every class's count beside its verdict.
class ClassCounter {
 public:
  explicit ClassCounter(std::string cls) : cls_(std::move(cls)), before_(catalogue()[cls_]) {}
  ~ClassCounter() { std::printf("[catalogue] %s: %d cases\n", cls_.c_str(), catalogue()[cls_] - before_); }
  void add(int n = 1) { count_case(cls_, n); }

 private:
  std::string cls_;
  int before_;
};

// ---- operands -----------------------------------------------------------------------------
struct Problem {
  std::uint32_t m = 1, n = 1, k = 128, lda = 128, ldc = 1;
  std::vector<std::uint16_t> a;  // BF16 bits [m][lda]; columns >= k hold kAPadding
  std::vector<std::uint8_t> w;   // E4M3 codes [n][k]
  std::vector<float> s;          // FP32 [ceil(n/128)][k/128]

  std::uint16_t& a_at(std::uint32_t r, std::uint32_t c) { return a[std::size_t{r} * lda + c]; }
  std::uint8_t& w_at(std::uint32_t r, std::uint32_t c) { return w[std::size_t{r} * k + c]; }
  float& s_at(std::uint32_t block_row, std::uint32_t step) { return s[std::size_t{block_row} * (k / 128) + step]; }
};

// Ordinary finite operands (BF16 exponents 2^-7..2^7, finite E4M3 codes, scales 2^-4..2^0 with
// a mantissa), deterministic in `seed`. Contiguous entry points get tight pitches whatever the pads.
Problem make_problem(Entry e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda_pad,
                     std::uint32_t ldc_pad, std::uint64_t seed);

// W's bytes as the entry point takes them: the codes [n][k], or for gemm_packed_strided the packed
// layout of them (device::pack_weights, NUMERICS.md 2.3).
std::vector<std::uint8_t> device_weight(Entry e, const Problem& p);

// ---- one launch ---------------------------------------------------------------------------
struct Handles {
  device::KernelHandle own, m32, m64;  // own: the entry's kernel (by_m: the 128-row tile's)
};
Handles handles_for(Entry e, const device::KernelRegistry& reg);

// Calls the seed's named entry point for `e` (api.hpp), in its argument order.
device::Status call_named(device::Launcher& api, Entry e, const Handles& h, DevPtr a, DevPtr w, DevPtr s, DevPtr c,
                          std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t lda, std::uint32_t ldc);

struct Outcome {
  device::Status status;
  std::size_t plans = 0;              // plans the backend received
  device::Plan plan;                  // the first, when there is one
  std::vector<std::uint16_t> c;       // the whole C buffer: [m + kRowsPastM][ldc]
  bool inputs_unchanged = false;      // A, W and S hold their uploaded bytes afterwards
  std::vector<std::string> findings;  // the simulation's, if any
};

// Uploads the problem to a fresh SimBackend, poisons C, launches `e` and reads everything back.
Outcome run_sim(Entry e, const Problem& p, device::StaticRegistry reg = device::StaticRegistry::all_present(),
                device::DeviceLimits limits = device::DeviceLimits::h200());

// The C buffer a correct launch leaves: the emulator's contract for the entry point (GEMVs:
// NUMERICS.md 2.2; every other entry: 2.1 on sm_90) in [M, N), poison everywhere else. Computed on
// one thread, while the simulation uses every core: a thread-dependent result would show.
std::vector<std::uint16_t> expected_c(Entry e, const Problem& p);

// Runs `e` on `p` and requires success, no finding, untouched inputs and exactly expected_c's
// bytes. Returns the produced C buffer (empty after a failure).
std::vector<std::uint16_t> expect_emulator_bytes(Entry e, const Problem& p, const std::string& what);

inline bool is_gemv(Entry e) { return e == Entry::gemv_batch4_strided || e == Entry::gemv_batch16_strided; }
inline std::uint32_t max_rows(Entry e) {
  return e == Entry::gemv_batch4_strided ? 4 : e == Entry::gemv_batch16_strided ? 16 : 0xFFFFFFFFu;
}
inline std::uint16_t c_at(const std::vector<std::uint16_t>& c, const Problem& p, std::uint32_t r, std::uint32_t col) {
  return c[std::size_t{r} * p.ldc + col];
}

}  // namespace w8a16::hostile
