// SPDX-License-Identifier: MIT OR Apache-2.0
// Progress of long work on stderr: silent for work that ends soon, then a line now and then saying
// what runs, for how long and how far it is, so a long replay or repro never looks hung.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace w8a16::props {

class Heartbeat {
 public:
  // Nothing for the first `quiet_s` seconds; then "<what>: <elapsed> s[, <state()>]" every
  // `every_s` seconds (one line rewritten in place on a terminal). state() runs on the heartbeat's
  // own thread, so it reads only what is safe to read concurrently (atomics).
  explicit Heartbeat(std::string what, std::function<std::string()> state = {}, double quiet_s = 5,
                     double every_s = 10);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void run();
  std::string what_;
  std::function<std::string()> state_;
  double quiet_s_, every_s_;
  bool tty_ = false, printed_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace w8a16::props
