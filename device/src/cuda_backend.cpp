// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA backend over the driver API: the embedded module (device/CMakeLists.txt,
// w8a16_embed_kernel_module) loaded with cuModuleLoadData, kernels resolved by name, plans
// launched with cuLaunchKernel. Only libcuda is needed at run time.
#include "w8a16/device/cuda_backend.hpp"

#include <cuda.h>

#include <string>

extern const unsigned char w8a16_kernels_fatbin[];
extern const std::size_t w8a16_kernels_fatbin_size;

namespace w8a16::device {
namespace {

Status driver_error(const char* what, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return Status::error(Errc::backend_error, std::string(what) + ": " + (name ? name : "CUDA error") + " (" +
                                                std::to_string(static_cast<int>(r)) + "): " + (text ? text : ""));
}

class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(CUcontext ctx, CUdeviceptr p, std::size_t size) : ctx_(ctx), ptr_(p), size_(size) {}
  ~DeviceBuffer() override {
    cuCtxPushCurrent(ctx_);
    cuMemFree(ptr_);
    CUcontext ignored;
    cuCtxPopCurrent(&ignored);
  }
  DevPtr address() const override { return static_cast<DevPtr>(ptr_); }
  std::size_t size() const override { return size_; }
  Status upload(const void* src, std::size_t bytes, std::size_t offset) override {
    if (offset > size_ || bytes > size_ - offset) return range("upload");
    return call("cuMemcpyHtoD", [&] { return cuMemcpyHtoD(ptr_ + offset, src, bytes); });
  }
  Status download(void* dst, std::size_t bytes, std::size_t offset) const override {
    if (offset > size_ || bytes > size_ - offset) return range("download");
    return call("cuMemcpyDtoH", [&] { return cuMemcpyDtoH(dst, ptr_ + offset, bytes); });
  }
  Status fill(std::uint8_t byte) override {
    return call("cuMemsetD8", [&] { return cuMemsetD8(ptr_, byte, size_); });
  }

 private:
  Status range(const char* op) const {
    return Status::error(Errc::backend_error, std::string(op) + ": range leaves the buffer of " + std::to_string(size_) + " bytes");
  }
  template <class F>
  Status call(const char* what, F f) const {
    cuCtxPushCurrent(ctx_);
    const CUresult r = f();
    CUcontext ignored;
    cuCtxPopCurrent(&ignored);
    return r == CUDA_SUCCESS ? Status::success() : driver_error(what, r);
  }
  CUcontext ctx_;
  CUdeviceptr ptr_;
  std::size_t size_;
};

}  // namespace

std::size_t CudaBackend::embedded_module_bytes() { return w8a16_kernels_fatbin_size; }

std::unique_ptr<CudaBackend> CudaBackend::create(int ordinal, Status* status) {
  auto fail = [&](Status s) -> std::unique_ptr<CudaBackend> {
    if (status) *status = std::move(s);
    return nullptr;
  };
  if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return fail(driver_error("cuInit", r));
  CUdevice dev;
  if (CUresult r = cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) return fail(driver_error("cuDeviceGet", r));
  CUcontext ctx;
  if (CUresult r = cuDevicePrimaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS)
    return fail(driver_error("cuDevicePrimaryCtxRetain", r));
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->device_ = dev;
  b->context_ = ctx;
  cuCtxPushCurrent(ctx);
  auto attr = [&](CUdevice_attribute a, std::uint32_t* out) -> CUresult {
    int v = 0;
    const CUresult r = cuDeviceGetAttribute(&v, a, dev);
    if (r == CUDA_SUCCESS) *out = static_cast<std::uint32_t>(v);
    return r;
  };
  CUresult r = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &b->limits_.max_dynamic_smem_per_block);
  if (r == CUDA_SUCCESS) r = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &b->limits_.max_grid_x);
  if (r == CUDA_SUCCESS) r = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &b->limits_.max_grid_y);
  if (r == CUDA_SUCCESS) r = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &b->limits_.max_grid_z);
  if (r != CUDA_SUCCESS) {
    CUcontext ignored;
    cuCtxPopCurrent(&ignored);
    return fail(driver_error("cuDeviceGetAttribute", r));
  }
  if (w8a16_kernels_fatbin_size != 0) {
    CUmodule mod;
    r = cuModuleLoadData(&mod, w8a16_kernels_fatbin);
    if (r != CUDA_SUCCESS) {
      CUcontext ignored;
      cuCtxPopCurrent(&ignored);
      return fail(driver_error("cuModuleLoadData (the embedded kernel module)", r));
    }
    b->module_ = mod;
    // A kernel the module lacks keeps the zero handle (the seed's try_target_kernel).
    for (KernelId id : kAllKernels) {
      CUfunction f;
      if (cuModuleGetFunction(&f, mod, kernel_name(id)) == CUDA_SUCCESS)
        b->registry_.handles_[static_cast<std::size_t>(id)] = KernelHandle{reinterpret_cast<std::uint64_t>(f)};
    }
  }
  CUcontext ignored;
  cuCtxPopCurrent(&ignored);
  if (status) *status = Status::success();
  return b;
}

CudaBackend::~CudaBackend() {
  if (module_) {
    cuCtxPushCurrent(static_cast<CUcontext>(context_));
    cuModuleUnload(static_cast<CUmodule>(module_));
    CUcontext ignored;
    cuCtxPopCurrent(&ignored);
  }
  if (context_) cuDevicePrimaryCtxRelease(device_);
}

std::unique_ptr<Buffer> CudaBackend::allocate(std::size_t bytes, Status* status) {
  cuCtxPushCurrent(static_cast<CUcontext>(context_));
  CUdeviceptr p = 0;
  const CUresult r = cuMemAlloc(&p, bytes == 0 ? 1 : bytes);
  CUcontext ignored;
  cuCtxPopCurrent(&ignored);
  if (r != CUDA_SUCCESS) {
    if (status) *status = driver_error("cuMemAlloc", r);
    return nullptr;
  }
  if (status) *status = Status::success();
  return std::make_unique<DeviceBuffer>(static_cast<CUcontext>(context_), p, bytes);
}

Status CudaBackend::execute(const Plan& p) {
  if (!p.handle) return Status::error(Errc::kernel_missing, std::string(p.kernel_name) + ": zero handle");
  const CUfunction f = reinterpret_cast<CUfunction>(p.handle.value);
  cuCtxPushCurrent(static_cast<CUcontext>(context_));
  Status st = Status::success();
  // Above 48 KiB a kernel must opt in to its dynamic shared memory before the launch.
  if (p.dynamic_smem > kSmemWithoutOptIn) {
    const CUresult r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(p.dynamic_smem));
    if (r != CUDA_SUCCESS) st = driver_error("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
  }
  if (st.ok()) {
    // The kernels' parameters, in order: 4 pointers then 5 uint32_t (kernels.hpp).
    CUdeviceptr input = p.params.input, weight = p.params.weight, scale = p.params.block_scale, output = p.params.output;
    std::uint32_t m = p.params.m, n = p.params.n, k = p.params.k, lda = p.params.a_row_stride, ldc = p.params.c_row_stride;
    void* args[] = {&input, &weight, &scale, &output, &m, &n, &k, &lda, &ldc};
    const CUresult r = cuLaunchKernel(f, p.grid.x, p.grid.y, p.grid.z, p.block.x, p.block.y, p.block.z, p.dynamic_smem,
                                      reinterpret_cast<CUstream>(p.stream), args, nullptr);
    if (r != CUDA_SUCCESS) st = driver_error((std::string("cuLaunchKernel ") + p.kernel_name).c_str(), r);
  }
  CUcontext ignored;
  cuCtxPopCurrent(&ignored);
  return st;
}

Status CudaBackend::synchronize() {
  cuCtxPushCurrent(static_cast<CUcontext>(context_));
  const CUresult r = cuCtxSynchronize();
  CUcontext ignored;
  cuCtxPopCurrent(&ignored);
  return r == CUDA_SUCCESS ? Status::success() : driver_error("cuCtxSynchronize", r);
}

}  // namespace w8a16::device
