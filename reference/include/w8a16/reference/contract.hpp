// SPDX-License-Identifier: MIT OR Apache-2.0
// The two output contracts of the W8A16 family (NUMERICS.md 2): the canonical per-128-K fold of
// every tensor-core tier (2.1) and the scalar GEMV order (2.2), over strided operands.
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16/reference/mma.hpp"

namespace w8a16::ref {

inline constexpr std::uint32_t kKStep = 128;      // one FP8 scale block = one fold point
inline constexpr std::uint32_t kScaleRows = 128;  // N rows sharing one scale row

// Operands, as the kernels see them (NUMERICS.md 2):
//   a      BF16 bits [m][a_row_stride]; the first k of each row are read
//   w      E4M3 codes [n][k]
//   s      FP32 [ceil(n/128)][k/128] block scales
// k is a positive multiple of 128; a_row_stride >= k.
struct GemmView {
  const std::uint16_t* a = nullptr;
  std::size_t a_row_stride = 0;
  const std::uint8_t* w = nullptr;
  const float* s = nullptr;
  std::uint32_t m = 0, n = 0, k = 0;

  std::uint32_t k_steps() const { return k / kKStep; }
  std::uint32_t scale_rows() const { return (n + kScaleRows - 1) / kScaleRows; }
  float scale(std::uint32_t n_idx, std::uint32_t step) const {
    return s[static_cast<std::size_t>(n_idx / kScaleRows) * k_steps() + step];
  }
};

// The view of operands in that layout; every caller builds its views here, not field by field.
inline GemmView gemm_view(const std::uint16_t* a, std::size_t a_row_stride, const std::uint8_t* w, const float* s,
                          std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  GemmView v;
  v.a = a, v.a_row_stride = a_row_stride, v.w = w, v.s = s;
  v.m = m, v.n = n, v.k = k;
  return v;
}

// A description of what is wrong with a view, or nullptr when it is usable by the functions below.
const char* gemm_view_problem(const GemmView& v);

// ---- 2.1 canonical fold -------------------------------------------------------------------
// p_s: the step's 8 chained k16 MMAs from c = +0 (FP32 bits).
std::uint32_t canonical_step_partial_bits(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n,
                                          std::uint32_t step);
// acc after folding steps 0..steps-1 (acc = fma(p_s, S[n/128][s], acc), from +0). FP32 bits.
std::uint32_t canonical_acc_bits(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n, std::uint32_t steps);
// C[m][n] = bf16_rne(acc after all steps). Scalar, straight from the rules: the model.
std::uint16_t canonical_element_bf16(const GemmView& v, Arch arch, std::uint32_t m, std::uint32_t n);

// The whole output into c[m][c_row_stride] (BF16 bits); only the first n of each row are written.
// threads = 0 uses every core. Bit-identical to canonical_element_bf16 for every element (the
// fast path is checked against the model in reference/tests).
void gemm_canonical(const GemmView& v, Arch arch, std::uint16_t* c, std::size_t c_row_stride, unsigned threads = 0);

// ---- 2.2 scalar GEMV order ----------------------------------------------------------------
// Documented in gemv.hpp. acc[0] after the butterfly (FP32 bits), before the BF16 rounding.
std::uint32_t gemv_acc_bits(const GemmView& v, std::uint32_t m, std::uint32_t n);
// C[m][n] = bf16_rne(gemv_acc_bits(v, m, n)).
std::uint16_t gemv_element_bf16(const GemmView& v, std::uint32_t m, std::uint32_t n);
// The whole output, as gemm_canonical; bit-identical to gemv_element_bf16 for every element.
void gemm_gemv(const GemmView& v, std::uint16_t* c, std::size_t c_row_stride, unsigned threads = 0);

}  // namespace w8a16::ref
