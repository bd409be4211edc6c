# SPDX-License-Identifier: MIT OR Apache-2.0
# w8a16check.compare: a device output held to the contract from Python, bit for bit.
import subprocess

import numpy as np
import pytest

import w8a16check as w

# Operands from case lines (golden/README.md, the case format) with a pitched A and C; M = 5 rows,
# N = 130 columns over two scale rows, 3 K steps. fold_ties: data whose two contracts differ in
# every output (NUMERICS.md 2.1 against 2.2), all finite.
TIES = ("case/1 w8a16_gemm_pipelined_m32_strided m=5 n=130 k=384 a_row_stride=392 c_row_stride=136 "
        "dist=fold_ties seed=0x00000000000000c5 gen=1")
# Every special class (NaN, Inf, subnormals, signed zeros): outputs that are NaN.
SPECIALS = TIES.replace("fold_ties", "specials")
# Finite data (no Inf * 0): a planted "step skipped" bug is then exactly a fold without that step.
FINITE = ("case/1 w8a16_gemm_pipelined_m32_strided m=3 n=40 k=768 a_row_stride=768 c_row_stride=40 "
          "dist=activation_like seed=0x0000000000000033 gen=1")


def operands(line):
    d = w.case_inputs(line)
    m, k = d["m"], d["k"]
    a = np.ascontiguousarray(d["a"].reshape(m, -1)[:, :k])
    return a, d["w"].reshape(d["n"], k), d["s"].reshape((d["n"] + 127) // 128, k // 128)


@pytest.fixture(scope="module")
def ops():
    return operands(TIES)


def test_matching_output_is_truthy(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    r = w.compare(c, a, wt, s, entry="gemm_pipelined_m32_strided")
    assert r and r.equal and r.mismatches == 0 and r.first is None
    assert (r.entry, r.contract, r.m, r.n, r.k) == ("gemm_pipelined_m32_strided", "canonical", 5, 130, 384)
    assert r.explain().startswith("PASS: gemm_pipelined_m32_strided (canonical contract, NUMERICS.md 2.1)")


def test_gemv_entries_meet_the_gemv_order(ops):
    a, wt, s = ops
    a4 = np.ascontiguousarray(a[:4])
    c = w.gemm(a4, wt, s, contract="gemv")
    r = w.compare(c, a4, wt, s, entry="w8a16_gemv_batch4_strided")
    assert r and r.contract == "gemv" and r.entry == "gemv_batch4_strided"
    canonical = w.gemm(a4, wt, s)
    if np.array_equal(canonical, c):
        pytest.fail("the operands must tell the two contracts apart")
    wrong = w.compare(canonical, a4, wt, s, entry="gemv_batch4_strided")
    assert not wrong and any("matches the canonical fold" in d for d in wrong.diagnosis)


def test_one_flipped_bit_is_found_with_its_position_and_ulp(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    finite = np.argwhere((c & 0x7F80) != 0x7F80)
    r0, c0 = (int(x) for x in finite[len(finite) // 2])
    bad = c.copy()
    bad[r0, c0] ^= 1  # the lowest mantissa bit: 1 ULP away
    r = w.compare(bad, a, wt, s, entry="gemm_pipelined_m32_strided")
    assert not r and r.mismatches == 1
    assert (r.first.row, r.first.col, r.first.got, r.first.want, r.first.ulp) == (r0, c0, int(bad[r0, c0]), int(c[r0, c0]), 1)
    # The fold, step by step, as repro prints it: 3 steps, and bf16_rne of the last acc is the want.
    assert len(r.fold["p"]) == 3 and int(w.round_bf16(r.fold["acc"][-1:])[0]) == r.first.want
    text = r.explain()
    assert text.startswith("FAIL: ") and f"C[{r0}][{c0}] = 0x{r.first.got:04X}, want 0x{r.first.want:04X} (1 BF16 ULP)" in text
    assert "step   2: p = 0x" in text


def test_every_differing_element_is_counted_and_the_first_is_row_major(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    bad = c.copy()
    bad[3, 7] ^= 0x8000
    bad[1, 100] ^= 0x0040
    bad[4, 129] ^= 0x0001
    r = w.compare(bad, a, wt, s, entry="gemm_pipelined_m32_strided")
    assert r.mismatches == 3 and (r.first.row, r.first.col) == (1, 100)


def test_a_nan_pattern_other_than_the_contracts_is_a_mismatch_with_no_ulp():
    a, wt, s = operands(SPECIALS)
    c = w.gemm(a, wt, s)
    nans = np.argwhere(c == 0x7FFF)
    if not len(nans):
        pytest.fail("the specials case must produce a NaN output")
    r0, c0 = (int(x) for x in nans[0])
    bad = c.copy()
    bad[r0, c0] = 0x7FC0  # a NaN too, but the contract writes every NaN as 0x7FFF (NUMERICS.md 1.2)
    r = w.compare(bad, a, wt, s, entry="gemm_pipelined_m32_strided")
    assert r.mismatches == 1 and r.first.ulp is None and "(a NaN)" in str(r.first)


def test_the_diverging_step_of_a_kernel_that_skips_a_step():
    a, wt, s = operands(FINITE)
    skipped = 4

    def buggy(a_, w_, s_):  # an emulated stand-in for a kernel that leaves out 128-K step 4
        s_ = s_.copy()
        if s_.shape[1] > skipped:
            s_[:, skipped] = 0.0  # fma(p, 0, acc) = acc on finite data: the step adds nothing
        return w.gemm(np.ascontiguousarray(a_), w_, s_)

    r = w.compare(buggy(a, wt, s), a, wt, s, entry="gemm_pipelined_m32_strided", launch=buggy)
    assert not r and r.diverging_step == skipped
    assert "first differs at 128-K step 4 (k = 512..639)" in r.explain()
    # A kernel with no bug: nothing to bisect.
    good = w.compare(w.gemm(a, wt, s), a, wt, s, entry="gemm_pipelined_m32_strided", launch=buggy)
    assert good and good.diverging_step is None


def test_pitched_views_are_read_in_place_and_their_pitch_recorded(ops):
    a, wt, s = ops
    a_buf = np.full((5, 392), 0xFFC1, np.uint16)
    a_buf[:, :384] = a
    c_buf = np.zeros((5, 136), np.uint16)
    c_buf[:, :130] = w.gemm(a, wt, s)
    r = w.compare(c_buf[:, :130], a_buf[:, :384], wt, s, entry="gemm_pipelined_m32_strided")
    assert r and (r.a_row_stride, r.c_row_stride) == (392, 136)
    assert r.layout == {"a": "pitched", "c": "pitched", "w": "contiguous", "s": "contiguous"}
    assert r.case_line() == "w8a16_gemm_pipelined_m32_strided m=5 n=130 k=384 a_row_stride=392 c_row_stride=136"


def test_other_layouts_are_copied_and_said_to_be(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    # Column-major A and C, reversed rows, W's rows every other row of a wider array: same bytes.
    r = w.compare(np.asfortranarray(c), np.asfortranarray(a), wt, s, entry="gemm_pipelined_m32_strided")
    assert r and r.layout["a"] == "copied" and r.layout["c"] == "copied" and r.a_row_stride == 384
    rev = w.compare(c[::-1], a[::-1], wt, s, entry="gemm_pipelined_m32_strided")
    assert rev and rev.layout["a"] == "copied"
    w2 = np.zeros((260, 384), np.uint8)
    w2[::2] = wt
    assert w.compare(c, a, w2[::2], s, entry="gemm_pipelined_m32_strided").layout["w"] == "copied"


def test_signed_views_of_the_same_bits_are_accepted(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    assert w.compare(c.view(np.int16), a.view(np.int16), wt.view(np.int8), s, entry="gemm_pipelined_m32_strided")


class _DLPackOnly:
    """Exposes an array only through DLPack, as a framework's host tensor does."""

    def __init__(self, arr, device=(1, 0)):
        self._arr, self._device = arr, device

    def __dlpack__(self, stream=None):
        return self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._device


class _ArrayOnly:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr


def test_dlpack_and_array_interface_inputs(ops):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    assert w.compare(_DLPackOnly(c), _DLPackOnly(a), _ArrayOnly(wt), _ArrayOnly(s), entry="gemm_pipelined_m32_strided")
    with pytest.raises(ValueError, match=r"c lives on a device \(DLPack device type 2\), not in host memory: move it to "
                                         r"the host first \(e\.g\. t\.cpu\(\)\)"):
        w.compare(_DLPackOnly(c, device=(2, 0)), a, wt, s, entry="gemm_pipelined_m32_strided")


def test_a_replay_bundle_runs_through_run_operands_check(ops, cli, tmp_path):
    a, wt, s = ops
    a_buf = np.zeros((5, 392), np.uint16)
    a_buf[:, :384] = a
    c_buf = np.zeros((5, 136), np.uint16)
    c_buf[:, :130] = w.gemm(a, wt, s)
    r = w.compare(c_buf[:, :130], a_buf[:, :384], wt, s, entry="gemm_pipelined_m32_strided")
    bundle = tmp_path / "case.opb"
    command = r.write_bundle(bundle)
    assert command == (f"w8a16check run-operands --backend cuda --entry gemm_pipelined_m32_strided --in {bundle} "
                       f"--out {bundle}.out --check")
    # Here the simulation runs it (no GPU): the launch layer's plan and geometry, the emulator's values.
    run = subprocess.run([cli, "run-operands", "--backend", "sim", "--entry", "gemm_pipelined_m32_strided", "--in",
                          str(bundle), "--out", str(tmp_path / "out.bin"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "check: 0 of 680 elements of C differ from the canonical fold (NUMERICS.md 2.1)" in run.stdout
    assert "verdict: PASS" in run.stdout
    out = w.operands.read_output(tmp_path / "out.bin")
    assert np.array_equal(out["c"][:, :130], c_buf[:, :130]) and (out["c"][:, 130:] == 0xFFFF).all()


def test_the_bundle_holds_the_operands_that_were_compared(ops, cli, tmp_path):
    # A test that reuses its buffers: compared on one set of operands (a FAIL), then overwritten
    # with the next case's before the bundle is written. The bundle must replay the compared ones.
    a, wt, s = ops
    a_buf, w_buf, s_buf = a.copy(), wt.copy(), s.copy()
    c = w.gemm(a, wt, s)
    c[0, 0] ^= 1  # one output bit wrong: the comparison fails
    r = w.compare(c, a_buf, w_buf, s_buf, entry="gemm_pipelined_m32_strided")
    assert not r
    a_buf[:] = 0
    w_buf[:] = 0
    s_buf[:] = 0
    bundle = tmp_path / "reused.opb"
    r.write_bundle(bundle)
    run = subprocess.run([cli, "run-operands", "--backend", "sim", "--entry", "gemm_pipelined_m32_strided", "--in",
                          str(bundle), "--out", str(tmp_path / "out.bin"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    out = w.operands.read_output(tmp_path / "out.bin")
    # The simulation produces the contract's bytes of the operands compared: exactly the expected C,
    # which the device's C differed from in one element, not the zeros the buffers now hold.
    assert np.array_equal(out["c"][:, :130], r.expected)
    assert int(out["c"][0, 0]) != int(c[0, 0])
    assert np.array_equal(r.expected, w.gemm(a, wt, s))


def test_a_zero_of_the_other_sign_is_named_as_such_not_zero_ulp(ops):
    a, wt, s = ops
    a = a.copy()
    a[0, :] = 0  # row 0 of C: every sum exactly zero, so +0 (NUMERICS.md 1.1)
    want = w.gemm(a, wt, s)
    assert int(want[0, 3]) == 0x0000
    c = want.copy()
    c[0, 3] = 0x8000
    r = w.compare(c, a, wt, s, entry="gemm_pipelined_m32_strided")
    assert not r and r.mismatches == 1
    assert "the sign of zero differs: -0 and +0" in str(r.first)
    assert "0 BF16 ULP" not in r.explain()


def test_writes_into_cs_pitch_gap_fail_when_the_fill_is_given(ops):
    a, wt, s = ops
    fill = 0x7FA5  # a NaN no kernel writes (golden/README.md, the case inputs)
    c_buf = np.full((5, 136), fill, np.uint16)
    c_buf[:, :130] = w.gemm(a, wt, s)
    assert w.compare(c_buf[:, :130], a, wt, s, entry="gemm_pipelined_m32_strided", c_fill=fill)
    c_buf[2, 133] = 0x3F80  # a kernel writing past N into the pitch
    r = w.compare(c_buf[:, :130], a, wt, s, entry="gemm_pipelined_m32_strided", c_fill=fill)
    assert not r and r.mismatches == 0
    assert r.pitch_gap_writes == [(2, 133, 0x3F80)]
    assert "1 elements of C's pitch gap were written" in r.explain()
    # Without the fill the gap is not read, and the report says so rather than passing silently on it.
    unchecked = w.compare(c_buf[:, :130], a, wt, s, entry="gemm_pipelined_m32_strided")
    assert unchecked.pitch_gap_writes is None
    assert "pitch gap was not checked" in unchecked.explain()


BAD = [
    (lambda a, wt, s, c: dict(a=a.astype(np.float32)), TypeError, r"a must hold BF16 bits \(uint16 or int16\), got float32"),
    (lambda a, wt, s, c: dict(w=wt.astype(np.float32)), TypeError, r"w must hold E4M3 codes \(uint8 or int8\), got float32"),
    (lambda a, wt, s, c: dict(s=s.astype(np.float64)), TypeError, r"s must be float32 \(the FP32 block scales\), got float64"),
    (lambda a, wt, s, c: dict(c=c.astype(np.uint32)), TypeError, r"c must hold BF16 bits \(uint16 or int16\), got uint32"),
    (lambda a, wt, s, c: dict(a=a.astype(">u2")), TypeError, r"a must hold BF16 bits"),
    (lambda a, wt, s, c: dict(a=a.tolist()), TypeError, r"a must be an array \(NumPy, or anything with __dlpack__ or "
                                                       r"__array__\), got list"),
    (lambda a, wt, s, c: dict(a=np.uint16(3)), TypeError, r"a must be an array, got a numpy scalar of type uint16"),
    (lambda a, wt, s, c: dict(a=a.reshape(-1)), ValueError, r"a must be 2-D \[M, K\] \(BF16 bits\), got shape \(1920,\)"),
    (lambda a, wt, s, c: dict(w=wt[:, :200], a=a[:, :200], s=s[:, :1]), ValueError,
     r"w: K = 200 \(its second dimension\) must be a positive multiple of 128"),
    (lambda a, wt, s, c: dict(a=a[:, :256]), ValueError, r"a has 256 columns, but w has K = 384"),
    (lambda a, wt, s, c: dict(c=c[:, :129]), ValueError, r"c must have shape \(M, N\) = \(5, 130\) from a and w, got \(5, 129\)"),
    (lambda a, wt, s, c: dict(c=c[:4]), ValueError, r"c must have shape \(M, N\) = \(5, 130\)"),
    (lambda a, wt, s, c: dict(s=s[:1]), ValueError, r"s must have shape \(ceil\(N/128\), K/128\) = \(2, 3\), got \(1, 3\)"),
    (lambda a, wt, s, c: dict(a=a[:0], c=c[:0]), ValueError, r"a must have at least one row \(M >= 1\)"),
    (lambda a, wt, s, c: dict(entry="gemm_nonesuch"), ValueError, r"entry 'gemm_nonesuch' with m=5 "),
    (lambda a, wt, s, c: dict(entry=7), TypeError, r"entry must be a str"),
    (lambda a, wt, s, c: dict(entry="gemv_batch4_strided"), ValueError, r"takes at most 4 rows, m=5"),
    (lambda a, wt, s, c: dict(entry="gemm_pipelined_m32", a_row_stride=392), ValueError,
     r"is contiguous: a_row_stride must equal k and c_row_stride n"),
    (lambda a, wt, s, c: dict(a_row_stride=388), ValueError, r"a_row_stride=388 must be >= k=384 and a multiple of 8"),
    (lambda a, wt, s, c: dict(a_row_stride=100), ValueError, r"a_row_stride = 100 must be at least K = 384"),
    (lambda a, wt, s, c: dict(c_row_stride=1.5), TypeError, r"c_row_stride must be an integer, got float"),
    (lambda a, wt, s, c: dict(threads=True), TypeError, r"threads must be an integer, got bool"),
]


@pytest.mark.parametrize("change,exc,needle", BAD)
def test_bad_input_is_refused_naming_it_and_nothing_changes(ops, change, exc, needle):
    a, wt, s = ops
    c = w.gemm(a, wt, s)
    args = dict(c=c, a=a, w=wt, s=s, entry="gemm_pipelined_m32_strided")
    args.update(change(a, wt, s, c))
    before = [x.copy() for x in (c, a, wt, s)]
    with pytest.raises(exc, match=needle):
        w.compare(args.pop("c"), args.pop("a"), args.pop("w"), args.pop("s"), **args)
    for x, y in zip(before, (c, a, wt, s)):
        assert np.array_equal(x, y)
