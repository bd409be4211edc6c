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
enum class KernelId : std::uint8_t {
  gemm_pipelined,        // w8a16_gemm_pipelined: the 128-row tile
  gemm_pipelined_m32,    // w8a16_gemm_pipelined_m32: the 32-row twin and its skinny body
  gemm_pipelined_m64,    // w8a16_gemm_pipelined_m64: the 64-row twin
  tc_rows,               // w8a16_tc_rows: the row-tile kernel the twins try first, 1..32 rows
  tc_rows_m64,           // w8a16_tc_rows_m64: the same body at 33..64 rows (geometry.hpp)
  gemv_batch4_strided,   // w8a16_gemv_batch4_strided: scalar GEMV, M <= 4
  gemv_batch16_strided,  // w8a16_gemv_batch16_strided: scalar GEMV, M <= 16
  wgmma_rows,            // w8a16_wgmma_rows: the Hopper tier (sm_90a), 64-column units
  wgmma_rows_n128,       // w8a16_wgmma_rows_n128: the Hopper tier, 128-column units (geometry.hpp)
  wgmma_rows_n128_x2,    // w8a16_wgmma_rows_n128_x2: 128-column units, two CTAs per SM, M <= 16
};
inline constexpr std::size_t kKernelCount = 10;
inline constexpr std::array<KernelId, kKernelCount> kAllKernels = {
    KernelId::gemm_pipelined,       KernelId::gemm_pipelined_m32, KernelId::gemm_pipelined_m64,
    KernelId::tc_rows,              KernelId::tc_rows_m64,        KernelId::gemv_batch4_strided,
    KernelId::gemv_batch16_strided, KernelId::wgmma_rows,         KernelId::wgmma_rows_n128,
    KernelId::wgmma_rows_n128_x2};

const char* kernel_name(KernelId id);
// Kernels launched with the workspace and tensor-map parameters (w8a16_wgmma_rows).
constexpr bool kernel_uses_tma(KernelId id) {
  return id == KernelId::wgmma_rows || id == KernelId::wgmma_rows_n128 || id == KernelId::wgmma_rows_n128_x2;
}
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
  // Every kernel but the Hopper tier: what a module without an sm_90a cubin resolves, and what
  // tests of the seed's dispatch rules (which the tier goes before) use.
  static StaticRegistry without_hopper_tier();
  StaticRegistry& set_present(KernelId id, bool present);
  KernelHandle resolve(KernelId id) const override;

 private:
  std::array<KernelHandle, kKernelCount> handles_{};
};

}  // namespace w8a16::device
