# SPDX-License-Identifier: MIT OR Apache-2.0
# Hostile input through the Python bindings: views of every layout (broadcast, strided, reversed),
# shapes whose copies or results cannot be made, dimensions past 2^32, and paths that are not
# regular files. Every call ends in a result or a Python exception that names the argument; the
# risky ones run in a child process under a memory limit, so that a crash (a null array
# dereferenced, a wrapped count) shows as the child's signal instead of taking pytest down.
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import w8a16check as w

REPO = pathlib.Path(__file__).resolve().parents[2]

# The child's address space: far below this machine's memory, so that numpy's allocation of a huge
# copy fails at once instead of succeeding (overcommit) and being killed later.
CHILD_VMEM_BYTES = 3 << 30


def run_child(code: str) -> subprocess.CompletedProcess:
    prelude = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({CHILD_VMEM_BYTES}, {CHILD_VMEM_BYTES}))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        import numpy as np
        import w8a16check as w
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


def expect_exception(code: str, exc: str, needle: str) -> None:
    """Runs `code` in a child; it must raise `exc` with `needle` in its message (and not crash)."""
    r = run_child(f"""
        try:
{textwrap.indent(textwrap.dedent(code), ' ' * 12)}
        except {exc} as e:
            print("RAISED", type(e).__name__, e)
            sys.exit(0)
        print("NO EXCEPTION")
        sys.exit(3)
    """)
    assert r.returncode >= 0, f"the child was killed by signal {-r.returncode} (a crash):\n{r.stderr[-2000:]}"
    assert r.returncode == 0, f"exit {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert needle in r.stdout, r.stdout


def bf16_rows(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(0x3C00, 0x4100, size=shape, dtype=np.uint16) ^ rng.integers(0, 2, size=shape, dtype=np.uint16) << 15).astype(np.uint16)


# ---- views of every layout give the same bits as their contiguous copies ------------------------

def test_mma_reads_broadcast_strided_and_reversed_views_in_place():
    a = bf16_rows((6, 16), 1)
    b = bf16_rows((5, 16), 2)
    c = np.random.default_rng(3).integers(0, 1 << 32, size=(6, 5), dtype=np.uint64).astype(np.uint32)
    want = w.mma(np.ascontiguousarray(np.broadcast_to(a[:, None, :], (6, 5, 16))),
                 np.ascontiguousarray(np.broadcast_to(b[None, :, :], (6, 5, 16))), c)
    assert np.array_equal(w.mma(a[:, None, :], b[None, :, :], c), want)          # broadcast (stride 0)
    big = np.zeros((12, 5, 32), np.uint16)
    big[::2, :, ::2] = np.broadcast_to(a[:, None, :], (6, 5, 16))
    assert np.array_equal(w.mma(big[::2, :, ::2], b[None], c), want)             # strided in every dim
    rev = np.ascontiguousarray(np.broadcast_to(a[::-1, None, :], (6, 5, 16)))[::-1]
    assert np.array_equal(w.mma(rev, b[None], c), want)                           # negative strides
    assert np.array_equal(w.mma(a[:, None, :], b[None], np.asfortranarray(c)), want)  # Fortran order


def test_gemm_and_exact_take_strided_views_as_their_copies():
    rng = np.random.default_rng(4)
    a = bf16_rows((3, 256), 5)
    wt = rng.integers(0, 0x7F, size=(9, 256), dtype=np.uint8)
    s = np.ones((1, 2), np.float32)
    want = w.gemm(a, wt, s)
    wide = np.zeros((3, 512), np.uint16)
    wide[:, ::2] = a
    assert np.array_equal(w.gemm(wide[:, ::2], wt, s), want)
    assert np.array_equal(w.exact(wide[:, ::2], wt, s)[1], w.exact(a, wt, s)[1])


# ---- what cannot be made is a MemoryError naming it, never a crash ---------------------------

def test_mma_with_huge_broadcast_leading_shape_raises_naming_the_result():
    # The documented broadcasting with a large leading shape: 2^33 outputs (32 GiB) cannot be made.
    expect_exception("""
        a = np.zeros((1 << 20, 1, 16), np.uint16)
        b = np.zeros((1, 1 << 13, 16), np.uint16)
        c = np.zeros((1,), np.uint32)
        w.mma(a, b, c)
    """, "MemoryError", "the result")


def test_a_copy_that_cannot_be_made_raises_naming_the_argument():
    # A broadcast view of 4 GiB that the binding must copy (gemm reads A through a pitch).
    expect_exception("""
        a = np.broadcast_to(np.zeros((1, 128), np.uint16), (1 << 24, 128))
        w.gemm(a, np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32))
    """, "MemoryError", "a: the (16777216, 128) view is not C-contiguous")
    expect_exception("""
        w.decode_e4m3(np.broadcast_to(np.zeros(1, np.uint8), (1 << 33,)))
    """, "MemoryError", "codes:")
    expect_exception("""
        w.outputs_digest(np.broadcast_to(np.zeros((1, 1), np.uint16), (1 << 16, 1 << 16)))
    """, "MemoryError", "used:")


def test_dimensions_past_2_to_the_32_raise_instead_of_wrapping():
    expect_exception("""
        a = np.broadcast_to(np.zeros((1, 128), np.uint16), ((1 << 32) + 1, 128))
        w.exact(a, np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32))
    """, "ValueError", "M (a's rows) = 4294967297 is out of range")
    expect_exception("""
        a = np.broadcast_to(np.zeros((1, 128), np.uint16), ((1 << 32) + 1, 128))
        w.gemm(a, np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32))
    """, "ValueError", "M = 4294967297 is out of range")
    expect_exception("""
        wr = np.broadcast_to(np.zeros((1, 128), np.uint8), ((1 << 32) + 2, 128))
        sr = np.broadcast_to(np.ones((1, 1), np.float32), ((1 << 32) + 2, 1))
        w.gemm_columns(np.zeros((1, 128), np.uint16), wr, sr)
    """, "ValueError", "columns = 4294967298 is out of range")
    expect_exception("""
        n = (1 << 32) + 1
        w.serialize_mmav(np.broadcast_to(np.zeros((1, 16, 16), np.uint16), (n, 16, 16)),
                         np.broadcast_to(np.zeros((1, 8, 16), np.uint16), (n, 8, 16)),
                         np.broadcast_to(np.zeros((1, 16, 8), np.uint32), (n, 16, 8)),
                         np.broadcast_to(np.zeros((1, 16, 8), np.uint32), (n, 16, 8)))
    """, "ValueError", "more than a .mmav holds")


def test_an_absurd_pitch_is_refused_without_overflow():
    with pytest.raises(ValueError, match="fewer than M rows of pitch a_row_stride"):
        w.gemm(np.zeros((3, 128), np.uint16), np.zeros((1, 128), np.uint8), np.ones((1, 1), np.float32),
               a_row_stride=1 << 62)


def test_case_inputs_of_a_case_too_large_for_this_machine_raise_memory_error():
    line = ("case/1 w8a16_gemm_pipelined m=65536 n=32768 k=32768 a_row_stride=32768 c_row_stride=32768 "
            "dist=specials seed=0x0000000000000001 gen=1")
    expect_exception(f"w.case_inputs({line!r})", "MemoryError", "line: the case's operands need")


# ---- paths that are not regular files ---------------------------------------------------------

@pytest.fixture()
def specials(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"folder": str(tmp_path), "fifo": str(fifo), "dev_zero": "/dev/zero"}


@pytest.mark.parametrize("reader", ["read_mmav", "read_recording", "read_case_file"])
@pytest.mark.parametrize("kind,needle", [("folder", "is a folder"), ("fifo", "is a FIFO"),
                                         ("dev_zero", "is a character device")])
def test_readers_refuse_what_is_not_a_regular_file(specials, reader, kind, needle):
    # In a child with a timeout: the old readers blocked on a FIFO and read /dev/zero forever.
    r = subprocess.run([sys.executable, "-c", f"""
import sys, w8a16check as w
try:
    w.{reader}({specials[kind]!r})
except ValueError as e:
    print("RAISED", e); sys.exit(0)
print("NO EXCEPTION"); sys.exit(3)
"""], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal):\n{r.stdout}\n{r.stderr[-2000:]}"
    assert "path:" in r.stdout and needle in r.stdout, r.stdout


def test_write_mmav_failures_raise(tmp_path):
    cases = (np.zeros((1, 16, 16), np.uint16), np.zeros((1, 8, 16), np.uint16), np.zeros((1, 16, 8), np.uint32),
             np.zeros((1, 16, 8), np.uint32))
    with pytest.raises(ValueError, match="path: cannot write .*No space left"):
        w.write_mmav("/dev/full", *cases)
    with pytest.raises(ValueError, match="path: cannot write .*does not exist"):
        w.write_mmav(str(tmp_path / "missing" / "x.mmav"), *cases)
    with pytest.raises(ValueError, match="path: cannot write .*is a folder"):
        w.write_mmav(str(tmp_path), *cases)
    w.write_mmav(str(tmp_path / "ok.mmav"), *cases)
    assert w.read_mmav(str(tmp_path / "ok.mmav"))["a"].shape == (1, 16, 16)
    assert [p.name for p in tmp_path.iterdir()] == ["ok.mmav"]  # no temporary file left behind


def test_read_recording_says_whether_its_length_was_verified():
    rec = w.read_recording(str(REPO / "golden" / "recordings" / "h200.rec"))
    assert rec["header"]["version"] == 2 and rec["header"]["length_verified"] is True
    text = (REPO / "golden" / "recordings" / "h200.rec").read_text()
    v1 = text.replace("w8a16check-recording 2\n", "w8a16check-recording 1\n", 1)
    v1 = v1[: v1.rindex("end cases=")]
    old = w.parse_recording(v1)
    assert old["header"]["version"] == 1 and old["header"]["length_verified"] is False
    assert len(old["outputs"]) == len(rec["outputs"])
    with pytest.raises(ValueError, match="without its trailer line"):
        w.parse_recording(text[: text.rindex("end cases=")])


def test_compare_keeps_what_it_compared_when_the_caller_reuses_its_buffers(tmp_path):
    # A caller that reuses (or frees) its buffers after compare(): the bundle written afterwards holds
    # the operands compared, not the buffers' new bytes.
    line = ("case/1 w8a16_gemv_batch4_strided m=2 n=8 k=256 a_row_stride=256 c_row_stride=8 "
            "dist=activation_like seed=0x0000000000000011 gen=1")
    d = w.case_inputs(line)
    a = np.ascontiguousarray(d["a"].reshape(2, -1)[:, :256])
    wt, s = d["w"].reshape(8, 256).copy(), d["s"].reshape(1, 2).copy()
    kept = (a.copy(), wt.copy(), s.copy())
    r = w.compare(w.gemm(a, wt, s, contract="gemv"), a, wt, s, entry="gemv_batch4_strided")
    for buf in (a, wt, s):
        buf[...] = np.frombuffer(os.urandom(buf.nbytes), buf.dtype).reshape(buf.shape)
    r.write_bundle(tmp_path / "b.opb")
    # The dense bundle (golden/include/w8a16/golden/operands.hpp): an 80-byte header, A with its
    # pitch, W, S.
    body = (tmp_path / "b.opb").read_bytes()[80:]
    a_bytes, w_bytes = 2 * 2 * 256, 8 * 256
    assert np.array_equal(np.frombuffer(body[:a_bytes], np.uint16).reshape(2, 256), kept[0])
    assert np.array_equal(np.frombuffer(body[a_bytes:a_bytes + w_bytes], np.uint8).reshape(8, 256), kept[1])
    assert np.array_equal(np.frombuffer(body[a_bytes + w_bytes:], np.float32).reshape(1, 2), kept[2])


def test_compare_names_a_zero_of_the_other_sign_and_checks_the_pitch_gap_given_the_fill():
    # Two results that once read as a pass or as "0 BF16 ULP": -0 for +0, and a write past N.
    line = ("case/1 w8a16_gemv_batch4_strided m=3 n=8 k=128 a_row_stride=128 c_row_stride=8 "
            "dist=activation_like seed=0x0000000000000012 gen=1")
    d = w.case_inputs(line)
    a = np.zeros((3, 128), np.uint16)
    wt, s = d["w"].reshape(8, 128).copy(), d["s"].reshape(1, 1).copy()
    buf = np.full((3, 12), 0x7FA5, np.uint16)
    buf[:, :8] = w.gemm(a, wt, s, contract="gemv")
    buf[1, 0] ^= 0x8000
    buf[0, 9] = 0
    r = w.compare(buf[:, :8], a, wt, s, entry="gemv_batch4_strided", c_fill=0x7FA5)
    assert not r and "the sign of zero differs" in str(r.first)
    assert r.pitch_gap_writes == [(0, 9, 0)]
