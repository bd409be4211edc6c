// SPDX-License-Identifier: MIT OR Apache-2.0
// The product module's rules over its cubins (product_module_check.hpp).
#include "product_module_check.hpp"

#include "w8a16/device/kernels.hpp"

namespace w8a16::image {
namespace {

std::string layout_text(const std::vector<KernelParamLayout>& ps) {
  std::string s = std::to_string(ps.size()) + " parameters (offset:size";
  for (const KernelParamLayout& p : ps) s += " " + std::to_string(p.offset) + ":" + std::to_string(p.size);
  return s + ")";
}

// docs/KERNEL_ABI.md 1.1: nine parameters, then for the Hopper tier the workspace at 56 and two
// 128-byte tensor maps whose offsets follow the parameter bank's alignment.
bool layout_ok(device::KernelId id, const std::vector<KernelParamLayout>& ps) {
  static constexpr std::uint32_t kOffset[9] = {0, 8, 16, 24, 32, 36, 40, 44, 48},
                                 kSize[9] = {8, 8, 8, 8, 4, 4, 4, 4, 4};
  const bool tma = device::kernel_uses_tma(id);
  if (ps.size() != (tma ? 12u : 9u)) return false;
  for (std::uint32_t i = 0; i < ps.size(); ++i)
    if (ps[i].ordinal != i) return false;
  for (int i = 0; i < 9; ++i)
    if (ps[i].offset != kOffset[i] || ps[i].size != kSize[i]) return false;
  return !tma || (ps[9].offset == 56 && ps[9].size == 8 && ps[10].size == 128 && ps[11].size == 128 &&
                  ps[10].offset >= 64 && ps[11].offset >= ps[10].offset + 128);
}

}  // namespace

std::string product_module_problems(const std::vector<Cubin>& cubins, const std::string& architectures) {
  using device::KernelId;
  std::string out;
  const bool hopper_built = (";" + architectures + ";").find(";90a;") != std::string::npos;
  for (const Cubin& c : cubins) {
    const std::string where = " (sm_" + std::to_string(c.arch) + " cubin)";
    for (const auto& [name, params] : c.kernels) {
      KernelId id;
      if (!device::kernel_from_name(name, &id)) {
        out += name + " is not a kernel of the family" + where + "\n";
        continue;
      }
      if (!layout_ok(id, params)) out += name + " has " + layout_text(params) + where + "\n";
    }
    std::vector<KernelId> required = {KernelId::gemm_pipelined, KernelId::gemm_pipelined_m32,
                                      KernelId::gemm_pipelined_m64, KernelId::gemv_batch4_strided,
                                      KernelId::gemv_batch16_strided};
    if (c.arch >= 90) required.insert(required.end(), {KernelId::tc_rows, KernelId::tc_rows_m64});
    if (c.arch == 90 && hopper_built)
      required.insert(required.end(), {KernelId::wgmma_rows, KernelId::wgmma_rows_n128, KernelId::wgmma_rows_n128_x2});
    for (KernelId id : required)
      if (!c.kernels.count(device::kernel_name(id)))
        out += std::string("lacks ") + device::kernel_name(id) + where + "\n";
  }
  return out;
}

}  // namespace w8a16::image
