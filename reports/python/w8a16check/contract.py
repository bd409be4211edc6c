# SPDX-License-Identifier: MIT OR Apache-2.0
# The contract as data (docs/NUMERICS.md 2.4) for Python: every field is parsed, formatted and
# emulated by the C++ (reference/conventions.hpp) through _core; nothing here restates a field.
"""Contracts of the W8A16 family as data (docs/NUMERICS.md 2.4).

    lib = w8a16check.contract_library()            # canonical, seed-tile, seed-skinny, seed-rows
    c = w8a16check.load_contract("seed-skinny")      # a library name, a file path or the text form
    c = w8a16check.parse_contract("base = seed-tile\\ntc.fold = mul-add\\n")
    text = w8a16check.format_contract(c)             # every field; parses back to the same value
    C = w8a16check.emulate(a, w, s, contract=c, part="tc")   # "tc" or "gemv"

A ``Contract`` holds its name, its full text form, both parts' fields and one-line descriptions.
Bad text raises ValueError naming the line (``contract text: line 3: ...``).
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

import numpy as np

from . import _core

PARTS = ("tc", "gemv")


@dataclass(frozen=True)
class Contract:
    """One value of NUMERICS.md 2.4: a name, the full text form, and both parts' fields."""
    name: str
    text: str                                     # format_conventions: every field
    tc: dict = field(compare=False)               # the tensor-core tiers' fields (text-form names)
    gemv: dict = field(compare=False)             # the GEMV's fields
    tc_description: str = field(compare=False, default="")
    gemv_description: str = field(compare=False, default="")
    library: bool = field(compare=False, default=False)  # a library value, under its own name
    source: str = field(compare=False, default="")       # "library", "text" or the file it came from

    def describe(self, part: str) -> str:
        """One line for reports: the fields of `part` ("tc" or "gemv")."""
        if part not in PARTS:
            raise ValueError(f"part must be 'tc' or 'gemv', got {part!r}")
        return self.tc_description if part == "tc" else self.gemv_description

    def label(self, part: str) -> str:
        """"seed-skinny (tc: nan=zero fold=mul-add ...)": what a report names it by."""
        return f"{self.name} ({part}: {self.describe(part)})"

    def __str__(self) -> str:
        return self.name


def _from_dict(d: dict, source: str) -> Contract:
    return Contract(name=d["name"], text=d["text"], tc=dict(d["tc"]), gemv=dict(d["gemv"]),
                    tc_description=d["tc_description"], gemv_description=d["gemv_description"],
                    library=bool(d["library"]), source=source)


def contract_library() -> list[Contract]:
    """The named values, canonical first (NUMERICS.md 2.4, "Named values")."""
    return [_from_dict(d, "library") for d in _core.contract_library()]


def library_names() -> tuple[str, ...]:
    return tuple(d["name"] for d in _core.contract_library())


def parse_contract(text: str) -> Contract:
    """The text form (key = value lines, # comments) -> a Contract; ValueError naming the line."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (the contract's text form), got {type(text).__name__}")
    return _from_dict(_core.parse_contract(text), "text")


def load_contract(spec) -> Contract:
    """A library name, a path to a file of the text form, the text form itself, or a Contract."""
    if isinstance(spec, Contract):
        return spec
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
        return _read_file(spec)
    if not isinstance(spec, str):
        raise TypeError(f"contract must be a library name, a file path, the text form or a Contract, "
                        f"got {type(spec).__name__}")
    if spec in library_names():
        return _from_dict(_core.resolve_contract(spec), "library")
    if "=" in spec:  # the text form always has a key = value line; names and paths never need one
        return parse_contract(spec)
    if os.path.isfile(spec):
        return _read_file(spec)
    raise ValueError(f"contract {spec!r} is neither a library name ({', '.join(library_names())}), "
                     f"nor a file, nor the text form (key = value lines, NUMERICS.md 2.4)")


_MAX_CONTRACT_BYTES = 64 * 1024  # a contract is a few lines; anything larger is not one


def _read_file(path: str) -> Contract:
    # A regular file of a contract's size only, checked before it is opened and again on the open
    # descriptor: open() on a FIFO waits for a writer, and /dev/zero never ends.
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"contract file {path}: not a regular file (a folder, a FIFO or a device)")
        if st.st_size > _MAX_CONTRACT_BYTES:
            raise ValueError(f"contract file {path}: larger than {_MAX_CONTRACT_BYTES} bytes: not a contract")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError(f"contract file {path}: not a regular file")
            data = os.read(fd, _MAX_CONTRACT_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > _MAX_CONTRACT_BYTES:
            raise ValueError(f"contract file {path}: larger than {_MAX_CONTRACT_BYTES} bytes: not a contract")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"contract file {path}: {e}") from None
    try:
        d = _core.parse_contract(text)
    except ValueError as e:
        raise ValueError(f"contract file {path}: {e}") from None
    return _from_dict(d, path)


def format_contract(spec) -> str:
    """The full text form (every field), which parse_contract reads back to the same value."""
    return load_contract(spec).text


def describe(spec, part: str) -> str:
    """One line for reports: the fields of one part ("tc" or "gemv") of a contract."""
    return load_contract(spec).describe(part)


def _core_spec(spec) -> str:
    """What _core's contract arguments take: a library name as is, anything else as its text."""
    if isinstance(spec, str) and spec in ("canonical", "gemv"):
        return spec
    c = load_contract(spec)
    return c.name if c.library else c.text


def emulate(a, w, s, contract="canonical", part: str = "tc", arch: str = "sm90", threads: int = 0) -> np.ndarray:
    """The whole output C (BF16 bits, uint16 [M, N]) under one part of a contract, bit for bit.

    a: uint16 [M, K] BF16 bits; w: uint8 [N, K] E4M3 codes; s: float32 [ceil(N/128), K/128].
    part: "tc" (the tensor-core tiers) or "gemv". The canonical value gives exactly the bytes of
    ``gemm(..., contract="canonical")`` (tc) and ``contract="gemv"`` (gemv).
    """
    if part not in PARTS:
        raise ValueError(f"part must be 'tc' or 'gemv', got {part!r}")
    spec = _core_spec(contract)
    if spec == "gemv":
        spec = "canonical"
    return _core.gemm(a, w, s, contract=spec, part=part, arch=arch, threads=threads)


def trace(a_row, w_row, s_row, contract, part: str, arch: str = "sm90") -> dict:
    """One output's intermediate FP32 values (bits) under a contract's part (conventions.hpp
    tc_trace / gemv_trace): tc -> window_partials, fold_acc, acc, want; gemv -> lane_acc,
    tree_level, warp_sum, acc, want."""
    spec = _core_spec(contract)
    if spec == "gemv":
        spec = "canonical"
    return _core.contract_trace(a_row, w_row, s_row, spec, part, arch)
