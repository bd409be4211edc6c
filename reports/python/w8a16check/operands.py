# SPDX-License-Identifier: MIT OR Apache-2.0
# Operand bundles and their outputs: the files `w8a16check run-operands` reads and writes.
"""Operand bundles (raw A, W, S bits for one entry point) and run-operands output files.

The byte layout is specified once, in properties/cli/cmd_run_operands.cpp; this module writes and
reads exactly that layout (version 1, little-endian). A is written "patched" (a base row plus a few
replaced elements per row) because a probe row differs from its base row in two elements: a dense
bundle of 32,640 rows at K = 256 would be 16 MB, the patched one is 0.5 MB.
"""
from __future__ import annotations

import struct

import numpy as np

BUNDLE_MAGIC = b"W8A16OPB"
OUTPUT_MAGIC = b"W8A16OPC"
VERSION = 1
_HEADER = struct.Struct("<8sI32s9I")          # 80 bytes
_OUT_HEADER = struct.Struct("<8sI32s48s32s5I16s")  # 160 bytes
assert _HEADER.size == 80 and _OUT_HEADER.size == 160


def _text(raw: bytes) -> str:
    return raw.rstrip(b"\0").decode("ascii")


def write_bundle(path, entry: str, m: int, n: int, k: int, launches: int, base: np.ndarray,
                 patch_cols: np.ndarray, patch_bits: np.ndarray, w: np.ndarray, s: np.ndarray,
                 a_row_stride: int | None = None, c_row_stride: int | None = None) -> int:
    """A patched bundle: row r of A is `base` with A[r, patch_cols[r, p]] = patch_bits[r, p]. Returns its size."""
    a_row_stride = k if a_row_stride is None else a_row_stride
    c_row_stride = n if c_row_stride is None else c_row_stride
    rows = launches * m
    if base.dtype != np.uint16 or base.shape != (a_row_stride,):
        raise ValueError(f"base must be uint16 [{a_row_stride}], got {base.dtype} {base.shape}")
    if patch_cols.shape != patch_bits.shape or patch_cols.ndim != 2 or patch_cols.shape[0] != rows:
        raise ValueError(f"patches must be [{rows}, P], got {patch_cols.shape} and {patch_bits.shape}")
    if w.dtype != np.uint8 or w.shape != (n, k):
        raise ValueError(f"w must be uint8 [{n}, {k}], got {w.dtype} {w.shape}")
    if s.dtype != np.float32 or s.shape != ((n + 127) // 128, k // 128):
        raise ValueError(f"s must be float32 [{(n + 127) // 128}, {k // 128}], got {s.dtype} {s.shape}")
    patches = np.zeros((rows, patch_cols.shape[1], 4), dtype="<u2")
    cols = patch_cols.astype("<u4")
    patches[:, :, 0] = cols & 0xFFFF
    patches[:, :, 1] = cols >> 16
    patches[:, :, 2] = patch_bits.astype("<u2")
    header = _HEADER.pack(BUNDLE_MAGIC, VERSION, entry.encode("ascii"), m, n, k, a_row_stride, c_row_stride,
                          launches, 1, patch_cols.shape[1], 0)
    blob = b"".join([header, base.astype("<u2").tobytes(), patches.tobytes(), w.tobytes(), s.astype("<f4").tobytes()])
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob)


def read_output(path) -> dict:
    """A run-operands output file: its header fields and C as uint16 [launches * m, c_row_stride]."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < _OUT_HEADER.size:
        raise ValueError(f"{path}: shorter than the {_OUT_HEADER.size}-byte header")
    magic, version, entry, kernel, body, contract, m, n, c_row_stride, launches, backend = _OUT_HEADER.unpack_from(raw)
    if magic != OUTPUT_MAGIC or version != VERSION:
        raise ValueError(f"{path}: not a run-operands output (magic {magic!r}, version {version})")
    want = _OUT_HEADER.size + 2 * launches * m * c_row_stride
    if len(raw) != want:
        raise ValueError(f"{path}: {len(raw)} bytes, the header implies {want}")
    c = np.frombuffer(raw, dtype="<u2", offset=_OUT_HEADER.size).astype(np.uint16).reshape(launches * m, c_row_stride)
    return {"entry": _text(entry), "kernel": _text(kernel), "body": _text(body),
            "contract": ("canonical", "gemv")[contract] if contract < 2 else f"unknown ({contract})",
            "m": m, "n": n, "c_row_stride": c_row_stride, "launches": launches, "backend": _text(backend), "c": c}
