// SPDX-License-Identifier: MIT OR Apache-2.0
// The heartbeat thread (progress.hpp).
#include "progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace w8a16::props {

Heartbeat::Heartbeat(std::string what, std::function<std::string()> state, double quiet_s, double every_s)
    : what_(std::move(what)),
      state_(std::move(state)),
      quiet_s_(quiet_s),
      every_s_(every_s),
      tty_(isatty(fileno(stderr)) != 0) {
  thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (printed_ && tty_) std::fputs("\n", stderr);
}

void Heartbeat::run() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  double next = quiet_s_;
  for (;;) {
    if (wake_.wait_until(lock, start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(next)),
                         [this] { return stop_; }))
      return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string state = state_ ? state_() : std::string();
    std::fprintf(stderr, "%s%s: %.0f s%s%s%s", tty_ ? "\r\033[K" : "", what_.c_str(), elapsed,
                 state.empty() ? "" : ", ", state.c_str(), tty_ ? "" : "\n");
    std::fflush(stderr);
    printed_ = true;
    next += every_s_;
  }
}

}  // namespace w8a16::props
