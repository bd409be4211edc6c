// SPDX-License-Identifier: MIT OR Apache-2.0
// Runs a case through the launch layer on the CUDA backend and through the emulator, and compares every byte of C.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_cases.hpp"
#include "w8a16/device/api.hpp"
#include "w8a16/device/cuda_backend.hpp"

namespace w8a16::gputest {

// C is allocated with kExtraRows rows past m and poisoned with kPoisonByte: the kernels may write
// only rows [0, m), columns [0, n); padding and extra rows must come back as poison.
inline constexpr std::uint32_t kExtraRows = 2;
inline constexpr std::uint8_t kPoisonByte = 0xA5;

struct GpuRun {
  bool ok = false;
  std::string error;               // the launch layer's or the driver's message when !ok
  device::Plan plan;               // what the entry point dispatched to
  std::vector<std::uint16_t> c;    // (m + kExtraRows) x c_row_stride BF16 bits, as the GPU left them
};

// The emulator's bytes for the whole C buffer (poison where nothing may be written), by the
// contract of the body the plan ran: NUMERICS.md 2.1 (gemm_canonical, sm90) or 2.2 (gemm_gemv).
std::vector<std::uint16_t> expected_c(const GpuCase& c, const Inputs& in, device::Contract contract);

struct Comparison {
  std::uint64_t bytes = 0;
  std::uint64_t mismatched_elements = 0;
  std::string first;  // "(m, n) region: expected 0x.... got 0x...." of the first mismatch
};
Comparison compare_c(const GpuCase& c, const std::vector<std::uint16_t>& expected, const std::vector<std::uint16_t>& got);

class GpuRig {
 public:
  // nullptr with the reason in *why when there is no usable GPU (no driver, no device).
  static std::unique_ptr<GpuRig> create(std::string* why);
  // Over a backend made elsewhere (a module loaded from a file: test_module_file.cpp).
  static std::unique_ptr<GpuRig> over(std::unique_ptr<device::CudaBackend> backend);
  device::CudaBackend& backend() { return *backend_; }
  // The registry a case is planned with: the module's, less the Hopper tier's symbols except the
  // one the case is aimed at, so that each symbol and each body below them is reached at any shape.
  const device::KernelRegistry& registry_for(const GpuCase& c) const;
  // A Call for the case's entry point with the handles a caller would pass.
  device::Call call_for(const GpuCase& c) const;
  // Validates and plans (plan_launch, as Launcher::launch does) over registry_for(c), executes the
  // plan on the backend, synchronizes, downloads C.
  GpuRun run(const GpuCase& c, const Inputs& in);

 private:
  std::unique_ptr<device::CudaBackend> backend_;
  // The module less the Hopper tier (every tensor-core entry tries it first), or less one of its
  // two symbols.
  std::unique_ptr<device::MaskedRegistry> without_hopper_, only_wgmma64_, only_wgmma128_, only_wgmma128_x2_;
};

}  // namespace w8a16::gputest
