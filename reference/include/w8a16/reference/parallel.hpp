// SPDX-License-Identifier: MIT OR Apache-2.0
// A minimal parallel-for over an index range: the emulator's only threading primitive. Results
// never depend on the thread count: each index is computed by exactly one thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace w8a16::ref {

inline unsigned resolve_threads(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

// Calls body(i) for every i in [0, count), work-stealing one index at a time. The index has the
// count's type (std::uint32_t for shapes, std::size_t for element counts past 2^32), never narrower.
template <class Index, class Body>
void parallel_for(Index count, unsigned threads, Body&& body) {
  static_assert(std::is_unsigned<Index>::value, "an unsigned index");
  const unsigned t = static_cast<unsigned>(std::min<std::uint64_t>(resolve_threads(threads),
                                                                   std::max<std::uint64_t>(count, 1)));
  if (t <= 1) {
    for (Index i = 0; i < count; ++i) body(i);
    return;
  }
  std::atomic<Index> next{0};
  auto worker = [&] {
    for (Index i; (i = next.fetch_add(1)) < count;) body(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  // A thread the system refuses (its stack past an address-space limit, a process limit) leaves
  // the work to the threads already running: destroying the pool with joinable threads in it, as
  // an escaping exception would, ends the process.
  try {
    for (unsigned i = 1; i < t; ++i) pool.emplace_back(worker);
  } catch (const std::system_error&) {}
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace w8a16::ref
