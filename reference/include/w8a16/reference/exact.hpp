// SPDX-License-Identifier: MIT OR Apache-2.0
// The exact reference: each output's real value sum_s S[n/128][s] * sum_k A[m][k] * W[n][k] with no
// rounding at all, then rounded once (to BF16 and to double). The yardstick for how far a contract
// (NUMERICS.md 2.1, 2.2) lands from the true product.
#pragma once
#include <cstddef>
#include <cstdint>

#include "w8a16/reference/contract.hpp"

namespace w8a16::ref {

// The exact value's class under IEEE rules applied to the exact sums: NaN anywhere, Inf * 0 (a
// product, or a step's sum times its scale), or +Inf + -Inf make it NaN; otherwise an Inf wins.
// A step whose exact sum is 0 times an infinite scale is NaN; a nonzero one is +-Inf.
enum class ExactKind : std::uint8_t { finite, nan, pos_inf, neg_inf };

struct ExactOutput {
  ExactKind kind = ExactKind::finite;
  // The value rounded once to BF16, nearest even; beyond the BF16 range it rounds to +-Inf even
  // though `kind` is finite. An exact zero is +0; a nonzero value that rounds to zero keeps its
  // sign. NaN is 0x7FFF (the cvt.rn.bf16.f32 NaN).
  std::uint16_t bf16_rne_bits = 0;
  // The value rounded once to double, nearest even (every finite value is in double's normal range,
  // so only this one rounding happens). An exact zero is +0.0.
  double value_rn = 0.0;
};

// One output, exactly. The view must be usable (gemm_view_problem(v) == nullptr).
ExactOutput exact_element(const GemmView& v, std::uint32_t m, std::uint32_t n);

// Every output into out[m * out_row_stride + n]; threads = 0 uses every core. The result does not
// depend on the thread count (each output is computed by one thread, exactly).
void gemm_exact(const GemmView& v, ExactOutput* out, std::size_t out_row_stride, unsigned threads = 0);

}  // namespace w8a16::ref
