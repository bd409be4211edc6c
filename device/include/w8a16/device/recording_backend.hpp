// SPDX-License-Identifier: MIT OR Apache-2.0
// A backend that records the plans it is given and runs nothing: dispatch properties and the
// "an error launches nothing" tests read its log. Buffers are host memory.
#pragma once
#include <vector>

#include "w8a16/device/backend.hpp"

namespace w8a16::device {

class RecordingBackend final : public Backend {
 public:
  explicit RecordingBackend(StaticRegistry registry = StaticRegistry::all_present(),
                            DeviceLimits limits = DeviceLimits::h200())
      : registry_(registry), limits_(limits) {}

  const char* name() const override { return "recording"; }
  BackendKind kind() const override { return BackendKind::recording; }
  DeviceLimits limits() const override { return limits_; }
  const KernelRegistry& registry() const override { return registry_; }
  std::unique_ptr<Buffer> allocate(std::size_t bytes, Status* status = nullptr) override;
  Status execute(const Plan& plan) override;
  Status synchronize() override { return Status::success(); }

  const std::vector<Plan>& plans() const { return plans_; }
  void clear() { plans_.clear(); }

 private:
  StaticRegistry registry_;
  DeviceLimits limits_;
  std::vector<Plan> plans_;
};

// Host memory behind the Buffer interface (256-byte aligned); shared by the host backends.
std::unique_ptr<Buffer> allocate_host_buffer(std::size_t bytes, Status* status);

}  // namespace w8a16::device
