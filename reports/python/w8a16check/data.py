# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's input distributions: numpy draws raw bits per row from seeded Generators, so any one
# output (m, n) of any shape can be regenerated alone from (distribution, seed, K, m, n).
"""Input distributions of the reassociation audit.

Reproducibility: row m of A comes from ``default_rng([seed, dist, 0, m])``, row n of W from
``default_rng([seed, dist, 1, n])``, scale row b = n // 128 from ``default_rng([seed, dist, 2, b])``
and shared per-channel features (outlier channels) from ``default_rng([seed, dist, 3])``. Nothing
depends on N or on the other rows, so a sampled column of a 51,200-wide output is regenerated
without materialising W. Values become BF16 through the C++ ``round_bf16`` (RNE); E4M3 codes are
drawn as codes (Python never encodes or rounds to E4M3).
"""
from __future__ import annotations

import numpy as np

from . import _core

DISTRIBUTIONS = ("activation", "wide", "cancellation")
_DIST_ID = {name: i + 1 for i, name in enumerate(DISTRIBUTIONS)}
DESCRIPTIONS = {
    "activation": "A ~ N(0,1) with 1% outlier channels x20 (BF16 by RNE); W codes drawn from a "
                  "half-normal reaching 448 at 4 sigma, random sign; S = 0.08/448 x lognormal(0, 0.25)",
    "wide": "A: random sign, exponents uniform in 2^-20..2^20, random fraction bits; W: every finite "
            "E4M3 code (zeros and subnormals included) uniformly; S: 2^U(-10,10) with random fraction",
    "cancellation": "second half of K repeats the first with W's sign flipped and A moved by -1, 0 or +1 "
                    "BF16 ulp (1/4, 1/2, 1/4), S's second half equal to its first: the exact sum is a "
                    "tiny residue of large terms that meet in different steps, chunks and lanes",
}

# Finite E4M3 codes with non-negative sign, in increasing value (0x00 .. 0x7E).
_POS_CODES = np.arange(0x7F, dtype=np.uint8)
_POS_VALUES = _core.decode_e4m3(_POS_CODES).astype(np.float64)


def _rng(seed: int, dist: str, *tail: int) -> np.random.Generator:
    return np.random.default_rng([seed, _DIST_ID[dist], *tail])


def _bf16_from_f32(x: np.ndarray) -> np.ndarray:
    return _core.round_bf16(np.ascontiguousarray(x, dtype=np.float32).view(np.uint32))


def _activation_values(seed: int, dist: str, m: int, k: int) -> np.ndarray:
    outliers = _rng(seed, dist, 3).random(k) < 0.01
    x = _rng(seed, dist, 0, m).standard_normal(k)
    x[outliers] *= 20.0
    return x


def _activation_codes(rng: np.random.Generator, k: int) -> np.ndarray:
    # A half-normal draw located in the decode table of the C++ (the largest code not above it):
    # realistic codes with no E4M3 encoder in Python.
    x = np.minimum(np.abs(rng.standard_normal(k)) * (448.0 / 4.0), 448.0)
    codes = np.searchsorted(_POS_VALUES, x, side="right") - 1
    sign = rng.integers(0, 2, k, dtype=np.uint8) << 7
    return codes.astype(np.uint8) | sign


def a_row(dist: str, seed: int, k: int, m: int) -> np.ndarray:
    """Row m of A: uint16 [k] BF16 bits."""
    if dist == "activation":
        return _bf16_from_f32(_activation_values(seed, dist, m, k))
    if dist == "wide":
        rng = _rng(seed, dist, 0, m)
        sign = rng.integers(0, 2, k, dtype=np.uint16) << 15
        field = rng.integers(127 - 20, 127 + 21, k, dtype=np.uint16) << 7
        return sign | field | rng.integers(0, 128, k, dtype=np.uint16)
    if dist == "cancellation":
        h = k // 2
        first = _bf16_from_f32(_activation_values(seed, dist, m, h))
        step = _rng(seed, dist, 4, m).choice(np.array([-1, 0, 0, 1], dtype=np.int32), h)
        # Moving the raw bits by one moves the magnitude by one BF16 ulp (sign-magnitude); values
        # stay finite and nonzero for these draws (|x| < 2^8 and never 0 after RNE of a normal draw).
        second = (first.astype(np.int32) + step).astype(np.uint16)
        return np.concatenate([first, second])
    raise ValueError(f"dist must be one of {DISTRIBUTIONS}, got {dist!r}")


def w_row(dist: str, seed: int, k: int, n: int) -> np.ndarray:
    """Row n of W: uint8 [k] E4M3 codes."""
    rng = _rng(seed, dist, 1, n)
    if dist == "activation":
        return _activation_codes(rng, k)
    if dist == "wide":
        finite = np.concatenate([np.arange(0x00, 0x7F), np.arange(0x80, 0xFF)]).astype(np.uint8)
        return finite[rng.integers(0, finite.size, k)]
    if dist == "cancellation":
        first = _activation_codes(rng, k // 2)
        return np.concatenate([first, first ^ np.uint8(0x80)])
    raise ValueError(f"dist must be one of {DISTRIBUTIONS}, got {dist!r}")


def s_row(dist: str, seed: int, k: int, block: int) -> np.ndarray:
    """Scale row `block` (= n // 128) of S: float32 [k / 128]."""
    steps = k // 128
    rng = _rng(seed, dist, 2, block)
    if dist == "activation":
        return (0.08 / 448.0 * rng.lognormal(0.0, 0.25, steps)).astype(np.float32)
    if dist == "wide":
        return (np.exp2(rng.uniform(-10.0, 10.0, steps))).astype(np.float32)
    if dist == "cancellation":
        first = (0.08 / 448.0 * rng.lognormal(0.0, 0.25, steps // 2)).astype(np.float32)
        return np.concatenate([first, first])
    raise ValueError(f"dist must be one of {DISTRIBUTIONS}, got {dist!r}")


def operands(dist: str, seed: int, k: int, rows: np.ndarray, cols: np.ndarray):
    """A rows, W rows and S rows for the given output rows m and columns n (gemm_columns' inputs)."""
    if dist not in _DIST_ID:
        raise ValueError(f"dist must be one of {DISTRIBUTIONS}, got {dist!r}")
    if k <= 0 or k % 256 != 0:
        raise ValueError(f"k must be a positive multiple of 256 for the audit's distributions, got {k}")
    a = np.stack([a_row(dist, seed, k, int(m)) for m in rows])
    w = np.stack([w_row(dist, seed, k, int(n)) for n in cols])
    blocks = {int(n) // 128 for n in cols}
    srows = {b: s_row(dist, seed, k, b) for b in blocks}
    s = np.stack([srows[int(n) // 128] for n in cols])
    return a, w, s


def sample_columns(seed: int, n_total: int, k: int, count: int) -> np.ndarray:
    """`count` distinct output columns of an [*, n_total] output, sorted; always n = 0 and n_total-1."""
    if count >= n_total:
        return np.arange(n_total)
    rng = np.random.default_rng([seed, 0, n_total, k])
    picked = rng.choice(np.arange(1, n_total - 1), size=count - 2, replace=False)
    return np.sort(np.concatenate([[0, n_total - 1], picked]))
