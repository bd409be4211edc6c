# SPDX-License-Identifier: MIT OR Apache-2.0
# Batch invariance of any kernel a user brings from Python: the engine is `w8a16check invariance`'s
# own (properties/invariance.hpp run_invariance_callable through _core); this file runs the callable
# on the backend, checks what it returns and what it leaves of its inputs, and keeps the result.
"""``w8a16check.invariance(fn, n, k)``: does a row's output depend on the row alone?

NUMERICS.md 2.1 defines C[m][n] from row m of A, W and S alone, so a row of A must give the same
bytes whatever else is in the call. A kernel whose reduction depends on M (a K split chosen by the
batch size, a tier switched at some M), on where the row sits, or on the run (atomics) breaks that.
The sweep is the C++ one of ``w8a16check invariance``: for each needle (the golden distributions
fold_ties, cancelling_steps, wide_exponents and nan_codes, whose bytes show the fold's rounding, the
order of the steps and windows, wide exponents and the NaN decode; for ``entry_kind="gemv"`` also the
GEMV order needle) it calls ``fn(a, w, s) -> c`` at every M, the needle at the front, the back, a
seeded row and every row in turn at M <= 8, in reversed and interleaved orders and at another pitch
and view offset, among filler rows drawn from a pool whose rows each ran alone once. Every row of
every call is compared with its own M = 1 bytes, raw bits, never a tolerance. Verdicts:

  run-to-run  the same call repeated gives the same bytes, all of C
  batch       every row of every call gives its M = 1 bytes (the needle's and each filler's)
  tier        (only with ``tiers={name: callable}``) per M, all of C of fn and of each tier (the same
              kernel forced onto another body, split, tile or layout) against their plurality
  contract    (only with ``contract=NAME`` or ``reference=callable``) each needle's M = 1 bytes equal
              the contract's (the C++ emulation): "invariant but wrong" is its own verdict

A call that hangs is the caller's to bound: ``timeout=`` runs each call in a daemon thread and
raises TimeoutError when it overruns (the thread cannot be killed; it is left running).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from . import _core

VERDICTS = ("run-to-run", "batch", "tier", "contract")  # the C++ sweep's order
POSITIONS = tuple(_core.invariance_positions)           # front, back, seeded, every-row, reversed, ...
NEEDLES = tuple(_core.invariance_needles)               # the default needles, as the CLI's
ENTRY_KINDS = ("tc", "gemv")
DEFAULT_M_MAX = int(_core.invariance_default_m_bound)   # past a 128-row tile: its second row of CTAs
A_PAD_BITS = 0xFFC1  # A's pitch tail and what lies before a view: a NaN, so a read past K shows it


# ---- results -------------------------------------------------------------------------------------

@dataclass
class Failure:
    """The first failure of a verdict. ``error`` set: the call gave no comparable bytes."""
    verdict: str
    m: int
    position: str
    row: int = 0
    column: int = 0
    got: int = 0
    want: int = 0
    against: str = ""
    error: str = ""
    what: str = ""  # the call: who ran it, the shape, the pitch, the needle

    def __str__(self) -> str:
        t = f"{self.verdict} at M={self.m} {self.position}"
        if self.error:
            return f"{t}: {self.error}"
        return (f"{t} row {self.row} column {self.column}: got 0x{self.got:04x}, want 0x{self.want:04x} "
                f"({self.against})")


@dataclass
class Verdict:
    name: str
    asked: bool = True
    applicable: bool = True
    comparisons: int = 0
    failures: int = 0
    failing_ms: list = field(default_factory=list)
    first: Failure | None = None

    @property
    def passed(self) -> bool:
        # A verdict that compared nothing proves nothing: FAIL, as the C++ sweep says.
        return (not self.asked) or (not self.applicable) or (self.comparisons > 0 and self.failures == 0)

    def line(self) -> str:
        head = f"{self.name:<11}"
        if not self.asked:
            return f"{head} not asked"
        if not self.applicable:
            return f"{head} n/a (nothing to compare)"
        if self.comparisons == 0 and self.failures == 0:
            return f"{head} FAIL: compared nothing"
        if self.passed:
            return f"{head} PASS ({self.comparisons} compared)"
        ms = ", ".join(str(m) for m in self.failing_ms[:12]) + (", ..." if len(self.failing_ms) > 12 else "")
        return f"{head} FAIL ({self.failures} of {self.comparisons} differ; at M {ms}): first at {self.first}"


class InvarianceResult:
    """Truthy only when every verdict asked for passes. ``verdicts``: name -> Verdict (each asked or
    not); ``first_failure``: the first failing verdict's first failure (in VERDICTS order), or None;
    ``text``: the C++ report, as `w8a16check invariance` prints it."""

    def __init__(self, n, k, ms, seed, backend, verdicts, saved, contract_name=None, label="fn", tiers=(),
                 text="", launches=0, needles=(), entry_kind="tc"):
        self.n, self.k, self.ms, self.seed, self.backend = n, k, list(ms), seed, backend
        self.verdicts: dict[str, Verdict] = verdicts
        self.contract = contract_name
        self.label, self.tiers = label, list(tiers)  # fn's name and its tiers' names (the tier verdict)
        self.text, self.launches, self.needles, self.entry_kind = text, launches, list(needles), entry_kind
        self._saved = saved  # verdict -> the operands of its first failure (save/replay)

    def __bool__(self) -> bool:
        return all(v.passed for v in self.verdicts.values())

    @property
    def first_failure(self) -> Failure | None:
        for name in VERDICTS:
            v = self.verdicts.get(name)
            if v is not None and v.asked and not v.passed and v.first is not None:
                return v.first
        return None

    def first_failing_m(self, verdict: str) -> int | None:
        v = self.verdicts[verdict]
        return v.first.m if v.first is not None else None

    def explain(self) -> str:
        head = (f"invariance N={self.n} K={self.k} M {_ms_text(self.ms)} seed={self.seed} backend={self.backend}"
                + (f" contract={self.contract}" if self.contract else "")
                + (f" tiers {', '.join(map(repr, self.tiers))} beside {self.label!r}" if self.tiers else ""))
        lines = [head] + ["  " + self.verdicts[name].line() for name in VERDICTS if name in self.verdicts]
        lines.append("  verdict: " + ("PASS" if self else "FAIL"))
        return "\n".join(lines)

    __str__ = explain

    def to_dict(self) -> dict:
        return {"n": self.n, "k": self.k, "ms": self.ms, "seed": self.seed, "backend": self.backend,
                "entry_kind": self.entry_kind, "needles": self.needles, "launches": self.launches,
                "contract": self.contract, "label": self.label, "tiers": self.tiers, "pass": bool(self),
                "verdicts": {k: {"asked": v.asked, "applicable": v.applicable, "pass": v.passed,
                                 "comparisons": v.comparisons, "failures": v.failures,
                                 "failing_ms": v.failing_ms, "first": asdict(v.first) if v.first else None}
                             for k, v in self.verdicts.items()}}

    def save(self, path, verdict: str | None = None) -> str:
        """Writes the call of a failure (the first failing verdict's, or ``verdict``'s) as an npz that
        ``invariance.replay(path, fn)`` runs again (a tier's: ``replay(path, fn, tiers=...)``).
        ValueError when nothing failed."""
        name = verdict or (self.first_failure.verdict if self.first_failure else None)
        if name is None or name not in self._saved:
            raise ValueError("invariance result: nothing failed" + (f" under {verdict}" if verdict else "")
                             + ", so there is nothing to save")
        d = self._saved[name]
        meta = {"verdict": name, "m": d["m"], "pitch": d["pitch"], "a_offset": d["a_offset"], "n": self.n,
                "k": self.k, "seed": self.seed, "contract": self.contract, "label": self.label,
                "tiers": self.tiers, "which": d["which"], "failure": asdict(self.verdicts[name].first)}
        np.savez_compressed(path, a=d["a"], w=d["w"], s=d["s"], want=d["want"],
                            meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        return str(path)


def _ms_text(ms) -> str:
    out, i, ms = [], 0, sorted(ms)
    while i < len(ms):
        j = i
        while j + 1 < len(ms) and ms[j + 1] == ms[j] + 1:
            j += 1
        out.append(str(ms[i]) + (f"..{ms[j]}" if j > i else ""))
        i = j + 1
    return ", ".join(out) or "none"


# ---- calling the user's function -----------------------------------------------------------------

class _Caller:
    """Moves operands to the backend, calls fn, validates and converts its result to uint16 bits, and
    checks that fn left A (with its padding), W and S as they were."""

    def __init__(self, fn, n, backend, device, timeout, who="fn"):
        if not callable(fn):
            raise TypeError(f"invariance: {who} must be callable fn(a, w, s) -> c, got {type(fn).__name__}")
        if backend not in ("numpy", "torch"):
            raise ValueError(f"invariance: backend must be 'numpy' or 'torch', got {backend!r}")
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"invariance: timeout must be a positive number of seconds or None, got {timeout!r}")
        self.fn, self.n, self.backend, self.timeout, self.who = fn, n, backend, timeout, who
        self._src = (None, None)
        if backend == "torch":
            try:
                import torch
            except ImportError as e:
                raise RuntimeError("invariance: backend='torch' needs torch, which does not import here") from e
            self.torch = torch
            self.device = torch.device(device or "cuda")

    def _operands(self, w: np.ndarray, s: np.ndarray):
        """W and S of this needle on the backend, made once per needle (the engine hands the same
        arrays to every call of one needle)."""
        if self._src[0] is w and self._src[1] is s:
            return
        self._src = (w, s)
        self.w_host, self.s_host = w.copy(), s.copy()
        if self.backend == "numpy":
            self.w, self.s = w.copy(), s.copy()
            self.w.flags.writeable = False
            self.s.flags.writeable = False
        else:
            self.w = self.torch.from_numpy(w.copy()).to(self.device)
            self.s = self.torch.from_numpy(s.copy()).to(self.device)
            self.w0, self.s0 = self.w.clone(), self.s.clone()  # on the device: compared after every call

    def _convert(self, c, m: int, what: str) -> np.ndarray:
        want = (m, self.n)
        if self.backend == "numpy":
            if not isinstance(c, np.ndarray):
                raise TypeError(f"invariance: {what} returned {type(c).__name__}, not a numpy array "
                                "(uint16 BF16 bits [M, N])")
            if c.dtype not in (np.uint16, np.int16):
                raise TypeError(f"invariance: {what} returned dtype {c.dtype}, not uint16/int16 BF16 bits")
            if c.shape != want:
                raise ValueError(f"invariance: {what} returned shape {c.shape}, not {want}")
            return np.array(c.view(np.uint16), copy=True)  # fn may reuse its buffer on the next call
        torch = self.torch
        if not torch.is_tensor(c):
            raise TypeError(f"invariance: {what} returned {type(c).__name__}, not a torch tensor")
        ok = {torch.bfloat16, torch.int16} | ({torch.uint16} if hasattr(torch, "uint16") else set())
        if c.dtype not in ok:
            raise TypeError(f"invariance: {what} returned dtype {c.dtype}, not bfloat16/int16/uint16")
        if c.device != self.w.device:
            raise ValueError(f"invariance: {what} returned a tensor on {c.device}, not on {self.w.device}")
        if tuple(c.shape) != want:
            raise ValueError(f"invariance: {what} returned shape {tuple(c.shape)}, not {want}")
        # .cpu() waits for the kernel; the bits travel as int16 (numpy has no bfloat16).
        return c.view(torch.int16).cpu().numpy().view(np.uint16).copy()

    def __call__(self, a_full: np.ndarray, a_offset: int, k: int, w: np.ndarray, s: np.ndarray,
                 what: str) -> np.ndarray:
        """fn on A [M, K], a view of rows of `pitch` elements starting `a_offset` elements into a
        buffer whose every element outside A is NaN bits."""
        self._operands(w, s)
        m, pitch = a_full.shape
        expect = np.full(a_offset + m * pitch, A_PAD_BITS, np.uint16)
        expect[a_offset:] = a_full.ravel()
        buf = expect.copy()
        if self.backend == "numpy":
            buf.flags.writeable = False  # writes through numpy fail; a forced one is found below
            a = buf[a_offset:].reshape(m, pitch)[:, :k]
        else:
            buf = self.torch.from_numpy(buf.view(np.int16)).to(self.device).view(self.torch.bfloat16)
            a = buf[a_offset:].view(m, pitch)[:, :k]

        def work():
            return self._convert(self.fn(a, self.w, self.s), m, what)

        try:
            c = work() if self.timeout is None else _with_timeout(work, self.timeout, what)
        except (TypeError, ValueError) as e:
            if str(e).startswith("invariance:"):
                raise
            raise RuntimeError(f"invariance: {what} raised {type(e).__name__}: {e}") from e
        except TimeoutError:
            raise
        except Exception as e:
            raise RuntimeError(f"invariance: {what} raised {type(e).__name__}: {e}") from e
        now = buf if self.backend == "numpy" else buf.view(self.torch.int16).cpu().numpy().view(np.uint16)
        if not np.array_equal(now, expect):
            raise RuntimeError(f"invariance: {what} wrote into A or its row padding (an input)")
        self.check_inputs_unchanged(what)
        return c

    def check_inputs_unchanged(self, what: str = "fn"):
        """After every call: a kernel that writes W or S (even one that writes them back later) is
        refused, since every later call would read other operands."""
        if self.backend == "numpy":
            same = np.array_equal(self.w, self.w_host) and np.array_equal(self.s.view(np.uint32),
                                                                          self.s_host.view(np.uint32))
        else:
            same = self.torch.equal(self.w, self.w0) and self.torch.equal(self.s.view(self.torch.int32),
                                                                          self.s0.view(self.torch.int32))
        if not same:
            raise RuntimeError(f"invariance: {what} wrote into W or S (an input): its results are not to be trusted")


def _with_timeout(work, timeout, what):
    box = {}

    def run():
        try:
            box["c"] = work()
        except BaseException as e:  # handed to the caller's thread
            box["e"] = e

    t = threading.Thread(target=run, daemon=True, name="w8a16check-invariance-call")
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError(f"invariance: {what} did not return within {timeout} s (its thread is left running)")
    if "e" in box:
        raise box["e"]
    return box["c"]


# ---- arguments -----------------------------------------------------------------------------------

def _m_list(m_values, edges):
    if isinstance(m_values, (str, bytes)) or isinstance(edges, (str, bytes)):
        raise TypeError("invariance: m_values and edges must be iterables of integers")
    m_values, edges = (None if m_values is None else list(m_values)), list(edges)
    for src in (() if m_values is None else m_values, edges):
        for m in src:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
                raise TypeError(f"invariance: M values and edges must be integers, got {m!r}")
    ms = set(range(1, DEFAULT_M_MAX + 1)) if m_values is None else {int(m) for m in m_values}
    extra = {int(e) + d for e in edges for d in (-1, 0, 1)}
    bad = sorted(m for m in ms if m < 1)
    if bad:
        raise ValueError(f"invariance: M values must be >= 1, got {bad}")
    ms |= {m for m in extra if m >= 1}
    if not ms:
        raise ValueError("invariance: the M range is empty (m_values): nothing would be compared")
    if max(ms) >= 2 ** 32:
        raise ValueError(f"invariance: M values must be below 2^32, got {max(ms)}")
    return sorted(ms)


def _names(values, allowed, what):
    """A non-empty tuple of names, each of `allowed` (None: any string; the engine names the bad one)."""
    if isinstance(values, str):
        values = (values,)
    values = tuple(values)
    unknown = [v for v in values if not isinstance(v, str) or (allowed is not None and v not in allowed)]
    if unknown or not values:
        raise ValueError(f"invariance: {what} must be a non-empty list of "
                         + (f"names of {allowed}" if allowed is not None else "golden distribution names")
                         + f", got {values}")
    return values


def _tier_list(tiers, label):
    """``tiers`` as [(name, callable)]: a mapping name -> callable or a sequence of (name, callable)
    pairs; [] for None or empty. Each name is a non-empty string, unique and not fn's ``label``,
    since a failure names both sides by name."""
    if isinstance(label, bool) or not isinstance(label, str) or not label:
        raise TypeError(f"invariance: label (fn's name in the tier verdict) must be a non-empty string, got {label!r}")
    if tiers is None:
        return []
    shape = "a mapping name -> callable or a sequence of (name, callable) pairs"
    if isinstance(tiers, Mapping):
        items = list(tiers.items())
    elif isinstance(tiers, (str, bytes)) or callable(tiers):
        raise TypeError(f"invariance: tiers must be {shape}, got {type(tiers).__name__}")
    else:
        try:
            items = list(tiers)
        except TypeError:
            raise TypeError(f"invariance: tiers must be {shape}, got {type(tiers).__name__}") from None
        for i, item in enumerate(items):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"invariance: tiers[{i}] must be a (name, callable) pair, got {item!r}")
        items = [tuple(item) for item in items]
    seen = set()
    for name, f in items:
        if isinstance(name, bool) or not isinstance(name, str) or not name:
            raise TypeError(f"invariance: a tier's name must be a non-empty string, got {name!r}")
        if name == label:
            raise ValueError(f"invariance: tier {name!r} has fn's label ({label!r}): a failure would name "
                             "the same kernel on both sides; rename the tier or pass label=")
        if name in seen:
            raise ValueError(f"invariance: tier {name!r} is named twice: a failure would not say which one")
        seen.add(name)
        if not callable(f):
            raise TypeError(f"invariance: tier {name!r} must be callable fn(a, w, s) -> c, got {type(f).__name__}")
    return items


def _is_nan(bits: np.ndarray) -> np.ndarray:
    return (bits & 0x7FFF) > 0x7F80


# ---- the sweep -----------------------------------------------------------------------------------

def invariance(fn, n: int, k: int, *, m_values=None, edges=(), positions=POSITIONS, needles=NEEDLES,
               seed: int = 0, contract: str | None = None, reference=None, repeats: int = 2,
               backend: str = "numpy", device: str | None = None, timeout: float | None = None,
               entry_kind: str | None = None, contract_part: str | None = None, tiers=None,
               label: str = "fn", threads: int = 0) -> InvarianceResult:
    """Holds ``fn(a, w, s) -> c`` to batch invariance (module docstring): raw bits, no tolerance.

    n, k: the shape (K a positive multiple of 128). m_values: the row counts (default 1..130);
    edges: M values where the caller's kernel changes its dispatch, each swept at -1, 0, +1.
    positions: a subset of POSITIONS for the needle (filler rows are compared in every call whatever
    is asked). needles: a subset of the golden distributions (default NEEDLES). entry_kind: "tc" (the
    tensor-core contract, the default) or "gemv" (the GEMV's: also the GEMV order needle);
    contract_part is its older name. contract: a contract name or its text form, held to the
    entry kind's part; reference: ``reference(needle uint16 [K], w, s) -> uint16 [N]`` instead.
    repeats: runs of each call for run-to-run (>= 2; 1 skips that verdict). backend "numpy": fn gets
    uint16 [M, K] (a read-only view), uint8 [N, K], float32 and returns uint16/int16 [M, N]; "torch":
    CUDA tensors (``device``), A as bfloat16, and returns a bfloat16/int16/uint16 tensor [M, N] on
    that device. tiers: a mapping name -> callable, or a sequence of (name, callable) pairs, each
    called as fn is (the same kernel forced onto another body, split, tile or layout): the tier
    verdict holds all of C of fn and each tier to their plurality at every M. label: fn's name
    there ("fn" by default); no tier may take it. threads: emulation threads (contract verdict).

    Bad input (fn or a tier not callable, a tier's name empty, repeated or fn's label, a shape, an
    empty M range, work past the default limits, a result of the wrong type, dtype, shape or device,
    NaN or zero in every element of every call, an input written) raises TypeError, ValueError or
    RuntimeError naming the call (a tier's names the tier); fn's or a tier's own exception is a
    RuntimeError naming the call it raised in. A hang is bounded by ``timeout`` (TimeoutError).
    """
    for name, v in (("n", n), ("k", k), ("seed", seed), ("repeats", repeats)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"invariance: {name} must be an integer, got {v!r}")
    if not 1 <= n < 2 ** 32:
        raise ValueError(f"invariance: n must be in 1 .. 2^32 - 1, got {n}")
    if k < 128 or k % 128 or k >= 2 ** 32:
        raise ValueError(f"invariance: k must be a positive multiple of 128, got {k}")
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"invariance: seed must be in 0 .. 2^64 - 1, got {seed}")
    if not 1 <= repeats <= 64:
        raise ValueError(f"invariance: repeats must be in 1 .. 64 (2 or more for run-to-run), got {repeats}")
    if entry_kind is not None and contract_part is not None and entry_kind != contract_part:
        raise ValueError(f"invariance: entry_kind={entry_kind!r} and contract_part={contract_part!r} disagree")
    part = entry_kind or contract_part or "tc"
    if part not in ENTRY_KINDS:
        raise ValueError(f"invariance: entry_kind must be 'tc' or 'gemv', got {part!r}")
    positions = _names(positions, POSITIONS, "positions")
    needles = _names(needles, None, "needles")  # any golden distribution; the engine refuses others
    if contract is not None and reference is not None:
        raise ValueError("invariance: give contract= or reference=, not both")
    if reference is not None and not callable(reference):
        raise TypeError("invariance: reference must be callable reference(needle, w, s) -> uint16 [N]")
    if contract is not None and not isinstance(contract, str):
        raise TypeError(f"invariance: contract must be a name or the text form, got {type(contract).__name__}")
    ms = _m_list(m_values, edges)
    tier_items = _tier_list(tiers, label)

    callers = [_Caller(fn, n, backend, device, timeout)]
    # Each tier its own copies of W and S, so that one that writes them is named, not fn.
    callers += [_Caller(f, n, backend, device, timeout, who=f"tier {name!r}") for name, f in tier_items]
    names = [label] + [name for name, _ in tier_items]
    seen = {"calls": 0, "all_nan": True, "all_zero": True}

    def call(which, a_full, a_offset, k_, w, s):
        m, pitch = a_full.shape
        who = "fn" if which == 0 else f"tier {names[which]!r}"
        what = (f"{who} at M={m}" + (f" (A pitch {pitch})" if pitch != k_ else "")
                + (f" (A at +{a_offset})" if a_offset else ""))
        c = callers[which](a_full, a_offset, k_, w, s, what)
        if which == 0:
            seen["calls"] += 1
            seen["all_nan"] &= bool(_is_nan(c).all())
            seen["all_zero"] &= not bool((c & 0x7FFF).any())
        return c

    ref_call = None
    if reference is not None:
        def ref_call(needle, w, s):
            try:
                want = np.asarray(reference(needle.copy(), w.copy(), s.copy()))
            except Exception as e:
                raise RuntimeError(f"invariance: reference raised {type(e).__name__}: {e}") from e
            if want.dtype not in (np.uint16, np.int16) or want.size != n:
                raise ValueError(f"invariance: reference returned {want.dtype} {want.shape}, not uint16 [{n}]")
            return np.ascontiguousarray(want.reshape(n).view(np.uint16))

    kinds = ["batch"] + (["run-to-run"] if repeats >= 2 else []) + (["tier"] if tier_items else []) \
        + (["contract"] if contract is not None or reference is not None else [])
    try:
        r = _core.invariance_callable(call, part, n, k, ms, int(seed), list(needles), kinds, list(positions),
                                      int(repeats), contract, ref_call, label, names[1:], threads)
    except ValueError as e:
        if str(e).startswith("invariance:"):
            raise
        raise ValueError(f"invariance: {e}") from None
    if seen["calls"] and seen["all_nan"]:
        raise ValueError(f"invariance: fn returned NaN in every element of all {seen['calls']} calls: not an "
                         "output whose invariance means anything")
    if seen["calls"] and seen["all_zero"]:
        raise ValueError(f"invariance: fn returned zero in every element of all {seen['calls']} calls: did it "
                         "write its output?")
    if r["error"]:
        raise RuntimeError(f"invariance: no verdict: {r['error']}")

    verdicts, saved = {}, {}
    for name in VERDICTS:
        v = r["verdicts"][name]
        first = None
        if v["first"] is not None:
            f = v["first"]
            first = Failure(name, int(f["m"]), f["position"], int(f["row"]), int(f["column"]), int(f["got"]),
                            int(f["want"]), f["against"], f["error"], f["what"])
            if f["operands"] is not None:
                o = f["operands"]
                saved[name] = {"m": int(o["m"]), "pitch": int(o["pitch"]), "a_offset": int(o["a_offset"]),
                               "which": names[int(o["which"])], "a": o["a"], "w": o["w"], "s": o["s"],
                               "want": o["want"]}
        verdicts[name] = Verdict(name, asked=bool(v["asked"]), applicable=bool(v["applicable"]),
                                 comparisons=int(v["comparisons"]), failures=int(v["failures"]),
                                 failing_ms=[int(m) for m in v["failing_ms"]], first=first)
    return InvarianceResult(n, k, r["ms"], seed, backend, verdicts, saved,
                            contract or ("reference" if reference is not None else None), label, names[1:],
                            r["text"], int(r["launches"]), needles, part)


def replay(path, fn, *, tiers=None, backend: str = "numpy", device: str | None = None,
           timeout: float | None = None, repeats: int = 2) -> InvarianceResult:
    """Runs a saved failure (``InvarianceResult.save``) through ``fn`` again: the one verdict, truthy
    when it now passes. batch: every row of the saved call against that row's bytes from fn alone
    (M = 1); run-to-run: the saved call repeated; contract: fn's bytes of the saved needle against
    the saved contract row; tier: the saved call through fn and each of ``tiers`` (as
    ``invariance``'s), all of C compared with fn's."""
    with np.load(path) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        a_full, w, s, want = z["a"], z["w"], z["s"], z["want"]
    n, k, m, name = meta["n"], meta["k"], meta["m"], meta["verdict"]
    label, offset = meta.get("label") or "fn", int(meta.get("a_offset", 0))
    call = _Caller(fn, n, backend, device, timeout)
    v = Verdict(name)
    f = None

    def differ(got, expect, against, row0=0):
        diff = np.flatnonzero(got.ravel() != expect.ravel())
        if not diff.size:
            return None
        r, col = divmod(int(diff[0]), n)
        return Failure(name, m, meta["failure"]["position"], row0 + r, col, int(got.ravel()[diff[0]]),
                       int(expect.ravel()[diff[0]]), against)

    if name == "tier":
        tier_items = _tier_list(tiers, label)
        if not tier_items:
            raise ValueError(f"invariance: the saved failure is the tier verdict's ({meta.get('which')!r} among "
                             f"{[label] + meta.get('tiers', [])}): replay needs fn and tiers={{name: callable}}")
        c = call(a_full, offset, k, w, s, f"fn at M={m} (replay)")
        for tname, tf in tier_items:
            t = _Caller(tf, n, backend, device, timeout, who=f"tier {tname!r}")(
                a_full, offset, k, w, s, f"tier {tname!r} at M={m} (replay)")
            v.comparisons += 1
            f = f or differ(t, c, f"tier {tname!r} against {label!r}")
    elif name == "contract":
        got = call(a_full[:, :k].copy(), 0, k, w, s, "fn at M=1 (replay)")[0]
        v.comparisons = 1
        f = differ(got, want, "the saved contract row")
    elif name == "run-to-run":
        first = call(a_full, offset, k, w, s, f"fn at M={m} (replay)")
        for _ in range(max(repeats, 2) - 1):
            again = call(a_full, offset, k, w, s, f"fn at M={m} (replay, repeated)")
            v.comparisons += 1
            f = f or differ(again, first, "the first run of the same call")
    else:
        c = call(a_full, offset, k, w, s, f"fn at M={m} (replay)")
        alone = {}
        for r in range(m):
            key = a_full[r, :k].tobytes()
            if key not in alone:
                alone[key] = call(a_full[r:r + 1, :k].copy(), 0, k, w, s, f"fn at M=1 (replay, row {r} alone)")[0]
            v.comparisons += 1
            f = f or differ(c[r], alone[key], f"row {r}'s M = 1 bytes", row0=r)
    if f is not None:
        v.failures, v.failing_ms, v.first = 1, [m], f
    verdicts = {x: (v if x == name else Verdict(x, asked=False)) for x in VERDICTS}
    return InvarianceResult(n, k, [m], meta["seed"], backend, verdicts, {}, meta.get("contract"), label,
                            meta.get("tiers", []) if name == "tier" else [])


# `w8a16check.invariance` is the function (the package re-exports it); replay rides on it so that
# `w8a16check.invariance.replay(path, fn)` reads as the brief of the feature: check, then replay.
invariance.replay = replay
invariance.InvarianceResult = InvarianceResult
