# SPDX-License-Identifier: MIT OR Apache-2.0
# Operand bundles and their outputs: the files `w8a16check run-operands` reads and writes.
"""Operand bundles (raw A, W, S bits for one entry point) and run-operands output files.

The byte layout is specified, read and written once, in golden/include/w8a16/golden/operands.hpp;
this module calls that C++ through _core, so a bundle written here is one the CLI reads, and an
output is held to the same checks. A is written "patched" (a base row plus a few replaced elements
per row) because a probe row differs from its base row in two elements: a dense bundle of 32,640
rows at K = 256 would be 16 MB, the patched one is 0.5 MB.
"""
from __future__ import annotations

import os

import numpy as np

from . import _core

BUNDLE_MAGIC = b"W8A16OPB"
OUTPUT_MAGIC = b"W8A16OPC"
VERSION = 1


def write_bundle(path, entry: str, m: int, n: int, k: int, launches: int, base: np.ndarray,
                 patch_cols: np.ndarray, patch_bits: np.ndarray, w: np.ndarray, s: np.ndarray,
                 a_row_stride: int | None = None, c_row_stride: int | None = None) -> int:
    """A patched bundle: row r of A is `base` with A[r, patch_cols[r, p]] = patch_bits[r, p]. Returns its size."""
    for name, x in (("base", base), ("patch_cols", patch_cols), ("patch_bits", patch_bits), ("w", w), ("s", s)):
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    a_row_stride = k if a_row_stride is None else a_row_stride
    c_row_stride = n if c_row_stride is None else c_row_stride
    rows = launches * m
    # The shapes are checked here, as arrays; the C++ writer checks the flat lengths and every rule
    # of the format again, and refuses a bundle the reader would refuse.
    if base.dtype != np.uint16 or base.shape != (a_row_stride,):
        raise ValueError(f"base must be uint16 [{a_row_stride}], got {base.dtype} {base.shape}")
    if patch_cols.shape != patch_bits.shape or patch_cols.ndim != 2 or patch_cols.shape[0] != rows:
        raise ValueError(f"patches must be [{rows}, P], got {patch_cols.shape} and {patch_bits.shape}")
    if w.dtype != np.uint8 or w.shape != (n, k):
        raise ValueError(f"w must be uint8 [{n}, {k}], got {w.dtype} {w.shape}")
    if s.dtype != np.float32 or s.shape != ((n + 127) // 128, k // 128):
        raise ValueError(f"s must be float32 [{(n + 127) // 128}, {k // 128}], got {s.dtype} {s.shape}")
    if np.any(patch_cols < 0) or np.any(patch_cols > 0xFFFFFFFF) or np.any(patch_bits < 0) or np.any(patch_bits > 0xFFFF):
        raise ValueError("patch columns must fit 32 bits and patch values 16 bits")
    return _core.write_operand_bundle(os.fspath(path), entry, m, n, k, launches, base,
                                      patch_cols.astype(np.uint32), patch_bits.astype(np.uint16), w, s,
                                      a_row_stride, c_row_stride)


def write_dense_bundle(path, entry: str, m: int, n: int, k: int, a: np.ndarray, w: np.ndarray, s: np.ndarray,
                       a_row_stride: int | None = None, c_row_stride: int | None = None, launches: int = 1) -> int:
    """A dense bundle: `a` is all of A, uint16 [launches * m, a_row_stride]. Returns its size."""
    for name, x in (("a", a), ("w", w), ("s", s)):
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    a_row_stride = k if a_row_stride is None else a_row_stride
    c_row_stride = n if c_row_stride is None else c_row_stride
    if a.dtype != np.uint16 or a.shape != (launches * m, a_row_stride):
        raise ValueError(f"a must be uint16 [{launches * m}, {a_row_stride}], got {a.dtype} {a.shape}")
    if w.dtype != np.uint8 or w.shape != (n, k):
        raise ValueError(f"w must be uint8 [{n}, {k}], got {w.dtype} {w.shape}")
    if s.dtype != np.float32 or s.shape != ((n + 127) // 128, k // 128):
        raise ValueError(f"s must be float32 [{(n + 127) // 128}, {k // 128}], got {s.dtype} {s.shape}")
    return _core.write_operand_bundle(os.fspath(path), entry, m, n, k, launches, np.ascontiguousarray(a), None, None,
                                      np.ascontiguousarray(w), np.ascontiguousarray(s), a_row_stride, c_row_stride)


def read_output(path) -> dict:
    """A run-operands output file: its header fields and C as uint16 [launches * m, c_row_stride]."""
    return _core.read_operand_output(os.fspath(path))
