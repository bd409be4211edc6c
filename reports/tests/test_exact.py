# SPDX-License-Identifier: MIT OR Apache-2.0
# The exact reference through the bindings: exact where float64 is exact, consistent column views.
import numpy as np
import pytest

import w8a16check as w
from w8a16check import data


def _pow2_problem(m=3, n=140, k=384, seed=11):
    # Products of a BF16 (8 bits) and an E4M3 (4 bits) span 2^-19..2^12 here and scales are powers
    # of two, so every sum is exact in float64: numpy's float64 result is the exact value.
    rng = np.random.default_rng(seed)
    a = w.round_bf16(rng.standard_normal((m, k)).astype(np.float32).clip(-8, 8).view(np.uint32))
    a[np.abs(w.bf16_to_f32(a)) < 2.0 ** -10] = 0x3F80
    q = rng.integers(0, 0x7F, (n, k), dtype=np.uint8) | (rng.integers(0, 2, (n, k), dtype=np.uint8) << 7)
    s = np.exp2(rng.integers(-3, 4, ((n + 127) // 128, k // 128))).astype(np.float32)
    return a, q, s


def test_exact_equals_float64_where_float64_is_exact():
    a, q, s = _pow2_problem()
    x, x_bf16 = w.exact(a, q, s)
    wv = w.decode_e4m3(q).astype(np.float64) * np.repeat(np.repeat(s.astype(np.float64), 128, axis=1), 128, axis=0)[:q.shape[0]]
    want = w.bf16_to_f32(a).astype(np.float64) @ wv.T
    assert x.dtype == np.float64 and x_bf16.dtype == np.uint16
    assert np.array_equal(x.view(np.uint64), (want + 0.0).view(np.uint64))
    # x_bf16 is a nearest BF16 to x: no neighbour (raw bits +-1, the next magnitudes) is closer.
    got = w.bf16_to_f32(x_bf16).astype(np.float64)
    for nb in (x_bf16 - np.uint16(1), x_bf16 + np.uint16(1)):
        assert np.all(np.abs(got - want) <= np.abs(w.bf16_to_f32(nb).astype(np.float64) - want))


def test_exact_columns_equal_exact():
    a, q, s = data.operands("wide", 2, 256, np.arange(2), np.arange(200))
    full_s = s[::128]  # the rows of the S of a 200-column problem: one per 128 columns
    x, xb = w.exact(a, q, full_s)
    cols = np.array([0, 5, 127, 128, 199])
    xc, xbc = w.exact_columns(a, q[cols], s[cols])
    assert np.array_equal(x[:, cols].view(np.uint64), xc.view(np.uint64))
    assert np.array_equal(xb[:, cols], xbc)


def test_exact_reports_nan_for_inf_times_zero():
    a = np.zeros((1, 128), np.uint16)
    a[0, 0] = 0x7F80  # +Inf times a zero weight
    q = np.zeros((1, 128), np.uint8)
    x, xb = w.exact(a, q, np.ones((1, 1), np.float32))
    assert np.isnan(x[0, 0]) and xb[0, 0] == 0x7FFF


@pytest.mark.parametrize("call,exc,needle", [
    (lambda: w.exact(np.zeros((1, 128), np.float32), np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32)),
     TypeError, "a must have dtype"),
    (lambda: w.exact(np.zeros((1, 128), np.uint16), np.zeros((1, 100), np.uint8), np.ones((1, 1), np.float32)),
     ValueError, "multiple of 128"),
    (lambda: w.exact(np.zeros((1, 128), np.uint16), np.zeros((1, 128), np.uint8), np.ones((2, 1), np.float32)),
     ValueError, "s must have shape"),
    (lambda: w.exact_columns(np.zeros((1, 64), np.uint16), np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32)),
     ValueError, "fewer than K"),
])
def test_exact_bad_arguments(call, exc, needle):
    with pytest.raises(exc) as info:
        call()
    assert needle in str(info.value)
