// SPDX-License-Identifier: MIT OR Apache-2.0
// The symbols a module needs for given entry points (module_abi.hpp, docs/KERNEL_ABI.md 1.2).
#include "w8a16/device/module_abi.hpp"

#include <algorithm>

#include "w8a16/device/bodies.hpp"

namespace w8a16::device {
namespace {

void add(std::vector<ModuleCoverage::Missing>* list, KernelId k, Entry e) {
  for (ModuleCoverage::Missing& m : *list)
    if (m.kernel == k) {
      if (std::find(m.needed_by.begin(), m.needed_by.end(), e) == m.needed_by.end()) m.needed_by.push_back(e);
      return;
    }
  list->push_back({k, {e}});
}

std::string entries_text(const std::vector<Entry>& es) {
  std::string s;
  for (Entry e : es) s += (s.empty() ? "" : ", ") + std::string(entry_name(e));
  return s;
}

}  // namespace

std::vector<KernelId> required_kernels(Entry e) {
  if (e == Entry::gemm_pipelined_by_m)
    return {KernelId::gemm_pipelined, KernelId::gemm_pipelined_m32, KernelId::gemm_pipelined_m64};
  if (e == Entry::gemm_packed_strided) {  // one symbol by shape (plan.hpp packed_body), no other tier
    std::vector<KernelId> out;
    for (KernelId k : kAllKernels)
      if (packed_layout_kernels() & kernel_bit(k)) out.push_back(k);
    return out;
  }
  return {entry_own_kernel(e)};
}

// The symbols of every body of a tier that goes first (bodies.def) and that this entry point tries.
std::vector<KernelId> optional_kernels(Entry e) {
  std::uint32_t bits = 0;
  for (Body b : kAllBodies)
    if (body_info(b).tier != Tier::own && (body_info(b).entries & entry_bit(e))) bits |= body_info(b).kernels;
  std::vector<KernelId> out;
  for (KernelId k : kAllKernels)
    if (bits & kernel_bit(k)) out.push_back(k);
  return out;
}

ModuleCoverage module_coverage(const KernelRegistry& registry, const std::vector<Entry>& entries) {
  ModuleCoverage c;
  for (Entry e : entries) {
    for (KernelId k : required_kernels(e))
      if (!registry.resolve(k)) add(&c.required, k, e);
    for (KernelId k : optional_kernels(e))
      if (!registry.resolve(k)) add(&c.optional, k, e);
  }
  return c;
}

std::string missing_required_text(const ModuleCoverage& c) {
  std::string s;
  for (const ModuleCoverage::Missing& m : c.required)
    s += std::string("the module lacks ") + kernel_name(m.kernel) + ", required by " + entries_text(m.needed_by) +
         " (docs/KERNEL_ABI.md 1.2)\n";
  return s;
}

std::string missing_optional_text(const ModuleCoverage& c) {
  std::string s;
  for (const ModuleCoverage::Missing& m : c.optional)
    s += std::string(kernel_name(m.kernel)) + " (tried first by " + entries_text(m.needed_by) + "): absent; " +
         (kernel_uses_tma(m.kernel) ? "the entry points run the tiers below the Hopper tier in its place\n"
                                    : "the twins run their own bodies in its place\n");
  return s;
}

std::vector<std::string> foreign_family_names(const std::vector<std::string>& functions) {
  std::vector<std::string> out;
  for (const std::string& f : functions) {
    KernelId id;
    if (f.rfind("w8a16_", 0) == 0 && !kernel_from_name(f, &id)) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace w8a16::device
