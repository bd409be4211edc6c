// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA driver API, loaded at run time from libcuda.so.1 (dlopen). Only the driver is present on
// the GPU machine, and a machine without it must still start every binary, so that GPU tests can
// GTEST_SKIP with the reason instead of failing to load (and CTest's test discovery, which runs
// each binary at build time, works on a build machine without a GPU).
#pragma once
#include <cuda.h>

#include <string>

namespace w8a16::device::cuda {

// X(name): every driver function the backend calls. cuda.h maps some names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2); the loader looks up the mapped name.
// A list of names, one X() a name, laid out by hand: clang-format 14 re-wraps such lists
// differently each time it runs.
// clang-format off
#define W8A16_CUDA_DRIVER_FUNCTIONS(X)                                                            \
  X(cuInit) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet) X(cuDeviceGetAttribute)          \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent) \
  X(cuCtxSynchronize) X(cuStreamSynchronize) X(cuModuleLoadData) X(cuModuleUnload)                \
  X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree)       \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuDeviceGetName) X(cuDriverGetVersion)          \
  X(cuTensorMapEncodeTiled) X(cuModuleGetGlobal)
// clang-format on

// X(name): what timing needs (device/bench/): streams, events, graphs of captured launches and a
// device-to-device copy. Loaded with the rest but required only by timing_driver(), so that the
// backend keeps running on a driver that lacks one of them (cuEventElapsedTime_v2 is CUDA 12.8's).
// A list of names, one X() a name, laid out by hand: clang-format 14 re-wraps such lists
// differently each time it runs.
// clang-format off
#define W8A16_CUDA_DRIVER_TIMING_FUNCTIONS(X)                                                          \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)             \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuMemcpyDtoDAsync) X(cuStreamBeginCapture)             \
  X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)
// clang-format on

// X(name): functions of newer drivers (CUDA 12.4) the backend uses when present and does without
// otherwise: a kernel's parameter layout (the ABI check, docs/KERNEL_ABI.md 1.3) and the list of a
// module's functions (names outside the family, 1.2). Null when the driver lacks them.
#define W8A16_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) \
  X(cuFuncGetParamInfo) X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName)

struct Driver {
#define W8A16_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  W8A16_CUDA_DRIVER_FUNCTIONS(W8A16_CUDA_DRIVER_MEMBER)
  W8A16_CUDA_DRIVER_TIMING_FUNCTIONS(W8A16_CUDA_DRIVER_MEMBER)
  W8A16_CUDA_DRIVER_OPTIONAL_FUNCTIONS(W8A16_CUDA_DRIVER_MEMBER)
#undef W8A16_CUDA_DRIVER_MEMBER
};

// The loaded driver (loaded once), or nullptr with the reason in *why: every binary of the tree
// that talks to the driver goes through this one table (the backend, the probes, the benches).
const Driver* driver(std::string* why);
// True when libcuda.so.1 itself could not be loaded (no driver installed on this machine), as opposed
// to a driver that is there but lacks a function this build needs.
bool driver_absent();
// Whether a failure to open GPU `ordinal` (the call that failed, as the context's retain names it,
// and its result) means this machine has no GPU to give, which a caller reports as skipped (exit 77):
// cuInit finding no device or only the toolkit's stub library, or device 0 not there.
bool means_no_device(const std::string& failed_call, CUresult r, int ordinal);
// The same, and nullptr unless the timing functions are there too (the reason names the first
// one missing).
const Driver* timing_driver(std::string* why);

// "CUDA_ERROR_INVALID_VALUE (1): invalid argument" for a driver result.
std::string result_text(const Driver& d, CUresult r);

// A GPU's primary context, retained for the object's life and released at its end: the context
// the backend, the probes and the bench's session each do their work in. Work runs with it current
// on the calling thread, in a Current scope.
class PrimaryContext {
 public:
  PrimaryContext() = default;
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  // cuInit, cuDeviceGet(ordinal) and cuDevicePrimaryCtxRetain, on an object that holds none. On
  // failure nothing is retained, and the driver's result comes back with the call that gave it in
  // *failed ("cuInit", "cuDeviceGet(1)", "cuDevicePrimaryCtxRetain"): the owner's message is
  // "<call>: <result_text>".
  CUresult retain(const Driver& d, int ordinal, std::string* failed);

  explicit operator bool() const { return ctx_ != nullptr; }
  const Driver& driver() const { return *d_; }
  CUdevice device() const { return dev_; }
  CUcontext get() const { return ctx_; }

  // Makes a retained context current on this thread for a scope (cuCtxPushCurrent) and, if the
  // push succeeded, pops it at the scope's end: no owner leaves its context current behind.
  class Current {
   public:
    explicit Current(const PrimaryContext& c) : Current(*c.d_, c.ctx_) {}
    // The same for a context handle held apart from its owner (a buffer holds its backend's).
    Current(const Driver& d, CUcontext ctx);
    ~Current();
    Current(const Current&) = delete;
    Current& operator=(const Current&) = delete;
    CUresult result() const { return pushed_; }  // the push's

   private:
    const Driver* d_;
    CUresult pushed_;
  };

 private:
  const Driver* d_ = nullptr;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

}  // namespace w8a16::device::cuda
