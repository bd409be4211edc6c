// SPDX-License-Identifier: MIT OR Apache-2.0
// The CUDA backend over the driver API: the embedded module (device/CMakeLists.txt,
// w8a16_embed_kernel_module) loaded with cuModuleLoadData, kernels resolved by name with
// cuModuleGetFunction (a missing one keeps the zero handle), plans launched with cuLaunchKernel.
#include "w8a16/device/cuda_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cuda_driver.hpp"
#include "regular_file.hpp"
#include "w8a16/device/module_check.hpp"

extern const unsigned char w8a16_kernels_fatbin[];
extern const std::size_t w8a16_kernels_fatbin_size;

namespace w8a16::device {
namespace {

// The errors after which the context is unusable (the CUDA driver API's CUresult list: "This
// leaves the process in an inconsistent state and any further CUDA work will return the same
// error"): the kernel under test faulted, and only a fresh process runs the next case.
bool sticky(CUresult r) {
  switch (static_cast<int>(r)) {
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 710:  // CUDA_ERROR_ASSERT
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
    case 999:  // CUDA_ERROR_UNKNOWN
      return true;
    default: return false;
  }
}

Status driver_error(const cuda::Driver* d, const std::string& what, CUresult r) {
  return Status::error(sticky(r) ? Errc::context_lost : Errc::backend_error, what + ": " + cuda::result_text(*d, r));
}

using Current = cuda::PrimaryContext::Current;

class DeviceBuffer final : public Buffer {
 public:
  // Holds the context's handle, not the backend's PrimaryContext: a buffer never reads its backend's memory.
  DeviceBuffer(const cuda::PrimaryContext& ctx, CUdeviceptr p, std::size_t size)
      : d_(&ctx.driver()), ctx_(ctx.get()), ptr_(p), size_(size) {}
  ~DeviceBuffer() override {
    Current current(*d_, ctx_);
    d_->cuMemFree(ptr_);
  }
  DevPtr address() const override { return static_cast<DevPtr>(ptr_); }
  std::size_t size() const override { return size_; }
  Status upload(const void* src, std::size_t bytes, std::size_t offset) override {
    if (offset > size_ || bytes > size_ - offset) return range("upload");
    Current current(*d_, ctx_);
    return check("cuMemcpyHtoD", d_->cuMemcpyHtoD(ptr_ + offset, src, bytes));
  }
  Status download(void* dst, std::size_t bytes, std::size_t offset) const override {
    if (offset > size_ || bytes > size_ - offset) return range("download");
    Current current(*d_, ctx_);
    return check("cuMemcpyDtoH", d_->cuMemcpyDtoH(dst, ptr_ + offset, bytes));
  }
  Status fill(std::uint8_t byte) override {
    Current current(*d_, ctx_);
    return check("cuMemsetD8", d_->cuMemsetD8(ptr_, byte, size_));
  }

 private:
  Status range(const char* op) const {
    return Status::error(Errc::backend_error,
                         std::string(op) + ": the range leaves the buffer of " + std::to_string(size_) + " bytes");
  }
  Status check(const char* what, CUresult r) const {
    return r == CUDA_SUCCESS ? Status::success() : driver_error(d_, what, r);
  }
  const cuda::Driver* d_;
  CUcontext ctx_;
  CUdeviceptr ptr_;
  std::size_t size_;
};

// The family's parameter layout (docs/KERNEL_ABI.md 1.1): four 8-byte pointers, five uint32_t.
constexpr std::size_t kParamCount = 9;
constexpr std::size_t kParamOffset[kParamCount] = {0, 8, 16, 24, 32, 36, 40, 44, 48};
constexpr std::size_t kParamSize[kParamCount] = {8, 8, 8, 8, 4, 4, 4, 4, 4};

std::string layout_text(const std::vector<std::pair<std::size_t, std::size_t>>& params) {
  std::string s = std::to_string(params.size()) + " parameters (offset:size";
  for (const auto& [off, size] : params) s += " " + std::to_string(off) + ":" + std::to_string(size);
  return s + ")";
}

// The Hopper tier's three more (docs/KERNEL_ABI.md 1.1): float* workspace after the nine, then
// two CUtensorMap (128 bytes each, by value); where the compiler places those two depends on the
// parameter bank's alignment, so only their size and order are part of the ABI.
constexpr std::size_t kTmaWorkspaceOffset = 56, kTensorMapBytes = 128;

// "" when f has its kernel's layout, else what it has instead. A driver without cuFuncGetParamInfo
// cannot tell: *checked is then false.
std::string layout_mismatch(const cuda::Driver* d, CUfunction f, KernelId id, bool* checked) {
  *checked = d->cuFuncGetParamInfo != nullptr;
  if (!*checked) return "";
  const bool tma = kernel_uses_tma(id);
  const std::size_t count = tma ? kParamCount + 3 : kParamCount;
  std::vector<std::pair<std::size_t, std::size_t>> got;
  for (std::size_t i = 0; i < count + 1; ++i) {  // one past the last: there must be none
    std::size_t off = 0, size = 0;
    if (d->cuFuncGetParamInfo(f, i, &off, &size) != CUDA_SUCCESS) break;
    got.emplace_back(off, size);
  }
  bool same = got.size() == count;
  for (std::size_t i = 0; same && i < kParamCount; ++i)
    same = got[i].first == kParamOffset[i] && got[i].second == kParamSize[i];
  if (same && tma)
    same = got[9].first == kTmaWorkspaceOffset && got[9].second == 8 && got[10].second == kTensorMapBytes &&
           got[11].second == kTensorMapBytes && got[10].first >= kTmaWorkspaceOffset + 8 &&
           got[11].first >= got[10].first + kTensorMapBytes;
  if (same) return "";
  std::vector<std::pair<std::size_t, std::size_t>> want;
  for (std::size_t i = 0; i < kParamCount; ++i) want.emplace_back(kParamOffset[i], kParamSize[i]);
  if (tma)
    return "has " + layout_text(got) + ", its ABI is " + layout_text(want) +
           " then workspace (56:8) and two 128-byte tensor maps: (input, weight, block_scale, output, m, n, k, "
           "a_row_stride, c_row_stride, workspace, wmap, amap)";
  return "has " + layout_text(got) + ", the family's ABI is " + layout_text(want) +
         ": (input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride)";
}

}  // namespace

std::size_t CudaBackend::embedded_module_bytes() { return w8a16_kernels_fatbin_size; }

std::vector<unsigned char> CudaBackend::embedded_module() {
  return std::vector<unsigned char>(w8a16_kernels_fatbin, w8a16_kernels_fatbin + w8a16_kernels_fatbin_size);
}

std::unique_ptr<CudaBackend> CudaBackend::create_from_file(int ordinal, const std::string& path, Status* status) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<CudaBackend> {
    if (status) *status = Status::error(Errc::backend_error, "--module " + path + ": " + why);
    return nullptr;
  };
  // A regular file only, of at most 1 GiB (far above any fatbin of this family, a few MB).
  // Kept for the backend's life: the driver may read the image after cuModuleLoadData returns.
  auto image = std::make_shared<std::vector<unsigned char>>();
  std::string problem;
  if (!read_regular_file(path, std::uint64_t{1} << 30, "a kernel module", "1 GiB", image.get(), &problem))
    return fail(problem);
  // The image before anything else (all but the architecture, which needs the GPU), so that a file
  // that is no module, or a cut one, is named as such even where there is no driver or GPU;
  // create_with_module checks it again against the GPU's compute capability before the driver sees it.
  if (std::string why = check_module_image(image->data(), image->size(), 0, 0); !why.empty()) return fail(why);
  auto b = create_with_module(ordinal, image->data(), image->size(), status);
  if (!b) {
    if (status) status->message = "--module " + path + ": " + status->message;
    return nullptr;
  }
  b->module_source_ = path;
  b->module_image_ = std::move(image);
  return b;
}

std::vector<std::string> CudaBackend::module_functions(bool* listed) const {
  std::vector<std::string> names;
  *listed = false;
  if (!module_ || !drv_->cuModuleGetFunctionCount || !drv_->cuModuleEnumerateFunctions || !drv_->cuFuncGetName)
    return names;
  Current current(*context_);
  unsigned count = 0;
  if (drv_->cuModuleGetFunctionCount(&count, static_cast<CUmodule>(module_)) != CUDA_SUCCESS) return names;
  std::vector<CUfunction> fs(count);
  if (count && drv_->cuModuleEnumerateFunctions(fs.data(), count, static_cast<CUmodule>(module_)) != CUDA_SUCCESS)
    return names;
  for (CUfunction f : fs) {
    const char* name = nullptr;
    if (drv_->cuFuncGetName(&name, f) == CUDA_SUCCESS && name) names.emplace_back(name);
  }
  *listed = true;
  return names;
}

std::unique_ptr<CudaBackend> CudaBackend::create(int ordinal, Status* status) {
  return create_with_module(ordinal, w8a16_kernels_fatbin, w8a16_kernels_fatbin_size, status);
}

std::unique_ptr<CudaBackend> CudaBackend::create_with_module(int ordinal, const void* image, std::size_t bytes,
                                                             Status* status) {
  auto fail = [&](Status s) -> std::unique_ptr<CudaBackend> {
    if (status) *status = std::move(s);
    return nullptr;
  };
  std::string why;
  const cuda::Driver* d = cuda::driver(&why);
  // No driver, or a driver that sees no GPU, is "no GPU here" (Errc::no_device), which a caller may
  // report as skipped; a driver that is there and refuses is an error like any other.
  if (!d) return fail(Status::error(cuda::driver_absent() ? Errc::no_device : Errc::backend_error, why));
  auto ctx = std::make_unique<cuda::PrimaryContext>();
  std::string failed;
  if (CUresult r = ctx->retain(*d, ordinal, &failed); r != CUDA_SUCCESS) {
    Status s = driver_error(d, failed, r);
    if (cuda::means_no_device(failed, r, ordinal)) s.code = Errc::no_device;
    return fail(std::move(s));
  }
  const CUdevice dev = ctx->device();
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->drv_ = d;
  b->context_ = std::move(ctx);  // from here on, the backend's end releases it

  Current current(*b->context_);
  const struct {
    CUdevice_attribute attr;
    std::uint32_t* out;
  } attrs[] = {{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &b->limits_.max_dynamic_smem_per_block},
               {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &b->limits_.multiprocessors},
               {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &b->limits_.max_grid_x},
               {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &b->limits_.max_grid_y},
               {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &b->limits_.max_grid_z}};
  {
    char name[256] = {};
    if (CUresult r = d->cuDeviceGetName(name, sizeof name - 1, dev); r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuDeviceGetName", r));
    b->info_.name = name;
    if (CUresult r = d->cuDriverGetVersion(&b->info_.driver_cuda_version); r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuDriverGetVersion", r));
    if (CUresult r = d->cuDeviceGetAttribute(&b->info_.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuDeviceGetAttribute", r));
    if (CUresult r = d->cuDeviceGetAttribute(&b->info_.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuDeviceGetAttribute", r));
  }
  for (const auto& a : attrs) {
    int v = 0;
    if (CUresult r = d->cuDeviceGetAttribute(&v, a.attr, dev); r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuDeviceGetAttribute", r));
    *a.out = static_cast<std::uint32_t>(v);
  }
  if (bytes != 0) {
    // Checked first, against this GPU: cuModuleLoadData trusts the sizes and offsets it finds, and
    // on a cut or damaged image it crashes or hangs instead of returning an error (module_check.hpp).
    if (std::string why = check_module_image(static_cast<const unsigned char*>(image), bytes, b->info_.cc_major,
                                             b->info_.cc_minor);
        !why.empty())
      return fail(Status::error(Errc::backend_error, "kernel module refused before loading: " + why));
    CUmodule mod;
    if (CUresult r = d->cuModuleLoadData(&mod, image); r != CUDA_SUCCESS)
      return fail(driver_error(d, "cuModuleLoadData (the kernel module)", r));
    b->module_ = mod;
    b->module_bytes_ = bytes;
    b->abi_checked_ = d->cuFuncGetParamInfo != nullptr;
    // A kernel the module lacks keeps the zero handle (the seed's try_target_kernel,
    // docs/KERNEL_ABI.md 1.2); one with another parameter layout is refused (1.3).
    for (KernelId id : kAllKernels) {
      CUfunction f;
      if (d->cuModuleGetFunction(&f, mod, kernel_name(id)) != CUDA_SUCCESS) continue;
      bool checked = false;
      if (const std::string wrong = layout_mismatch(d, f, id, &checked); !wrong.empty())
        return fail(Status::error(Errc::backend_error, std::string("kernel module: ") + kernel_name(id) + " " + wrong +
                                                           " (docs/KERNEL_ABI.md 1.1); nothing was launched"));
      b->registry_.handles_[static_cast<std::size_t>(id)] = KernelHandle{reinterpret_cast<std::uint64_t>(f)};
    }
    // The perturbed module's two globals (device/kernels/w8a16_timing.cuh): both, or it is not one.
    CUdeviceptr seed = 0, stalls = 0;
    std::size_t seed_bytes = 0, stalls_bytes = 0;
    if (d->cuModuleGetGlobal(&seed, &seed_bytes, mod, "w8a16_timing_seed") == CUDA_SUCCESS &&
        seed_bytes == sizeof(std::uint64_t) &&
        d->cuModuleGetGlobal(&stalls, &stalls_bytes, mod, "w8a16_timing_stalls") == CUDA_SUCCESS &&
        stalls_bytes == sizeof(std::uint32_t)) {
      b->timing_seed_ = seed;
      b->timing_stalls_ = stalls;
      // The cp.async bodies' seed (device/kernels/w8a16_sync_timing.cuh), where the module has it.
      CUdeviceptr sync_seed = 0;
      std::size_t sync_bytes = 0;
      if (d->cuModuleGetGlobal(&sync_seed, &sync_bytes, mod, "w8a16_sync_timing_seed") == CUDA_SUCCESS &&
          sync_bytes == sizeof(std::uint64_t))
        b->sync_timing_seed_ = sync_seed;
    }
  }
  if (status) *status = Status::success();
  return b;
}

CudaBackend::~CudaBackend() {
  if (!context_) return;
  Current current(*context_);
  for (const auto& [stream, w] : workspaces_)
    if (w.ptr) drv_->cuMemFree(static_cast<CUdeviceptr>(w.ptr));
  if (concurrent_stream_) drv_->cuStreamDestroy(reinterpret_cast<CUstream>(concurrent_stream_));
  if (module_) drv_->cuModuleUnload(static_cast<CUmodule>(module_));
}  // then context_ releases the primary context

std::unique_ptr<Buffer> CudaBackend::allocate(std::size_t bytes, Status* status) {
  CUdeviceptr p = 0;
  CUresult r;
  {
    Current current(*context_);
    r = drv_->cuMemAlloc(&p, bytes == 0 ? 1 : bytes);
  }
  if (r != CUDA_SUCCESS) {
    if (status) *status = driver_error(drv_, "cuMemAlloc(" + std::to_string(bytes) + ")", r);
    return nullptr;
  }
  if (status) *status = Status::success();
  return std::make_unique<DeviceBuffer>(*context_, p, bytes);
}

// Call with the context current.
Status CudaBackend::workspace_for(Stream stream, std::uint64_t bytes, std::uint64_t* ptr) {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  Workspace& w = workspaces_[stream];
  if (w.bytes < bytes) {
    // The old one may still be in use by a launch on this stream: wait for the stream first.
    if (w.ptr) {
      if (CUresult r = drv_->cuStreamSynchronize(reinterpret_cast<CUstream>(stream)); r != CUDA_SUCCESS)
        return driver_error(drv_, "cuStreamSynchronize (growing the workspace)", r);
      drv_->cuMemFree(static_cast<CUdeviceptr>(w.ptr));
      w = Workspace{};
    }
    CUdeviceptr p = 0;
    if (CUresult r = drv_->cuMemAlloc(&p, bytes); r != CUDA_SUCCESS)
      return driver_error(drv_, "cuMemAlloc(workspace " + std::to_string(bytes) + ")", r);
    if (CUresult r = drv_->cuMemsetD8(p, 0, bytes); r != CUDA_SUCCESS) {
      drv_->cuMemFree(p);
      return driver_error(drv_, "cuMemsetD8(workspace)", r);
    }
    w = Workspace{static_cast<std::uint64_t>(p), bytes};
  }
  *ptr = w.ptr;
  return Status::success();
}

namespace {

// The tensor maps of the Hopper tier (its ABI, device/README.md): W as UINT8 {k, n} (row pitch k)
// in boxes of {128, unit columns}; A as UINT16 {k, m} (row pitch 2 a_row_stride bytes) in boxes of
// {64, rows};
// both in the 128-byte swizzle, out-of-range elements read as zero.
Status encode_maps(const cuda::Driver* d, const Plan& p, CUtensorMap* wmap, CUtensorMap* amap) {
  const KernelParams& q = p.params;
  const cuuint32_t unit_stride[2] = {1, 1};
  {
    const cuuint64_t dims[2] = {q.k, q.n};
    const cuuint64_t strides[1] = {q.k};
    const cuuint32_t box[2] = {kKBlock, wgmma_unit_cols(wgmma_variant(p.body))};
    if (CUresult r = d->cuTensorMapEncodeTiled(wmap, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2,
                                               reinterpret_cast<void*>(q.weight), dims, strides, box, unit_stride,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        r != CUDA_SUCCESS)
      return driver_error(d, std::string("cuTensorMapEncodeTiled (W of ") + p.kernel_name + ")", r);
  }
  {
    const cuuint64_t dims[2] = {q.k, q.m};
    const cuuint64_t strides[1] = {cuuint64_t{2} * q.a_row_stride};
    const cuuint32_t box[2] = {64, wgmma_tile_rows(q.m)};
    if (CUresult r = d->cuTensorMapEncodeTiled(amap, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                                               reinterpret_cast<void*>(q.input), dims, strides, box, unit_stride,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        r != CUDA_SUCCESS)
      return driver_error(d, std::string("cuTensorMapEncodeTiled (A of ") + p.kernel_name + ")", r);
  }
  return Status::success();
}

}  // namespace

Status CudaBackend::execute(const Plan& p) {
  if (!p.handle) return Status::error(Errc::kernel_missing, std::string(p.kernel_name) + ": zero handle");
  const CUfunction f = reinterpret_cast<CUfunction>(p.handle.value);
  Current current(*context_);
  // Above 48 KiB a kernel must opt in to its dynamic shared memory before the launch.
  if (p.dynamic_smem > kSmemWithoutOptIn) {
    const CUresult r = drv_->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                static_cast<int>(p.dynamic_smem));
    if (r != CUDA_SUCCESS) return driver_error(drv_, std::string("cuFuncSetAttribute ") + p.kernel_name, r);
  }
  // The kernels' parameters, in order: 4 pointers then 5 uint32_t (kernels.hpp).
  CUdeviceptr input = p.params.input, weight = p.params.weight, scale = p.params.block_scale, output = p.params.output;
  std::uint32_t m = p.params.m, n = p.params.n, k = p.params.k, lda = p.params.a_row_stride,
                ldc = p.params.c_row_stride;
  void* base_args[] = {&input, &weight, &scale, &output, &m, &n, &k, &lda, &ldc};
  // w8a16_wgmma_rows: then the workspace and the two tensor maps (kernels.hpp).
  std::uint64_t workspace = 0;
  // No alignas here: cuda.h declares CUtensorMap alignas(128), beyond the 64 bytes cuTensorMapEncodeTiled
  // requires, and a weaker alignas than the type's is ill-formed C++ ([dcl.align]; GCC ignores it, clang refuses).
  CUtensorMap wmap, amap;
  void* tma_args[] = {&input, &weight, &scale, &output, &m, &n, &k, &lda, &ldc, &workspace, &wmap, &amap};
  if (p.workspace_bytes != 0)
    if (Status st = workspace_for(p.stream, p.workspace_bytes, &workspace); !st.ok()) return st;
  if (kernel_uses_tma(p.kernel))
    if (Status st = encode_maps(drv_, p, &wmap, &amap); !st.ok()) return st;
  void** args = kernel_uses_tma(p.kernel) ? tma_args : base_args;
  const CUresult r = drv_->cuLaunchKernel(f, p.grid.x, p.grid.y, p.grid.z, p.block.x, p.block.y, p.block.z,
                                          p.dynamic_smem, reinterpret_cast<CUstream>(p.stream), args, nullptr);
  return r == CUDA_SUCCESS ? Status::success() : driver_error(drv_, std::string("cuLaunchKernel ") + p.kernel_name, r);
}

Stream CudaBackend::concurrent_stream(Status* status) {
  if (concurrent_stream_) {
    if (status) *status = Status::success();
    return concurrent_stream_;
  }
  // cuStreamCreate is one of the timing functions: loaded with the rest, but absent on a driver
  // that lacks any of them (cuda_driver.hpp).
  if (!drv_->cuStreamCreate || !drv_->cuStreamDestroy) {
    if (status) *status = Status::error(Errc::backend_error, "this driver lacks cuStreamCreate or cuStreamDestroy");
    return 0;
  }
  Current current(*context_);
  CUstream s = nullptr;
  if (const CUresult r = drv_->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    if (status) *status = driver_error(drv_, "cuStreamCreate(CU_STREAM_NON_BLOCKING)", r);
    return 0;
  }
  concurrent_stream_ = reinterpret_cast<Stream>(s);
  if (status) *status = Status::success();
  return concurrent_stream_;
}

Status CudaBackend::set_timing_seed(std::uint64_t seed) {
  if (!timing_seed_)
    return Status::error(Errc::backend_error,
                         "the kernel module has no w8a16_timing_seed: it is not a perturbed module "
                         "(device/kernels/w8a16_timing.cuh)");
  Current current(*context_);
  // Ordered after every launch queued before it on stream 0 (a synchronous copy), so a launch
  // already queued keeps the seed it was queued with only if it has finished: callers set it between
  // launches they wait for.
  const CUresult r = drv_->cuMemcpyHtoD(timing_seed_, &seed, sizeof seed);
  if (r != CUDA_SUCCESS) return driver_error(drv_, "cuMemcpyHtoD (w8a16_timing_seed)", r);
  if (sync_timing_seed_ != 0)
    if (const CUresult rs = drv_->cuMemcpyHtoD(sync_timing_seed_, &seed, sizeof seed); rs != CUDA_SUCCESS)
      return driver_error(drv_, "cuMemcpyHtoD (w8a16_sync_timing_seed)", rs);
  return Status::success();
}

Status CudaBackend::take_timing_stalls(std::uint32_t* stalls) {
  *stalls = 0;
  if (!timing_stalls_)
    return Status::error(Errc::backend_error,
                         "the kernel module has no w8a16_timing_stalls: it is not a perturbed module "
                         "(device/kernels/w8a16_timing.cuh)");
  Current current(*context_);
  std::uint32_t count = 0;
  if (const CUresult r = drv_->cuMemcpyDtoH(&count, timing_stalls_, sizeof count); r != CUDA_SUCCESS)
    return driver_error(drv_, "cuMemcpyDtoH (w8a16_timing_stalls)", r);
  if (count != 0) {
    // A launch whose waits gave up may have left a cross-CTA flag set that its reader never took
    // (the flags' one reader zeroes them for the next launch): every workspace starts zero again,
    // as a fresh one does, so that the stall is this launch's alone.
    const std::uint32_t zero = 0;
    if (const CUresult r = drv_->cuMemcpyHtoD(timing_stalls_, &zero, sizeof zero); r != CUDA_SUCCESS)
      return driver_error(drv_, "cuMemcpyHtoD (w8a16_timing_stalls)", r);
    std::lock_guard<std::mutex> lock(workspaces_mutex_);
    for (const auto& [stream, w] : workspaces_)
      if (w.ptr)
        if (const CUresult r = drv_->cuMemsetD8(static_cast<CUdeviceptr>(w.ptr), 0, w.bytes); r != CUDA_SUCCESS)
          return driver_error(drv_, "cuMemsetD8(workspace, after a stall)", r);
  }
  *stalls = count;
  return Status::success();
}

Status CudaBackend::synchronize() {
  Current current(*context_);
  const CUresult r = drv_->cuCtxSynchronize();
  return r == CUDA_SUCCESS ? Status::success() : driver_error(drv_, "cuCtxSynchronize", r);
}

}  // namespace w8a16::device
