// SPDX-License-Identifier: MIT OR Apache-2.0
// Loads libcuda.so.1 once and resolves the driver functions the backend uses (cuda_driver.hpp).
#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <mutex>

namespace w8a16::device::cuda {
namespace {

#define W8A16_STR2(x) #x
#define W8A16_STR(x) W8A16_STR2(x)  // expands cuda.h's name mapping first

struct Loaded {
  Driver driver;
  std::string error;         // empty when loaded
  std::string timing_error;  // empty when the timing functions are there too
  bool absent = false;       // dlopen(libcuda.so.1) failed: no driver on this machine
};

Loaded load() {
  Loaded out;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    out.error = std::string("the CUDA driver could not be loaded: ") + (e ? e : "dlopen(libcuda.so.1) failed");
    out.absent = true;
    return out;
  }
#define W8A16_CUDA_DRIVER_LOAD(name)                                                            \
  out.driver.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, W8A16_STR(name)));           \
  if (!out.driver.name) {                                                                       \
    out.error = std::string("the CUDA driver lacks ") + W8A16_STR(name) + " (driver too old?)"; \
    return out;                                                                                 \
  }
  W8A16_CUDA_DRIVER_FUNCTIONS(W8A16_CUDA_DRIVER_LOAD)
#undef W8A16_CUDA_DRIVER_LOAD
#define W8A16_CUDA_DRIVER_LOAD_OPTIONAL(name) \
  out.driver.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, W8A16_STR(name)));
  W8A16_CUDA_DRIVER_OPTIONAL_FUNCTIONS(W8A16_CUDA_DRIVER_LOAD_OPTIONAL)
  W8A16_CUDA_DRIVER_TIMING_FUNCTIONS(W8A16_CUDA_DRIVER_LOAD_OPTIONAL)
#undef W8A16_CUDA_DRIVER_LOAD_OPTIONAL
#define W8A16_CUDA_DRIVER_CHECK_TIMING(name)                                     \
  if (out.timing_error.empty() && !out.driver.name)                              \
    out.timing_error = std::string("the CUDA driver lacks ") + W8A16_STR(name) + \
                       ", which timing needs (driver too old?)";
  W8A16_CUDA_DRIVER_TIMING_FUNCTIONS(W8A16_CUDA_DRIVER_CHECK_TIMING)
#undef W8A16_CUDA_DRIVER_CHECK_TIMING
  return out;  // the library stays loaded for the life of the process
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Driver* driver(std::string* why) {
  const Loaded& l = loaded();
  if (!l.error.empty()) {
    if (why) *why = l.error;
    return nullptr;
  }
  return &l.driver;
}

bool driver_absent() { return loaded().absent; }

bool means_no_device(const std::string& failed_call, CUresult r, int ordinal) {
  return failed_call == "cuInit"
             ? (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY)
             : failed_call.rfind("cuDeviceGet", 0) == 0 && ordinal == 0 && r == CUDA_ERROR_INVALID_DEVICE;
}

const Driver* timing_driver(std::string* why) {
  const Driver* d = driver(why);
  if (d && !loaded().timing_error.empty()) {
    if (why) *why = loaded().timing_error;
    return nullptr;
  }
  return d;
}

std::string result_text(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  d.cuGetErrorName(r, &name);
  d.cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA error") + " (" + std::to_string(static_cast<int>(r)) + ")" +
         (text ? std::string(": ") + text : std::string());
}

PrimaryContext::~PrimaryContext() {
  if (ctx_) d_->cuDevicePrimaryCtxRelease(dev_);
}

CUresult PrimaryContext::retain(const Driver& d, int ordinal, std::string* failed) {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    *failed = "cuInit";
    return r;
  }
  if (r = d.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) {
    *failed = "cuDeviceGet(" + std::to_string(ordinal) + ")";
    return r;
  }
  if (r = d.cuDevicePrimaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS) {
    *failed = "cuDevicePrimaryCtxRetain";
    return r;
  }
  d_ = &d;
  dev_ = dev;
  ctx_ = ctx;
  return CUDA_SUCCESS;
}

PrimaryContext::Current::Current(const Driver& d, CUcontext ctx) : d_(&d), pushed_(d.cuCtxPushCurrent(ctx)) {}

PrimaryContext::Current::~Current() {
  CUcontext ignored;
  if (pushed_ == CUDA_SUCCESS) d_->cuCtxPopCurrent(&ignored);
}

}  // namespace w8a16::device::cuda
