// SPDX-License-Identifier: MIT OR Apache-2.0
// The contracts of NUMERICS.md 2, element by element, straight from the text: the model the fast
// paths and the kernels are judged against.
#include "w8a16/reference/contract.hpp"

#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/e4m3fn.hpp"
#include "w8a16/reference/fp32.hpp"
#include "w8a16/reference/gemv.hpp"

namespace w8a16::ref {

const char* gemm_view_problem(const GemmView& v) {
  if (v.m == 0 || v.n == 0) return "m and n must be positive";
  if (v.k == 0 || v.k % kKStep != 0) return "k must be a positive multiple of 128";
  if (v.a_row_stride < v.k) return "a_row_stride must be at least k";
  if (!v.a || !v.w || !v.s) return "a, w and s must be non-null";
  return nullptr;
}

std::uint32_t canonical_step_partial_bits(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n,
                                          std::uint32_t step) {
  const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
  const std::uint8_t* w_row = v.w + static_cast<std::size_t>(n) * v.k;
  std::uint32_t p = 0;  // +0.0f
  for (std::uint32_t j = 0; j < 8; ++j) {
    const std::uint32_t k0 = step * kKStep + 16 * j;
    std::uint16_t b[16];
    for (int t = 0; t < 16; ++t) b[t] = e4m3fn_to_bf16_bits(w_row[k0 + t]);
    p = mma_k16_bits(arch, p, a_row + k0, b);
  }
  return p;
}

std::uint32_t canonical_acc_bits(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n, std::uint32_t steps) {
  std::uint32_t acc = 0;  // +0.0f
  for (std::uint32_t s = 0; s < steps; ++s) {
    const std::uint32_t p = canonical_step_partial_bits(v, arch, m, n, s);
    acc = f32_fma_rne_bits(p, f32_to_bits(v.scale(n, s)), acc);
  }
  return acc;
}

std::uint16_t canonical_element_bf16(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n) {
  return f32_bits_to_bf16_rne(canonical_acc_bits(v, arch, m, n, v.k_steps()));
}

std::uint32_t gemv_acc_bits(const GemmView& v, std::uint32_t m, std::uint32_t n) {
  const std::uint16_t* a_row = v.a + static_cast<std::size_t>(m) * v.a_row_stride;
  const std::uint8_t* w_row = v.w + static_cast<std::size_t>(n) * v.k;
  const std::uint32_t chunks = v.k / kGemvChunk;
  std::uint32_t acc[kGemvLanes];
  for (std::uint32_t lane = 0; lane < kGemvLanes; ++lane) {
    std::uint32_t a_l = 0;
    for (std::uint32_t c = lane; c < chunks; c += kGemvLanes) {
      std::uint32_t p = 0;
      for (std::uint32_t j = 0; j < kGemvChunk; ++j) {
        const std::uint32_t k = c * kGemvChunk + j;
        p = f32_fma_rne_bits(bf16_bits_to_f32_bits(a_row[k]), bf16_bits_to_f32_bits(e4m3fn_to_bf16_bits(w_row[k])), p);
      }
      a_l = f32_fma_rne_bits(p, f32_to_bits(v.scale(n, c * kGemvChunk / kKStep)), a_l);
    }
    acc[lane] = a_l;
  }
  for (std::uint32_t off = kGemvLanes / 2; off >= 1; off /= 2) {
    std::uint32_t next[kGemvLanes];
    for (std::uint32_t lane = 0; lane < kGemvLanes; ++lane) next[lane] = f32_add_rne_bits(acc[lane], acc[lane ^ off]);
    for (std::uint32_t lane = 0; lane < kGemvLanes; ++lane) acc[lane] = next[lane];
  }
  return acc[0];
}

std::uint16_t gemv_element_bf16(const GemmView& v, std::uint32_t m, std::uint32_t n) {
  return f32_bits_to_bf16_rne(gemv_acc_bits(v, m, n));
}

}  // namespace w8a16::ref
