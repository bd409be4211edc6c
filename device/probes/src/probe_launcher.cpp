// SPDX-License-Identifier: MIT OR Apache-2.0
// The probe launcher (probes.hpp): the probe module on its own context, over the one driver table.
#include <algorithm>
#include <array>

#include "cuda_driver.hpp"
#include "w8a16/probes/probes.hpp"

extern const unsigned char w8a16_probes_fatbin[];
extern const std::size_t w8a16_probes_fatbin_size;

namespace w8a16::probes {

using Current = device::cuda::PrimaryContext::Current;

struct ProbeLauncher::State {
  const device::cuda::Driver* d = nullptr;
  device::cuda::PrimaryContext ctx;
  CUmodule module = nullptr;
  std::array<CUfunction, kProbeKernelCount> functions{};
  device::Status error(const std::string& what, CUresult r) const {
    return device::Status::error(device::Errc::backend_error, what + ": " + device::cuda::result_text(*d, r));
  }
  ~State() {
    if (module) {
      Current current(ctx);
      d->cuModuleUnload(module);
    }
  }  // then ctx releases the primary context
};

namespace {

// A device allocation freed at the end of its scope (the context current).
class DeviceBytes {
 public:
  DeviceBytes(const device::cuda::Driver* d) : d_(d) {}
  ~DeviceBytes() {
    if (p_) d_->cuMemFree(p_);
  }
  CUresult allocate(std::size_t bytes) { return d_->cuMemAlloc(&p_, bytes); }
  CUdeviceptr& ptr() { return p_; }

 private:
  const device::cuda::Driver* d_;
  CUdeviceptr p_ = 0;
};

// "" when f has the probe's layout, else what it has instead (docs/KERNEL_ABI.md 7).
std::string layout_mismatch(const device::cuda::Driver* d, CUfunction f, ProbeKernel k) {
  const std::vector<ProbeParam> want = probe_kernel_params(k);
  std::vector<std::pair<std::size_t, std::size_t>> got;
  for (std::size_t i = 0; i < want.size() + 1; ++i) {  // one past the last: there must be none
    std::size_t off = 0, size = 0;
    if (d->cuFuncGetParamInfo(f, i, &off, &size) != CUDA_SUCCESS) break;
    got.emplace_back(off, size);
  }
  bool same = got.size() == want.size();
  for (std::size_t i = 0; same && i < want.size(); ++i)
    same = got[i].first == want[i].offset && got[i].second == want[i].size;
  if (same) return "";
  auto text = [](const std::vector<std::pair<std::size_t, std::size_t>>& ps) {
    std::string s = std::to_string(ps.size()) + " parameters (offset:size";
    for (const auto& [off, size] : ps) s += " " + std::to_string(off) + ":" + std::to_string(size);
    return s + ")";
  };
  std::vector<std::pair<std::size_t, std::size_t>> w;
  for (const ProbeParam& p : want) w.emplace_back(p.offset, p.size);
  return "has " + text(got) + ", the probe's ABI is " + text(w);
}

}  // namespace

ProbeLauncher::ProbeLauncher(std::unique_ptr<State> s) : s_(std::move(s)) {}
ProbeLauncher::~ProbeLauncher() = default;

std::vector<unsigned char> ProbeLauncher::embedded_module() {
  return std::vector<unsigned char>(w8a16_probes_fatbin, w8a16_probes_fatbin + w8a16_probes_fatbin_size);
}

std::unique_ptr<ProbeLauncher> ProbeLauncher::create(int ordinal, device::Status* status) {
  return create_with_module(ordinal, w8a16_probes_fatbin, w8a16_probes_fatbin_size, status);
}

std::unique_ptr<ProbeLauncher> ProbeLauncher::create_with_module(int ordinal, const void* image, std::size_t bytes,
                                                                 device::Status* status) {
  auto fail = [&](device::Status st) -> std::unique_ptr<ProbeLauncher> {
    if (status) *status = std::move(st);
    return nullptr;
  };
  auto s = std::make_unique<State>();
  std::string why;
  s->d = device::cuda::driver(&why);
  // No driver, or one that sees no GPU, is "no GPU here" (Errc::no_device: `probe` exits 77).
  if (!s->d)
    return fail(device::Status::error(device::cuda::driver_absent() ? device::Errc::no_device
                                                                    : device::Errc::backend_error,
                                      why));
  const device::cuda::Driver* d = s->d;
  std::string failed;
  if (CUresult r = s->ctx.retain(*d, ordinal, &failed); r != CUDA_SUCCESS) {
    device::Status st = s->error(failed, r);
    if (device::cuda::means_no_device(failed, r, ordinal)) st.code = device::Errc::no_device;
    return fail(st);
  }
  const CUdevice dev = s->ctx.device();
  device::CudaDeviceInfo info;
  {
    Current current(s->ctx);
    char name[256] = {};
    if (CUresult r = d->cuDeviceGetName(name, sizeof name - 1, dev); r != CUDA_SUCCESS)
      return fail(s->error("cuDeviceGetName", r));
    info.name = name;
    CUresult r = d->cuDriverGetVersion(&info.driver_cuda_version);
    if (r == CUDA_SUCCESS)
      r = d->cuDeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (r == CUDA_SUCCESS)
      r = d->cuDeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (r != CUDA_SUCCESS) return fail(s->error("cuDeviceGetAttribute", r));
    if (bytes == 0) return fail(device::Status::error(device::Errc::backend_error, "the probe module is empty"));
    if (r = d->cuModuleLoadData(&s->module, image); r != CUDA_SUCCESS) {
      s->module = nullptr;
      return fail(s->error("cuModuleLoadData (the probe module)", r));
    }
    for (ProbeKernel k : kAllProbeKernels) {
      CUfunction f;
      if (d->cuModuleGetFunction(&f, s->module, probe_kernel_name(k)) != CUDA_SUCCESS) continue;
      if (d->cuFuncGetParamInfo)
        if (const std::string wrong = layout_mismatch(d, f, k); !wrong.empty())
          return fail(device::Status::error(device::Errc::backend_error,
                                            std::string("probe module: ") + probe_kernel_name(k) + " " + wrong +
                                                " (docs/KERNEL_ABI.md 7); nothing was launched"));
      s->functions[static_cast<std::size_t>(k)] = f;
    }
  }
  std::unique_ptr<ProbeLauncher> out(new ProbeLauncher(std::move(s)));
  out->info_ = info;
  out->abi_checked_ = d->cuFuncGetParamInfo != nullptr;
  if (status) *status = device::Status::success();
  return out;
}

bool ProbeLauncher::has(ProbeKernel k) const { return s_->functions[static_cast<std::size_t>(k)] != nullptr; }

device::Status ProbeLauncher::run(ProbeKernel k, ProbeForm form, const ProbeOperands& in,
                                  std::vector<std::uint32_t>* d) {
  const std::uint32_t count = in.count();
  if (in.a.size() != 256ull * count || in.bt.size() != 128ull * count || in.c.size() != 128ull * count || count == 0)
    return device::Status::error(device::Errc::backend_error,
                                 std::string(probe_kernel_name(k)) +
                                     ": operands are not whole cases (A 256, Bt 128, C 128 "
                                     "elements per case, at least one case)");
  const CUfunction f = s_->functions[static_cast<std::size_t>(k)];
  if (!f)
    return device::Status::error(device::Errc::kernel_missing, std::string(probe_kernel_name(k)) +
                                                                   ": not in the probe module for this GPU (compute "
                                                                   "capability " +
                                                                   std::to_string(info_.cc_major) + "." +
                                                                   std::to_string(info_.cc_minor) +
                                                                   "; the wgmma probe is built for sm_90a only)");
  if (k == ProbeKernel::mma_m16n8k16_bf16 && (form.a_from_regs || !form.scale_d))
    return device::Status::error(device::Errc::backend_error, std::string(probe_kernel_name(k)) +
                                                                  ": mma.sync has one form (A in registers, C added)");
  const device::cuda::Driver* drv = s_->d;
  Current current(s_->ctx);
  const std::uint32_t words = probe_d_words(k);
  std::vector<std::uint32_t> raw(static_cast<std::size_t>(words) * count, 0xDEADBEEFu);
  DeviceBytes da(drv), db(drv), dc(drv), dd(drv);
  CUresult r = da.allocate(in.a.size() * 2);
  if (r == CUDA_SUCCESS) r = db.allocate(in.bt.size() * 2);
  if (r == CUDA_SUCCESS) r = dc.allocate(in.c.size() * 4);
  if (r == CUDA_SUCCESS) r = dd.allocate(raw.size() * 4);
  if (r != CUDA_SUCCESS) return s_->error("cuMemAlloc (probe operands)", r);
  r = drv->cuMemcpyHtoD(da.ptr(), in.a.data(), in.a.size() * 2);
  if (r == CUDA_SUCCESS) r = drv->cuMemcpyHtoD(db.ptr(), in.bt.data(), in.bt.size() * 2);
  if (r == CUDA_SUCCESS) r = drv->cuMemcpyHtoD(dc.ptr(), in.c.data(), in.c.size() * 4);
  // D starts as a pattern no instruction result of these cases is expected to have everywhere.
  if (r == CUDA_SUCCESS) r = drv->cuMemcpyHtoD(dd.ptr(), raw.data(), raw.size() * 4);
  if (r != CUDA_SUCCESS) return s_->error("cuMemcpyHtoD (probe operands)", r);
  std::uint32_t n = count, regs = form.a_from_regs ? 1 : 0, scale_d = form.scale_d ? 1 : 0;
  void* args[] = {&da.ptr(), &db.ptr(), &dc.ptr(), &dd.ptr(), &n, &regs, &scale_d};  // the first 5 for mma.sync
  // One warp (mma.sync) or one warpgroup (wgmma) per case: grid = count.
  if (r = drv->cuLaunchKernel(f, count, 1, 1, probe_threads(k), 1, 1, 0, nullptr, args, nullptr); r != CUDA_SUCCESS)
    return s_->error(std::string("cuLaunchKernel ") + probe_kernel_name(k), r);
  if (r = drv->cuCtxSynchronize(); r != CUDA_SUCCESS)
    return s_->error(std::string("cuCtxSynchronize after ") + probe_kernel_name(k), r);
  if (r = drv->cuMemcpyDtoH(raw.data(), dd.ptr(), raw.size() * 4); r != CUDA_SUCCESS)
    return s_->error("cuMemcpyDtoH (D)", r);
  d->assign(static_cast<std::size_t>(count) * 128, 0);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto first = raw.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(words) * i);
    // The instruction's 16-row slices computed the same case: they must agree bit for bit.
    for (std::uint32_t w = 1; w < words / 128; ++w)
      if (!std::equal(first, first + 128, first + static_cast<std::ptrdiff_t>(128 * w)))
        return device::Status::error(device::Errc::backend_error,
                                     "case " + std::to_string(i) + ": warp " + std::to_string(w) +
                                         " of the warpgroup computed other bits than warp 0 for the same operands");
    std::copy(first, first + 128, d->begin() + static_cast<std::ptrdiff_t>(128 * i));
  }
  return device::Status::success();
}

}  // namespace w8a16::probes
