// SPDX-License-Identifier: MIT OR Apache-2.0
// The backend interface: buffers (device memory on CUDA, host memory in the simulation) and the
// execution of plans, so that a test runs unchanged on every backend.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/device/status.hpp"

namespace w8a16::device {

// A byte buffer on the backend's memory. Every allocation is at least 256-byte aligned (as
// cuMemAlloc's), so the pointer alignment rules only fail for offsets a test chooses.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual DevPtr address() const = 0;
  virtual std::size_t size() const = 0;
  // Copies to or from [offset, offset + bytes); a range past the end is an error, copying nothing.
  virtual Status upload(const void* src, std::size_t bytes, std::size_t offset = 0) = 0;
  virtual Status download(void* dst, std::size_t bytes, std::size_t offset = 0) const = 0;
  virtual Status fill(std::uint8_t byte) = 0;
};

// What a backend runs on: a GPU through the driver, or this machine (the simulation and the
// recording backend compute outputs with the emulator). Callers ask this, never the name.
enum class BackendKind : std::uint8_t { cuda, simulation, recording };
// The --backend value that runs the same plans: "cuda" or "sim" (a recording is made on the simulation).
inline const char* backend_option(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "sim"; }

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;  // for people: "cuda", "simulation", "recording"
  virtual BackendKind kind() const = 0;
  virtual DeviceLimits limits() const = 0;
  virtual const KernelRegistry& registry() const = 0;
  // Allocation failure yields nullptr and a status in *status (when given).
  virtual std::unique_ptr<Buffer> allocate(std::size_t bytes, Status* status = nullptr) = 0;
  // Runs (or records, or simulates) a plan the planner produced.
  virtual Status execute(const Plan& plan) = 0;
  // Waits for everything launched so far (a no-op on the host backends).
  virtual Status synchronize() = 0;
  // A second stream whose launches may run concurrently with those of stream 0 (the CUDA backend:
  // a non-blocking stream, created on first use and owned by the backend). The host backends run
  // one launch at a time and have none: an error, and the caller says so rather than pretending.
  virtual Stream concurrent_stream(Status* status) {
    if (status) *status = Status::error(Errc::backend_error, std::string(name()) + " runs one launch at a time");
    return 0;
  }
};

}  // namespace w8a16::device
