# SPDX-License-Identifier: MIT OR Apache-2.0
# Which contract of the family (docs/NUMERICS.md 2.4) a Python callable keeps: the engine is the
# C++ identify's own (properties/identify.hpp identify_callable through _core): the same probes,
# order probes, bias ladder, fold probe, candidate space, match and confirmation as
# `w8a16check identify`; this file only runs the callable and checks what it returns.
"""Find which contract of the family a kernel keeps, by running it (docs/NUMERICS.md 2.4).

    result = w8a16check.identify(my_kernel, n=256, k=4096, entry_kind="gemv")
    if result:
        print(result.keeps)          # every candidate that matches every byte of every probe
        print(result.fields)         # per field the values the kept candidates hold
    else:
        print(result.explain())      # the nearest candidate, or the confirmation case that refuted it

``fn(a, w, s) -> c`` takes NumPy arrays: ``a`` BF16 bits (uint16 [M, K]), ``w`` E4M3 codes
(uint8 [N, K]), ``s`` FP32 block scales (float32 [ceil(N/128), K/128]), and returns C as BF16 bits
([M, N]: uint16 or int16, or a torch tensor, bfloat16 or int16, on any device: it is moved to the
host and read as raw bits).

The engine is `w8a16check identify`'s (properties/README.md, "identify"): the identify distributions
at (M, N, K) (the GEMV's also the split probes from the seed); for the tensor-core part the order
probes that determine the K order's MMA windows, the bias ladder and the fold probe; every candidate
of the whole space (1,512 tensor-core candidates on the order found; 6,144 GEMV, split probes added
while the kept differ in more than their tree) emulated by the C++
on the same operands and compared raw bits; then the confirmation: every M of ``m_values`` with the
confirmation data classes each at each M (K at least 512), each case run twice, any difference refuting
a kept candidate. Fields no probe tells apart are reported with every value still standing
(``fields``), never resolved to a default. A callable that raises, returns the wrong shape or dtype,
or NaN everywhere is an error naming the call, never a verdict.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from . import _core
from .compare import _bits

ENTRY_KINDS = ("tc", "gemv")
# The probes' M, and the confirmation's M values: the family's dispatch edges' neighbourhoods
# (16 / 17, 32 / 33, 64 / 65, 128 / 129) for the tensor-core part; the GEMVs' rows.
DEFAULT_M = {"tc": (1, 2, 3, 5, 8, 13, 16, 17, 24, 32, 33, 40, 64, 65, 100, 128, 129), "gemv": (1, 2, 3, 4)}
PROBE_M = {"tc": 16, "gemv": 4}


@dataclass
class Probe:
    """One probe as it ran: its case line (the shape; its operands are the data's) and its data."""
    line: str
    dist: str
    m: int
    n: int
    k: int


@dataclass
class Identification:
    """What identify() found. Truthy only when some candidate matches every byte of every probe and
    of every confirmation case."""
    part: str                       # "tc" or "gemv"
    keeps: list                     # candidate names matching every byte (all of them, never one picked)
    nearest: str | None             # when none keeps: the candidate nearest on the probes
    nearest_differ: list            # per probe: elements that differ from the nearest (none keeps)
    nearest_total: int
    probes: list                    # Probe, in the order they ran
    candidates: int                 # how many candidates were matched
    elements: list = field(default_factory=list)  # per probe: elements compared
    fields: dict = field(default_factory=dict)    # per field (text-form key) the values the kept hold
    k_order_determined: bool = False
    k_order_note: str = ""
    confirm_cases: int = 0          # confirmation cases run (each twice)
    confirm_failure: str = ""       # the case, element and bytes that refuted the probes' candidate
    nearest_first: str = ""         # none keeps: the first probe and element where the nearest differs
    text: str = ""                  # the C++ verdict text, as `w8a16check identify` prints it

    def __bool__(self) -> bool:
        return bool(self.keeps)

    def undetermined(self) -> dict:
        """The fields with more than one value still standing."""
        return {k: v for k, v in self.fields.items() if len(v) > 1}

    def explain(self) -> str:
        head = f"identify ({self.part}, {self.candidates} candidates, {len(self.probes)} probes): "
        return head + self.text.rstrip()


def _positive(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or int(x) <= 0:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def _ints(x, name: str) -> tuple[int, ...]:
    values = (x,) if isinstance(x, (int, np.integer)) and not isinstance(x, bool) else tuple(x)
    if not values:
        raise ValueError(f"{name} must name at least one value")
    return tuple(_positive(v, name) for v in values)


def _host_result(out, what: str):
    """A torch tensor (any device, bfloat16 included) as host raw bits; anything else as it is."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(out, torch.Tensor):
        t = out.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            t = t.view(torch.int16)
        return t.numpy()
    return out


def identify(fn, n: int, k: int, *, m_values=None, entry_kind: str = "tc", seed: int = 1,
             threads: int = 0) -> Identification:
    """Which candidates of one part of the family's contracts `fn` keeps, bit for bit.

    fn: fn(a, w, s) -> c (see the module's docstring). n: N, the output columns; k: K, a multiple
    of 128. m_values: the confirmation's M values (default DEFAULT_M[entry_kind]); the probes run at
    min(max(m_values), PROBE_M[entry_kind]). entry_kind: "tc" (the tensor-core tiers' candidates) or
    "gemv". seed: the probes' seed. Returns an Identification; raises RuntimeError when fn raises,
    TypeError / ValueError when it returns the wrong dtype or shape or only NaN, each naming the call.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable as fn(a, w, s) -> c, got {type(fn).__name__}")
    if entry_kind not in ENTRY_KINDS:
        raise ValueError(f"entry_kind must be 'tc' or 'gemv', got {entry_kind!r}")
    n = _positive(n, "n")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise ValueError(f"k must be one positive multiple of 128 (the confirmation varies M), got {k!r}")
    k = _positive(k, "k")
    if k % 128:
        raise ValueError(f"k = {k} must be a positive multiple of 128 (one scale per 128-K block)")
    ms = _ints(DEFAULT_M[entry_kind] if m_values is None else m_values, "m_values")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2 ** 64:
        raise ValueError(f"seed must be an integer in 0 .. 2^64 - 1, got {seed!r}")
    probe_m = min(max(ms), PROBE_M[entry_kind])
    state = {"all_nan": True, "calls": 0}

    def call(a, w, s, line):
        desc = (f"fn(a, w, s) on {line} (a uint16 {a.shape}, w uint8 {w.shape}, s float32 {s.shape})")
        try:
            out = fn(a, w, s)  # fresh arrays each call: a callable that writes its inputs changes no probe
        except Exception as e:  # noqa: BLE001 (whatever the callable raises, the verdict is no verdict)
            raise RuntimeError(f"identify: {desc} raised {type(e).__name__}: {e}") from e
        try:
            c = _bits(_host_result(out, desc), "c", "bf16")
        except (TypeError, ValueError) as e:
            raise type(e)(f"identify: {desc} returned {type(out).__name__}, not BF16 bits [M, N]: {e}") from None
        if c.shape != (a.shape[0], w.shape[0]):
            raise ValueError(f"identify: {desc} returned shape {c.shape}, want (M, N) = ({a.shape[0]}, {w.shape[0]})")
        c = np.ascontiguousarray(c).view(np.uint16)
        state["all_nan"] &= bool(np.all((c & 0x7FFF) > 0x7F80))
        state["calls"] += 1
        return c

    r = _core.identify_callable(call, entry_kind, probe_m, n, k, int(seed), list(ms), threads)
    if state["all_nan"] and state["calls"]:
        raise ValueError(f"identify: fn(a, w, s) returned NaN in every element of all {state['calls']} calls: "
                         f"no contract of the family gives that, and nothing can be told from it")
    if r["error"]:
        raise RuntimeError(f"identify: no verdict: {r['error']}")
    probes = []
    for line, data in r["probes"]:
        f = dict(x.split("=", 1) for x in line.split() if "=" in x)
        probes.append(Probe(line, data, int(f["m"]), int(f["n"]), int(f["k"])))
    keeps = list(r["keeps"])
    return Identification(part=entry_kind, keeps=keeps, nearest=r["nearest"],
                          nearest_differ=[int(x) for x in r["nearest_differ"]] if not keeps else [],
                          nearest_total=int(r["nearest_total"]) if not keeps else 0, probes=probes,
                          candidates=int(r["candidates"]), elements=[int(x) for x in r["elements"]],
                          fields={key: list(v) for key, v in r["fields"].items()},
                          k_order_determined=bool(r["k_order_determined"]), k_order_note=r["k_order_note"],
                          confirm_cases=int(r["confirm_cases"]), confirm_failure=r["confirm_failure"],
                          nearest_first=r["nearest_first"], text=r["text"])
