// SPDX-License-Identifier: MIT OR Apache-2.0
// Whole-output drivers for the contracts: the SIMD paths of contract_fast.cpp where they apply,
// otherwise the model element by element, rows of C spread over threads.
#include "contract_fast.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/parallel.hpp"

namespace w8a16::ref {

void gemm_canonical(const GemmView& v, Arch arch, std::uint16_t* c, std::size_t c_row_stride, unsigned threads) {
  if (fast::gemm_canonical_sm90(v, arch, c, c_row_stride, threads)) return;
  parallel_for(v.m, threads, [&](std::uint32_t m) {
    for (std::uint32_t n = 0; n < v.n; ++n) c[m * c_row_stride + n] = canonical_element_bf16(v, arch, m, n);
  });
}

void gemm_gemv(const GemmView& v, std::uint16_t* c, std::size_t c_row_stride, unsigned threads) {
  if (fast::gemm_gemv(v, c, c_row_stride, threads)) return;
  parallel_for(v.m, threads, [&](std::uint32_t m) {
    for (std::uint32_t n = 0; n < v.n; ++n) c[m * c_row_stride + n] = gemv_element_bf16(v, m, n);
  });
}

}  // namespace w8a16::ref
