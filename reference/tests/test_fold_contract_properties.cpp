// SPDX-License-Identifier: MIT OR Apache-2.0
// Properties of the canonical fold (NUMERICS.md 2.1) that follow from its definition: K splits at
// 128 boundaries, power-of-two scales, row independence, and N-block permutation.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gemm_case.hpp"
#include "w8a16/reference/bf16.hpp"
#include "w8a16/reference/contract.hpp"
#include "w8a16/reference/fp32.hpp"

namespace {

using w8a16::ref::Arch;
using w8a16::test::GemmCase;
namespace ref = w8a16::ref;

// The steps [first, first + count) of c as a case of their own (K cut at 128 boundaries).
GemmCase k_slice(const GemmCase& c, std::uint32_t first, std::uint32_t count) {
  GemmCase out(c.m, c.n, count * 128);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t k = 0; k < out.k; ++k) out.a_at(m, k) = c.a[m * c.a_row_stride + first * 128 + k];
  for (std::uint32_t n = 0; n < c.n; ++n)
    for (std::uint32_t k = 0; k < out.k; ++k) out.w_at(n, k) = c.w[static_cast<std::size_t>(n) * c.k + first * 128 + k];
  for (std::uint32_t b = 0; b < (c.n + 127) / 128; ++b)
    for (std::uint32_t s = 0; s < count; ++s) out.s_at(b, s) = c.s[b * (c.k / 128) + first + s];
  return out;
}

RC_GTEST_PROP(CanonicalFold, SplittingKAtA128BoundaryAndContinuingTheFoldEqualsTheWhole, ()) {
  const std::uint32_t steps = *rc::gen::inRange(2u, 5u);
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 140u), steps * 128, 0);
  const bool specials = *rc::gen::arbitrary<bool>();
  RC_CLASSIFY(specials, "special values");
  w8a16::test::fill_random(c, specials ? 16 : 0);
  const std::uint32_t cut = *rc::gen::inRange(1u, steps);
  const GemmCase head = k_slice(c, 0, cut), tail = k_slice(c, cut, steps - cut);
  const std::uint32_t m = *rc::gen::inRange(0u, c.m), n = *rc::gen::inRange(0u, c.n);
  std::uint32_t acc = ref::canonical_acc_bits(head.view(), Arch::sm90, m, n, cut);
  for (std::uint32_t s = 0; s < steps - cut; ++s) {
    const std::uint32_t p = ref::canonical_step_partial_bits(tail.view(), Arch::sm90, m, n, s);
    acc = ref::f32_fma_rne_bits(p, ref::f32_to_bits(tail.view().scale(n, s)), acc);
  }
  RC_ASSERT(acc == ref::canonical_acc_bits(c.view(), Arch::sm90, m, n, steps));
  RC_ASSERT(ref::f32_bits_to_bf16_rne(acc) == ref::canonical_element_bf16(c.view(), Arch::sm90, m, n));
}

// With moderate data every FP32 value of the fold stays normal and finite, so scaling every scale
// by 2^j scales every FMA result by 2^j exactly, and so the BF16 output.
RC_GTEST_PROP(CanonicalFold, PowerOfTwoScalesScaleTheOutputExactly, ()) {
  GemmCase c(*rc::gen::inRange(1u, 3u), *rc::gen::inRange(1u, 40u), 128 * *rc::gen::inRange(1u, 3u), 0);
  w8a16::test::fill_random(c, 0);
  const int j = *rc::gen::inRange(-20, 21);
  GemmCase scaled = c;
  for (float& x : scaled.s) x = std::ldexp(x, j);
  std::vector<std::uint16_t> out(c.m * c.n), out_scaled(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
  ref::gemm_canonical(scaled.view(), Arch::sm90, out_scaled.data(), c.n);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float want = std::ldexp(w8a16::test::f32_of_bits(ref::bf16_bits_to_f32_bits(out[i])), j);
    RC_ASSERT(out_scaled[i] == ref::f32_to_bits(want) >> 16);
  }
}

RC_GTEST_PROP(CanonicalFold, RowMDependsOnlyOnRowMOfA, ()) {
  GemmCase c(*rc::gen::inRange(2u, 5u), *rc::gen::inRange(1u, 30u), 128, 128 + 8 * *rc::gen::inRange(0u, 3u));
  w8a16::test::fill_random(c, 16);
  const std::uint32_t keep = *rc::gen::inRange(0u, c.m);
  GemmCase other = c;
  for (std::uint32_t m = 0; m < c.m; ++m)
    if (m != keep)
      for (std::uint32_t k = 0; k < c.k; ++k) other.a_at(m, k) = w8a16::test::gen_bf16_special();
  std::vector<std::uint16_t> out(c.m * c.n), out_other(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
  ref::gemm_canonical(other.view(), Arch::sm90, out_other.data(), c.n);
  RC_ASSERT(std::equal(out.begin() + keep * c.n, out.begin() + (keep + 1) * c.n, out_other.begin() + keep * c.n));
}

RC_GTEST_PROP(CanonicalFold, PermutingNBlocksWithTheirScaleRowsPermutesTheOutput, ()) {
  const std::uint32_t blocks = *rc::gen::inRange(2u, 4u);
  GemmCase c(*rc::gen::inRange(1u, 3u), blocks * 128, 128 * *rc::gen::inRange(1u, 3u), 0);
  w8a16::test::fill_random(c, 32);
  std::vector<std::uint32_t> perm(blocks);
  std::iota(perm.begin(), perm.end(), 0u);
  for (std::uint32_t i = blocks - 1; i > 0; --i) std::swap(perm[i], perm[*rc::gen::inRange(0u, i + 1)]);
  GemmCase p = c;  // block b of p is block perm[b] of c
  const std::uint32_t steps = c.k / 128;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    std::copy_n(c.w.begin() + static_cast<std::size_t>(perm[b]) * 128 * c.k, 128 * c.k,
                p.w.begin() + static_cast<std::size_t>(b) * 128 * c.k);
    for (std::uint32_t s = 0; s < steps; ++s) p.s_at(b, s) = c.s[perm[b] * steps + s];
  }
  std::vector<std::uint16_t> out(c.m * c.n), out_p(c.m * c.n);
  ref::gemm_canonical(c.view(), Arch::sm90, out.data(), c.n);
  ref::gemm_canonical(p.view(), Arch::sm90, out_p.data(), c.n);
  for (std::uint32_t m = 0; m < c.m; ++m)
    for (std::uint32_t b = 0; b < blocks; ++b)
      for (std::uint32_t r = 0; r < 128; ++r)
        RC_ASSERT(out_p[m * c.n + b * 128 + r] == out[m * c.n + perm[b] * 128 + r]);
}

}  // namespace
