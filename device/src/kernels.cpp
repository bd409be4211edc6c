// SPDX-License-Identifier: MIT OR Apache-2.0
// Kernel names and the static registry of the host backends.
#include "w8a16/device/kernels.hpp"

namespace w8a16::device {

const char* kernel_name(KernelId id) {
  switch (id) {
    case KernelId::gemm_pipelined: return "w8a16_gemm_pipelined";
    case KernelId::gemm_pipelined_m32: return "w8a16_gemm_pipelined_m32";
    case KernelId::gemm_pipelined_m64: return "w8a16_gemm_pipelined_m64";
    case KernelId::tc_rows: return "w8a16_tc_rows";
    case KernelId::tc_rows_m64: return "w8a16_tc_rows_m64";
    case KernelId::gemv_batch4_strided: return "w8a16_gemv_batch4_strided";
    case KernelId::gemv_batch16_strided: return "w8a16_gemv_batch16_strided";
    case KernelId::wgmma_rows: return "w8a16_wgmma_rows";
    case KernelId::wgmma_rows_n128: return "w8a16_wgmma_rows_n128";
    case KernelId::wgmma_rows_n128_x2: return "w8a16_wgmma_rows_n128_x2";
  }
  return "unknown";
}

bool kernel_from_name(std::string_view name, KernelId* out) {
  for (KernelId id : kAllKernels) {
    if (name == kernel_name(id)) {
      *out = id;
      return true;
    }
  }
  return false;
}

StaticRegistry StaticRegistry::all_present() {
  StaticRegistry r;
  for (KernelId id : kAllKernels) r.set_present(id, true);
  return r;
}

StaticRegistry StaticRegistry::none_present() { return StaticRegistry{}; }

StaticRegistry StaticRegistry::without_hopper_tier() {
  return all_present()
      .set_present(KernelId::wgmma_rows, false)
      .set_present(KernelId::wgmma_rows_n128, false)
      .set_present(KernelId::wgmma_rows_n128_x2, false);
}

StaticRegistry& StaticRegistry::set_present(KernelId id, bool present) {
  const auto i = static_cast<std::size_t>(id);
  handles_[i] = KernelHandle{present ? i + 1 : 0};
  return *this;
}

KernelHandle StaticRegistry::resolve(KernelId id) const { return handles_[static_cast<std::size_t>(id)]; }

}  // namespace w8a16::device
