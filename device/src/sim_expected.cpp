// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation's expected output, remembered: the emulator's whole-output drivers are pure
// functions of the operand bytes, the shape and the contract (NUMERICS.md 2.1 / 2.2), so a plan
// simulated again on the same operands (the same shape under several entry points, module
// registries or SM counts) takes the bytes computed the first time. An entry is found only by
// comparing every operand byte the emulator reads, never by a hash alone.
#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

#include "sim_internal.hpp"
#include "w8a16/reference/contract.hpp"

namespace w8a16::device::sim {
namespace {

// Smaller outputs cost less to emulate than to copy and compare; larger operands would hold
// memory that a campaign of unique cases never reuses.
constexpr std::uint64_t kMinMacs = std::uint64_t{1} << 22;
constexpr std::size_t kMaxEntryBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxTotalBytes = std::size_t{96} << 20;

struct Entry {
  Contract contract;
  std::uint32_t m, n, k;
  std::vector<std::uint16_t> a;  // [m][k]: the rows without their pitch padding, which no kernel reads
  std::vector<std::uint8_t> w;
  std::vector<float> s;
  std::vector<std::uint16_t> c;  // [m][n]
  std::size_t bytes() const { return a.size() * 2 + w.size() + s.size() * 4 + c.size() * 2; }
};

struct Memo {
  std::mutex mu;
  std::deque<Entry> entries;  // oldest first
  std::size_t total = 0;
};

Memo& memo() {
  static Memo m;
  return m;
}

bool same_a(const Entry& e, const ref::GemmView& v) {
  for (std::uint32_t r = 0; r < v.m; ++r)
    if (std::memcmp(&e.a[std::size_t{r} * v.k], v.a + r * v.a_row_stride, std::size_t{v.k} * 2) != 0) return false;
  return true;
}

void compute(const ref::GemmView& v, Contract contract, std::uint16_t* c) {
  if (contract == Contract::canonical) ref::gemm_canonical(v, ref::Arch::sm90, c, v.n);  // the H200 (NUMERICS.md 1.1)
  else ref::gemm_gemv(v, c, v.n);
}

}  // namespace

std::vector<std::uint16_t> expected_output(const ref::GemmView& v, Contract contract) {
  std::vector<std::uint16_t> c(std::size_t{v.m} * v.n);
  const std::size_t w_bytes = std::size_t{v.n} * v.k;
  const std::size_t s_count = std::size_t{v.scale_rows()} * v.k_steps();
  const std::size_t in_bytes = std::size_t{v.m} * v.k * 2 + w_bytes + s_count * 4;
  if (std::uint64_t{v.m} * v.n * v.k < kMinMacs || in_bytes + c.size() * 2 > kMaxEntryBytes) {
    compute(v, contract, c.data());
    return c;
  }
  Memo& mm = memo();
  {
    std::lock_guard<std::mutex> lock(mm.mu);
    for (const Entry& e : mm.entries)
      if (e.contract == contract && e.m == v.m && e.n == v.n && e.k == v.k &&
          std::memcmp(e.w.data(), v.w, w_bytes) == 0 && std::memcmp(e.s.data(), v.s, s_count * 4) == 0 && same_a(e, v))
        return e.c;
  }
  compute(v, contract, c.data());
  Entry e{contract, v.m, v.n, v.k, {}, {v.w, v.w + w_bytes}, {v.s, v.s + s_count}, c};
  e.a.resize(std::size_t{v.m} * v.k);
  for (std::uint32_t r = 0; r < v.m; ++r)
    std::memcpy(&e.a[std::size_t{r} * v.k], v.a + r * v.a_row_stride, std::size_t{v.k} * 2);
  std::lock_guard<std::mutex> lock(mm.mu);
  mm.total += e.bytes();
  mm.entries.push_back(std::move(e));
  while (mm.total > kMaxTotalBytes && !mm.entries.empty()) {
    mm.total -= mm.entries.front().bytes();
    mm.entries.pop_front();
  }
  return c;
}

}  // namespace w8a16::device::sim
