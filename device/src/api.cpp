// SPDX-License-Identifier: MIT OR Apache-2.0
// The entry points: build a Call, plan it, hand the plan to the backend. An error returns before
// the backend sees anything, so nothing is launched and no byte of the output changes.
#include "w8a16/device/api.hpp"

namespace w8a16::device {
namespace {

Call make(Entry e, KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output, std::uint32_t m,
          std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride, std::uint32_t c_row_stride, Stream stream) {
  Call c;
  c.entry = e;
  c.kernel = kernel;
  c.args = Args{input, weight, block_scale, output, m, n, k, a_row_stride, c_row_stride, stream};
  return c;
}

}  // namespace

Status Launcher::launch(const Call& call) {
  const Planned planned = plan_launch(call, backend_.registry(), backend_.limits());
  if (!planned.ok()) return planned.status;
  return backend_.execute(planned.plan);
}

Status Launcher::gemm_pipelined(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                                std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream) {
  return launch(make(Entry::gemm_pipelined, kernel, input, weight, block_scale, output, m, n, k, k, n, stream));
}

Status Launcher::gemm_pipelined_m32(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                                    std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream) {
  return launch(make(Entry::gemm_pipelined_m32, kernel, input, weight, block_scale, output, m, n, k, k, n, stream));
}

Status Launcher::gemm_pipelined_m32_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale,
                                            DevPtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                            std::uint32_t a_row_stride, std::uint32_t c_row_stride, Stream stream) {
  return launch(make(Entry::gemm_pipelined_m32_strided, kernel, input, weight, block_scale, output, m, n, k,
                     a_row_stride, c_row_stride, stream));
}

Status Launcher::gemm_pipelined_m64(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output,
                                    std::uint32_t m, std::uint32_t n, std::uint32_t k, Stream stream) {
  return launch(make(Entry::gemm_pipelined_m64, kernel, input, weight, block_scale, output, m, n, k, k, n, stream));
}

Status Launcher::gemm_pipelined_m64_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale,
                                            DevPtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                            std::uint32_t a_row_stride, std::uint32_t c_row_stride, Stream stream) {
  return launch(make(Entry::gemm_pipelined_m64_strided, kernel, input, weight, block_scale, output, m, n, k,
                     a_row_stride, c_row_stride, stream));
}

Status Launcher::gemm_pipelined_by_m(KernelHandle full_kernel, KernelHandle m32_kernel, KernelHandle m64_kernel,
                                     DevPtr input, DevPtr weight, DevPtr block_scale, DevPtr output, std::uint32_t m,
                                     std::uint32_t n, std::uint32_t k, Stream stream) {
  Call c = make(Entry::gemm_pipelined_by_m, full_kernel, input, weight, block_scale, output, m, n, k, k, n, stream);
  c.m32_kernel = m32_kernel;
  c.m64_kernel = m64_kernel;
  return launch(c);
}

Status Launcher::gemv_batch4_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale,
                                     DevPtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                     std::uint32_t a_row_stride, std::uint32_t c_row_stride, Stream stream) {
  return launch(make(Entry::gemv_batch4_strided, kernel, input, weight, block_scale, output, m, n, k, a_row_stride,
                     c_row_stride, stream));
}

Status Launcher::gemv_batch16_strided(KernelHandle kernel, DevPtr input, DevPtr weight, DevPtr block_scale,
                                      DevPtr output, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                      std::uint32_t a_row_stride, std::uint32_t c_row_stride, Stream stream) {
  return launch(make(Entry::gemv_batch16_strided, kernel, input, weight, block_scale, output, m, n, k, a_row_stride,
                     c_row_stride, stream));
}

Status Launcher::gemm_packed_strided(DevPtr input, DevPtr packed_weight, DevPtr block_scale, DevPtr output,
                                     std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t a_row_stride,
                                     std::uint32_t c_row_stride, Stream stream) {
  return launch(make(Entry::gemm_packed_strided, KernelHandle{}, input, packed_weight, block_scale, output, m, n, k,
                     a_row_stride, c_row_stride, stream));
}

}  // namespace w8a16::device
