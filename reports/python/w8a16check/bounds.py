# SPDX-License-Identifier: MIT OR Apache-2.0
# A priori error bounds of the two contracts (NUMERICS.md 2.1, 2.2), derived in the docstrings.
"""Forward error bounds for the canonical fold and the scalar GEMV.

Notation: t_k = a_k * w_k * S[n/128][k/128] (the exact scaled products), x = sum_k t_k (the exact
output), sigma = sum_k |t_k|, u = 2^-24 (FP32 unit roundoff, RNE), gamma_n(u) = n*u / (1 - n*u).
Both bounds assume what the audit's data satisfies: BF16 operands are normal (decoded E4M3 always
is), no FP32 underflow or overflow anywhere, scales finite.

GEMV (NUMERICS.md 2.2). Every operation is one IEEE RNE operation: fma(a, w, p) = (a*w + p)(1+d),
fma(p, S, acc) = (p*S + acc)(1+d), add(x, y) = (x + y)(1+d), |d| <= u. The first FMA of a chunk
starts from +0 and its product a*w (8 x 4 significant bits) is exact. So each t_k passes through
at most h = 15 (the rest of its chunk) + L (its lane's fold, L = ceil(K / 512) chunks per lane,
the first fma(p, S, +0) included) + 5 (the xor butterfly) roundings, and Higham's tree-summation
lemma (Accuracy and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and section 4.2) gives
    |acc - x| <= gamma_h(u) * sigma,   h = 20 + ceil(K / 512).

Canonical (NUMERICS.md 2.1). One MMA step d = MMA(c; a, b) aligns its terms (16 products and c)
to the largest exponent field E, truncating each to the grid 2^(E-25): an error below 2^(E-25)
per term. A term whose exponent field is E has magnitude >= 2^E (products keep their significand
in [1, 4); BF16 operands are normal), so each truncation is below 2^-25 * T, T = |c| + sum|a*b|,
and the 17 of them below 17 * 2^-25 * T. The exact sum of the truncated terms is then rounded
toward zero to FP32: relative error below 2^-23. Hence d = c + sum a*b + eta with
    |eta| <= u_mma * T,   u_mma = 2^-23 + 17 * 2^-25 = 21 * 2^-25  (about 5.25 units of 2^-23).
A step's partial p_s chains 8 MMAs from +0, a recursive sum of 8 blocks: |p_s - P_s| <=
gamma_8(u_mma) * A_s (A_s = the step's sum |a*w|). The fold acc = fma(p_s, S_s, acc) over
F = K / 128 steps is recursive summation of the S_s * p_s with one RNE per step, the first
(fma(p_0, S_0, +0)) included: the term of step s carries at most F roundings. Combining,
    |acc - x| <= [(1 + gamma_8(u_mma)) * (1 + gamma_F(u)) - 1] * sigma.

Output. C = bf16_rne(acc). RNE to BF16 (8 significant bits) of a value in BF16's normal range
(the same exponent range as FP32, which the assumptions above keep acc in) has relative error at
most u_bf16 = 2^-8: |C - acc| <= u_bf16 |acc|. With |acc| <= |x| + beta sigma, the bound on each
output is
    |C - x| <= beta * sigma + u_bf16 * (|x| + beta * sigma)               (bound_output below).
Since |x| = |sum t_k| <= sigma, every output's bound is at most its value at |x| = sigma:
    bound_output(x, sigma) <= beta_out * sigma,   beta_out = (1 + u_bf16) * beta + u_bf16
                                                                          (beta_output below).
So the figures set like against like: the FP32 accumulator's |acc - x| / sigma against beta(K), the
BF16 output's |C - x| / sigma against beta_out(K). A point above its line is an output that breaks
its own bound, a violation, always. A point below beta_out can still break its own, tighter,
bound when |x| is much smaller than sigma (cancellation): the per-output ratio
|C - x| / bound_output(x, sigma) against 1 is the exact test, and the audit counts every output
above 1 there.

The bounds are worst cases over all inputs of the model, not estimates: the measured errors must lie
below them, and the audit counts the outputs that do not (it expects none). sigma is computed in
float64 from the exact operand values; its own relative error (K * 2^-53) is negligible here.
"""
from __future__ import annotations

import math

import numpy as np

U32 = 2.0 ** -24          # FP32 unit roundoff (RNE)
U_BF16 = 2.0 ** -8        # BF16 unit roundoff (RNE, 8 significant bits: half an ulp of 2^-7)
U_MMA = 2.0 ** -23 + 17 * 2.0 ** -25  # one sm_90 MMA step: truncation of 17 terms + RZ of the sum


def gamma(n: int, u: float) -> float:
    if n * u >= 1.0:
        return math.inf
    return n * u / (1.0 - n * u)


def gemv_rounding_depth(k: int) -> int:
    return 15 + math.ceil(k / 512) + 5


def beta(contract: str, k: int) -> float:
    """The coefficient beta with |acc - x| <= beta * sigma (FP32 accumulator before BF16)."""
    if contract == "gemv":
        return gamma(gemv_rounding_depth(k), U32)
    if contract == "canonical":
        return (1.0 + gamma(8, U_MMA)) * (1.0 + gamma(k // 128, U32)) - 1.0
    raise ValueError(f"contract must be 'canonical' or 'gemv', got {contract!r}")


def bound_output(contract: str, k: int, x: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Elementwise bound on |C - x| for the BF16 output C."""
    b = beta(contract, k) * sigma
    return b + U_BF16 * (np.abs(x) + b)


def beta_output(contract: str, k: int) -> float:
    """The coefficient with bound_output(x, sigma) <= beta_output * sigma for every output (|x| <= sigma):
    the BF16 output's line against |C - x| / sigma."""
    b = beta(contract, k)
    return (1.0 + U_BF16) * b + U_BF16
