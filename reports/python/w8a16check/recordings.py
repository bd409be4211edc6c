# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's device-recordings section: recorded H200 bytes against the emulator's contracts.
"""Device recordings (golden/recordings/*.rec, format golden/include/w8a16/golden/recording.hpp)
in the audit: for each entry point and kernel body, the recorded device bits against the contract
the entry must meet (the canonical fold, NUMERICS.md 2.1, for the tensor-core entries; the GEMV
order, 2.2, for gemv_batch*; as properties/src/recordings.cpp decides through
golden::entry_point_is_gemv), and, for the tensor-core entries, how the device bits sit against
the GEMV order and the exact result on the same inputs (the reassociation, measured on hardware).

A mismatch is any recorded output the contract does not reproduce; it is counted and listed, never
dropped. Cases recorded with their digest only (no bits) are checked by digest (the emulator's
FNV-1a digest of C[:, :n] against the recorded one): they add to the case verdict, not to the
element counts or histograms. Digest-only cases larger than `max_macs` (m n k) are the model
shapes, which take minutes to emulate on 2 cores: they are listed as not replayed here, with the
command that replays them (`w8a16check replay --recordings`).
"""
from __future__ import annotations

import os
import pathlib

import numpy as np

from . import _core, stats

ULP_BINS = 17           # as the audit: 0..15 ULP, then one bin for >= 16
MAX_MACS = 2 ** 26      # digest-only cases above this many m*n*k are not emulated here


def kernel_body(line: str) -> str:
    """The body the launch layer plans for a case line (device/src/plan.cpp through _core.plan_case,
    every kernel present, H200 limits): the dispatch of THIS checkout. A recording made by binaries
    with other dispatch rules ran what its header's commit planned; the audit says so."""
    return _core.plan_case(line)["body"]


def kernel_and_body(line: str) -> tuple[str, str]:
    plan = _core.plan_case(line)
    return plan["kernel"], plan["body"]


def _finite(bits: np.ndarray) -> np.ndarray:
    return (bits & 0x7F80) != 0x7F80


def _ulp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ox = np.where(x & 0x8000, -(x & 0x7FFF).astype(np.int64), (x & 0x7FFF).astype(np.int64))
    oy = np.where(y & 0x8000, -(y & 0x7FFF).astype(np.int64), (y & 0x7FFF).astype(np.int64))
    return np.abs(ox - oy)


def _interval(case_identical: list) -> dict | None:
    if not case_identical:
        return None
    y, m = np.array(case_identical, dtype=np.int64).T
    return stats.share_interval(y, m)


def find_recordings(paths) -> list[str]:
    """.rec files among `paths` (files, or folders searched recursively), sorted."""
    out = []
    for p in paths:
        p = pathlib.Path(p)
        if p.is_file():
            out.append(str(p))
        elif p.is_dir():
            out.extend(sorted(str(f) for f in p.rglob("*.rec")))
    return out


def _new_group(entry: str, body: str, contract: str) -> dict:
    g = {"entry": entry, "body": body, "kernels": [], "contract": contract, "cases": 0, "cases_with_bits": 0,
         "digest_only_checked": 0, "digest_only_not_replayed": 0, "outputs_compared": 0,
         "mismatches": 0, "mismatching_cases": 0}
    if contract == "canonical":
        g.update({"identical_to_gemv": 0, "ulp_finite_outputs": 0, "case_identical": [],
                  "ulp_hist": {"device_vs_gemv": [0] * ULP_BINS, "device_vs_exact": [0] * ULP_BINS},
                  "ulp_max": {"device_vs_gemv": 0, "device_vs_exact": 0}})
    return g


def check_file(path: str, max_macs: int = MAX_MACS, text: str | None = None) -> dict:
    """One recording: per (entry, body) group the counts the audit shows, and every mismatch."""
    rec = _core.parse_recording(text, path) if text is not None else _core.read_recording(path)
    groups: dict[tuple[str, str], dict] = {}
    mismatches, not_replayed = [], []
    for out in rec["outputs"]:
        case = out["case"]
        entry = case["entry"].removeprefix("w8a16_")
        kernel, body = kernel_and_body(case["line"])
        g = groups.setdefault((entry, body), _new_group(entry, body, case["contract"]))
        if kernel not in g["kernels"]:
            g["kernels"] = sorted(g["kernels"] + [kernel])
        g["cases"] += 1
        bits = out["bits"]
        if bits is None and case["m"] * case["n"] * case["k"] > max_macs:
            # No outputs computed: recorded_verdict's "not replayed", never counted as agreeing.
            g["digest_only_not_replayed"] += 1
            not_replayed.append(case["line"])
            continue
        x = _core.case_inputs(case["line"])
        k, n = case["k"], case["n"]
        emu = np.ascontiguousarray(_core.gemm(x["a"], x["w"], x["s"], contract=case["contract"])[:, :n])
        # Equal or not, and how many outputs differ, is decided once, in C++ (recording.hpp
        # recorded_verdict), as `replay --recordings` and the C++ tests decide it.
        v = _core.recorded_verdict(out, emu)
        if v["digest_only"]:
            g["digest_only_checked"] += 1
            if v["verdict"] != "equal":
                g["mismatching_cases"] += 1
                mismatches.append({"case": case["line"], "entry": entry, "body": body, "outputs_differing": None,
                                   "detail": f"digest of the emulator's output differs from the recorded "
                                             f"0x{out['digest']:016x} (digest-only recording: elements unknown)"})
            continue
        g["cases_with_bits"] += 1
        g["outputs_compared"] += int(v["outputs_compared"])
        if v["verdict"] != "equal":
            g["mismatches"] += int(v["outputs_differing"])
            g["mismatching_cases"] += 1
            r, c = v["first"]
            mismatches.append({"case": case["line"], "entry": entry, "body": body,
                               "outputs_differing": int(v["outputs_differing"]),
                               "detail": f"first C[{r}][{c}] = 0x{int(bits[r, c]):04X} recorded, "
                                         f"0x{int(emu[r, c]):04X} from the {case['contract']} contract"})
        if case["contract"] == "canonical":
            gemv = _core.gemm(x["a"], x["w"], x["s"], contract="gemv")[:, :n]
            _, exact_bf16 = _core.exact(np.ascontiguousarray(x["a"][:, :k]), x["w"], x["s"])
            g["identical_to_gemv"] += int(np.sum(bits == gemv))
            # [identical, outputs] per case: a case is one cluster for the share's interval (stats.py).
            g["case_identical"].append([int(np.sum(bits == gemv)), int(bits.size)])
            # ULP distances only where all three are finite: a NaN or Inf has no distance.
            ok = _finite(bits) & _finite(gemv) & _finite(exact_bf16)
            g["ulp_finite_outputs"] += int(ok.sum())
            for name, other in (("device_vs_gemv", gemv), ("device_vs_exact", exact_bf16)):
                d = _ulp(bits[ok], other[ok])
                if d.size:
                    g["ulp_hist"][name] = (np.array(g["ulp_hist"][name]) +
                                           np.bincount(np.minimum(d, ULP_BINS - 1), minlength=ULP_BINS)).tolist()
                    g["ulp_max"][name] = max(g["ulp_max"][name], int(d.max()))
    rows = [groups[key] for key in sorted(groups)]
    for g in rows:
        if g["contract"] == "canonical":
            g["identical_to_gemv_share"] = g["identical_to_gemv"] / g["outputs_compared"] if g["outputs_compared"] else None
            g["identical_to_gemv_interval"] = _interval(g["case_identical"])
    return {"path": path, "header": rec["header"], "cases": len(rec["outputs"]), "groups": rows,
            "outputs_compared": sum(g["outputs_compared"] for g in rows),
            "mismatches": sum(g["mismatches"] for g in rows),
            "mismatching_cases": sum(g["mismatching_cases"] for g in rows),
            "digest_only_not_replayed": not_replayed, "mismatch_list": mismatches}


def section(paths=None, max_macs: int = MAX_MACS, repo: str | None = None) -> dict:
    """The audit's "device recordings" section over every .rec under `paths` (default golden/recordings)."""
    from . import _paths

    repo = repo or str(_paths.REPO)
    if paths is None:
        data = _paths.data_dir()
        if data is None:
            return {"searched": [], "found": False, "max_macs": max_macs, "files": [], "mismatches": 0,
                    "mismatching_cases": 0, "outputs_compared": 0, "cases": 0,
                    "note": "no data folder: pass --recordings or set W8A16_DATA_DIR (an installed package has none)"}
        paths = [os.path.join(str(data), "recordings")]
    files = find_recordings(paths)
    # Paths inside the checkout are shown relative to it: the report reads the same on every machine.
    rel = (lambda p: os.path.relpath(p, repo) if os.path.abspath(p).startswith(repo + os.sep) else str(p))
    paths = [rel(p) for p in paths]
    res = {"searched": [str(p) for p in paths], "found": bool(files), "max_macs": max_macs,
           "replay_command": "build/bin/w8a16check replay --recordings golden/recordings",
           "files": [], "unreadable": []}
    for f in files:
        try:
            res["files"].append(check_file(f, max_macs) | {"path": rel(f)})
        except ValueError as exc:
            # A recording its reader refuses (cut, corrupt) is a failure the verdict names, never a
            # traceback and never a file left out quietly.
            res["unreadable"].append(f"{rel(f)}: {exc}")
    if not files:
        res["note"] = "no device recording found under " + ", ".join(res["searched"])
    res["mismatches"] = sum(f["mismatches"] for f in res["files"])
    res["mismatching_cases"] = sum(f["mismatching_cases"] for f in res["files"])
    res["outputs_compared"] = sum(f["outputs_compared"] for f in res["files"])
    res["cases"] = sum(f["cases"] for f in res["files"])
    return res


def tiers(bodies: list[dict], device_recordings: dict, device_order: dict) -> list[dict]:
    """One row per kernel body of the launch layer (``_core.bodies()``, so every tier the C++ knows,
    a new one included): its recorded device bits summed over every recording and entry point, and
    its reduction trees recovered on a device. ``status`` is 'MISMATCH' if any recorded output or
    tree differs from the body's contract, 'no device recording' if no recording holds a case of it,
    'recorded, digest only' if every case of it was checked by digest alone (no device bits), else
    'recorded'."""
    rows = []
    for b in bodies:
        name = b["name"]
        groups = [g for f in device_recordings.get("files", []) for g in f["groups"] if g["body"] == name]
        files = sorted({f["path"] for f in device_recordings.get("files", []) for g in f["groups"]
                        if g["body"] == name})
        row = {"body": name, "contract": b["contract"], "recordings": files,
               "entries": sorted({g["entry"] for g in groups}),
               "kernels": sorted({k for g in groups for k in g.get("kernels", [])})}
        for key in ("cases", "cases_with_bits", "digest_only_checked", "digest_only_not_replayed",
                    "outputs_compared", "mismatches", "mismatching_cases"):
            row[key] = sum(g[key] for g in groups)
        if b["contract"] == "canonical":
            cases = [c for g in groups for c in g.get("case_identical", [])]
            row["identical_to_gemv_interval"] = _interval(cases)
            row["ulp_max"] = {n: max((g["ulp_max"][n] for g in groups if g["outputs_compared"]), default=None)
                              for n in ("device_vs_gemv", "device_vs_exact")}
        probes = [{"device": d["device"], "probe": r["name"], "entry": r["entry"], "k": r["k"],
                   "matches_documented": bool(r["matches_documented"] and not r.get("error")),
                   "error": r.get("error")}
                  for d in device_order.get("devices", []) for r in d["results"]
                  if (r.get("body") or r.get("expected_body")) == name]
        row["order_probes"] = probes
        # Device trees: the reduction order recovered from this body's outputs on a GPU (order.py). A body
        # without them is flagged by the audit: its order on the hardware is only what its recorded
        # outputs imply.
        row["device_trees"] = ("MISMATCH" if any(not p["matches_documented"] for p in probes)
                               else "recovered" if probes else "none")
        checked = row["cases_with_bits"] + row["digest_only_checked"]
        if row["mismatches"] or row["mismatching_cases"] or any(not p["matches_documented"] for p in probes):
            row["status"] = "MISMATCH"
        elif not row["cases"]:
            row["status"] = "no device recording"
        elif not checked:
            row["status"] = "recorded, not replayed here"
        elif not row["cases_with_bits"]:
            # Checked by digest only: every recorded case of the body has more outputs than a
            # recording keeps as bits (golden/recording.hpp kRecordingFullOutputsMax), so the audit
            # has no device bits of it for its ULP and GEMV statistics.
            row["status"] = "recorded, digest only"
        else:
            row["status"] = "recorded"
        rows.append(row)
    return rows
