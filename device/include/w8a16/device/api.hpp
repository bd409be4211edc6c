// SPDX-License-Identifier: MIT OR Apache-2.0
// The launch API: the seed's entry points, in its argument order, over any backend. Each call
// validates, plans and hands the plan to the backend; an error launches nothing.
#pragma once
#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::device {

class Launcher {
 public:
  explicit Launcher(Backend& backend) : backend_(backend) {}

  // The handle of a kernel in the backend's registry (zero when the module lacks it).
  KernelHandle handle(KernelId id) const { return backend_.registry().resolve(id); }

  Status gemm_pipelined(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                        std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream = 0);
  Status gemm_pipelined_m32(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream = 0);
  Status gemm_pipelined_m32_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                                    std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                    std::uint32_t c_row_stride, Stream stream = 0);
  Status gemm_pipelined_m64(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                            std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream = 0);
  Status gemm_pipelined_m64_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                                    std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                    std::uint32_t c_row_stride, Stream stream = 0);
  Status gemm_pipelined_by_m(KernelHandle full_kernel, KernelHandle m32_kernel, KernelHandle m64_kernel, DevPtr input,
                             DevPtr weight, DevPtr block_scale, DevPtr output, std::uint32_t m, std::uint32_t n,
                             std::uint32_t k, Stream stream = 0);
  Status gemv_batch4_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                             std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                             std::uint32_t c_row_stride, Stream stream = 0);
  Status gemv_batch16_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                              std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                              std::uint32_t c_row_stride, Stream stream = 0);

  // W packed by pack_weights (packed.hpp; NUMERICS.md 2.3): the Hopper tier's packed symbols, which
  // it resolves itself (the two-CTA one up to 16 rows); kernel_missing on a module without them.
  Status gemm_packed_strided(DevPtr input, DevPtr packed_weight, DevPtr block_scale, DevPtr output, std::uint32_t m,
                             std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride, std::uint32_t c_row_stride,
                             Stream stream = 0);

  // The general form: every entry point above builds a Call and comes here.
  Status launch(const Call& call);

 private:
  Backend& backend_;
};

}  // namespace w8a16::device
