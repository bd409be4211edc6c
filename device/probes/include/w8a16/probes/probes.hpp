// SPDX-License-Identifier: MIT OR Apache-2.0
// The calibration probes: kernels that run one tensor-core instruction per case on operands exactly
// as given, so that `w8a16check probe` records what the instruction computes (NUMERICS.md 3). They
// are measurement instruments, not product kernels: their own module (kernels/*.cu, embedded like
// the product's), their own identifiers, their own launcher. No CUDA header here.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "w8a16/device/cuda_backend.hpp"
#include "w8a16/device/status.hpp"

namespace w8a16::probes {

enum class ProbeKernel : std::uint8_t {
  mma_m16n8k16_bf16,    // w8a16_probe_mma_m16n8k16_bf16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  wgmma_m64n8k16_bf16,  // w8a16_probe_wgmma_m64n8k16_bf16: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 (sm_90a)
};
inline constexpr std::size_t kProbeKernelCount = 2;
inline constexpr std::array<ProbeKernel, kProbeKernelCount> kAllProbeKernels = {ProbeKernel::mma_m16n8k16_bf16,
                                                                                ProbeKernel::wgmma_m64n8k16_bf16};

// The exported symbol (each probe is extern "C").
const char* probe_kernel_name(ProbeKernel k);
// False for a name that is no probe's.
bool probe_kernel_from_name(std::string_view name, ProbeKernel* out);

// A parameter of a probe as the driver lays it out (docs/KERNEL_ABI.md 7).
struct ProbeParam {
  const char* name;
  std::uint32_t offset, size;
  friend bool operator==(const ProbeParam& x, const ProbeParam& y) {
    return std::string_view(x.name) == y.name && x.offset == y.offset && x.size == y.size;
  }
};
// (a, bt, c, d, count) for mma.sync; the wgmma probe adds (a_from_regs, scale_d).
std::vector<ProbeParam> probe_kernel_params(ProbeKernel k);
// Threads per case (one CTA per case): a warp for mma.sync, a warpgroup for wgmma.
std::uint32_t probe_threads(ProbeKernel k);
// 32-bit words of D the kernel writes per case: [16][8] once per warp of the CTA.
std::uint32_t probe_d_words(ProbeKernel k);

// `count` cases in the .mmav case layout (golden/mma/README.md): A BF16 [16][16], Bt BF16 [8][16]
// (B transposed) and C FP32 bits [16][8] per case, case after case.
struct ProbeOperands {
  std::vector<std::uint16_t> a, bt;
  std::vector<std::uint32_t> c;
  std::uint32_t count() const { return static_cast<std::uint32_t>(c.size() / 128); }
};
// The wgmma forms: A from shared memory or from registers; scale-d 1 (D = A B + C) or 0 (D = A B,
// C not read). mma.sync has one form (scale_d = true, a_from_regs = false).
struct ProbeForm {
  bool a_from_regs = false;
  bool scale_d = true;
};

// The probe module loaded on one GPU (only in builds with CUDA). Loading checks every probe symbol
// the module has against probe_kernel_params where the driver can tell (cuFuncGetParamInfo); a
// probe the module lacks (the wgmma probe outside sm_90a) is absent, not an error, until it is run.
class ProbeLauncher {
 public:
  // The embedded probe module. nullptr with *status naming the reason: no driver, no GPU, a
  // module that does not load, a probe with another layout.
  static std::unique_ptr<ProbeLauncher> create(int ordinal, device::Status* status);
  // The same over another module image (tests).
  static std::unique_ptr<ProbeLauncher> create_with_module(int ordinal, const void* image, std::size_t bytes,
                                                           device::Status* status);
  ~ProbeLauncher();
  ProbeLauncher(const ProbeLauncher&) = delete;
  ProbeLauncher& operator=(const ProbeLauncher&) = delete;

  // A copy of the embedded probe module's bytes (a fatbin, one cubin per architecture built).
  static std::vector<unsigned char> embedded_module();

  bool has(ProbeKernel k) const;
  device::CudaDeviceInfo device_info() const { return info_; }
  // Whether the parameter layouts were checked at load (false on a driver without cuFuncGetParamInfo).
  bool abi_checked() const { return abi_checked_; }

  // Runs every case of `in` through probe `k` in `form` and returns D in *d, 128 words per case
  // ([16][8] FP32 bits). The wgmma probe writes each case's D once per warp: the four must agree
  // bit for bit, else it is an error. A probe the module lacks is `kernel_missing`, nothing launched.
  device::Status run(ProbeKernel k, ProbeForm form, const ProbeOperands& in, std::vector<std::uint32_t>* d);

 private:
  struct State;
  explicit ProbeLauncher(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
  device::CudaDeviceInfo info_;
  bool abi_checked_ = false;
};

}  // namespace w8a16::probes
