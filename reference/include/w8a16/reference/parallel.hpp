// SPDX-License-Identifier: MIT OR Apache-2.0
// A minimal parallel-for over an index range: the emulator's only threading primitive. Results
// never depend on the thread count: each index is computed by exactly one thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace w8a16::ref {

inline unsigned resolve_threads(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

// Calls body(i) for every i in [0, count), work-stealing one index at a time.
template <class Body>
void parallel_for(std::uint32_t count, unsigned threads, Body&& body) {
  const unsigned t = std::min<unsigned>(resolve_threads(threads), std::max<std::uint32_t>(count, 1));
  if (t <= 1) {
    for (std::uint32_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::atomic<std::uint32_t> next{0};
  auto worker = [&] {
    for (std::uint32_t i; (i = next.fetch_add(1)) < count;) body(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (unsigned i = 1; i < t; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace w8a16::ref
