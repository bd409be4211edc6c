// SPDX-License-Identifier: MIT OR Apache-2.0
// The kernels of the family by name, their handles, and the registry that resolves one to the
// other. A kernel missing from the loaded module resolves to the zero handle and callers fall back
// to their other kernels (the seed's try_target_kernel, seed lines 18-20).
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace w8a16::device {

// Every kernel takes (const uint16_t* input, const uint8_t* weight, const float* block_scale,
// uint16_t* output, uint32_t m, uint32_t n, uint32_t k, uint32_t a_row_stride,
// uint32_t c_row_stride) and is declared extern "C" so the module exports it under this name.
// The Hopper tier's two symbols take three more after them: float* workspace, then the tensor
// maps of W and A (CUtensorMap by value, __grid_constant__), which the CUDA backend builds
// (kernel_uses_tma).
// One enumerator per W8A16_KERNEL row of bodies.def, in its order (w8a16_gemm_pipelined: the
// 128-row tile; _m32 / _m64: the twins; tc_rows(_m64): the row-tile kernel the twins try first;
// the two scalar GEMVs; wgmma_rows(_n128, _n128_x2): the Hopper tier, sm_90a).
enum class KernelId : std::uint8_t {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) id,
#include "w8a16/device/bodies.def"
};
inline constexpr std::size_t kKernelCount = 0
#define W8A16_KERNEL(id, file, arch, params, variant, layout) +1
#include "w8a16/device/bodies.def"
    ;
inline constexpr std::array<KernelId, kKernelCount> kAllKernels = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) KernelId::id,
#include "w8a16/device/bodies.def"
};

const char* kernel_name(KernelId id);
// Kernels launched with the workspace and tensor-map parameters (bodies.def's params column: tma).
constexpr bool kernel_uses_tma(KernelId id) {
  constexpr bool kTma[] = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) W8A16_KERNEL_PARAMS_##params,
#define W8A16_KERNEL_PARAMS_plain false
#define W8A16_KERNEL_PARAMS_tma true
#include "w8a16/device/bodies.def"
#undef W8A16_KERNEL_PARAMS_plain
#undef W8A16_KERNEL_PARAMS_tma
  };
  return kTma[static_cast<std::size_t>(id)];
}
// The least architecture whose cubin holds the kernel ("sm_80", "sm_90", "sm_90a": bodies.def).
const char* kernel_arch(KernelId id);
// False for a name that is not one of the family's.
bool kernel_from_name(std::string_view name, KernelId* out);

// An opaque handle (a CUfunction on the CUDA backend); 0 means "not in the module".
struct KernelHandle {
  std::uint64_t value = 0;
  explicit operator bool() const { return value != 0; }
  friend bool operator==(KernelHandle a, KernelHandle b) { return a.value == b.value; }
  friend bool operator!=(KernelHandle a, KernelHandle b) { return a.value != b.value; }
};

class KernelRegistry {
 public:
  virtual ~KernelRegistry() = default;
  virtual KernelHandle resolve(KernelId id) const = 0;
  // By name, e.g. "w8a16_tc_rows"; a name outside the family resolves to zero.
  KernelHandle resolve_name(std::string_view name) const {
    KernelId id;
    return kernel_from_name(name, &id) ? resolve(id) : KernelHandle{};
  }
};

// Another registry with some kernels taken away (resolved to zero): how a bench or a test reaches
// the tiers below one that an entry point would try first on this module.
class MaskedRegistry final : public KernelRegistry {
 public:
  MaskedRegistry(const KernelRegistry& inner, std::initializer_list<KernelId> absent) : inner_(inner) {
    for (KernelId id : absent) absent_[static_cast<std::size_t>(id)] = true;
  }
  KernelHandle resolve(KernelId id) const override {
    return absent_[static_cast<std::size_t>(id)] ? KernelHandle{} : inner_.resolve(id);
  }

 private:
  const KernelRegistry& inner_;
  std::array<bool, kKernelCount> absent_{};
};

// A registry with a fixed table: what the simulation and recording backends use, and what tests
// use to take kernels away. Present kernels get the handle 1 + their KernelId.
class StaticRegistry final : public KernelRegistry {
 public:
  static StaticRegistry all_present();
  static StaticRegistry none_present();
  // Every kernel but the sm_90a ones (the Hopper tier and its packed twins): what a module without
  // an sm_90a cubin resolves, and what tests of the seed's dispatch rules (which the tier goes
  // before) use.
  static StaticRegistry without_hopper_tier();
  StaticRegistry& set_present(KernelId id, bool present);
  KernelHandle resolve(KernelId id) const override;

 private:
  std::array<KernelHandle, kKernelCount> handles_{};
};

}  // namespace w8a16::device
