# SPDX-License-Identifier: MIT OR Apache-2.0
# w8a16check.compare: a kernel's output, launched from anywhere (PyTorch, Triton, CuPy, a C++
# extension), held to the family's contract bit for bit.
"""Compare a device output with the contract's bytes (docs/NUMERICS.md 2), raw bits, no tolerance.

    result = w8a16check.compare(c, a, w, s, entry="gemm_pipelined_m32_strided")
    assert result, result.explain()

``c`` is the device's C (BF16 bits, [M, N]), ``a`` A (BF16 bits, [M, K]), ``w`` W (E4M3 codes,
[N, K]) and ``s`` the block scales (FP32, [ceil(N/128), K/128]), each a NumPy array or anything
with ``__dlpack__`` or ``__array__`` that lives on the host: a CUDA tensor is moved first
(``t.cpu()``). Bits are never converted: a ``torch.bfloat16`` tensor goes in as
``t.view(torch.int16)`` (or ``torch.uint16``), a ``torch.float8_e4m3fn`` one as
``t.view(torch.uint8)``; int16 and int8 arrays are read as the same bits unsigned, as are
``ml_dtypes`` ``bfloat16`` and ``float8_e4m3fn`` arrays. Views of any layout are accepted: a row
pitch of A or C (a slice of a wider buffer) is read from the array's strides and recorded as the
launch's ``a_row_stride`` / ``c_row_stride``; any other layout (transposed, reversed, column
strided) is copied, and the record says so.

The expected bytes come from the C++ emulator (``_core.gemm``), the same code as ``w8a16check
verify``: the canonical fold (2.1) for the tensor-core entry points, the GEMV order (2.2) for
``gemv_batch*``. The result is truthy only when every byte of C matches.

``contract=`` holds the output to another value of the family (NUMERICS.md 2.4): a library name
(``"seed-skinny"``), a file of the text form, the text itself or a ``Contract``; the entry point
decides which part (``tc`` or ``gemv``). Without it the bytes and the result are the canonical ones,
as before. ``Comparison.contract_name`` and ``.part`` say what the output was held to.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

import numpy as np

from . import _core
from . import contract as _contract
from . import operands as _operands

# golden/include/w8a16/golden/case_inputs.hpp kAPaddingBits: a NaN in A's unread pitch tail, so a
# kernel that reads past K turns its outputs into NaN when the bundle is replayed.
A_PADDING_BITS = 0xFFC1

_DLPACK_HOST = (1, 3)  # kDLCPU, kDLCUDAHost: memory NumPy can read


def _type_name(x) -> str:
    return type(x).__name__


def _host_array(x, name: str) -> np.ndarray:
    """x as a NumPy array without copying its bits where it can be helped; TypeError / ValueError
    naming the argument otherwise."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        raise TypeError(f"{name} must be an array, got a numpy scalar of type {_type_name(x)}")
    if hasattr(x, "__dlpack_device__"):
        try:
            kind = x.__dlpack_device__()[0]
        except Exception as e:  # noqa: BLE001 (any failure of a foreign object is reported as such)
            raise TypeError(f"{name}: its __dlpack_device__() failed: {e}") from None
        if int(kind) not in _DLPACK_HOST:
            raise ValueError(f"{name} lives on a device (DLPack device type {int(kind)}), not in host memory: "
                             f"move it to the host first (e.g. t.cpu())")
        if hasattr(x, "__dlpack__"):
            try:
                return np.from_dlpack(x)
            except (TypeError, BufferError, RuntimeError, ValueError) as e:
                raise TypeError(f"{name}: NumPy cannot read it through DLPack ({e}); pass its raw bits: a bfloat16 "
                                f"tensor as t.view(torch.int16), a float8_e4m3fn one as t.view(torch.uint8)") from None
    if hasattr(x, "__array__"):
        try:
            return np.asarray(x)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError(f"{name}: np.asarray failed ({e}); pass its raw bits: a bfloat16 tensor as "
                            f"t.view(torch.int16), a float8_e4m3fn one as t.view(torch.uint8)") from None
    raise TypeError(f"{name} must be an array (NumPy, or anything with __dlpack__ or __array__), got {_type_name(x)}")


def _bits(x, name: str, want: str) -> np.ndarray:
    """The array of raw bits: uint16 (BF16), uint8 (E4M3) or float32 (scales), read as they are."""
    arr = _host_array(x, name)
    dt = arr.dtype
    if want == "bf16":
        if dt == np.uint16 or dt == np.int16 or (dt.itemsize == 2 and dt.name == "bfloat16"):
            if not dt.isnative:
                raise TypeError(f"{name} must be in native byte order, got {dt}")
            return arr.view(np.uint16)
        raise TypeError(f"{name} must hold BF16 bits (uint16 or int16), got {dt}: values are never converted "
                        f"(a bfloat16 tensor goes in as t.view(torch.int16))")
    if want == "e4m3":
        if dt == np.uint8 or dt == np.int8 or (dt.itemsize == 1 and dt.name == "float8_e4m3fn"):
            return arr.view(np.uint8)
        raise TypeError(f"{name} must hold E4M3 codes (uint8 or int8), got {dt}: values are never converted "
                        f"(a float8_e4m3fn tensor goes in as t.view(torch.uint8))")
    if dt != np.float32:
        raise TypeError(f"{name} must be float32 (the FP32 block scales), got {dt}: values are never converted")
    if not dt.isnative:
        raise TypeError(f"{name} must be in native byte order, got {dt}")
    return arr


def _pitch(arr: np.ndarray) -> int | None:
    """The row pitch in elements when arr's rows are contiguous runs a fixed number of elements
    apart (a slice of a wider buffer included); None for any other layout."""
    rows, cols = arr.shape
    item = arr.itemsize
    if rows == 0 or cols == 0:
        return None
    if cols > 1 and arr.strides[1] != item:
        return None
    if rows == 1:
        return cols
    st = arr.strides[0]
    if st <= 0 or st % item != 0 or st // item < cols:
        return None
    return st // item


def _whole(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {_type_name(x)}")
    return int(x)


def ordinal_bf16(bits) -> np.ndarray:
    """BF16 bit patterns on one integer line: adjacent finite values differ by 1, -0 and +0 meet."""
    b = np.asarray(bits, dtype=np.uint16).astype(np.int64)
    mag = b & 0x7FFF
    return np.where(b & 0x8000, -mag, mag)


def bf16_ulp(got: int, want: int) -> int | None:
    """The BF16 ULP distance between two bit patterns; None when either is a NaN."""
    if (got & 0x7FFF) > 0x7F80 or (want & 0x7FFF) > 0x7F80:
        return None
    return int(abs(ordinal_bf16(got) - ordinal_bf16(want)))


@dataclass(frozen=True)
class Mismatch:
    """One differing element: C[row][col] holds `got`, the contract `want` (BF16 bits)."""
    row: int
    col: int
    got: int
    want: int
    ulp: int | None  # BF16 ULP distance; None when either is a NaN

    def __str__(self) -> str:
        if self.ulp is None:
            dist = "a NaN"
        elif self.ulp == 0:
            # -0 and +0 meet on the ordinal line, yet are different bits: the contract fixes the sign of
            # a zero result (NUMERICS.md 1.1, +0 for any zero sum; 2.1 the fold's signed zeros).
            dist = "the sign of zero differs: -0 and +0"
        else:
            dist = f"{self.ulp} BF16 ULP"
        return f"C[{self.row}][{self.col}] = 0x{self.got:04X}, want 0x{self.want:04X} ({dist})"


@dataclass
class Comparison:
    """What compare() found. Truthy only when every byte of C matches the contract."""
    entry: str
    contract: str                 # "canonical" (NUMERICS.md 2.1) or "gemv" (2.2); with contract=, its name
    m: int
    n: int
    k: int
    a_row_stride: int             # as launched (read from the strides, or given), else K
    c_row_stride: int             # as launched, else N
    layout: dict                  # per operand: "contiguous", "pitched", or "copied" (another layout)
    mismatches: int               # elements of C whose bits differ
    first: Mismatch | None        # the first in row-major order
    expected: np.ndarray = field(repr=False)   # the contract's bytes, uint16 [M, N]
    fold: dict | None = field(default=None, repr=False)  # the first mismatch's fold (see explain)
    diverging_step: int | None = None  # the 128-K step where the device's fold first differs (launch=)
    diagnosis: list = field(default_factory=list)
    contract_name: str = "canonical"  # the contract held to (NUMERICS.md 2.4): a library name or a file's
    part: str = "tc"                  # its part: "tc" (the tensor-core tiers) or "gemv", from the entry point
    contract_description: str = ""    # the part's fields, one line (with contract= only)
    trace: dict | None = field(default=None, repr=False)  # the first mismatch's trace under the contract
    # C's pitch gap (the elements between N and c_row_stride of each row but the last, which no
    # kernel may write): None when not checked (no c_fill=, or C has no gap in memory), else the
    # (row, col, bits) of every element that no longer holds c_fill.
    pitch_gap_writes: list | None = None
    _operands: tuple = field(default=(), repr=False)
    _c_fill: int | None = field(default=None, repr=False)

    def __bool__(self) -> bool:
        return self.mismatches == 0 and not self.pitch_gap_writes

    @property
    def equal(self) -> bool:
        return bool(self)

    def case_line(self) -> str:
        """The launch's geometry as the golden case format writes it, without a seed: the operands
        came from the caller, not from a generator, so they travel as an operand bundle
        (write_bundle) and this line only names what was launched."""
        return (f"w8a16_{self.entry} m={self.m} n={self.n} k={self.k} a_row_stride={self.a_row_stride} "
                f"c_row_stride={self.c_row_stride}")

    def explain(self) -> str:
        """A report like `w8a16check repro`'s: the verdict, the first difference, its fold step by
        step (canonical: p_s, S and acc after each 128-K step) and what the produced bits look like."""
        if self.contract_description:
            held = f"{self.contract_name} contract, {self.part}: {self.contract_description}, NUMERICS.md 2.4"
        else:
            held = f"{self.contract} contract, NUMERICS.md {'2.1' if self.contract == 'canonical' else '2.2'}"
        lines = [f"{'PASS' if self else 'FAIL'}: {self.entry} ({held}), m={self.m} n={self.n} k={self.k}: "
                 f"{self.mismatches} of {self.m * self.n} elements differ"]
        if self.pitch_gap_writes:
            r, col, bits = self.pitch_gap_writes[0]
            lines.append(f"{len(self.pitch_gap_writes)} elements of C's pitch gap were written (columns "
                         f"{self.n}..{self.c_row_stride - 1} of rows 0..{self.m - 2}): first C[{r}][{col}] = "
                         f"0x{bits:04X}, filled with 0x{self._c_fill:04X}")
        elif self.pitch_gap_writes is None and self.c_row_stride > self.n and self.m > 1:
            lines.append("C's pitch gap was not checked (pass c_fill=, the bits C's buffer held before the launch)")
        if self.first is None:
            return "\n".join(lines)
        lines.append(f"first: {self.first}")
        if self.diverging_step is not None:
            s = self.diverging_step
            lines.append(f"the device's fold first differs at 128-K step {s} (k = {128 * s}..{128 * s + 127})")
        f = self.fold or {}
        if "p" in f:
            lines.append(f"canonical fold of C[{self.first.row}][{self.first.col}], scale row {self.first.col // 128}:")
            steps = len(f["p"])
            for i in range(steps):
                if steps > 24 and 8 <= i < steps - 8:
                    if i == 8:
                        lines.append(f"    ... {steps - 16} steps ...")
                    continue
                p, sc, acc = int(f["p"][i]), int(f["scale"][i]), int(f["acc"][i])
                lines.append(f"    step {i:3d}: p = 0x{p:08x} ({_f32(p):<13g}) S = 0x{sc:08x} ({_f32(sc):<13g}) "
                             f"acc = 0x{acc:08x} ({_f32(acc):g})")
            lines.append(f"    bf16_rne(acc) = 0x{int(f['want']):04x}")
        lines.extend(_trace_lines(self))
        for d in self.diagnosis:
            lines.append(f"  {d}")
        return "\n".join(lines)

    def write_bundle(self, path) -> str:
        """Writes the operands that were compared (copies taken by compare(), so a caller reusing its
        buffers afterwards changes nothing here) as an operand bundle (golden/include/w8a16/golden/operands.hpp) at
        `path`, with the launch's pitches (A's pitch tail filled with a NaN, 0xFFC1), and returns the
        command that replays it on any machine and checks it against the same contract:
        `w8a16check run-operands --backend cuda --entry E --in PATH --out OUT --check` (`--backend
        sim` where there is no GPU; `--module FILE` for a module of one's own)."""
        a, w, s = self._operands
        a_pitched = np.full((self.m, self.a_row_stride), A_PADDING_BITS, np.uint16)
        a_pitched[:, :self.k] = a
        _operands.write_dense_bundle(path, self.entry, self.m, self.n, self.k, a_pitched, w, s,
                                     a_row_stride=self.a_row_stride, c_row_stride=self.c_row_stride)
        return self.replay_command(path)

    def replay_command(self, path, backend: str = "cuda") -> str:
        p = os.fspath(path)
        return (f"w8a16check run-operands --backend {backend} --entry {self.entry} --in {shlex.quote(p)} "
                f"--out {shlex.quote(p + '.out')} --check")


def _trace_lines(r: "Comparison") -> list:
    """The first mismatch under a contract that is not canonical, from conventions.hpp's traces:
    per fold point (tc) or per lane and warp (gemv), the FP32 values the contract forms."""
    t = r.trace
    if not t or r.first is None:
        return []
    at = f"C[{r.first.row}][{r.first.col}]"
    if t["part"] == "tc":
        lines = [f"{r.contract_name} fold of {at} (tc), scale row {r.first.col // 128}:"]
        acc = t["fold_acc"]
        parts = t["window_partials"]
        for i in range(len(acc)):
            if len(acc) > 24 and 8 <= i < len(acc) - 8:
                if i == 8:
                    lines.append(f"    ... {len(acc) - 16} fold points ...")
                continue
            p = int(parts[8 * i + 7]) if len(parts) >= 8 * (i + 1) else None
            ptxt = f"p = 0x{p:08x} ({_f32(p):<13g}) " if p is not None else ""
            lines.append(f"    fold {i:3d}: {ptxt}acc = 0x{int(acc[i]):08x} ({_f32(int(acc[i])):g})")
    else:
        lanes = t["lane_acc"]
        lines = [f"{r.contract_name} GEMV of {at}: {len(lanes)} lanes, warp sums "
                 + ", ".join(f"0x{int(x):08x} ({_f32(int(x)):g})" for x in t["warp_sum"])]
        lines.append("    lane sums: " + " ".join(f"0x{int(x):08x}" for x in lanes[:8]) + (" ..." if len(lanes) > 8 else ""))
    lines.append(f"    bf16_rne(acc = 0x{int(t['acc']):08x}) = 0x{int(t['want']):04x}")
    return lines


def _f32(bits: int) -> float:
    return float(np.array([bits], np.uint32).view(np.float32)[0])


def _entry_info(entry: str, m: int, n: int, k: int, a_row_stride: int, c_row_stride: int) -> dict:
    """The entry point's contract, with the launch's geometry checked against its rules
    (golden/case.hpp case_problem: the rows it takes, fixed pitches of a contiguous entry, A's pitch
    a multiple of 8): ValueError naming the rule."""
    if not isinstance(entry, str):
        raise TypeError(f"entry must be a str (an entry point, e.g. 'gemm_pipelined_m32_strided'), got {_type_name(entry)}")
    name = entry[6:] if entry.startswith("w8a16_") else entry
    line = (f"case/1 w8a16_{name} m={m} n={n} k={k} a_row_stride={a_row_stride} c_row_stride={c_row_stride} "
            f"dist=specials seed=0x0 gen=1")
    try:
        info = _core.parse_case(line)
    except ValueError as e:
        raise ValueError(f"entry {entry!r} with m={m} n={n} k={k} a_row_stride={a_row_stride} "
                         f"c_row_stride={c_row_stride}: {e}") from None
    return {"entry": info["entry"][6:] if info["entry"].startswith("w8a16_") else info["entry"],
            "contract": info["contract"]}


def compare(c, a, w, s, entry: str, *, a_row_stride: int | None = None, c_row_stride: int | None = None,
            launch=None, threads: int = 0, contract=None, c_fill: int | None = None) -> Comparison:
    """C from a device against the contract's bytes for `entry`, bit for bit.

    c: the device's output, BF16 bits [M, N]; a: BF16 bits [M, K]; w: E4M3 codes [N, K]; s: FP32
    scales [ceil(N/128), K/128]; K a positive multiple of 128. entry: the family's entry point the
    kernel stands for (e.g. "gemm_pipelined_m32_strided", "gemv_batch4_strided"; a "w8a16_" prefix
    is accepted): it decides the contract and the rules the launch's geometry must keep.
    a_row_stride / c_row_stride: the pitches the kernel was launched with, when the arrays given are
    copies; by default they are read from the arrays' strides (K and N when the layout has none).
    launch: optional, a callable launch(a, w, s) -> C that runs the kernel again; with it, the first
    mismatch's fold is replayed on the device over K = 128, 256, ... (A as a view of the `a` given,
    W and S as contiguous prefixes) and `diverging_step` is the first 128-K step whose prefix
    output differs from the contract's. Without it, the fold of the first mismatch is the
    emulator's, step by step (explain()).
    contract: None (canonical: 2.1 or 2.2 by the entry point, the bytes compare always gave), or a
    library name, a file path, the text form or a Contract (NUMERICS.md 2.4): the entry point's part
    of it ("tc" or "gemv") gives the expected bytes, and explain() shows its trace.
    c_fill: optional, the BF16 bits C's whole buffer was filled with before the launch (e.g. 0x7FA5,
    a NaN no kernel writes). When c is a pitched view, every element of its pitch gap between rows
    (which no kernel may write) must still hold it: `pitch_gap_writes` lists those that do not, and
    the result is falsy. Without it the gap is not read, and explain() says so.
    Returns a Comparison, truthy only when every byte matches; nothing given is modified.
    """
    held = None if contract is None else _contract.load_contract(contract)
    cb = _bits(c, "c", "bf16")
    ab = _bits(a, "a", "bf16")
    wb = _bits(w, "w", "e4m3")
    sb = _bits(s, "s", "f32")
    for name, arr, layout in (("c", cb, "[M, N] (BF16 bits)"), ("a", ab, "[M, K] (BF16 bits)"),
                              ("w", wb, "[N, K] (E4M3 codes)"), ("s", sb, "[ceil(N/128), K/128] (FP32 scales)")):
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D {layout}, got shape {arr.shape}")
    n, k = wb.shape
    m = ab.shape[0]
    if k == 0 or k % 128 != 0:
        raise ValueError(f"w: K = {k} (its second dimension) must be a positive multiple of 128 "
                         f"(one FP32 scale per 128-K block, NUMERICS.md 2)")
    if n == 0:
        raise ValueError("w must have at least one row (N >= 1)")
    if m == 0:
        raise ValueError("a must have at least one row (M >= 1)")
    if ab.shape[1] != k:
        raise ValueError(f"a has {ab.shape[1]} columns, but w has K = {k} (a is [M, K]; pass a[:, :K] of a pitched buffer)")
    if cb.shape != (m, n):
        raise ValueError(f"c must have shape (M, N) = ({m}, {n}) from a and w, got {cb.shape} "
                         f"(pass c[:, :N] of a pitched buffer)")
    scale_rows = (n + 127) // 128
    if sb.shape != (scale_rows, k // 128):
        raise ValueError(f"s must have shape (ceil(N/128), K/128) = ({scale_rows}, {k // 128}), got {sb.shape}")

    layout = {}
    pitches = {}
    for name, arr, width, given in (("a", ab, k, a_row_stride), ("c", cb, n, c_row_stride)):
        own = _pitch(arr)
        layout[name] = ("contiguous" if arr.flags.c_contiguous else "pitched" if own is not None else "copied")
        if given is not None:
            given = _whole(given, f"{name}_row_stride")
            if given < width:
                raise ValueError(f"{name}_row_stride = {given} must be at least {'K' if name == 'a' else 'N'} = {width}")
            pitches[name] = given
        else:
            pitches[name] = own if own is not None else width
    for name, arr in (("w", wb), ("s", sb)):
        layout[name] = "contiguous" if arr.flags.c_contiguous else "copied"
    info = _entry_info(entry, m, n, k, pitches["a"], pitches["c"])
    contract = info["contract"]
    threads = _whole(threads, "threads")

    # Copies the Comparison owns: what was compared is what write_bundle saves, whatever the caller
    # does with its buffers afterwards (a reproduction that reproduces).
    a_c, w_c, s_c = (np.array(x, order="C", copy=True) for x in (ab, wb, sb))
    part = "gemv" if contract == "gemv" else "tc"
    if held is None:
        want = _core.gemm(a_c, w_c, s_c, contract=contract, threads=threads)
    else:
        spec = _contract._core_spec(held)
        want = _core.gemm(a_c, w_c, s_c, contract=spec, part=part, threads=threads)
        contract = held.name
    got = np.ascontiguousarray(cb)
    differ = got != want
    count = int(np.count_nonzero(differ))
    gap_writes = None
    if c_fill is not None:
        c_fill = _whole(c_fill, "c_fill")
        if not 0 <= c_fill <= 0xFFFF:
            raise ValueError(f"c_fill = {c_fill} must be BF16 bits (0..0xFFFF)")
        pitch = _pitch(cb)
        if pitch is not None and pitch > n and m > 1 and layout["c"] != "copied":
            # Rows 0..M-2 at their full pitch: memory inside the view's own span (it ends at row M-1's N).
            rows = np.lib.stride_tricks.as_strided(cb, shape=(m - 1, pitch), strides=(cb.strides[0], cb.itemsize),
                                                   writeable=False)
            gap = rows[:, n:]
            hit = np.argwhere(gap != c_fill)
            gap_writes = [(int(r), n + int(j), int(gap[r, j])) for r, j in hit]
    result = Comparison(entry=info["entry"], contract=contract, m=m, n=n, k=k, a_row_stride=pitches["a"],
                        c_row_stride=pitches["c"], layout=layout, mismatches=count, first=None, expected=want,
                        contract_name=held.name if held is not None else "canonical", part=part,
                        contract_description=held.describe(part) if held is not None else "",
                        pitch_gap_writes=gap_writes, _operands=(a_c, w_c, s_c), _c_fill=c_fill)
    if count == 0:
        return result
    if held is not None:
        return _diagnose_held(result, got, want, held, spec, part, launch, ab, w_c, s_c)
    r, col = (int(i) for i in np.unravel_index(int(np.argmax(differ)), differ.shape))
    g, e = int(got[r, col]), int(want[r, col])
    result.first = Mismatch(r, col, g, e, bf16_ulp(g, e))
    a_row, w_row, s_row = a_c[r], w_c[col], s_c[col // 128]
    if contract == "canonical":
        fold = _core.canonical_fold(a_row, w_row, s_row)
        result.fold = {"p": fold["p"], "acc": fold["acc"], "scale": s_row.view(np.uint32).copy(), "want": e}
        prefix_bf16 = _core.round_bf16(fold["acc"])
        stopped = [i for i in range(len(prefix_bf16) - 1) if int(prefix_bf16[i]) == g]
        if stopped:
            result.diagnosis.append(f"produced equals the fold stopped after step {stopped[0]} "
                                    f"(of {len(prefix_bf16)}): later steps lost?")
    other = "gemv" if contract == "canonical" else "canonical"
    other_bits = int(_core.gemm_columns(a_row[None, :], w_row[None, :], s_row[None, :], contract=other)[0, 0])
    if other_bits == g:
        result.diagnosis.append(f"produced matches the {'GEMV order' if other == 'gemv' else 'canonical fold'} "
                                f"(0x{other_bits:04X}): the wrong contract ran")
    row_hits = np.nonzero((want[r] == g) & (np.arange(n) != col))[0]
    if row_hits.size:
        result.diagnosis.append(f"produced equals the expected C[{r}][{int(row_hits[0])}]: a write landed in the wrong column?")
    col_hits = np.nonzero((want[:, col] == g) & (np.arange(m) != r))[0]
    if col_hits.size:
        result.diagnosis.append(f"produced equals the expected C[{int(col_hits[0])}][{col}]: a write landed in the wrong row?")
    if launch is not None:
        result.diverging_step = _diverging_step(launch, ab, w_c, s_c, r, col, contract, result.fold)
    return result


def _diagnose_held(result, got, want, held, spec, part, launch, a_view, w_c, s_c) -> Comparison:
    """The diagnostics of compare() under a contract given by contract=: the first mismatch's trace
    under it (conventions.hpp), which other library value's part the produced bits match, and the
    misplaced-write checks."""
    a_c, _, _ = result._operands
    m, n = want.shape
    r, col = (int(i) for i in np.unravel_index(int(np.argmax(got != want)), want.shape))
    g, e = int(got[r, col]), int(want[r, col])
    result.first = Mismatch(r, col, g, e, bf16_ulp(g, e))
    a_row, w_row, s_row = a_c[r], w_c[col], s_c[col // 128]
    try:
        result.trace = _contract.trace(a_row, w_row, s_row, spec, part)
    except ValueError as err:  # a contract that does not define this output says so
        result.diagnosis.append(f"no trace: {err}")
    for other in _contract.library_names():
        if other == held.name:
            continue
        bits = int(_core.gemm_columns(a_row[None, :], w_row[None, :], s_row[None, :], contract=other, part=part)[0, 0])
        if bits == g:
            result.diagnosis.append(f"produced matches {other}'s {part} part (0x{bits:04X}): another contract ran?")
            break
    row_hits = np.nonzero((want[r] == g) & (np.arange(n) != col))[0]
    if row_hits.size:
        result.diagnosis.append(f"produced equals the expected C[{r}][{int(row_hits[0])}]: a write landed in the wrong column?")
    col_hits = np.nonzero((want[:, col] == g) & (np.arange(m) != r))[0]
    if col_hits.size:
        result.diagnosis.append(f"produced equals the expected C[{int(col_hits[0])}][{col}]: a write landed in the wrong row?")
    if launch is not None:
        result.diverging_step = _diverging_step(launch, a_view, w_c, s_c, r, col, "held", None, (spec, part))
    return result


def _diverging_step(launch, a_view, w_c, s_c, r, col, contract, fold, held=None) -> int | None:
    """The first 128-K step whose prefix output at (r, col) differs on the device: the kernel run
    over K' = 128 (s + 1) computes the fold's first s + 1 steps (acc starts at +0 in both contracts),
    so the first prefix that differs names the step where the device's fold first went another way.
    None when every prefix matches (the difference then needs all of K: a rounding at the end)."""
    steps = w_c.shape[1] // 128
    for s in range(steps):
        kk = 128 * (s + 1)
        got = _bits(launch(a_view[:, :kk], np.ascontiguousarray(w_c[:, :kk]), np.ascontiguousarray(s_c[:, :s + 1])),
                    "launch(...)", "bf16")
        if got.ndim != 2 or got.shape[0] <= r or got.shape[1] <= col:
            raise ValueError(f"launch(...) returned shape {got.shape}, want (M, N) = "
                             f"({a_view.shape[0]}, {w_c.shape[0]})")
        if held is not None:  # a contract given by contract=: its prefix output, emulated whole
            want = int(_core.gemm_columns(np.ascontiguousarray(a_view[r:r + 1, :kk]), w_c[col:col + 1, :kk],
                                          s_c[col // 128:col // 128 + 1, :s + 1], contract=held[0], part=held[1])[0, 0])
        elif contract == "canonical":
            want = int(_core.round_bf16(np.array([fold["acc"][s]], np.uint32))[0])
        else:
            want = int(_core.gemm_columns(np.ascontiguousarray(a_view[r:r + 1, :kk]), w_c[col:col + 1, :kk],
                                          s_c[col // 128:col // 128 + 1, :s + 1], contract="gemv")[0, 0])
        if int(got[r, col]) != want:
            return s
    return None
