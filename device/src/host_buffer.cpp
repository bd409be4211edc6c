// SPDX-License-Identifier: MIT OR Apache-2.0
// Host memory behind the Buffer interface, 256-byte aligned like cuMemAlloc's blocks.
#include <cstdlib>
#include <cstring>
#include <string>

#include "w8a16/device/recording_backend.hpp"

namespace w8a16::device {
namespace {

constexpr std::size_t kAlign = 256;

Status range_error(const char* op, std::size_t offset, std::size_t bytes, std::size_t size) {
  return Status::error(Errc::backend_error, std::string(op) + ": bytes [" + std::to_string(offset) + ", " +
                                                std::to_string(offset + bytes) + ") leave the buffer of " +
                                                std::to_string(size) + " bytes");
}

class HostBuffer final : public Buffer {
 public:
  HostBuffer(std::uint8_t* bytes, std::size_t size) : bytes_(bytes), size_(size) {}
  ~HostBuffer() override { std::free(bytes_); }
  DevPtr address() const override { return reinterpret_cast<DevPtr>(bytes_); }
  std::size_t size() const override { return size_; }
  Status upload(const void* src, std::size_t bytes, std::size_t offset) override {
    if (offset > size_ || bytes > size_ - offset) return range_error("upload", offset, bytes, size_);
    if (bytes) std::memcpy(bytes_ + offset, src, bytes);
    return Status::success();
  }
  Status download(void* dst, std::size_t bytes, std::size_t offset) const override {
    if (offset > size_ || bytes > size_ - offset) return range_error("download", offset, bytes, size_);
    if (bytes) std::memcpy(dst, bytes_ + offset, bytes);
    return Status::success();
  }
  Status fill(std::uint8_t byte) override {
    std::memset(bytes_, byte, size_);
    return Status::success();
  }

 private:
  std::uint8_t* bytes_;
  std::size_t size_;
};

}  // namespace

std::unique_ptr<Buffer> allocate_host_buffer(std::size_t bytes, Status* status) {
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (!p) {
    if (status)
      *status = Status::error(Errc::backend_error, "host allocation of " + std::to_string(bytes) + " bytes failed");
    return nullptr;
  }
  if (status) *status = Status::success();
  return std::make_unique<HostBuffer>(static_cast<std::uint8_t*>(p), bytes);
}

}  // namespace w8a16::device
