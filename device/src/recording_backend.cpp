// SPDX-License-Identifier: MIT OR Apache-2.0
// The recording backend: keeps every plan, runs nothing.
#include "w8a16/device/recording_backend.hpp"

namespace w8a16::device {

std::unique_ptr<Buffer> RecordingBackend::allocate(std::size_t bytes, Status* status) {
  return allocate_host_buffer(bytes, status);
}

Status RecordingBackend::execute(const Plan& plan) {
  plans_.push_back(plan);
  return Status::success();
}

}  // namespace w8a16::device
