// SPDX-License-Identifier: MIT OR Apache-2.0
// Timing launches on the GPU: a CUDA graph of back-to-back launches (so host launch gaps do not
// count), replayed once to warm up and then `batches` times between two events; the median replay
// over the launches it holds is the time of one launch. Over the one driver table
// (device/src/cuda_driver.hpp); no CUDA header here.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "w8a16/bench/method.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::bench {

// Issues launch i (of the copy i % copies, by the caller's rotation) on `stream`; "" or the error.
using Launch = std::function<std::string(int i, device::Stream stream)>;

// What times launches: the GPU session below, or a test's stand-in.
class Timer {
 public:
  virtual ~Timer() = default;
  // The stream the launches go to.
  virtual device::Stream stream() const = 0;
  // `reps` launches back to back per timed batch. try_graph: captured once into a graph, replayed
  // once to warm up, then `batches` timed replays; without it (or when the capture fails) the
  // launches are issued one by one, one warm-up batch first. Timing::graph says which was timed.
  virtual Timing time(int reps, int batches, bool try_graph, const Launch& launch) = 0;
};

struct DeviceProps {
  std::string name;  // cuDeviceGetName
  int cc_major = 0, cc_minor = 0, sms = 0, l2_bytes = 0;
  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000
};

// A GPU's primary context made current on the calling thread for the session's life (the CUDA
// backend and cuBLASLt, through its runtime, then share it, and cuBLASLt never creates another),
// with a stream and two events. Only in builds with CUDA.
class GpuSession final : public Timer {
 public:
  // nullptr with *why: the driver's reason when there is none ("the CUDA driver could not be
  // loaded: ..."), or which step failed.
  static std::unique_ptr<GpuSession> open(int ordinal, std::string* why);
  ~GpuSession() override;
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const DeviceProps& props() const { return props_; }
  device::Stream stream() const override;
  Timing time(int reps, int batches, bool try_graph, const Launch& launch) override;

  // The device-to-device copy bandwidth (read + write, method.hpp copy_bandwidth) over `bytes`,
  // the median of `batches` copies after one warm-up: what the floor divides by, measured in the
  // run it is used in. False with *why.
  bool measure_copy_bandwidth(double* bytes_per_s, std::string* why, std::size_t bytes = kCopyBandwidthBytes,
                              int batches = kCopyBandwidthBatches);

 private:
  struct State;
  explicit GpuSession(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
  DeviceProps props_;
};

}  // namespace w8a16::bench
