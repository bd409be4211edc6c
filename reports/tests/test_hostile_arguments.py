# SPDX-License-Identifier: MIT OR Apache-2.0
# Hostile scalar arguments through the Python bindings: thread counts, pitches, counts and hand-made
# dicts. Each ends in a TypeError or ValueError naming the argument, never an abort, a RuntimeError
# from a failed cast or pybind11's generic "incompatible function arguments". The calls that used to
# abort run in a child process under an address-space limit, where starting thousands of threads fails.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import w8a16check as w
from w8a16check import _core, operands

# Far below this machine's memory and far below 1,024 thread stacks of 8 MiB: thread creation fails
# well before the thread counts tried here, as on a CI runner with a memory limit.
CHILD_VMEM_BYTES = 3 << 30


def run_limited(code: str) -> subprocess.CompletedProcess:
    prelude = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({CHILD_VMEM_BYTES}, {CHILD_VMEM_BYTES}))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        import numpy as np
        import w8a16check as w
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


def _k128():
    return np.zeros((2, 128), np.uint16), np.zeros((3, 128), np.uint8)


# Every binding that takes `threads`, with operands it accepts.
def _calls():
    a, wt = _k128()
    s = np.ones((1, 1), np.float32)
    sr = np.ones((3, 1), np.float32)
    x16 = np.zeros((5, 16), np.uint16)
    return {
        "mma": lambda t: w.mma(x16, x16, np.zeros(5, np.uint32), threads=t),
        "_core.mma": lambda t: _core.mma(x16, x16, np.zeros(5, np.uint32), threads=t),
        "gemm": lambda t: w.gemm(a, wt, s, threads=t),
        "gemm_columns": lambda t: w.gemm_columns(a, wt, sr, threads=t),
        "canonical_acc_columns": lambda t: w.canonical_acc_columns(a, wt, sr, threads=t),
        "gemv_acc_columns": lambda t: w.gemv_acc_columns(a, wt, sr, threads=t),
        "exact": lambda t: w.exact(a, wt, s, threads=t),
        "exact_columns": lambda t: w.exact_columns(a, wt, sr, threads=t),
    }


CALLS = sorted(_calls())


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("threads,exc,needle", [
    (2000, ValueError, "threads = 2000 is out of range (0 for one thread per core, or 1..1024)"),
    (-1, ValueError, "threads = -1 is out of range"),
    (1 << 70, ValueError, f"threads = {1 << 70} is out of range"),
    (1.5, TypeError, "threads must be an integer, got float"),
    (True, TypeError, "threads must be an integer, got bool"),
    ("4", TypeError, "threads must be an integer, got str"),
])
def test_a_bad_thread_count_is_refused_naming_it(call, threads, exc, needle):
    with pytest.raises(exc) as info:
        _calls()[call](threads)
    assert needle in str(info.value)


@pytest.mark.parametrize("call", CALLS)
def test_thread_counts_in_range_give_the_same_bits(call):
    f = _calls()[call]
    one = f(1)
    for t in (0, 2, np.int64(3), 1024):
        got = f(t)
        for x, y in zip(one if isinstance(one, tuple) else (one,), got if isinstance(got, tuple) else (got,)):
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f")


def test_the_documented_example_raises_instead_of_aborting():
    # Was: "terminate called without an active exception", rc 134, when the threads could not start.
    r = run_limited("""
        try:
            w.mma(np.zeros((5000, 16), np.uint16), np.zeros((5000, 16), np.uint16), np.zeros(5000, np.uint32),
                  threads=2000)
        except ValueError as e:
            print("RAISED", e)
            sys.exit(0)
        sys.exit(3)
    """)
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal):\n{r.stdout}\n{r.stderr[-2000:]}"
    assert "threads = 2000 is out of range" in r.stdout


def test_threads_the_system_refuses_leave_the_work_to_those_that_started():
    # 1,024 stacks of 8 MiB do not fit the child's 3 GiB: most threads cannot start, and the call
    # must still finish with the bits of one thread.
    r = run_limited("""
        rng = np.random.default_rng(5)
        a = rng.integers(0, 1 << 16, (5000, 16), dtype=np.uint16)
        b = rng.integers(0, 1 << 16, (5000, 16), dtype=np.uint16)
        c = rng.integers(0, 1 << 32, 5000, dtype=np.uint64).astype(np.uint32)
        same = np.array_equal(w.mma(a, b, c, threads=1024), w.mma(a, b, c, threads=1))
        wr = rng.integers(0, 0x7F, (3000, 128), dtype=np.uint8)
        sr = np.ones((3000, 1), np.float32)
        x = rng.integers(0x3C00, 0x4000, (1, 128), dtype=np.uint16)
        same &= np.array_equal(w.gemm_columns(x, wr, sr, threads=1024), w.gemm_columns(x, wr, sr, threads=1))
        print("SAME" if same else "DIFFERENT")
    """)
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal):\n{r.stdout}\n{r.stderr[-2000:]}"
    assert "SAME" in r.stdout


@pytest.mark.parametrize("kwargs,exc,needle", [
    ({"a_row_stride": 1 << 70}, ValueError, f"a_row_stride = {1 << 70} is out of range (at most 2^63 - 1)"),
    ({"c_row_stride": -(1 << 70)}, ValueError, "c_row_stride = -"),
    ({"a_row_stride": -3}, ValueError, "a_row_stride = -3 must be at least K = 128"),
    ({"c_row_stride": True}, TypeError, "c_row_stride must be an integer or None, got bool"),
    ({"a_row_stride": 128.0}, TypeError, "a_row_stride must be an integer or None, got float"),
])
def test_a_bad_pitch_is_refused_naming_it(kwargs, exc, needle):
    a, wt = _k128()
    with pytest.raises(exc) as info:
        w.gemm(a, wt, np.ones((1, 1), np.float32), **kwargs)
    assert needle in str(info.value)
    assert w.gemm(a, wt, np.ones((1, 1), np.float32), a_row_stride=np.int32(128)).shape == (2, 3)


def test_a_numpy_scalar_is_said_to_be_one():
    with pytest.raises(TypeError, match=r"codes must be a numpy array of dtype uint8, got a numpy scalar of type uint8"):
        w.decode_e4m3(np.uint8(3))
    assert w.decode_e4m3(np.asarray(np.uint8(0x38))).shape == ()


def _bundle_args(**over):
    args = dict(path="/dev/null/never-written", entry="gemm_pipelined", m=1, n=1, k=128, launches=1,
                base=np.zeros(128, np.uint16), patch_cols=np.zeros((1, 1), np.uint32),
                patch_bits=np.zeros((1, 1), np.uint16), w=np.zeros((1, 128), np.uint8), s=np.ones((1, 1), np.float32),
                a_row_stride=128, c_row_stride=1)
    args.update(over)
    return args


@pytest.mark.parametrize("over,exc,needle", [
    ({"m": 1 << 70}, ValueError, f"m = {1 << 70} is out of range (0..4294967295)"),
    ({"k": -128}, ValueError, "k = -128 is out of range"),
    ({"launches": 1.0}, TypeError, "launches must be an integer, got float"),
    ({"c_row_stride": None}, TypeError, "c_row_stride must be an integer, got NoneType"),
])
def test_operand_bundle_counts_are_checked_naming_them(over, exc, needle):
    with pytest.raises(exc) as info:
        _core.write_operand_bundle(**_bundle_args(**over))
    assert needle in str(info.value)


def test_operand_bundle_writer_refuses_what_is_not_an_array(tmp_path):
    args = _bundle_args(path=tmp_path / "b.bin")
    args["base"] = [0] * 128
    with pytest.raises(TypeError, match="base must be a numpy array, got list"):
        operands.write_bundle(**args)
    assert not (tmp_path / "b.bin").exists()


@pytest.fixture(scope="module")
def recorded():
    from conftest import REPO

    return w.read_recording(str(REPO / "golden" / "recordings" / "h200.rec"))["outputs"][0]


@pytest.mark.parametrize("change,exc,needle", [
    (lambda r: 5, TypeError, "recorded must be a dict"),
    (lambda r: {}, ValueError, "recorded has no 'case'"),
    (lambda r: {**r, "case": 5}, TypeError, "recorded['case'] must be a dict"),
    (lambda r: {**r, "case": {}}, ValueError, "recorded['case'] has no 'line'"),
    (lambda r: {**r, "case": {"line": 7}}, TypeError, "recorded['case']['line'] must be a str"),
    (lambda r: {k: v for k, v in r.items() if k != "digest"}, ValueError, "recorded has no 'digest'"),
    (lambda r: {**r, "digest": "0x12"}, TypeError, "recorded['digest'] must be an integer, got str"),
    (lambda r: {**r, "digest": -1}, ValueError, "recorded['digest'] = -1 is out of range"),
    (lambda r: {**r, "outputs": 1 << 64}, ValueError, "recorded['outputs'] = 18446744073709551616 is out of range"),
    (lambda r: {k: v for k, v in r.items() if k != "bits"}, ValueError, "recorded has no 'bits'"),
])
def test_a_hand_made_recorded_dict_is_told_what_is_wrong(recorded, change, exc, needle):
    with pytest.raises(exc) as info:
        _core.recorded_verdict(change(dict(recorded)), None)
    assert needle in str(info.value)
    assert _core.recorded_verdict(recorded, None)["verdict"] == "not replayed"
