# SPDX-License-Identifier: MIT OR Apache-2.0
# Which version, commit and GPU the numbers of a report come from (the audit's JSON and page header).
"""Provenance of the audit's data.

- version: ``package_version()`` (the one place that decides it);
- commit: the checkout the emulator's numbers were computed from (``git rev-parse HEAD`` of the
  repository this package lives in, with ``dirty`` when tracked files differ from it), and the
  commit ``_core`` was configured at (they differ when the module was not rebuilt since);
- GPU: the emulator runs on the CPU; the device data shown beside it (``golden/recordings/*.rec``,
  ``golden/order/<device>/``) names its GPU, driver and the commit of the binaries that ran.
"""
from __future__ import annotations

import pathlib
import re
import subprocess

from . import _core

REPO = pathlib.Path(__file__).resolve().parents[3]


def package_version() -> str:
    """w8a16check.__version__ where the package defines one, else the CMake project version the
    compiled module was built with (CMakeLists.txt project(... VERSION ...))."""
    import w8a16check

    return str(getattr(w8a16check, "__version__", None) or _core.build_info()["version"])


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def source_commit() -> dict:
    """The checkout's commit (None outside a git checkout), whether tracked files differ from it,
    and the commit the compiled module was configured at."""
    head = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if head else None
    return {"commit": head, "dirty": bool(status), "core_build_commit": _core.build_info()["commit"]}


def order_run_gpu(run_log: pathlib.Path) -> dict:
    """GPU, driver and binaries' commit from a golden/order/<device>/run.log (tools/gpu-order writes
    nvidia-smi's lines and 'binaries built at commit: X'); fields it does not find are None."""
    text = run_log.read_text(errors="replace") if run_log.is_file() else ""
    gpu = re.search(r"^GPU 0: (.+?)(?: \(UUID|$)", text, re.M)
    driver = re.search(r"^[^,\n]+, (\d[\d.]+)$", text, re.M)
    commit = re.search(r"binaries built at commit: (\S+)", text)
    return {"gpu": gpu.group(1) if gpu else None, "driver": driver.group(1) if driver else None,
            "commit": commit.group(1) if commit else None}


def describe(device_recordings: dict, device_order: dict) -> dict:
    """The JSON's provenance block: version, source commit, and one entry per device data source."""
    src = source_commit()
    devices = []
    for f in device_recordings.get("files", []):
        h = f["header"]
        devices.append({"source": f["path"], "kind": "GEMM outputs recorded by `w8a16check record`",
                        "gpu": h["gpu"], "compute_capability": h["compute_capability"], "driver": h["driver"],
                        "cuda": h["cuda"], "commit": h["commit"]})
    for d in device_order.get("devices", []):
        info = d.get("run") or {}
        devices.append({"source": f"{device_order['searched']}/{d['device']}",
                        "kind": "reduction-order probes run by tools/gpu-order", "gpu": info.get("gpu"),
                        "driver": info.get("driver"), "commit": info.get("commit")})
    return {"version": package_version(), **src,
            "emulator": "CPU: reference/ through w8a16check._core (no GPU involved)",
            "device_data": devices,
            "gpus": sorted({d["gpu"] for d in devices if d.get("gpu")})}
