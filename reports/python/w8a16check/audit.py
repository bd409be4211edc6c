# SPDX-License-Identifier: MIT OR Apache-2.0
# The reassociation audit: canonical fold vs scalar GEMV vs the exact result, on model shapes.
"""python -m w8a16check.audit --out DIR      (the default audit: a few minutes on 2 cores)
python -m w8a16check.audit --replay N K DIST SEED M_ROW N_COL   (one output, every number)

For each shape (N, K), row count M and distribution, a sample of output columns is computed under
both contracts and exactly (all in C++); the audit reports how often the contracts agree bit for
bit, their BF16 ULP distances to each other and to the exactly rounded result, and each contract's
error against its a priori bound (bounds.py). It then recovers both contracts' K-reduction order
from crafted inputs (order.py), and shows the kernels' trees recovered on a GPU where golden/order/
holds such a recording. Device recordings (golden/recordings/*.rec, recordings.py) are checked against
the contract each entry point must meet and set beside the GEMV order and the exact result.
Writes DIR/summary.json and DIR/report.html (one self-contained page, its images embedded);
exits 1 when a bound, a contract or a documented order is contradicted (summary.json's verdict).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

from . import _core, _paths, bounds, data, order, provenance, stats, recordings as recordings_mod
from . import contract as _contract_mod


SHAPES = ((12288, 2048), (2048, 4096), (8192, 2048), (10240, 5120), (51200, 5120), (5120, 25600))
ROWS = (1, 16, 64)
CONTRACTS = ("canonical", "gemv")
ULP_BINS = 17  # histogram bins 0..15 ULP, then one bin for >= 16


def ordinal_bf16(bits: np.ndarray) -> np.ndarray:
    """BF16 bits -> integers in value order (+0 and -0 both 0): a ULP distance is a difference."""
    mag = (bits & 0x7FFF).astype(np.int64)
    return np.where(bits & 0x8000, -mag, mag)


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(ordinal_bf16(x) - ordinal_bf16(y))


def evaluate(dist: str, seed: int, k: int, rows: np.ndarray, cols: np.ndarray, contract=None) -> dict:
    """Both contracts' BF16 outputs and FP32 accumulators, the exact value and sigma for outputs
    rows x cols ([M, C] arrays), all computed by the C++ (_core). contract (--contract, NUMERICS.md
    2.4): None for canonical (2.1 and 2.2); else a Contract whose tc part stands in the "canonical"
    column (the tensor-core tiers) and whose gemv part in the "gemv" column."""
    a, w, s = data.operands(dist, seed, k, rows, cols)
    if contract is None or contract.text == _contract_mod.load_contract("canonical").text:
        out = {c: _core.gemm_columns(a, w, s, contract=c) for c in CONTRACTS}
        acc = {"canonical": _core.canonical_acc_columns(a, w, s).view(np.float32),  # before the BF16 rounding
               "gemv": _core.gemv_acc_columns(a, w, s).view(np.float32)}
    else:
        spec = _contract_mod._core_spec(contract)
        parts = {"canonical": "tc", "gemv": "gemv"}
        out = {c: _core.gemm_columns(a, w, s, contract=spec, part=parts[c]) for c in CONTRACTS}
        acc = {c: _core.contract_acc_columns(a, w, s, spec, parts[c]).view(np.float32) for c in CONTRACTS}
    x, x_bf16 = _core.exact_columns(a, w, s)
    # sigma = sum_k |a_k w_k S| in float64 from the exact operand values (decoded by the C++), one
    # output at a time along K (numpy's pairwise sum): the same bits whichever rows and columns are
    # evaluated together, so a replayed output has the audit's sigma exactly (a matrix product's
    # blocking would depend on the batch).
    av = np.abs(_core.bf16_to_f32(a).astype(np.float64))
    wv = np.abs(_core.decode_e4m3(w).astype(np.float64)) * np.repeat(np.abs(s.astype(np.float64)), 128, axis=1)
    sigma = np.stack([(row[None, :] * wv).sum(axis=1) for row in av])
    return {"a": a, "w": w, "s": s, "out": out, "acc": acc, "exact": x, "exact_bf16": x_bf16, "sigma": sigma}


def _stats(values: np.ndarray) -> dict:
    return {"max": float(np.max(values)), "p999": float(np.quantile(values, 0.999)), "mean": float(np.mean(values))}


# Per contract and output, what the audit measures (bounds.py defines the bounds):
#   ulp            BF16 ULP distance of C to the exact result rounded once
#   out_err_sigma  |C - x| / sigma            (against beta_output(K): the BF16 output's line)
#   ratio          |C - x| / bound_output(x, sigma)   (against 1: the exact per-output test)
#   acc_err_sigma  |acc - x| / sigma          (against beta(K): the FP32 accumulator's line)
#   acc_ratio      |acc - x| / (beta sigma)   (against 1)
METRICS = ("ulp", "out_err_sigma", "ratio", "acc_err_sigma", "acc_ratio")


def metrics(ev: dict, k: int) -> dict:
    """Every per-output metric of both contracts ([M, C] arrays), and canonical vs GEMV in ULPs."""
    x, sigma = ev["exact"], ev["sigma"]
    res = {"canonical_vs_gemv_ulp": ulp_distance(ev["out"]["canonical"], ev["out"]["gemv"])}
    for c in CONTRACTS:
        value = _core.bf16_to_f32(ev["out"][c]).astype(np.float64)
        acc_err = np.abs(ev["acc"][c].astype(np.float64) - x)
        res[c] = {"ulp": ulp_distance(ev["out"][c], ev["exact_bf16"]),
                  "out_err_sigma": np.abs(value - x) / sigma,
                  "ratio": np.abs(value - x) / bounds.bound_output(c, k, x, sigma),
                  "acc_err_sigma": acc_err / sigma,
                  "acc_ratio": acc_err / (bounds.beta(c, k) * sigma)}
    return res


def _record(ev: dict, met: dict, i: int, j: int, rows, cols, n_total: int, k: int, dist: str, seed: int) -> dict:
    """Every number of output (rows[i], cols[j]): what the worst-case table and the headline show."""
    x, sigma = float(ev["exact"][i, j]), float(ev["sigma"][i, j])
    rec = {"n_shape": n_total, "k": k, "dist": dist, "seed": seed, "m": int(rows[i]), "n": int(cols[j]),
           "exact": x, "sigma": sigma, "cond": sigma / abs(x) if x != 0.0 else None,
           "exact_bf16_bits": f"0x{int(ev['exact_bf16'][i, j]):04X}",
           "canonical_vs_gemv_ulp": int(met["canonical_vs_gemv_ulp"][i, j])}
    for c in CONTRACTS:
        rec[f"{c}_bits"] = f"0x{int(ev['out'][c][i, j]):04X}"
        rec[c] = {"value": float(_core.bf16_to_f32(ev["out"][c][i:i + 1, j:j + 1])[0, 0]),
                  "acc": float(ev["acc"][c][i, j]), "ulp_vs_exact": int(met[c]["ulp"][i, j]),
                  "bound_ratio": float(met[c]["ratio"][i, j]), "acc_bound_ratio": float(met[c]["acc_ratio"][i, j])}
    return rec


# (name in the JSON, contract or None for canonical vs GEMV, metric of `metrics`)
WORST = (("ulp_vs_exact", "canonical", "ulp"), ("ulp_vs_exact", "gemv", "ulp"),
         ("bound_ratio", "canonical", "ratio"), ("bound_ratio", "gemv", "ratio"),
         ("acc_bound_ratio", "canonical", "acc_ratio"), ("acc_bound_ratio", "gemv", "acc_ratio"),
         ("canonical_vs_gemv_ulp", None, None))


def measure(ev: dict, n_total: int, k: int, dist: str, seed: int, rows, cols) -> tuple[dict, dict]:
    """One configuration's summary (JSON) and its raw per-output metrics (for the per-shape statistics)."""
    can, gemv = ev["out"]["canonical"], ev["out"]["gemv"]
    met = metrics(ev, k)
    same = can == gemv
    result = {
        "n": n_total, "k": k, "m": int(len(rows)), "dist": dist, "seed": seed, "columns": int(len(cols)),
        "outputs": int(can.size),
        # A sampled column is one cluster of M outputs (stats.py): they share the column's W row.
        "identical": stats.share_interval(same.sum(axis=0), np.full(same.shape[1], same.shape[0])),
        "exact_rounding_share": {c: float(np.mean(ev["out"][c] == ev["exact_bf16"])) for c in CONTRACTS},
        "ulp": {"canonical_vs_gemv": _stats(met["canonical_vs_gemv_ulp"]),
                "canonical_vs_exact": _stats(met["canonical"]["ulp"]),
                "gemv_vs_exact": _stats(met["gemv"]["ulp"])},
        "bound_ratio": {c: _stats(met[c]["ratio"]) for c in CONTRACTS},
        "bound_violations": {c: int(np.sum(met[c]["ratio"] > 1.0)) for c in CONTRACTS},
        "acc_bound_ratio": {c: _stats(met[c]["acc_ratio"]) for c in CONTRACTS},
        "acc_bound_violations": {c: int(np.sum(met[c]["acc_ratio"] > 1.0)) for c in CONTRACTS},
        "beta": {c: bounds.beta(c, k) for c in CONTRACTS},
        "beta_output": {c: bounds.beta_output(c, k) for c in CONTRACTS},
        "cond_median": float(np.median(ev["sigma"] / np.maximum(np.abs(ev["exact"]), np.finfo(np.float64).tiny))),
    }
    result["identical_share"] = result["identical"]["share"]
    hist = {name: np.bincount(np.minimum(d.ravel(), ULP_BINS - 1), minlength=ULP_BINS)
            for name, d in (("canonical_vs_gemv", met["canonical_vs_gemv_ulp"]),
                            ("canonical_vs_exact", met["canonical"]["ulp"]), ("gemv_vs_exact", met["gemv"]["ulp"]))}
    worst = []
    for name, c, metric in WORST:
        score = met["canonical_vs_gemv_ulp"] if c is None else met[c][metric]
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        worst.append({"metric": name, "contract": c or "canonical_vs_gemv", "score": float(score[i, j]),
                      **_record(ev, met, i, j, rows, cols, n_total, k, dist, seed)})
    raw = {c: {m: met[c][m].ravel() for m in METRICS} for c in CONTRACTS}
    raw["canonical_vs_gemv_ulp"] = met["canonical_vs_gemv_ulp"].ravel()
    return result, {"hist": hist, "worst": worst, "raw": raw}


def audit_config(n_total: int, k: int, m: int, dist: str, seed: int, columns: int,
                 evaluate_fn=None, contract=None) -> tuple[dict, dict]:
    cols = data.sample_columns(seed, n_total, k, columns)
    rows = np.arange(m)
    ev = evaluate_fn(dist, seed, k, rows, cols) if evaluate_fn else evaluate(dist, seed, k, rows, cols, contract)
    return measure(ev, n_total, k, dist, seed, rows, cols)


def order_section(arch: str = "sm90") -> list[dict]:
    """Recovered vs documented reduction trees: every position at K = 256, chunk starts at K = 2048."""
    out = []
    for contract in CONTRACTS:
        out.append(order.recover(contract, 256, np.arange(256), arch))
        out.append(order.recover(contract, 2048, np.arange(0, 2048, 16), arch))
    # The probe also sees inside one MMA: the unverified sm_80 policy splits each k16 into two
    # chained blocks of 8, which the recovered tree must show (and sm_90's one block must not).
    out.append(order.recover("canonical", 256, np.arange(256), "sm80"))
    return out


def device_order_section(root=None) -> dict:
    """The kernels' trees recovered on a device (golden/order/<device>/, golden/order/README.md)
    beside the documented order of the contract each entry must meet."""
    data = _paths.data_dir()
    if not root and data is None:
        return {"searched": "", "found": False, "devices": [],
                "note": "no data folder: pass --order-dir or set W8A16_DATA_DIR (an installed package has none)"}
    root = pathlib.Path(root) if root else data / "order"
    devices = sorted(d for d in root.glob("*") if (d / "manifest.json").is_file()) if root.is_dir() else []
    repo = _paths.REPO
    shown = str(root.resolve().relative_to(repo)) if root.resolve().is_relative_to(repo) else str(root)
    res = {"searched": shown, "found": bool(devices), "devices": []}
    if not devices:
        res["note"] = f"no device order recording under {shown} (golden/order/README.md says how to make one)"
    for d in devices:
        try:
            rec = order.recover_dir(str(d))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A manifest that does not read is a failed recording, shown and counted, not a traceback.
            rec = {"directory": str(d), "all_match": False, "results": [],
                   "error": f"{d / 'manifest.json'} cannot be read: {exc!r}"}
            res.setdefault("unreadable", []).append(rec["error"])
        rec["device"] = d.name
        rec["run"] = provenance.order_run_gpu(d / "run.log")
        res["devices"].append(rec)
    res["all_match"] = bool(devices) and all(r["all_match"] for r in res["devices"])
    return res


def data_evidence(recordings=None, order_root=None) -> dict:
    """The data folder's evidence that the device sections read (recordings/ and order/, when no
    --recordings or --order-dir replaces them), held to its evidence manifests as verify holds it
    (golden/include/w8a16/golden/manifest.hpp). A folder that is missing, holds no recording, or
    whose files differ from their manifest, is a problem: a report with nothing checked is no PASS."""
    uses = [name for name, given in (("recordings", recordings), ("order", order_root)) if not given]
    data = _paths.data_dir() if uses else None
    res = {"data_dir": str(data) if data is not None else None, "folders": [], "problems": []}
    if not uses or data is None:
        return res
    source = "W8A16_DATA_DIR" if os.environ.get("W8A16_DATA_DIR") else "the checkout's golden/"
    if not data.is_dir():
        res["problems"].append(f"data folder {data} ({source}) is not a folder: it holds none of the evidence "
                               "the device sections read")
        return res
    for name in uses:
        folder = data / name
        res["folders"].append(str(folder))
        if not folder.is_dir():
            res["problems"].append(f"{folder}: missing from the data folder ({source})")
            continue
        if name == "recordings" and not recordings_mod.find_recordings([folder]):
            res["problems"].append(f"{folder}: holds no device recording (.rec)")
        if name == "order" and not any((d / "manifest.json").is_file() for d in folder.glob("*")):
            res["problems"].append(f"{folder}: holds no device order recording (a folder with manifest.json)")
        res["problems"].extend(_core.check_evidence(str(folder), True)["problems"])
    return res


def run(out_dir: str, shapes, rows, dists, seed: int, columns: int, log=print, recordings=None,
        order_root=None, evaluate_fn=None, contract=None) -> dict:
    """The whole audit; writes out_dir/summary.json and out_dir/report.html. evaluate_fn replaces
    `evaluate` (same arguments and result): tests plant errors through it into the whole pipeline.
    contract: what the tiers are held to (a library name, file, text or Contract; default canonical):
    its tc part gives the tensor-core column, its gemv part the GEMV column (NUMERICS.md 2.4)."""
    held = _contract_mod.load_contract("canonical" if contract is None else contract)
    from . import report  # matplotlib is needed only to write the report

    t0 = time.time()
    evidence = data_evidence(recordings, order_root)
    for problem in evidence["problems"]:
        log(f"audit: evidence: {problem}")
    configs, hists, worst, raw_shape = [], {}, [], {}
    for dist in dists:
        hists[dist] = {}
        for n_total, k in shapes:
            for m in rows:
                res, extra = audit_config(n_total, k, m, dist, seed, columns, evaluate_fn, held)
                configs.append(res)
                for name, h in extra["hist"].items():
                    hists[dist][name] = hists[dist].get(name, 0) + h
                worst.extend(extra["worst"])
                raw_shape.setdefault((dist, n_total, k), []).append(extra["raw"])
                log(f"audit: {dist:12s} N={n_total:6d} K={k:6d} M={m:3d}: identical "
                    f"{res['identical_share']:.4f}, max ULP can/gemv {res['ulp']['canonical_vs_gemv']['max']:.0f}")
    device_recordings = recordings_mod.section(recordings)
    device_order = device_order_section(order_root)
    summary = {
        "tool": "w8a16check.audit",
        "version": provenance.package_version(),
        "provenance": provenance.describe(device_recordings, device_order),
        "seed": seed,
        # What the tiers were held to (NUMERICS.md 2.4): canonical unless --contract named another.
        "contract": {"name": held.name, "source": held.source, "tc": held.tc_description,
                     "gemv": held.gemv_description, "text": held.text},
        "columns_per_shape": columns,
        "sampling": "output columns sampled per shape (n = 0 and N-1 always included), all M rows; "
                    "each sampled column computed in full (all K)",
        "shapes": [list(s) for s in shapes], "rows": list(rows), "distributions": list(dists),
        "distribution_descriptions": {d: data.DESCRIPTIONS[d] for d in dists},
        "mma_policy": _core.mma_policy("sm90"),
        "bound": {"statement": bounds.__doc__, "u_fp32": bounds.U32, "u_mma": bounds.U_MMA, "u_bf16": bounds.U_BF16},
        "identical_interval_method": stats.__doc__,
        "totals": _totals(configs),
        "headline": _headline(worst),
        "ulp_histograms": {d: {n: h.tolist() for n, h in hs.items()} for d, hs in hists.items()},
        "ulp_histogram_bins": [str(i) for i in range(ULP_BINS - 1)] + [f">={ULP_BINS - 1}"],
        "configs": configs,
        "by_shape": {d: [_shape_stats(d, n, k, raw_shape[(d, n, k)]) for n, k in shapes] for d in dists},
        "worst_cases": _worst_table(worst),
        "reduction_order": order_section(),
        "device_order": device_order,
        "device_recordings": device_recordings,
        "tiers": recordings_mod.tiers(_core.bodies(), device_recordings, device_order),
        "evidence": evidence,
    }
    summary["commit"] = summary["provenance"]["commit"] or summary["provenance"]["core_build_commit"]
    summary["gpu"] = summary["provenance"]["gpus"]
    summary["verdict"] = verdict(summary)
    dr = summary["device_recordings"]
    log(f"audit: device recordings: {dr['cases']} cases in {len(dr['files'])} files, {dr['outputs_compared']} "
        f"outputs compared, {dr['mismatches']} mismatching outputs, {dr['mismatching_cases']} mismatching cases"
        + ("" if dr["found"] else " (" + dr["note"] + ")"))
    summary["seconds"] = round(time.time() - t0, 1)
    report.write(out_dir, summary)
    return summary


def _shape_stats(dist: str, n: int, k: int, raws: list[dict]) -> dict:
    """One shape's statistics over every M: what the figures against K plot, one point per shape."""
    res = {"dist": dist, "n": n, "k": k, "outputs": int(sum(r["canonical"]["ulp"].size for r in raws)),
           "beta": {c: bounds.beta(c, k) for c in CONTRACTS},
           "beta_output": {c: bounds.beta_output(c, k) for c in CONTRACTS},
           "canonical_vs_gemv_ulp": _stats(np.concatenate([r["canonical_vs_gemv_ulp"] for r in raws]))}
    for c in CONTRACTS:
        res[c] = {m: _stats(np.concatenate([r[c][m] for r in raws])) for m in METRICS}
    return res


def _worst_table(worst: list[dict], per_metric: int = 10) -> list[dict]:
    """The highest-scoring outputs per metric (both contracts together), each output once per metric;
    a score of 0 (an output equal to the exact result rounded once) is no worst case."""
    out = []
    for metric in ("ulp_vs_exact", "bound_ratio", "acc_bound_ratio"):
        seen, rows = set(), []
        for r in sorted((r for r in worst if r["metric"] == metric and r["score"] > 0), key=lambda r: -r["score"]):
            key = (r["contract"], r["dist"], r["n_shape"], r["k"], r["m"], r["n"])
            if key not in seen:
                seen.add(key)
                rows.append(r)
        out += rows[:per_metric]
    return out


def _headline(worst: list[dict]) -> dict:
    """Per contract the output with the largest ULP distance to exact, the largest |C - x| / bound and
    the largest |acc - x| / (beta sigma), each with every number of that output; and the largest
    canonical vs GEMV distance."""
    def top(metric, contract):
        rows = [w for w in worst if w["metric"] == metric and w["contract"] == contract]
        return max(rows, key=lambda r: r["score"]) if rows else None
    head = {c: {"largest_ulp": top("ulp_vs_exact", c), "largest_bound_ratio": top("bound_ratio", c),
                "largest_acc_bound_ratio": top("acc_bound_ratio", c)} for c in CONTRACTS}
    head["canonical_vs_gemv"] = top("canonical_vs_gemv_ulp", "canonical_vs_gemv")
    return head


def verdict(summary: dict) -> dict:
    """Every finding that contradicts the model, the bounds or a contract; ok only if there is none."""
    t, problems = summary["totals"], []
    for c in CONTRACTS:
        if t["bound_violations"][c]:
            problems.append(f"{t['bound_violations'][c]} {c} outputs above their bound")
        if t["acc_bound_violations"][c]:
            problems.append(f"{t['acc_bound_violations'][c]} {c} FP32 accumulators above beta sigma")
    bad_order = [f"{o['contract']} K={o['k']} ({o['arch']})" for o in summary["reduction_order"]
                 if not o["matches_documented"]]
    if bad_order:
        problems.append("emulator's recovered tree differs from the documented order: " + ", ".join(bad_order))
    dr, do = summary["device_recordings"], summary["device_order"]
    if dr["mismatches"] or dr["mismatching_cases"]:
        problems.append(f"device recordings: {dr['mismatches']} outputs in {dr['mismatching_cases']} cases differ "
                        "from the contract their entry point must meet")
    for bad in dr.get("unreadable", []) + do.get("unreadable", []):
        problems.append(f"device evidence that cannot be read: {bad}")
    if do["found"] and not do["all_match"]:
        problems.append("a kernel's tree recovered on a device differs from its contract's, or a probe failed")
    problems.extend(f"evidence: {p}" for p in summary.get("evidence", {}).get("problems", []))
    return {"ok": not problems, "problems": problems}


def _totals(configs: list[dict]) -> dict:
    outputs = sum(c["outputs"] for c in configs)
    identical = stats.pooled([c["identical"] for c in configs])
    return {
        "outputs": outputs,
        "identical": identical,
        "identical_share": identical["share"],
        "max_ulp": {n: max(c["ulp"][n]["max"] for c in configs) for n in configs[0]["ulp"]},
        "max_bound_ratio": {c: max(x["bound_ratio"][c]["max"] for x in configs) for c in CONTRACTS},
        "bound_violations": {c: sum(x["bound_violations"][c] for x in configs) for c in CONTRACTS},
        "max_acc_bound_ratio": {c: max(x["acc_bound_ratio"][c]["max"] for x in configs) for c in CONTRACTS},
        "acc_bound_violations": {c: sum(x["acc_bound_violations"][c] for x in configs) for c in CONTRACTS},
    }


def replay(n_total: int, k: int, dist: str, seed: int, m: int, n: int) -> dict:
    """Every number of one output (m, n) of one audit configuration, regenerated from its description:
    the same record the worst-case table and the headline show."""
    if not 0 <= n < n_total:
        raise ValueError(f"n must be in [0, {n_total}), got {n}")
    if m < 0:
        raise ValueError(f"m must be non-negative, got {m}")
    rows, cols = np.array([m]), np.array([n])
    ev = evaluate(dist, seed, k, rows, cols)
    rec = _record(ev, metrics(ev, k), 0, 0, rows, cols, n_total, k, dist, seed)
    for c in CONTRACTS:
        rec[c]["bound"] = float(bounds.bound_output(c, k, np.array(rec["exact"]), np.array(rec["sigma"])))
        rec[c]["beta_sigma"] = bounds.beta(c, k) * rec["sigma"]
    return rec


# Limits of the command line's numbers: the audit computes every sampled column of every row in
# full, so these only keep a typo from asking for hours or for more memory than any machine has.
MAX_ROWS = 1 << 16
MAX_N = (1 << 32) - 1
MAX_K = 1 << 24


def _int(text: str, what: str, lo: int, hi: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not an integer") from None
    if not lo <= v <= hi:
        raise ValueError(f"{what}: {v} is out of range ({lo}..{hi})")
    return v


def parse_rows(text: str) -> list[int]:
    rows = [_int(v.strip(), "--rows", 1, MAX_ROWS) for v in text.split(",") if v.strip()]
    if not rows:
        raise ValueError("--rows: no M value given (e.g. --rows 1,16,64)")
    return rows


def parse_shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for item in (v.strip() for v in text.split(";")):
        if not item:
            continue
        parts = item.lower().split("x")
        if len(parts) != 2:
            raise ValueError(f"--shapes: {item!r} is not NxK (e.g. 12288x2048)")
        n = _int(parts[0], f"--shapes {item}: N", 1, MAX_N)
        k = _int(parts[1], f"--shapes {item}: K", 256, MAX_K)
        if k % 256:
            raise ValueError(f"--shapes {item}: K = {k} must be a multiple of 256 (the audit's distributions "
                             "pair the two halves of K)")
        shapes.append((n, k))
    if not shapes:
        raise ValueError("--shapes: no shape given (e.g. --shapes '12288x2048;2048x4096')")
    return shapes


def check_out_dir(out: str) -> None:
    """--out is made and written to before the computation: a folder that cannot be written fails at
    once, not after minutes of work."""
    if not out:
        raise ValueError("--out: an empty path")
    path = pathlib.Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".audit-write-check-"):
            pass
    except FileExistsError:
        raise ValueError(f"--out {out}: exists and is not a folder") from None
    except OSError as exc:
        raise ValueError(f"--out {out}: cannot write there: {exc.strerror or exc}") from None


def check_inputs(recordings, order_dir) -> None:
    """Paths the user named, and the data folder named by W8A16_DATA_DIR, must exist: a typo is an
    error, never an audit that silently checked nothing."""
    for path in recordings or []:
        if not os.path.exists(path):
            raise ValueError(f"--recordings {path}: no such file or folder")
    if order_dir is not None and not os.path.isdir(order_dir):
        raise ValueError(f"--order-dir {order_dir}: no such folder")
    env = os.environ.get("W8A16_DATA_DIR")
    if env and not (recordings and order_dir) and not os.path.isdir(env):
        raise ValueError(f"W8A16_DATA_DIR={env}: no such folder (it must be a data folder: golden/ with "
                         "recordings/ and order/)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m w8a16check.audit", description=__doc__.splitlines()[0])
    p.add_argument("--out", help="output folder (created)")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--columns", type=int, default=256, help="output columns sampled per shape (at least 2)")
    p.add_argument("--rows", default=",".join(map(str, ROWS)), help="M values, comma-separated")
    p.add_argument("--dists", default=",".join(data.DISTRIBUTIONS))
    p.add_argument("--shapes", default=";".join(f"{n}x{k}" for n, k in SHAPES), help="NxK;NxK;...")
    p.add_argument("--recordings", nargs="+", metavar="PATH",
                   help=".rec files or folders of device recordings (default golden/recordings)")
    p.add_argument("--order-dir", help="folder of device order recordings (default golden/order)")
    p.add_argument("--contract", metavar="NAME|FILE",
                   help="the contract the tiers are held to (NUMERICS.md 2.4): a library name "
                        "(canonical, seed-tile, seed-skinny, seed-rows) or a file of the text form; default canonical")
    p.add_argument("--replay", nargs=6, metavar=("N", "K", "DIST", "SEED", "M_ROW", "N_COL"))
    args = p.parse_args(argv)
    if args.replay:
        n_total, k, dist, seed, m, n = args.replay
        try:
            if dist not in data.DISTRIBUTIONS:
                raise ValueError(f"unknown distribution {dist!r} (known: {', '.join(data.DISTRIBUTIONS)})")
            rec = replay(_int(n_total, "N", 1, MAX_N), _int(k, "K", 256, MAX_K), dist, _int(seed, "SEED", 0, 2**63 - 1),
                         _int(m, "M_ROW", 0, MAX_ROWS - 1), _int(n, "N_COL", 0, MAX_N - 1))
        except ValueError as exc:
            p.error(f"--replay: {exc}")
        print(json.dumps(rec, indent=2))
        return 0
    if args.out is None:
        p.error("--out DIR is required (or --replay)")
    try:
        shapes = parse_shapes(args.shapes)
        rows = parse_rows(args.rows)
        if not 0 <= args.seed <= 2**63 - 1:
            raise ValueError(f"--seed: {args.seed} is out of range (0..{2**63 - 1})")
        if args.columns < 2:
            raise ValueError(f"--columns: {args.columns} must be at least 2 (columns 0 and N-1 are always sampled)")
        dists = [d for d in args.dists.split(",") if d]
        if not dists:
            raise ValueError(f"--dists: no distribution given (known: {', '.join(data.DISTRIBUTIONS)})")
        for d in dists:
            if d not in data.DISTRIBUTIONS:
                raise ValueError(f"--dists: unknown distribution {d!r} (known: {', '.join(data.DISTRIBUTIONS)})")
        if args.contract is not None:
            _contract_mod.load_contract(args.contract)  # a bad name or file stops here, naming the line
        check_inputs(args.recordings, args.order_dir)
        check_out_dir(args.out)
    except ValueError as exc:
        p.error(str(exc))
    try:
        summary = run(args.out, shapes, rows, dists, args.seed, args.columns, recordings=args.recordings,
                      order_root=args.order_dir, contract=args.contract)
    except OSError as exc:  # the report's folder filled up or went away after the check above
        print(f"{p.prog}: error: {exc}", file=sys.stderr)
        return 2
    t = summary["totals"]
    print(f"audit: {t['outputs']} outputs in {summary['seconds']} s; identical share {t['identical_share']:.4f}; "
          f"bound violations {t['bound_violations']}; report {args.out}/report.html")
    if not summary["verdict"]["ok"]:
        for problem in summary["verdict"]["problems"]:
            print(f"audit: FAIL: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
