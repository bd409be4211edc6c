# SPDX-License-Identifier: MIT OR Apache-2.0
# Operand bundles from Python go through golden's C++ writer (operands.hpp): what it writes is the
# layout the format specifies, and what the reader would refuse is never written.
import numpy as np
import pytest

from w8a16check import operands


def _args(entry="gemm_pipelined_m32", m=2, n=1, k=128, launches=2):
    rows = launches * m
    base = np.full(k, 0x3F80, dtype=np.uint16)
    cols = np.stack([np.arange(rows), np.full(rows, k - 1)], axis=1)
    bits = np.stack([np.full(rows, 0x4000), np.arange(rows) | 0x8000], axis=1)
    w = np.full((n, k), 0x38, dtype=np.uint8)
    s = np.ones(((n + 127) // 128, k // 128), dtype=np.float32)
    return entry, m, n, k, launches, base, cols, bits, w, s


def test_a_bundle_has_the_specified_layout(tmp_path):
    p = tmp_path / "x.bundle"
    size = operands.write_bundle(p, *_args())
    raw = p.read_bytes()
    assert size == len(raw) == 80 + 2 * 128 + 8 * 4 * 2 + 128 + 4
    assert raw[:8] == operands.BUNDLE_MAGIC and raw[8:12] == b"\1\0\0\0"
    assert raw[12:44].rstrip(b"\0") == b"gemm_pipelined_m32"
    header = np.frombuffer(raw[44:80], dtype="<u4").tolist()
    assert header == [2, 1, 128, 128, 1, 2, 1, 2, 0]  # m n k a_row_stride c_row_stride launches encoding P 0
    patch = np.frombuffer(raw[80 + 256 + 8:80 + 256 + 16], dtype="<u2").tolist()  # row 0, patch 1
    assert patch == [127, 0, 0x8000, 0]


def test_what_the_reader_would_refuse_is_not_written(tmp_path):
    p = tmp_path / "x.bundle"
    with pytest.raises(ValueError, match="unknown entry point 'no_such_entry'"):
        operands.write_bundle(p, *_args(entry="no_such_entry"))
    entry, m, n, k, launches, base, cols, bits, w, s = _args()
    cols[1, 0] = k  # outside the row
    with pytest.raises(ValueError, match="row 1 patch 0: column 128 is outside the row"):
        operands.write_bundle(p, entry, m, n, k, launches, base, cols, bits, w, s)
    assert not p.exists()


def test_an_output_that_is_not_one_is_refused(tmp_path):
    p = tmp_path / "x.out"
    p.write_bytes(b"W8A16OPB" + bytes(152))
    with pytest.raises(ValueError, match="not a run-operands output"):
        operands.read_output(p)
