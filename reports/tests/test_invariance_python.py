# SPDX-License-Identifier: MIT OR Apache-2.0
# w8a16check.invariance (the C++ sweep through _core): kernel stand-ins in float32 numpy, each breaking batch
# invariance one way, must FAIL on their own verdict at the M where they break; an invariant one must
# PASS; bad callables must raise, never pass. Raw bits throughout.
import importlib.util
import json
import pathlib
import random
import sys
import time

import numpy as np
import pytest

import w8a16check
from w8a16check import _core

REPO = pathlib.Path(__file__).resolve().parents[2]
N, K = 16, 256
inv_module = sys.modules["w8a16check.invariance"]  # the package's name `invariance` is the function


# ---- stand-ins: exact FP32 products (power-of-two scales, E4M3 x BF16 fits FP32), then an order ----

def decode_e4m3(codes):
    c = codes.astype(np.int32)
    e, m = (c >> 3) & 15, c & 7
    v = np.where(e == 0, m * 2.0**-9, (1 + m / 8) * np.exp2(e - 7.0))
    v = np.where((c & 0x7F) == 0x7F, np.nan, v)
    return np.where(c & 0x80, -v, v).astype(np.float32)


def products(a, w, s):
    af = (np.ascontiguousarray(a).astype(np.uint32) << 16).view(np.float32)
    n = w.shape[0]
    wd = decode_e4m3(w) * np.repeat(np.repeat(s, 128, 0)[:n], 128, 1)
    return af[:, None, :] * wd[None, :, :]


def sequential(p):
    """FP32 sum over K in index order, every (row, column) alike."""
    acc = np.zeros(p.shape[:2], np.float32)
    for i in range(p.shape[2]):
        acc += p[:, :, i]
    return acc


def to_bf16(acc):
    u = acc.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(acc), np.uint16(0x7FFF), r)


def rotated(p, offsets):
    k = p.shape[2]
    idx = (np.arange(k)[None, :] + np.asarray(offsets)[:, None]) % k
    return np.take_along_axis(p, idx[:, None, :], axis=2)


def invariant(a, w, s):  # the same FP32 order for every row, whatever M
    return to_bf16(sequential(products(a, w, s)))


def split_k_by_m(a, w, s):  # K cut into ceil(M/8) pieces, their FP32 partials summed
    p = products(a, w, s)
    pieces = min(-(-a.shape[0] // 8), p.shape[2])
    cut = np.linspace(0, p.shape[2], pieces + 1).astype(int)
    acc = np.zeros(p.shape[:2], np.float32)
    for i in range(pieces):
        acc += sequential(p[:, :, cut[i]:cut[i + 1]])
    return to_bf16(acc)


def row_order(a, w, s):  # the K order rotated by the row's index in the call
    p = products(a, w, s)
    return to_bf16(sequential(rotated(p, (np.arange(a.shape[0]) % 4) * (p.shape[2] // 4))))


class Nondeterministic:  # a random association per call (never the previous call's)
    def __init__(self):
        self.last, self.rng = 0, random.SystemRandom()

    def __call__(self, a, w, s):
        p = products(a, w, s)
        self.last = self.rng.choice([q for q in range(4) if q != self.last])
        return to_bf16(sequential(rotated(p, np.full(a.shape[0], self.last * (p.shape[2] // 4)))))


def tier_switch(a, w, s):  # another association above M = 16
    p = products(a, w, s)
    if a.shape[0] <= 16:
        return to_bf16(sequential(p))
    return to_bf16(sequential(rotated(p, np.full(a.shape[0], p.shape[2] // 2))))


def canonical(a, w, s):
    return _core.gemm(np.ascontiguousarray(a), w, s, contract="canonical")


# Tiers: the same kernel dispatched another way, held to fn's bytes (the tier verdict).

def row_blocks(fn, rows):  # fn over blocks of `rows` rows: another BLOCK_M, the same bytes when fn is row-wise
    return lambda a, w, s: np.concatenate([fn(a[i:i + rows], w, s) for i in range(0, a.shape[0], rows)])


def halves_from_9(a, w, s):  # K summed as two FP32 halves from M = 9 (a split chosen by M), else invariant's
    p = products(a, w, s)
    if a.shape[0] < 9:
        return to_bf16(sequential(p))
    h = p.shape[2] // 2
    return to_bf16(sequential(p[:, :, :h]) + sequential(p[:, :, h:]))


def rotated_half(a, w, s):  # another association at every M
    p = products(a, w, s)
    return to_bf16(sequential(rotated(p, np.full(a.shape[0], p.shape[2] // 2))))


# ---- verdicts: the engine is the CLI's (properties/invariance.hpp run_invariance_callable) ----

def row_copy(a, w, s):  # computes row 0 and writes its bytes into every row
    c = invariant(a, w, s)
    c[1:] = c[0]
    return c


def seed_tier_break(a, w, s):  # the seed family's own break: the skinny body at M <= 16, the tile above
    part = "seed-skinny" if a.shape[0] <= 16 else "seed-tile"
    return _core.gemm(np.ascontiguousarray(a), w, s, contract=part, part="tc")


def test_an_invariant_kernel_passes_and_is_named_wrong_against_canonical(tmp_path):
    r = w8a16check.invariance(invariant, N, K, contract="canonical")
    assert r.ms == list(range(1, 131)) and r.needles == list(inv_module.NEEDLES)
    assert r.verdicts["run-to-run"].passed and r.verdicts["batch"].passed, r.explain()
    c = r.verdicts["contract"]
    # One M = 1 comparison per needle: the four distributions and the pair-order needle.
    assert c.comparisons == len(inv_module.NEEDLES) + 1
    assert not c.passed and not r and r.first_failure.verdict == "contract" and r.first_failure.m == 1
    assert "canonical" in r.first_failure.against
    # The saved call is the needle; its want is the emulator's row under canonical.
    with np.load(r.save(tmp_path / "contract.npz")) as z:
        a, w, s, want = z["a"], z["w"], z["s"], z["want"]
    assert a.shape == (1, K)
    assert np.array_equal(want, _core.gemm(a, w, s, contract="canonical")[0])
    assert r.first_failure.want == int(want[r.first_failure.column])
    # Without a contract: the invariance verdicts alone, truthy; the text is the C++ report's.
    r = w8a16check.invariance(invariant, N, K, m_values=range(1, 20))
    assert r and "run-to-run  PASS (" in r.text and "batch       PASS (" in r.text and "contract: not asked" in r.text


def test_the_canonical_emulation_passes_every_verdict():
    r = w8a16check.invariance(canonical, N, K, contract="canonical", edges=[200],
                              tiers={"64-row blocks": row_blocks(canonical, 64)})
    assert r, r.explain()
    assert {199, 200, 201} <= set(r.ms)
    assert all(v.asked and v.passed for v in r.verdicts.values())
    # Every row of every call is compared: each M's calls hold M rows (front/back/seeded, reversed,
    # interleaved, views), every row in turn adds calls at M <= 8.
    assert r.verdicts["batch"].comparisons > 4 * sum(r.ms) * (len(inv_module.NEEDLES) + 1)


# The controls at the command's defaults (every M 1..130, every needle, every position): each fails
# its own verdict at the M where it breaks, and nothing else breaks first.
@pytest.mark.parametrize("fn, verdict, first_m", [
    (split_k_by_m, "batch", 9),       # two K pieces from M = 9
    (row_order, "batch", 2),          # the needle's copy at the back (row 1) is the first rotated row
    (tier_switch, "batch", 17),       # another association above M = 16
    (row_copy, "batch", 4),           # the first call with a filler row (M = 2, 3: needles only)
    (seed_tier_break, "batch", 17),   # the seed's skinny body below 17 rows, its tile body above
])
def test_each_control_fails_its_verdict_at_its_m_at_the_defaults(fn, verdict, first_m):
    r = w8a16check.invariance(fn, N, K)
    assert not r and r.verdicts["run-to-run"].passed, r.explain()
    v = r.verdicts[verdict]
    assert not v.passed and v.first.m == first_m and v.failing_ms[0] == first_m, r.explain()
    assert r.first_failure is v.first and v.first.got != v.first.want
    assert str(first_m) in r.explain() and "FAIL" in r.explain()
    if fn is row_order:
        assert v.first.position == "back" and v.first.row == 1
    if fn is row_copy:  # the needle rows are right: a filler row, held to its own M = 1 bytes, shows it
        assert "(filler)" in v.first.position and "pool" in v.first.against


def test_a_nondeterministic_kernel_fails_run_to_run_at_m_1():
    r = w8a16check.invariance(Nondeterministic(), N, K)
    v = r.verdicts["run-to-run"]
    assert not r and not v.passed and v.first.m == 1 and "repeated" in v.first.position, r.explain()
    assert r.first_failure.verdict == "run-to-run"


def test_the_gemv_part_adds_the_gemv_order_needle_and_holds_the_gemv_contract():
    def gemv(a, w, s):
        return _core.gemm(np.ascontiguousarray(a), w, s, contract="gemv")
    r = w8a16check.invariance(gemv, N, K, m_values=range(1, 5), entry_kind="gemv", contract="gemv")
    assert r, r.explain()
    assert r.verdicts["contract"].comparisons == len(inv_module.NEEDLES) + 2  # + pair order + GEMV order
    assert "gemv_order(seed=" in r.text or r.verdicts["batch"].passed
    # The GEMV's own contract is not the tensor-core one: canonical's tc part fails it at M = 1.
    r = w8a16check.invariance(gemv, N, K, m_values=[1], contract="canonical")
    assert not r and r.first_failure.verdict == "contract"


def test_repeats_1_does_not_ask_run_to_run():
    r = w8a16check.invariance(Nondeterministic(), N, K, m_values=[1, 2], repeats=1, positions=("front",))
    assert not r.verdicts["run-to-run"].asked


def test_named_contracts_and_their_text_form():
    with pytest.raises(ValueError, match="gemv"):  # the GEMV's name, asked of the tensor-core part
        w8a16check.invariance(canonical, N, K, m_values=[1], contract="gemv")
    r = w8a16check.invariance(canonical, N, K, m_values=[1, 2], contract="seed-tile", contract_part="tc")
    assert r.verdicts["contract"].asked and r.verdicts["contract"].comparisons == len(inv_module.NEEDLES) + 1
    r = w8a16check.invariance(seed_tier_break, N, K, m_values=range(1, 17), contract="seed-skinny")
    assert r, r.explain()
    text = _core.format_contract("canonical")
    assert w8a16check.invariance(canonical, N, K, m_values=[1, 2], contract=text)


def test_reference_callable_is_the_contract():
    def ref(needle, w, s):
        return invariant(needle.reshape(1, -1), w, s)[0]
    assert w8a16check.invariance(invariant, N, K, m_values=range(1, 10), reference=ref)
    r = w8a16check.invariance(tier_switch, N, K, m_values=range(1, 10), reference=lambda n_, w, s: canonical(
        n_.reshape(1, -1), w, s)[0])
    assert r.verdicts["batch"].passed and not r.verdicts["contract"].passed
    assert r.verdicts["contract"].first.against == "the reference callable"
    with pytest.raises(RuntimeError, match="reference raised ZeroDivisionError"):
        w8a16check.invariance(invariant, N, K, m_values=[1], reference=lambda n_, w, s: 1 / 0)
    with pytest.raises(ValueError, match="not uint16"):
        w8a16check.invariance(invariant, N, K, m_values=[1], reference=lambda n_, w, s: np.zeros(3, np.uint16))


def test_positions_each_catch_a_layout_dependence():
    def pitch_dependent(a, w, s):  # a kernel that takes another path for a padded A
        c = invariant(a, w, s)
        return c if a.flags.c_contiguous else c ^ np.uint16(1)
    r = w8a16check.invariance(pitch_dependent, N, K, m_values=[1, 2, 3], positions=("views",))
    # M = 2: numpy calls a one-row view C-contiguous whatever its pitch, so this kernel breaks from 2.
    assert not r and r.first_failure.position.startswith("pitches a=") and r.first_failure.m == 2, r.explain()
    assert w8a16check.invariance(pitch_dependent, N, K, m_values=[1, 2, 3],
                                 positions=("front", "back", "seeded", "every-row", "reversed", "interleaved"))

    def offset_dependent(a, w, s):  # another path when A does not start its buffer
        c = invariant(a, w, s)
        base = a.base if a.base is not None else a
        return c if a.__array_interface__["data"][0] == base.__array_interface__["data"][0] else c ^ np.uint16(1)
    r = w8a16check.invariance(offset_dependent, N, K, m_values=[1, 2], positions=("views",))
    assert not r and "views at A+" in r.first_failure.position, r.explain()


# ---- save and replay ----

def test_a_saved_failure_replays(tmp_path):
    r = w8a16check.invariance(split_k_by_m, N, K, m_values=range(1, 12))
    path = r.save(tmp_path / "split.npz")
    again = w8a16check.invariance.replay(path, split_k_by_m)
    assert not again and again.first_failure.m == 9 and again.first_failure.verdict == "batch", again.explain()
    assert again.first_failure.got == r.first_failure.got and again.first_failure.want == r.first_failure.want
    assert w8a16check.invariance.replay(path, invariant)  # the fixed kernel passes the same call
    c = w8a16check.invariance(invariant, N, K, m_values=[1], contract="canonical")
    cpath = c.save(tmp_path / "contract.npz")
    assert not w8a16check.invariance.replay(cpath, invariant) and w8a16check.invariance.replay(cpath, canonical)
    nd = w8a16check.invariance(Nondeterministic(), N, K, m_values=[1])
    assert not w8a16check.invariance.replay(nd.save(tmp_path / "nd.npz"), Nondeterministic())
    rc = w8a16check.invariance(row_copy, N, K, m_values=range(1, 6))
    assert not w8a16check.invariance.replay(rc.save(tmp_path / "rc.npz"), row_copy)
    with pytest.raises(ValueError, match="nothing failed"):
        w8a16check.invariance(invariant, N, K, m_values=[1]).save(tmp_path / "none.npz")


# ---- tiers: other dispatches of the same kernel, held to the plurality ----

def test_a_tier_of_the_same_bytes_passes_on_every_call():
    m_values = range(1, 20)
    r = w8a16check.invariance(invariant, N, K, m_values=m_values, tiers={"8-row blocks": row_blocks(invariant, 8)})
    v = r.verdicts["tier"]
    assert r and v.asked and v.passed and v.failing_ms == [] and v.first is None, r.explain()
    # Per needle and M: fn's and the tier's C, all of it.
    assert v.comparisons == 2 * 19 * (len(inv_module.NEEDLES) + 1), r.explain()
    assert "tiers '8-row blocks' beside 'fn'" in r.explain()
    tiers = [("8-row blocks", row_blocks(invariant, 8)), ("1-row blocks", row_blocks(invariant, 1))]
    r = w8a16check.invariance(invariant, N, K, m_values=m_values, positions=("views",), tiers=tiers)
    assert r and r.verdicts["tier"].comparisons == 3 * 19 * (len(inv_module.NEEDLES) + 1), r.explain()
    for none in (None, {}, []):
        r = w8a16check.invariance(invariant, N, K, m_values=[1, 2], tiers=none)
        assert r and not r.verdicts["tier"].asked and r.verdicts["tier"].comparisons == 0
        assert "tier        not asked" in r.explain() and r.tiers == []


def test_a_tier_split_from_m_9_fails_at_m_9(tmp_path):
    r = w8a16check.invariance(invariant, N, K, m_values=range(1, 20), tiers={"halves": halves_from_9},
                              label="whole K")
    v = r.verdicts["tier"]
    assert not r and r.verdicts["batch"].passed and r.verdicts["run-to-run"].passed, r.explain()
    assert v.first.m == 9 and v.failing_ms == list(range(9, 20)), r.explain()
    assert r.first_failure is v.first
    # Two answers tie: the first in sweep order (fn) stands in, and the text says so.
    assert v.first.position.startswith("halves") and "whole K" in v.first.against and "tie" in v.first.against
    # got is the tier's bits and want fn's, at the element named, of the call the failure saved.
    with np.load(r.save(tmp_path / "halves.npz")) as z:
        a, w, s = z["a"], z["w"], z["s"]
    assert a.shape == (9, K)
    assert v.first.got == int(halves_from_9(a, w, s)[v.first.row, v.first.column])
    assert v.first.want == int(invariant(a, w, s)[v.first.row, v.first.column])


def test_the_odd_one_among_three_is_the_one_named():
    tiers = {"8-row blocks": row_blocks(invariant, 8), "rotated": rotated_half}
    r = w8a16check.invariance(invariant, N, K, m_values=range(1, 4), tiers=tiers)
    v = r.verdicts["tier"]
    assert not r and v.first.m == 1 and v.first.position.startswith("rotated"), r.explain()
    assert "plurality of 3" in v.first.against
    # A tier that writes no output is never a PASS: it differs from fn's (checked non-zero) bytes.
    r = w8a16check.invariance(invariant, N, K, m_values=[1], tiers={"zeros": lambda a, w, s: np.zeros(
        (a.shape[0], N), np.uint16)})
    assert not r and r.verdicts["tier"].first.m == 1


def test_a_tier_in_the_json_form():
    r = w8a16check.invariance(invariant, N, K, m_values=range(1, 12), tiers={"halves": halves_from_9},
                              label="whole K")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["pass"] is False and d["label"] == "whole K" and d["tiers"] == ["halves"]
    t = d["verdicts"]["tier"]
    assert t["asked"] is True and t["pass"] is False and t["failing_ms"] == [9, 10, 11]
    f = r.verdicts["tier"].first
    assert t["first"] == {"verdict": "tier", "m": 9, "position": f.position, "row": f.row, "column": f.column,
                          "got": f.got, "want": f.want, "against": f.against, "error": "", "what": f.what}
    d = json.loads(json.dumps(w8a16check.invariance(invariant, N, K, m_values=[1]).to_dict()))
    assert d["verdicts"]["tier"]["asked"] is False and d["verdicts"]["tier"]["pass"] is True
    assert d["tiers"] == [] and d["label"] == "fn"


def test_a_saved_tier_failure_replays_through_both_callables(tmp_path):
    tiers = {"halves": halves_from_9}
    r = w8a16check.invariance(invariant, N, K, m_values=range(1, 12), tiers=tiers)
    path = r.save(tmp_path / "tier.npz")
    assert r.first_failure.verdict == "tier"
    again = w8a16check.invariance.replay(path, invariant, tiers=tiers)
    f = again.first_failure
    assert not again and f.verdict == "tier" and f.m == 9, again.explain()
    assert (f.row, f.column, f.got, f.want) == (r.first_failure.row, r.first_failure.column,
                                                r.first_failure.got, r.first_failure.want)
    assert again.tiers == ["halves"] and not again.verdicts["batch"].asked
    assert w8a16check.invariance.replay(path, invariant, tiers={"halves": invariant})  # the tier fixed
    assert w8a16check.invariance.replay(path, invariant, tiers=[("halves", row_blocks(invariant, 4))])
    with pytest.raises(ValueError, match="replay needs fn and tiers"):
        w8a16check.invariance.replay(path, invariant)


# ---- one engine: the CLI and Python agree ----

def test_python_and_the_cli_sweep_the_same_needles_and_positions():
    r = w8a16check.invariance(canonical, N, K, m_values=range(1, 4))
    assert r.needles == ["fold_ties", "cancelling_steps", "wide_exponents", "nan_codes"]
    assert "pair_order(seed=" in r.text or r
    assert inv_module.POSITIONS == ("front", "back", "seeded", "every-row", "reversed", "interleaved", "views")
    for line in ("run-to-run: PASS", "batch: PASS", "tier: not asked", "contract: not asked"):
        assert line in r.text, r.text


# ---- bad input: an error naming the call, never a truthy result ----

def test_bad_callables_raise_naming_the_call():
    def raises(a, w, s):
        if a.shape[0] == 3:
            raise ZeroDivisionError("boom")
        return invariant(a, w, s)
    with pytest.raises(RuntimeError, match=r"M=3.*ZeroDivisionError: boom"):
        w8a16check.invariance(raises, N, K, m_values=range(1, 5))
    with pytest.raises(ValueError, match=r"M=1.*shape \(1, 15\)"):
        w8a16check.invariance(lambda a, w, s: invariant(a, w, s)[:, :15], N, K, m_values=[1])
    with pytest.raises(TypeError, match="dtype float32"):
        w8a16check.invariance(lambda a, w, s: invariant(a, w, s).astype(np.float32), N, K, m_values=[1])
    with pytest.raises(TypeError, match="not a numpy array"):
        w8a16check.invariance(lambda a, w, s: invariant(a, w, s).tolist(), N, K, m_values=[1])
    with pytest.raises(ValueError, match="NaN in every element"):
        w8a16check.invariance(lambda a, w, s: np.full((a.shape[0], N), 0x7FC0, np.uint16), N, K, m_values=[1])
    with pytest.raises(ValueError, match="zero in every element"):
        w8a16check.invariance(lambda a, w, s: np.zeros((a.shape[0], N), np.uint16), N, K, m_values=[1])
    with pytest.raises(TypeError, match="callable"):
        w8a16check.invariance(None, N, K)


def test_writes_to_inputs_are_refused():
    def writes_a_padding(a, w, s):
        if a.base is not None and a.base.size > a.size:  # the buffer A is a view of: its last row's padding
            a.base.setflags(write=True)
            a.base.reshape(-1)[-1] = 0
        return invariant(a, w, s)
    with pytest.raises(RuntimeError, match="wrote into A"):
        w8a16check.invariance(writes_a_padding, N, K, m_values=[1, 2])

    def writes_w(a, w, s):
        w.setflags(write=True)
        w[0, 0] ^= 1  # a toggle: even calls put it back, so W is checked after every call
        return invariant(a, w, s)
    with pytest.raises(RuntimeError, match=r"M=1.*wrote into W or S"):
        w8a16check.invariance(writes_w, N, K, m_values=[1, 2])

    def writes_through_numpy(a, w, s):
        a[0, 0] = 0  # read-only: numpy refuses, and that is fn raising
        return invariant(a, w, s)
    with pytest.raises(RuntimeError, match=r"M=1.*raised ValueError"):
        w8a16check.invariance(writes_through_numpy, N, K, m_values=[1])


def test_bad_tiers_raise_naming_the_tier():
    ok = row_blocks(invariant, 8)
    for tiers, exc, match in [
        ({"x": 3}, TypeError, "tier 'x' must be callable"),
        ([("x", ok), ("x", invariant)], ValueError, "tier 'x' is named twice"),
        ({"fn": ok}, ValueError, "tier 'fn' has fn's label"),
        (ok, TypeError, "tiers must be a mapping"),
        ("x", TypeError, "tiers must be a mapping"),
        (3, TypeError, "tiers must be a mapping"),
        ([ok], TypeError, r"tiers\[0\] must be a \(name, callable\) pair"),
        ([("x", ok, 1)], TypeError, r"tiers\[0\] must be a \(name, callable\) pair"),
        ({"": ok}, TypeError, "name must be a non-empty string"),
        ({1: ok}, TypeError, "name must be a non-empty string"),
    ]:
        with pytest.raises(exc, match=match):
            w8a16check.invariance(invariant, N, K, m_values=[1], tiers=tiers)
    with pytest.raises(ValueError, match="tier 'k1' has fn's label"):
        w8a16check.invariance(invariant, N, K, m_values=[1], label="k1", tiers={"k1": ok})
    with pytest.raises(TypeError, match="label"):
        w8a16check.invariance(invariant, N, K, m_values=[1], label="", tiers={"x": ok})

    def raises_at_3(a, w, s):
        if a.shape[0] == 3:
            raise ZeroDivisionError("boom")
        return invariant(a, w, s)
    for tier, exc, match in [
        (raises_at_3, RuntimeError, r"tier 't' at M=3 raised ZeroDivisionError: boom"),
        (lambda a, w, s: invariant(a, w, s)[:, :15], ValueError, r"tier 't' at M=1.*shape \(1, 15\)"),
        (lambda a, w, s: invariant(a, w, s).astype(np.float32), TypeError, r"tier 't' at M=1.*dtype float32"),
        (lambda a, w, s: invariant(a, w, s).tolist(), TypeError, r"tier 't' at M=1.*not a numpy array"),
        (lambda a, w: invariant(a, w, w), RuntimeError, r"tier 't' at M=1.*raised TypeError"),
    ]:
        with pytest.raises(exc, match=match):
            w8a16check.invariance(invariant, N, K, m_values=range(1, 5), tiers={"t": tier})

    def writes_w(a, w, s):
        w.setflags(write=True)
        w[0, 0] ^= 1
        return invariant(a, w, s)
    with pytest.raises(RuntimeError, match=r"tier 't' at M=1.*wrote into W or S"):
        w8a16check.invariance(invariant, N, K, m_values=[1], tiers={"t": writes_w})


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(m_values=[]), ValueError, "M range is empty"),
    (dict(m_values=[0, 1]), ValueError, ">= 1"),
    (dict(m_values=[1.5]), TypeError, "integers"),
    (dict(m_values=[2 ** 40]), ValueError, "below 2"),
    (dict(m_values=[2 ** 31]), ValueError, "largest call: m=2147483648 must be in"),
    (dict(positions=("middle",)), ValueError, "positions"),
    (dict(positions=("padded",)), ValueError, "positions"),
    (dict(needles=("no_such",)), ValueError, "needles: 'no_such' is no distribution"),
    (dict(needles=()), ValueError, "needles"),
    (dict(entry_kind="mma"), ValueError, "entry_kind"),
    (dict(entry_kind="tc", contract_part="gemv"), ValueError, "disagree"),
    (dict(contract="canonical", reference=invariant), ValueError, "not both"),
    (dict(contract="no-such-contract", m_values=[1]), ValueError, "no-such-contract"),
    (dict(backend="cupy"), ValueError, "backend"),
    (dict(repeats=0), ValueError, "repeats"),
    (dict(timeout=-1), ValueError, "timeout"),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        w8a16check.invariance(invariant, N, K, **kwargs)


def test_bad_shapes():
    with pytest.raises(ValueError, match="multiple of 128"):
        w8a16check.invariance(invariant, N, 200)
    with pytest.raises(ValueError, match="n must be"):
        w8a16check.invariance(invariant, 0, K)
    with pytest.raises(TypeError, match="n must be an integer"):
        w8a16check.invariance(invariant, 16.0, K)
    calls = []
    with pytest.raises(ValueError, match="multiply-adds, past the work limit"):  # refused before fn runs
        w8a16check.invariance(lambda a, w, s: calls.append(1), 1 << 14, 1 << 14, m_values=[1000])
    assert calls == []


def test_a_hang_is_bounded_by_the_timeout():
    def hangs(a, w, s):
        time.sleep(30)  # a daemon thread: left sleeping, never joined
    t = time.time()
    with pytest.raises(TimeoutError, match=r"M=1.*0\.2 s"):
        w8a16check.invariance(hangs, N, K, m_values=[1], timeout=0.2)
    assert time.time() - t < 5
    assert w8a16check.invariance(invariant, N, K, m_values=[1, 2], timeout=30)


# ---- torch; Triton ----

def test_torch_backend():
    torch = pytest.importorskip("torch", reason="torch is not installed here: the torch backend is not exercised")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the torch backend's CUDA path is not exercised")

    def fn(a, w, s):  # the invariant stand-in on host bits, returned as a CUDA bfloat16 tensor
        c = invariant(a.view(torch.int16).cpu().numpy().view(np.uint16), w.cpu().numpy(), s.cpu().numpy())
        return torch.from_numpy(c.view(np.int16)).cuda().view(torch.bfloat16)
    assert w8a16check.invariance(fn, N, K, m_values=range(1, 5), backend="torch")
    r = w8a16check.invariance(fn, N, K, m_values=range(1, 5), backend="torch", tiers={"again": fn})
    assert r and r.verdicts["tier"].comparisons == 2 * 4 * (len(inv_module.NEEDLES) + 1), r.explain()
    with pytest.raises(ValueError, match=r"tier 'on cpu' at M=1.*a tensor on cpu, not on cuda"):
        w8a16check.invariance(fn, N, K, m_values=[1], backend="torch",
                              tiers={"on cpu": lambda a, w, s: fn(a, w, s).cpu()})


def test_triton_example():
    pytest.importorskip("triton", reason="triton is not installed here: examples/triton is run on a GPU machine "
                        "(examples/README.md)")
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the Triton kernel cannot run")
    spec = importlib.util.spec_from_file_location("w8a16_triton", REPO / "examples" / "triton" / "w8a16_triton.py")
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    r = w8a16check.invariance(lambda a, w, s: kernel.w8a16_gemm(a, w, s, split_k=1), 256, 512,
                              m_values=range(1, 20), backend="torch")
    assert r.verdicts["run-to-run"].passed and r.verdicts["batch"].passed, r.explain()
