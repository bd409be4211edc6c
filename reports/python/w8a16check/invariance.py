# SPDX-License-Identifier: MIT OR Apache-2.0
# Batch invariance of any kernel a user brings from Python: the Python side of `w8a16check invariance`.
"""``w8a16check.invariance(fn, n, k)``: does a row's output depend on the row alone?

NUMERICS.md 2.1 defines C[m][n] from row m of A, W and S alone, so a row of A must give the same
bytes whatever else is in the call. A kernel whose reduction depends on M (a K split chosen by the
batch size, a tier switched at some M), on where the row sits, or on the run (atomics) breaks that.
``invariance`` calls ``fn(a, w, s) -> c`` with a *needle* row among seeded filler rows at every M
and compares raw bits, never with a tolerance. Verdicts, each PASS or FAIL with its first failure:

  run-to-run  the same call repeated gives the same bytes, all of C (M = 1 and every M's call)
  batch       the needle at the front, the back and a seeded position of every M, also in reversed
              and interleaved row orders and in a row-padded view of A, gives its M = 1 bytes
  tier        (only when asked: ``tiers={name: callable}``) each tier, the same kernel forced onto
              another body, split, tile or layout, gives fn's bytes, all of C, on every call of the
              batch sweep (one callable is one dispatch: its other dispatches are the caller's to name)
  contract    (only when asked: ``contract=NAME`` or ``reference=callable``) the M = 1 bytes equal
              the contract's (``_core.gemm`` emulation): "invariant but wrong" is its own verdict

This file needs numpy alone: ``_core`` is imported only for the contract verdict, so the file also
runs where the compiled module cannot load (a GPU machine with another Python), loaded by its path
(examples/triton/run_invariance.py shows how). The C++ ``w8a16check invariance`` does the same
sweep over the family's own entry points and bodies; this one is for kernels it cannot launch.

A call that hangs is the caller's to bound: ``timeout=`` runs each call in a daemon thread and
raises TimeoutError when it overruns (the thread cannot be killed; it is left running).
"""
from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

VERDICTS = ("run-to-run", "batch", "tier", "contract")  # the C++ sweep's order
# The batch verdict's calls: the needle's rows in natural order (front, back, seeded), the same rows
# reversed and interleaved, and A as a view of a wider (row-padded) buffer.
POSITIONS = ("front", "back", "seeded", "reversed", "interleaved", "padded")
DEFAULT_M_MAX = 130  # past a 128-row tile: its second row of CTAs starts at M = 129
A_PAD_BITS = 0xFFC1  # A's pitch tail: a NaN, so a kernel that reads past K shows it (as golden's bundles)


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
    comparisons: int = 0
    failures: int = 0
    failing_ms: list = field(default_factory=list)
    first: Failure | None = None

    @property
    def passed(self) -> bool:
        # A verdict that compared nothing proves nothing: FAIL, as the C++ sweep says.
        return (not self.asked) or (self.comparisons > 0 and self.failures == 0)

    def line(self) -> str:
        head = f"{self.name:<11}"
        if not self.asked:
            return f"{head} not asked"
        if self.comparisons == 0:
            return f"{head} FAIL: compared nothing"
        if self.passed:
            return f"{head} PASS ({self.comparisons} compared)"
        ms = ", ".join(str(m) for m in self.failing_ms[:12]) + (", ..." if len(self.failing_ms) > 12 else "")
        return f"{head} FAIL ({self.failures} of {self.comparisons} differ; at M {ms}): first at {self.first}"


class InvarianceResult:
    """Truthy only when every verdict asked for passes. ``verdicts``: name -> Verdict (each asked or
    not); ``first_failure``: the first failing verdict's first failure (in VERDICTS order), or None."""

    def __init__(self, n, k, ms, seed, backend, verdicts, saved, contract_name=None, label="fn", tiers=()):
        self.n, self.k, self.ms, self.seed, self.backend = n, k, list(ms), seed, backend
        self.verdicts: dict[str, Verdict] = verdicts
        self.contract = contract_name
        self.label, self.tiers = label, list(tiers)  # fn's name and its tiers' names (the tier verdict)
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
        ms = _ms_text(self.ms)
        lines = [f"invariance N={self.n} K={self.k} M {ms} seed={self.seed} backend={self.backend}"
                 + (f" contract={self.contract}" if self.contract else "")
                 + (f" tiers {', '.join(map(repr, self.tiers))} against {self.label!r}" if self.tiers else "")]
        lines += ["  " + self.verdicts[name].line() for name in VERDICTS if name in self.verdicts]
        lines.append("  verdict: " + ("PASS" if self else "FAIL"))
        return "\n".join(lines)

    __str__ = explain

    def to_dict(self) -> dict:
        return {"n": self.n, "k": self.k, "ms": self.ms, "seed": self.seed, "backend": self.backend,
                "contract": self.contract, "label": self.label, "tiers": self.tiers, "pass": bool(self),
                "verdicts": {k: {"asked": v.asked, "pass": v.passed, "comparisons": v.comparisons,
                                 "failures": v.failures, "failing_ms": v.failing_ms,
                                 "first": asdict(v.first) if v.first else None}
                             for k, v in self.verdicts.items()}}

    def save(self, path, verdict: str | None = None) -> str:
        """Writes the operands of a failure (the first failing verdict's, or ``verdict``'s) as an
        npz that ``invariance.replay(path, fn)`` runs again (a tier's: ``replay(path, fn, tiers=...)``,
        both callables). ValueError when nothing failed."""
        name = verdict or (self.first_failure.verdict if self.first_failure else None)
        if name is None or name not in self._saved:
            raise ValueError("invariance result: nothing failed" + (f" under {verdict}" if verdict else "")
                             + ", so there is nothing to save")
        d = self._saved[name]
        meta = {"verdict": name, "m": d["m"], "position": d["position"], "pitch": d["pitch"],
                "needle_rows": d["needle_rows"], "n": self.n, "k": self.k, "seed": self.seed,
                "contract": self.contract, "label": self.label, "tier": d.get("tier"),
                "failure": asdict(self.verdicts[name].first)}
        np.savez_compressed(path, a=d["rows"], needle=d["needle"], w=d["w"], s=d["s"], want=d["want"],
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


# ---- operands ------------------------------------------------------------------------------------

def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values with at most 8 significant bits -> their BF16 bits (exact: truncation)."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def operands(n: int, k: int, seed: int = 0):
    """(needle uint16 [K], w uint8 [N, K], s float32 [ceil(N/128), K/128]) of a seed.

    Built so that the order of the K reduction shows in BF16 bits: half of K are pairs of large
    products (about 2^20) that cancel exactly, the rest small ones (about 1). An order that adds a
    small product between a pair's two halves loses its bits; the exact sum is the small ones'
    alone, so any other association changes the output far above its BF16 rounding. Scales are
    powers of two of rank one in the exponent (S[nb][kb] = 2^(r_nb + c_kb)) so that a pair spanning
    two K blocks still cancels in every column block; every product is exact in FP32. W's codes are
    finite and nonzero.
    """
    rng = np.random.default_rng([seed, 0x1A7A, n, k])
    nb, kb = -(-n // 128), k // 128
    r = rng.integers(-2, 3, size=nb)
    c = rng.integers(-2, 3, size=kb)
    s = np.ldexp(np.float32(1), (r[:, None] + c[None, :])).astype(np.float32)
    w = ((rng.integers(0, 2, size=(n, k)) << 7) | (rng.integers(4, 12, size=(n, k)) << 3)
         | rng.integers(0, 8, size=(n, k))).astype(np.uint8)
    perm = rng.permutation(k)
    pairs = k // 4
    i, j, small = perm[:pairs], perm[pairs:2 * pairs], perm[2 * pairs:]
    w[:, j] = w[:, i]
    mant = 1 + rng.integers(0, 128, size=k).astype(np.float32) / 128
    sign = np.where(rng.integers(0, 2, size=k) == 1, np.float32(-1), np.float32(1))
    a = np.zeros(k, np.float32)
    a[i] = sign[i] * np.ldexp(mant[i], rng.integers(8, 17, size=pairs))
    a[j] = -a[i] * np.ldexp(np.float32(1), c[i // 128] - c[j // 128]).astype(np.float32)
    a[small] = sign[small] * np.ldexp(mant[small], rng.integers(-2, 3, size=small.size))
    return _bf16_bits(a), w, s


def _filler(seed: int, m: int, rows: int, k: int) -> np.ndarray:
    """Seeded finite BF16 rows, exponents 2^-8..2^8: ordinary activations around the needle."""
    rng = np.random.default_rng([seed, 0xF111, m])
    b = rng.integers(0, 1 << 16, size=(rows, k), dtype=np.uint32)
    return ((b & 0x807F) | ((119 + rng.integers(0, 17, size=(rows, k), dtype=np.uint32)) << 7)).astype(np.uint16)


# ---- calling the user's function -----------------------------------------------------------------

class _Caller:
    """Moves operands to the backend, calls fn, validates and converts its result to uint16 bits."""

    def __init__(self, fn, n, k, w, s, backend, device, timeout, who="fn"):
        if not callable(fn):
            raise TypeError(f"invariance: {who} must be callable fn(a, w, s) -> c, got {type(fn).__name__}")
        if backend not in ("numpy", "torch"):
            raise ValueError(f"invariance: backend must be 'numpy' or 'torch', got {backend!r}")
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"invariance: timeout must be a positive number of seconds or None, got {timeout!r}")
        self.fn, self.n, self.k, self.backend, self.timeout = fn, n, k, backend, timeout
        self.w_host, self.s_host = w, s
        if backend == "numpy":
            self.w, self.s = w.copy(), s.copy()
            self.w.flags.writeable = False
            self.s.flags.writeable = False
        else:
            try:
                import torch
            except ImportError as e:
                raise RuntimeError("invariance: backend='torch' needs torch, which does not import here") from e
            self.torch = torch
            self.device = torch.device(device or "cuda")
            self.w = torch.from_numpy(w.copy()).to(self.device)
            self.s = torch.from_numpy(s.copy()).to(self.device)
            self.w0, self.s0 = self.w.clone(), self.s.clone()  # on the device: compared after every call

    def _a(self, rows: np.ndarray, pitch: int):
        """A as fn sees it: [M, K] BF16, a view of a [M, pitch] buffer whose tail is NaN bits."""
        m, k = rows.shape
        buf = np.full((m, pitch), A_PAD_BITS, np.uint16)
        buf[:, :k] = rows
        if self.backend == "numpy":
            buf.flags.writeable = False  # writes through numpy fail; a forced one is found below
            return buf, buf[:, :k]
        t = self.torch.from_numpy(buf.view(np.int16)).to(self.device).view(self.torch.bfloat16)
        return t, t[:, :k]

    def _unchanged(self, buf, expect: np.ndarray) -> bool:
        if self.backend == "numpy":
            return np.array_equal(buf, expect)
        return np.array_equal(buf.view(self.torch.int16).cpu().numpy().view(np.uint16), expect)

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

    def __call__(self, rows: np.ndarray, pitch: int, what: str) -> np.ndarray:
        m = rows.shape[0]
        buf, a = self._a(rows, pitch)
        expect = np.full((m, pitch), A_PAD_BITS, np.uint16)  # what A's buffer must still hold after the call
        expect[:, :self.k] = rows

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
        if not self._unchanged(buf, expect):
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


def _load_core():
    """The compiled module, for the contract verdict only; RuntimeError naming why when it is missing."""
    try:
        import w8a16check
        return w8a16check._core
    except ImportError as e:
        raise RuntimeError("invariance: the contract verdict needs w8a16check._core (the emulator), which "
                           f"does not load here ({e}); run without contract= / reference= for the "
                           "invariance verdicts alone") from e


def _contract_row(core, name, needle, w, s, part):
    # Named contracts (NUMERICS.md 2.4) need part='tc' or 'gemv' and came with newer bindings: pass
    # part only when asked, so an older _core (canonical and gemv alone) still serves those two.
    kwargs = {} if part is None else {"part": part}
    try:
        c = core.gemm(needle.reshape(1, -1), w, s, contract=name, **kwargs)
    except TypeError as e:
        raise ValueError(f"invariance: contract_part={part!r} needs newer w8a16check._core bindings: {e}") from e
    except ValueError as e:
        raise ValueError(f"invariance: contract={name!r} is not one this w8a16check._core emulates as asked "
                         f"(contract_part={part!r}): {e}") from e
    return np.asarray(c)[0, :w.shape[0]].astype(np.uint16)


def _is_nan(bits: np.ndarray) -> np.ndarray:
    return (bits & 0x7FFF) > 0x7F80


# ---- the sweep -----------------------------------------------------------------------------------

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
    return sorted(ms)


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


def _orders(m: int):
    """Row orders of one M: identity, reversed, interleaved (0, h, 1, h+1, ...)."""
    half = (m + 1) // 2
    inter = []
    for r in range(half):
        inter.append(r)
        if half + r < m:
            inter.append(half + r)
    return {"natural": list(range(m)), "reversed": list(range(m - 1, -1, -1)), "interleaved": inter}


def invariance(fn, n: int, k: int, *, m_values=None, edges=(), positions=POSITIONS, seed: int = 0,
               contract: str | None = None, reference=None, repeats: int = 2, backend: str = "numpy",
               device: str | None = None, timeout: float | None = None,
               contract_part: str | None = None, tiers=None, label: str = "fn") -> InvarianceResult:
    """Holds ``fn(a, w, s) -> c`` to batch invariance (module docstring): raw bits, no tolerance.

    n, k: the shape (K a positive multiple of 128). m_values: the row counts (default 1..130);
    edges: M values where the caller's kernel changes its dispatch, each swept at -1, 0, +1.
    positions: a subset of POSITIONS for the batch verdict. contract: a contract name for
    ``_core.gemm`` ("canonical", "gemv", or a named one where the bindings have it, with
    ``contract_part`` "tc" or "gemv": which part of the named contract fn stands for); reference:
    ``reference(needle uint16 [K], w, s) -> uint16 [N]`` instead. repeats: runs of each call for
    run-to-run (>= 2; 1 skips that verdict). backend "numpy": fn gets uint16 [M, K] (a read-only
    view), uint8 [N, K], float32 and returns uint16/int16 [M, N]; "torch": CUDA tensors (``device``),
    A as bfloat16, and returns a bfloat16/int16/uint16 tensor [M, N] on that device.
    tiers: a mapping name -> callable, or a sequence of (name, callable) pairs, each called as fn is
    (the same kernel forced onto another body, split, tile or layout): the tier verdict holds each
    one's C to fn's, bit for bit, on every call of the batch sweep (at least every M's front call).
    label: fn's name in that verdict ("fn" by default); no tier may take it.

    Bad input (fn or a tier not callable, a tier's name empty, repeated or fn's label, a shape, an
    empty M range, a result of the wrong type, dtype, shape or device, NaN or zero in every element
    of fn's M = 1 result, an input written) raises TypeError, ValueError or RuntimeError naming the
    call (a tier's names the tier); fn's or a tier's own exception is a RuntimeError naming the call
    it raised in. A hang is bounded by ``timeout`` (TimeoutError) or the caller.
    """
    for name, v in (("n", n), ("k", k), ("seed", seed), ("repeats", repeats)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"invariance: {name} must be an integer, got {v!r}")
    if n < 1:
        raise ValueError(f"invariance: n must be >= 1, got {n}")
    if k < 128 or k % 128:
        raise ValueError(f"invariance: k must be a positive multiple of 128, got {k}")
    if seed < 0:
        raise ValueError(f"invariance: seed must be >= 0, got {seed}")
    if repeats < 1:
        raise ValueError(f"invariance: repeats must be >= 1 (2 or more for run-to-run), got {repeats}")
    positions = tuple(positions)
    unknown = [p for p in positions if p not in POSITIONS]
    if unknown or not positions:
        raise ValueError(f"invariance: positions must be a non-empty subset of {POSITIONS}, got {positions}")
    if contract is not None and reference is not None:
        raise ValueError("invariance: give contract= or reference=, not both")
    if reference is not None and not callable(reference):
        raise TypeError("invariance: reference must be callable reference(needle, w, s) -> uint16 [N]")
    if contract is not None and not isinstance(contract, str):
        raise TypeError(f"invariance: contract must be a name, got {type(contract).__name__}")
    ms = _m_list(m_values, edges)
    tier_items = _tier_list(tiers, label)

    needle, w, s = operands(n, k, seed)
    call = _Caller(fn, n, k, w, s, backend, device, timeout)
    # Each tier its own copies of W and S, so that one that writes them is named, not fn.
    tier_calls = [(name, _Caller(f, n, k, w, s, backend, device, timeout, who=f"tier {name!r}"))
                  for name, f in tier_items]
    verdicts = {"run-to-run": Verdict("run-to-run", asked=repeats >= 2), "batch": Verdict("batch"),
                "tier": Verdict("tier", asked=bool(tier_calls)),
                "contract": Verdict("contract", asked=contract is not None or reference is not None)}
    saved: dict = {}

    def fail(f: Failure, rows, pitch, needle_rows, want, tier=None):
        v = verdicts[f.verdict]
        v.failures += 1
        if f.m not in v.failing_ms:
            v.failing_ms.append(f.m)
            v.failing_ms.sort()
        if v.first is not None and v.first.m <= f.m:
            return
        v.first = f
        saved[f.verdict] = {"m": f.m, "position": f.position, "pitch": pitch, "needle_rows": list(needle_rows),
                            "rows": rows, "needle": needle, "w": w, "s": s, "want": np.asarray(want, np.uint16),
                            "tier": tier}

    def run(rows, pitch, what, m, position, needle_rows):
        """fn's C for these rows, `repeats` times compared (run-to-run)."""
        c = call(rows, pitch, f"fn at M={m} ({what})")
        for _ in range(repeats - 1):
            again = call(rows, pitch, f"fn at M={m} ({what}, repeated)")
            v = verdicts["run-to-run"]
            v.comparisons += 1
            diff = np.flatnonzero(again.ravel() != c.ravel())
            if diff.size:
                r, col = divmod(int(diff[0]), n)
                fail(Failure("run-to-run", m, position + ", repeated", r, col, int(again[r, col]), int(c[r, col]),
                             "the first run of the same call"), rows, pitch, needle_rows, c)
                break
        return c

    # M = 1: the needle's own bytes, what every other call is held to.
    one = needle.reshape(1, k)
    ref = run(one, k, "the needle alone, the reference", 1, "front (M = 1, the reference)", [0])[0]
    if _is_nan(ref).all():
        raise ValueError("invariance: fn returned NaN in every element at M = 1 on finite operands: "
                         "not an output whose invariance means anything")
    if not (ref & 0x7FFF).any():
        raise ValueError("invariance: fn returned zero in every element at M = 1 (the needle's exact "
                         "result is not zero): did it write its output?")

    if verdicts["contract"].asked:
        if reference is not None:
            try:
                want = np.asarray(reference(needle.copy(), w.copy(), s.copy()))
            except Exception as e:
                raise RuntimeError(f"invariance: reference raised {type(e).__name__}: {e}") from e
            if want.dtype not in (np.uint16, np.int16) or want.size != n:
                raise ValueError(f"invariance: reference returned {want.dtype} {want.shape}, not uint16 [{n}]")
            want, against = want.reshape(n).view(np.uint16), "the reference callable"
        else:
            want, against = _contract_row(_load_core(), contract, needle, w, s, contract_part), f"the emulator under {contract}"
        v = verdicts["contract"]
        v.comparisons += 1
        diff = np.flatnonzero(ref != want)
        if diff.size:
            col = int(diff[0])
            fail(Failure("contract", 1, "front (M = 1)", 0, col, int(ref[col]), int(want[col]), against),
                 one, k, [0], want)

    batch, tier = verdicts["batch"], verdicts["tier"]
    for m in ms:
        rng = np.random.default_rng([seed, 0x5EED, m])
        at = {0, m - 1}
        if m > 2:
            at.add(1 + int(rng.integers(0, m - 2)))
        rows = _filler(seed, m, m, k)
        for r in at:
            rows[r] = needle
        seeded = sorted(at - {0, m - 1})
        calls = []
        names = {m - 1: "back", 0: "front"} | {r: "seeded" for r in seeded}
        wanted_natural = [r for r in sorted(at) if names[r] in positions]
        if wanted_natural:
            calls.append(("natural", list(range(m)), k, wanted_natural, names))
        for kind in ("reversed", "interleaved"):
            if kind in positions and m > 1:
                order = _orders(m)[kind]
                calls.append((kind, order, k, [i for i, r in enumerate(order) if r in at], None))
        if "padded" in positions:
            pad = 8 * (1 + int(rng.integers(0, 4)))
            calls.append((f"padded (A pitch {k + pad})", list(range(m)), k + pad, sorted(at), None))
        if tier_calls and not wanted_natural:
            # The tier verdict holds every M's front call whatever positions= asks of batch.
            calls.insert(0, ("natural", list(range(m)), k, [], names))
        for kind, order, pitch, needle_rows, named in calls:
            a_rows = rows[order]
            c = run(a_rows, pitch, kind, m, kind, needle_rows)
            for r in needle_rows:
                batch.comparisons += 1
                diff = np.flatnonzero(c[r] != ref)
                if diff.size:
                    col = int(diff[0])
                    where = named[r] if named else f"{kind}, row {r}"
                    fail(Failure("batch", m, where, r, col, int(c[r, col]), int(ref[col]), "its M = 1 bytes"),
                         a_rows, pitch, needle_rows, ref)
            # Tier: the same A through each tier, all of C against fn's bytes (not only the needle's
            # rows: a tier that parts from fn on filler rows is still another dispatch's bytes).
            for name, tier_call in tier_calls:
                t = tier_call(a_rows, pitch, f"tier {name!r} at M={m} ({kind})")
                tier.comparisons += 1
                diff = np.flatnonzero(t.ravel() != c.ravel())
                if diff.size:
                    r, col = divmod(int(diff[0]), n)
                    fail(Failure("tier", m, kind, r, col, int(t[r, col]), int(c[r, col]),
                                 f"tier {name!r} against {label!r}"), a_rows, pitch, needle_rows, c, tier=name)
    return InvarianceResult(n, k, ms, seed, backend, verdicts, saved, contract or ("reference" if reference else None),
                            label, [name for name, _ in tier_items])


def replay(path, fn, *, tiers=None, backend: str = "numpy", device: str | None = None,
           timeout: float | None = None, repeats: int = 2) -> InvarianceResult:
    """Runs a saved failure (``InvarianceResult.save``) through ``fn`` again: the one verdict, truthy
    when it now passes. batch: the saved call's needle rows against fn's M = 1 bytes; run-to-run: the
    saved call repeated; contract: fn's M = 1 bytes against the saved contract bytes; tier: the saved
    call through fn and through the saved tier, taken by its name from ``tiers`` (as
    ``invariance``'s), all of C compared."""
    with np.load(path) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        rows, needle, w, s, want = z["a"], z["needle"], z["w"], z["s"], z["want"]
    n, k, m, name = meta["n"], meta["k"], meta["m"], meta["verdict"]
    label, tier_name = meta.get("label") or "fn", meta.get("tier")
    tier_fn = None
    if name == "tier":
        tier_fn = dict(_tier_list(tiers, label)).get(tier_name)
        if tier_fn is None:
            raise ValueError(f"invariance: the saved failure is tier {tier_name!r}'s against {label!r}: replay "
                             f"needs both, fn and tiers={{{tier_name!r}: callable}}")
    call = _Caller(fn, n, k, w, s, backend, device, timeout)
    v = Verdict(name)
    f = None
    if name == "tier":
        tier_call = _Caller(tier_fn, n, k, w, s, backend, device, timeout, who=f"tier {tier_name!r}")
        c = call(rows, meta["pitch"], f"fn at M={m} (replay)")
        t = tier_call(rows, meta["pitch"], f"tier {tier_name!r} at M={m} (replay)")
        v.comparisons = 1
        diff = np.flatnonzero(t.ravel() != c.ravel())
        if diff.size:
            r, col = divmod(int(diff[0]), n)
            f = Failure(name, m, meta["position"], r, col, int(t[r, col]), int(c[r, col]),
                        f"tier {tier_name!r} against {label!r}")
    elif name == "contract":
        got = call(needle.reshape(1, k), k, "fn at M=1 (replay)")[0]
        v.comparisons = 1
        diff = np.flatnonzero(got != want)
        if diff.size:
            col = int(diff[0])
            f = Failure(name, 1, meta["position"], 0, col, int(got[col]), int(want[col]), "the saved contract bytes")
    elif name == "run-to-run":
        first = call(rows, meta["pitch"], f"fn at M={m} (replay)")
        for _ in range(max(repeats, 2) - 1):
            again = call(rows, meta["pitch"], f"fn at M={m} (replay, repeated)")
            v.comparisons += 1
            diff = np.flatnonzero(again.ravel() != first.ravel())
            if diff.size and f is None:
                r, col = divmod(int(diff[0]), n)
                f = Failure(name, m, meta["position"], r, col, int(again[r, col]), int(first[r, col]),
                            "the first run of the same call")
    else:
        ref = call(needle.reshape(1, k), k, "fn at M=1 (replay, the reference)")[0]
        c = call(rows, meta["pitch"], f"fn at M={m} (replay)")
        for r in meta["needle_rows"]:
            v.comparisons += 1
            diff = np.flatnonzero(c[r] != ref)
            if diff.size and f is None:
                col = int(diff[0])
                f = Failure(name, m, meta["position"], r, col, int(c[r, col]), int(ref[col]), "its M = 1 bytes")
    if f is not None:
        v.failures, v.failing_ms, v.first = 1, [m], f
    verdicts = {x: (v if x == name else Verdict(x, asked=False)) for x in VERDICTS}
    return InvarianceResult(n, k, [m], meta["seed"], backend, verdicts,
                            {}, meta.get("contract"), label, [tier_name] if name == "tier" else [])


# `w8a16check.invariance` is the function (the package re-exports it); replay rides on it so that
# `w8a16check.invariance.replay(path, fn)` reads as the brief of the feature: check, then replay.
invariance.replay = replay
invariance.operands = operands
invariance.InvarianceResult = InvarianceResult
