// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA backend (built only with W8A16_HAVE_CUDA): loads the embedded fatbin of
// device/kernels/*.cu with the driver API, resolves kernels by name and launches plans. The driver
// is loaded at run time (src/cuda_driver.hpp), so a machine without one gets an error Status, not
// a binary that fails to start. No CUDA header here; the driver's types stay in the .cpp.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"

namespace w8a16::device {
namespace cuda {
struct Driver;
class PrimaryContext;
}  // namespace cuda

// The registry over the loaded module: cuModuleGetFunction by name; a kernel the module lacks
// (or an empty module, while no kernel file exists) resolves to the zero handle.
class CudaModuleRegistry final : public KernelRegistry {
 public:
  KernelHandle resolve(KernelId id) const override { return handles_[static_cast<std::size_t>(id)]; }

 private:
  friend class CudaBackend;
  std::array<KernelHandle, kKernelCount> handles_{};
};

// What a recording names its hardware by (w8a16check probe / record; the probes' launcher, device/probes/, too).
struct CudaDeviceInfo {
  std::string name;                // cuDeviceGetName, e.g. "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;  // compute capability
  int driver_cuda_version = 0;     // cuDriverGetVersion: the CUDA version the driver supports, e.g. 13000
};

class CudaBackend final : public Backend {
 public:
  // Initialises the driver, retains device `ordinal`'s primary context, loads the module and reads
  // the limits. Returns nullptr with the reason in *status when any of it fails (no GPU, no driver).
  static std::unique_ptr<CudaBackend> create(int ordinal, Status* status);
  // The same over another module image (a fatbin or cubin in memory; bytes == 0: no module).
  // Tests use it to load fixture kernels. Either way every family symbol the module has must have
  // the family's parameter layout (docs/KERNEL_ABI.md 1.1, checked where the driver can tell):
  // otherwise nullptr, the status naming the symbol and both layouts, and nothing is launched.
  static std::unique_ptr<CudaBackend> create_with_module(int ordinal, const void* image, std::size_t bytes,
                                                         Status* status);
  // The same over a module file built elsewhere (w8a16check --module): a cubin (ELF) or a fatbin,
  // read whole; a missing, empty or unrecognised file is an error before the driver sees it.
  static std::unique_ptr<CudaBackend> create_from_file(int ordinal, const std::string& path, Status* status);
  ~CudaBackend() override;

  const char* name() const override { return "cuda"; }
  BackendKind kind() const override { return BackendKind::cuda; }
  DeviceLimits limits() const override { return limits_; }
  const KernelRegistry& registry() const override { return registry_; }
  std::unique_ptr<Buffer> allocate(std::size_t bytes, Status* status = nullptr) override;
  // cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) above 48 KiB, then cuLaunchKernel. A plan
  // with workspace_bytes gets the stream's workspace (allocated on first use, grown when a plan
  // needs more, flags zero), and a kernel_uses_tma kernel its tensor maps, encoded here.
  Status execute(const Plan& plan) override;
  Status synchronize() override;
  // cuStreamCreate(CU_STREAM_NON_BLOCKING) on first use: it does not synchronise with stream 0 (the
  // legacy default stream), so a launch there overlaps the launches of stream 0.
  Stream concurrent_stream(Status* status) override;

  CudaDeviceInfo device_info() const { return info_; }

  // Bytes of the embedded fatbin (0 while no kernel file exists).
  static std::size_t embedded_module_bytes();
  // A copy of the embedded fatbin (what `w8a16check module --write FILE` writes).
  static std::vector<unsigned char> embedded_module();

  // "embedded" or the file create_from_file loaded; and that image's size in bytes.
  const std::string& module_source() const { return module_source_; }
  std::size_t module_bytes() const { return module_bytes_; }
  // Whether the parameter layouts were checked (false on a driver without cuFuncGetParamInfo).
  bool abi_checked() const { return abi_checked_; }
  // Every function of the loaded module by name, where the driver can list them (*listed false
  // otherwise, and the list is empty).
  std::vector<std::string> module_functions(bool* listed) const;

  // The perturbed module (device/kernels/w8a16_timing.cuh): whether the loaded module has its two
  // globals, w8a16_timing_seed and w8a16_timing_stalls; the seed its next launches draw their delays
  // from (0: none); and, after a launch has finished, how many of its waits reached their bound and
  // gave up (a protocol that deadlocked), with the count and every workspace zeroed again where it
  // is not 0. Each is an error, and touches nothing, on a module without them.
  bool is_perturbed_module() const { return timing_seed_ != 0; }
  Status set_timing_seed(std::uint64_t seed);
  Status take_timing_stalls(std::uint32_t* stalls);

 private:
  CudaBackend() = default;
  const cuda::Driver* drv_ = nullptr;
  std::unique_ptr<cuda::PrimaryContext> context_;  // retained for the backend's life
  void* module_ = nullptr;                         // CUmodule, null when the fatbin is empty
  std::uint64_t timing_seed_ = 0;                  // CUdeviceptr of w8a16_timing_seed, 0 unless the module is perturbed
  std::uint64_t timing_stalls_ = 0;                // CUdeviceptr of w8a16_timing_stalls, likewise
  std::uint64_t sync_timing_seed_ = 0;             // of w8a16_sync_timing_seed (the cp.async bodies'), where present
  CudaModuleRegistry registry_;
  DeviceLimits limits_;
  CudaDeviceInfo info_;
  // One workspace per stream: two launches of the persistent tier on one stream run one after the
  // other, so they may share it; launches on different streams may overlap and must not.
  struct Workspace {
    std::uint64_t ptr = 0;  // CUdeviceptr
    std::uint64_t bytes = 0;
  };
  std::map<Stream, Workspace> workspaces_;
  std::mutex workspaces_mutex_;
  Status workspace_for(Stream stream, std::uint64_t bytes, std::uint64_t* ptr);
  Stream concurrent_stream_ = 0;
  std::string module_source_ = "embedded";
  std::size_t module_bytes_ = 0;
  bool abi_checked_ = false;
  std::shared_ptr<const std::vector<unsigned char>> module_image_;  // a --module file's bytes
};

}  // namespace w8a16::device
