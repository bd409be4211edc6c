# SPDX-License-Identifier: MIT OR Apache-2.0
# Finds and loads the compiled _core: the installed one, or the right build tree's (reports/CMakeLists.txt).
"""Which ``_core`` the package loads.

An installed package (``pip install .``) has ``_core`` beside this file and loads that one. The
package as it lies in the checkout (``reports/python``, on the venv's path through ``tools/setup``)
has none beside it and loads a build tree's, in this order:

1. ``$W8A16_BUILD_DIR`` (a build tree, e.g. ``build/host``), for work in a tree of one's own;
2. the preset ``tools/build`` built last (``build/.preset``), the tree ``tools/test`` tests;
3. else the newest ``build/*/python/w8a16check/_core*`` (a tree configured by hand).

Only that folder is searched: a module left by another tree is never picked up by accident.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def installed() -> bool:
    """True for an installed package: its compiled _core lies beside this file."""
    return any((HERE / f"_core{s}").is_file() for s in importlib.machinery.EXTENSION_SUFFIXES)


def core_dir() -> Path:
    if installed():
        return HERE
    env = os.environ.get("W8A16_BUILD_DIR")
    if env:
        return Path(env).resolve() / "python" / "w8a16check"
    preset = REPO / "build" / ".preset"
    if preset.is_file() and preset.read_text().strip():
        return REPO / "build" / preset.read_text().strip() / "python" / "w8a16check"
    built = sorted(REPO.glob("build/*/python/w8a16check/_core*"), key=lambda p: p.stat().st_mtime)
    return built[-1].parent if built else REPO / "build" / "host" / "python" / "w8a16check"


def load_core(package: str):
    folder = core_dir()
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_core{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location(f"{package}._core", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return module
    raise ImportError(f"w8a16check._core is not built in {folder}: run `tools/setup && tools/build`, or set "
                      "W8A16_BUILD_DIR to a build tree that built the target w8a16_pycore, or `pip install .`")


def data_dir() -> Path | None:
    """The data folder (a golden/: mma/, cases/, recordings/, order/): $W8A16_DATA_DIR, else the
    checkout's golden/ when the package runs from it; None for an installed package without one."""
    env = os.environ.get("W8A16_DATA_DIR")
    if env:
        return Path(env)
    if not installed() and (REPO / "golden").is_dir():
        return REPO / "golden"
    return None
