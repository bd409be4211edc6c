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
#define W8A16_CUDA_DRIVER_FUNCTIONS(X)                                                                       \
  X(cuInit) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet) X(cuDeviceGetAttribute)                    \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent)          \
  X(cuCtxSynchronize) X(cuStreamSynchronize) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)   \
  X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8)        \
  X(cuDeviceGetName) X(cuDriverGetVersion) X(cuTensorMapEncodeTiled)

// X(name): functions of newer drivers (CUDA 12.4) the backend uses when present and does without
// otherwise: a kernel's parameter layout (the ABI check, docs/KERNEL_ABI.md 1.3) and the list of a
// module's functions (names outside the family, 1.2). Null when the driver lacks them.
#define W8A16_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) \
  X(cuFuncGetParamInfo) X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName)

struct Driver {
#define W8A16_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  W8A16_CUDA_DRIVER_FUNCTIONS(W8A16_CUDA_DRIVER_MEMBER)
  W8A16_CUDA_DRIVER_OPTIONAL_FUNCTIONS(W8A16_CUDA_DRIVER_MEMBER)
#undef W8A16_CUDA_DRIVER_MEMBER
};

// The loaded driver (loaded once), or nullptr with the reason in *why.
const Driver* driver(std::string* why);

}  // namespace w8a16::device::cuda
