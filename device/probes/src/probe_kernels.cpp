// SPDX-License-Identifier: MIT OR Apache-2.0
// The probes' names, parameters and geometry (probes.hpp; kernels/*.cu are their definitions).
#include "w8a16/probes/probes.hpp"

namespace w8a16::probes {

const char* probe_kernel_name(ProbeKernel k) {
  switch (k) {
    case ProbeKernel::mma_m16n8k16_bf16: return "w8a16_probe_mma_m16n8k16_bf16";
    case ProbeKernel::wgmma_m64n8k16_bf16: return "w8a16_probe_wgmma_m64n8k16_bf16";
  }
  return "unknown";
}

bool probe_kernel_from_name(std::string_view name, ProbeKernel* out) {
  for (ProbeKernel k : kAllProbeKernels)
    if (name == probe_kernel_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

std::vector<ProbeParam> probe_kernel_params(ProbeKernel k) {
  std::vector<ProbeParam> p = {{"a", 0, 8}, {"bt", 8, 8}, {"c", 16, 8}, {"d", 24, 8}, {"count", 32, 4}};
  if (k == ProbeKernel::wgmma_m64n8k16_bf16) {
    p.push_back({"a_from_regs", 36, 4});
    p.push_back({"scale_d", 40, 4});
  }
  return p;
}

std::uint32_t probe_threads(ProbeKernel k) { return k == ProbeKernel::wgmma_m64n8k16_bf16 ? 128 : 32; }

std::uint32_t probe_d_words(ProbeKernel k) { return 128 * (probe_threads(k) / 32); }

}  // namespace w8a16::probes
