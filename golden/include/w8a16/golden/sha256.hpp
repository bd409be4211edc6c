// SPDX-License-Identifier: MIT OR Apache-2.0
// SHA-256 (FIPS 180-4), for the evidence manifests (manifest.hpp): the sums `sha256sum` prints, so
// a manifest can be checked with the system's tools as well as with `w8a16check manifest --check`.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace w8a16::golden {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  // The digest of everything given; the object must not be updated afterwards.
  std::array<std::uint8_t, 32> finish();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

// The 64 lower-case hex digits of SHA-256(bytes).
std::string sha256_hex(std::string_view bytes);

}  // namespace w8a16::golden
