# SPDX-License-Identifier: MIT OR Apache-2.0
# w8a16check: the emulator's numerics for Python (raw bits in, raw bits out), all computed in C++.
"""Python view of the w8a16check emulator (reference/) and recording formats (golden/).

Every function takes and returns raw bits in numpy arrays of an exact dtype; nothing here decodes,
rounds or multiplies: the compiled module ``_core`` does, with the same C++ the command-line tool
and the C++ tests use. ``_core`` lives in a build tree (``<build>/python/w8a16check``); _paths.py
says which. Wrong dtypes raise TypeError, wrong shapes, lengths or names raise ValueError; each
message names the argument.
"""
from __future__ import annotations

import numpy as np

from . import _paths

_core = _paths.load_core(__name__)  # installed beside this file, or a build tree's (_paths.py)

# CMakeLists.txt's project(VERSION), compiled into _core: the CLI's --version prints the same.
__version__: str = _core.__version__

from ._core import (  # noqa: E402,F401  (re-exported API)
    CASE_OUTPUT_SENTINEL_BITS,
    case_inputs,
    E4M3FN_TO_BF16_BITS,
    bf16_to_f32,
    canonical_acc_columns,
    decode_e4m3,
    e4m3_to_bf16_bits,
    exact_columns,
    gemm_columns,
    gemv_acc_columns,
    mma_policy,
    outputs_digest,
    parse_case,
    parse_mmav,
    parse_recording,
    read_case_file,
    read_mmav,
    read_recording,
    round_bf16,
    serialize_mmav,
    write_mmav,
)

from .compare import Comparison, Mismatch, compare  # noqa: E402,F401  (a device output against the contract)
from .contract import (  # noqa: E402,F401  (the contract as data, NUMERICS.md 2.4)
    Contract, contract_library, describe, emulate, format_contract, load_contract, parse_contract)
from .identify import Identification, identify  # noqa: E402,F401  (which contract a callable keeps)
# Batch invariance of a Python kernel; the name is the function (invariance.replay rides on it).
from .invariance import InvarianceResult, invariance  # noqa: E402,F401

CONTRACTS = ("canonical", "gemv")
ARCHS = ("sm90", "sm80")


def mma(a, b, c, arch: str = "sm90", threads: int = 0) -> np.ndarray:
    """d = mma_k16(c; a, b) per element (NUMERICS.md 1.1), FP32 bits out.

    a, b: uint16 [..., 16] BF16 bits; c: uint32 [...] FP32 bits. The leading shapes broadcast
    against each other (numpy rules); the result has the broadcast shape.
    """
    for name, x in (("a", a), ("b", b), ("c", c)):
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    if a.ndim < 1 or a.shape[-1] != 16:
        raise ValueError(f"a must have shape (..., 16) (BF16 bits, k = 0..15), got {a.shape}")
    if b.ndim < 1 or b.shape[-1] != 16:
        raise ValueError(f"b must have shape (..., 16) (BF16 bits, k = 0..15), got {b.shape}")
    try:
        lead = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], c.shape)
    except ValueError:
        raise ValueError(
            f"leading shapes of a {a.shape[:-1]}, b {b.shape[:-1]} and c {c.shape} do not broadcast"
        ) from None
    a = np.broadcast_to(a, lead + (16,))
    b = np.broadcast_to(b, lead + (16,))
    c = np.broadcast_to(c, lead)
    return _core.mma(a, b, c, arch=arch, threads=threads)


def gemm(a, w, s, contract: str = "canonical", a_row_stride=None, c_row_stride=None,
         arch: str = "sm90", threads: int = 0, part=None) -> np.ndarray:
    """C = A x dequant(W, S)^T as BF16 bits (uint16 [M, c_row_stride]) under a contract.

    a: uint16 [M, L] BF16 bits, read as M rows of pitch a_row_stride (default L) from its flat
    buffer, the first K of each; w: uint8 [N, K] E4M3 codes; s: float32 [ceil(N/128), K/128].
    contract: "canonical" (NUMERICS.md 2.1, every tensor-core tier) or "gemv" (2.2). Columns of
    C past N (when c_row_stride > N) are left 0: the contract writes nothing else. part ("tc" or
    "gemv") with any other contract of NUMERICS.md 2.4 (a library name or the text form).
    """
    return _core.gemm(a, w, s, contract=contract, arch=arch, a_row_stride=a_row_stride,
                      c_row_stride=c_row_stride, threads=threads, part=part)


def exact(a, w, s, threads: int = 0):
    """The exact value of each output, rounded once to double (float64 [M, N]; NaN/Inf where the
    exact result is one) and rounded once to BF16 RNE (uint16 [M, N]): reference/exact.hpp."""
    return _core.exact(a, w, s, threads=threads)
