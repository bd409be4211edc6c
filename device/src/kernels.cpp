// SPDX-License-Identifier: MIT OR Apache-2.0
// Kernel names (bodies.def) and the static registry of the host backends.
#include "w8a16/device/kernels.hpp"

#include "w8a16/device/bodies.hpp"

namespace w8a16::device {

const char* kernel_name(KernelId id) {
  static constexpr const char* kNames[] = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) "w8a16_" #id,
#include "w8a16/device/bodies.def"
  };
  const auto i = static_cast<std::size_t>(id);
  return i < kKernelCount ? kNames[i] : "unknown";
}

const char* kernel_arch(KernelId id) {
  static constexpr const char* kArch[] = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) #arch,
#include "w8a16/device/bodies.def"
  };
  const auto i = static_cast<std::size_t>(id);
  return i < kKernelCount ? kArch[i] : "unknown";
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
  StaticRegistry r = all_present();
  for (KernelId id : kAllKernels)
    if (std::string_view(kernel_arch(id)) == "sm_90a") r.set_present(id, false);
  return r;
}

StaticRegistry& StaticRegistry::set_present(KernelId id, bool present) {
  const auto i = static_cast<std::size_t>(id);
  handles_[i] = KernelHandle{present ? i + 1 : 0};
  return *this;
}

KernelHandle StaticRegistry::resolve(KernelId id) const { return handles_[static_cast<std::size_t>(id)]; }

}  // namespace w8a16::device
