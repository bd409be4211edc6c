# SPDX-License-Identifier: MIT OR Apache-2.0
# The reassociation audit (issue 8): canonical fold vs scalar GEMV vs the exact result, on model shapes.
"""python -m w8a16check.audit --out DIR      (the default audit: a few minutes on 2 cores)
python -m w8a16check.audit --replay N K DIST SEED M_ROW N_COL   (one output, every number)

For each shape (N, K), row count M and distribution, a sample of output columns is computed under
both contracts and exactly (all in C++); the audit reports how often the contracts agree bit for
bit, their BF16 ULP distances to each other and to the exactly rounded result, and each contract's
error against its a priori bound (bounds.py). It then recovers both contracts' K-reduction order
from crafted inputs (order.py), and shows the kernels' trees recovered on a GPU where golden/order/
holds such a recording. Device recordings (golden/recordings/*.rec, recordings.py) are checked against
the contract each entry point must meet and set beside the GEMV order and the exact result.
Writes DIR/summary.json, DIR/report.html and DIR/*.png.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import pathlib

from . import _core, _paths, bounds, data, order, recordings as recordings_mod

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


def evaluate(dist: str, seed: int, k: int, rows: np.ndarray, cols: np.ndarray) -> dict:
    """Both contracts, the exact value and the bound inputs for outputs rows x cols ([M, C] arrays)."""
    a, w, s = data.operands(dist, seed, k, rows, cols)
    out = {c: _core.gemm_columns(a, w, s, contract=c) for c in CONTRACTS}
    acc = _core.canonical_acc_columns(a, w, s).view(np.float32)  # before the BF16 rounding
    x, x_bf16 = _core.exact_columns(a, w, s)
    # sigma = sum_k |a_k w_k S| in float64 from the exact operand values (decoded by the C++).
    av = np.abs(_core.bf16_to_f32(a).astype(np.float64))
    wv = np.abs(_core.decode_e4m3(w).astype(np.float64)) * np.repeat(np.abs(s.astype(np.float64)), 128, axis=1)
    sigma = av @ wv.T
    return {"a": a, "w": w, "s": s, "out": out, "canonical_acc": acc, "exact": x, "exact_bf16": x_bf16,
            "sigma": sigma}


def _stats(values: np.ndarray) -> dict:
    return {"max": float(np.max(values)), "p999": float(np.quantile(values, 0.999)), "mean": float(np.mean(values))}


def audit_config(n_total: int, k: int, m: int, dist: str, seed: int, columns: int) -> tuple[dict, dict]:
    cols = data.sample_columns(seed, n_total, k, columns)
    rows = np.arange(m)
    ev = evaluate(dist, seed, k, rows, cols)
    can, gemv = ev["out"]["canonical"], ev["out"]["gemv"]
    x, xr, sigma = ev["exact"], ev["exact_bf16"], ev["sigma"]
    result = {
        "n": n_total, "k": k, "m": m, "dist": dist, "seed": seed, "columns": int(cols.size),
        "outputs": int(can.size),
        "identical_share": float(np.mean(can == gemv)),
        "exact_rounding_share": {c: float(np.mean(ev["out"][c] == xr)) for c in CONTRACTS},
        "ulp": {}, "bound_ratio": {}, "bound_violations": {},
        "beta": {c: bounds.beta(c, k) for c in CONTRACTS},
        "cond_median": float(np.median(sigma / np.maximum(np.abs(x), np.finfo(np.float64).tiny))),
    }
    dists = {"canonical_vs_gemv": ulp_distance(can, gemv),
             "canonical_vs_exact": ulp_distance(can, xr),
             "gemv_vs_exact": ulp_distance(gemv, xr)}
    hist = {}
    for name, d in dists.items():
        result["ulp"][name] = _stats(d)
        hist[name] = np.bincount(np.minimum(d.ravel(), ULP_BINS - 1), minlength=ULP_BINS)
    worst, raw = [], {}
    for c in CONTRACTS:
        value = _core.bf16_to_f32(ev["out"][c]).astype(np.float64)
        ratio = np.abs(value - x) / bounds.bound_output(c, k, x, sigma)
        result["bound_ratio"][c] = _stats(ratio)
        result["bound_violations"][c] = int(np.sum(ratio > 1.0))
        raw[c] = {"ulp": dists[f"{c}_vs_exact"].ravel(), "ratio": ratio.ravel(),
                  "err_sigma": (np.abs(value - x) / sigma).ravel()}
        ulp_c = dists[f"{c}_vs_exact"]
        for metric, score in (("ulp_vs_exact", ulp_c), ("bound_ratio", ratio)):
            i, j = np.unravel_index(int(np.argmax(score)), score.shape)
            worst.append({"contract": c, "metric": metric, "score": float(score[i, j]),
                          "n_shape": n_total, "k": k, "dist": dist, "seed": seed,
                          "m": int(rows[i]), "n": int(cols[j]),
                          "canonical_bits": f"0x{int(can[i, j]):04X}", "gemv_bits": f"0x{int(gemv[i, j]):04X}",
                          "exact": float(x[i, j]), "exact_bf16_bits": f"0x{int(xr[i, j]):04X}"})
    # The canonical accumulator itself against beta * sigma: the accumulation bound with no BF16
    # rounding on top (the GEMV's FP32 accumulator is not exposed by reference/, so only canonical).
    acc_err = np.abs(ev["canonical_acc"].astype(np.float64) - x) / sigma
    acc_ratio = acc_err / bounds.beta("canonical", k)
    result["canonical_acc_bound_ratio"] = _stats(acc_ratio)
    result["canonical_acc_bound_violations"] = int(np.sum(acc_ratio > 1.0))
    raw["canonical"]["acc_err_sigma"] = acc_err.ravel()
    return result, {"hist": hist, "worst": worst, "raw": raw}


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
        rec = order.recover_dir(str(d))
        rec["device"] = d.name
        res["devices"].append(rec)
    res["all_match"] = bool(devices) and all(r["all_match"] for r in res["devices"])
    return res


def run(out_dir: str, shapes, rows, dists, seed: int, columns: int, log=print, recordings=None,
        order_root=None) -> dict:
    from . import report  # matplotlib is needed only to write the report

    t0 = time.time()
    configs, hists, worst, by_k = [], {}, [], {}
    for dist in dists:
        hists[dist], raw_k = {}, {}
        for n_total, k in shapes:
            for m in rows:
                res, extra = audit_config(n_total, k, m, dist, seed, columns)
                configs.append(res)
                for name, h in extra["hist"].items():
                    hists[dist][name] = hists[dist].get(name, 0) + h
                worst.extend(extra["worst"])
                for c, arrays in extra["raw"].items():
                    for metric, values in arrays.items():
                        raw_k.setdefault(k, {}).setdefault(c, {}).setdefault(metric, []).append(values)
                log(f"audit: {dist:12s} N={n_total:6d} K={k:6d} M={m:3d}: identical "
                    f"{res['identical_share']:.4f}, max ULP can/gemv {res['ulp']['canonical_vs_gemv']['max']:.0f}")
        # Maximum and 99.9th percentile against K pool every shape and M with that K.
        by_k[dist] = {str(k): {c: {metric: _stats(np.concatenate(v)) for metric, v in per_c.items()}
                               for c, per_c in per_k.items()} | {"beta": {c: bounds.beta(c, k) for c in CONTRACTS}}
                      for k, per_k in sorted(raw_k.items())}
    worst.sort(key=lambda r: (r["metric"], -r["score"]))
    summary = {
        "tool": "w8a16check.audit",
        "w8a16check": {"version": _core.__version__, "commit": _core.__commit__},
        "gpu": None,  # the audit runs on the emulator; device numbers come from the recordings it reads
        "seed": seed,
        "columns_per_shape": columns,
        "sampling": "output columns sampled per shape (n = 0 and N-1 always included), all M rows; "
                    "each sampled column computed in full (all K)",
        "shapes": [list(s) for s in shapes], "rows": list(rows), "distributions": list(dists),
        "distribution_descriptions": {d: data.DESCRIPTIONS[d] for d in dists},
        "mma_policy": _core.mma_policy("sm90"),
        "bound": {"statement": bounds.__doc__, "u_fp32": bounds.U32, "u_mma": bounds.U_MMA, "u_bf16": bounds.U_BF16},
        "totals": _totals(configs),
        "ulp_histograms": {d: {n: h.tolist() for n, h in hs.items()} for d, hs in hists.items()},
        "ulp_histogram_bins": [str(i) for i in range(ULP_BINS - 1)] + [f">={ULP_BINS - 1}"],
        "configs": configs,
        "by_k": by_k,
        "worst_cases": [w for metric in ("ulp_vs_exact", "bound_ratio")
                        for w in [r for r in worst if r["metric"] == metric][:10]],
        "reduction_order": order_section(),
        "device_order": device_order_section(order_root),
        "device_recordings": recordings_mod.section(recordings),
    }
    dr = summary["device_recordings"]
    log(f"audit: device recordings: {dr['cases']} cases in {len(dr['files'])} files, {dr['outputs_compared']} "
        f"outputs compared, {dr['mismatches']} mismatching outputs, {dr['mismatching_cases']} mismatching cases"
        + ("" if dr["found"] else " (" + dr["note"] + ")"))
    summary["seconds"] = round(time.time() - t0, 1)
    report.write(out_dir, summary)
    return summary


def _totals(configs: list[dict]) -> dict:
    outputs = sum(c["outputs"] for c in configs)
    return {
        "outputs": outputs,
        "identical_share": sum(c["identical_share"] * c["outputs"] for c in configs) / outputs,
        "max_ulp": {n: max(c["ulp"][n]["max"] for c in configs) for n in configs[0]["ulp"]},
        "max_bound_ratio": {c: max(x["bound_ratio"][c]["max"] for x in configs) for c in CONTRACTS},
        "bound_violations": {c: sum(x["bound_violations"][c] for x in configs) for c in CONTRACTS},
        "max_canonical_acc_bound_ratio": max(x["canonical_acc_bound_ratio"]["max"] for x in configs),
        "canonical_acc_bound_violations": sum(x["canonical_acc_bound_violations"] for x in configs),
    }


def replay(n_total: int, k: int, dist: str, seed: int, m: int, n: int) -> dict:
    """Every number of one output (m, n) of one audit configuration, regenerated from its description."""
    if not 0 <= n < n_total:
        raise ValueError(f"n must be in [0, {n_total}), got {n}")
    ev = evaluate(dist, seed, k, np.array([m]), np.array([n]))
    x = float(ev["exact"][0, 0])
    res = {"shape": [n_total, k], "dist": dist, "seed": seed, "m": m, "n": n, "exact": x,
           "exact_bf16_bits": f"0x{int(ev['exact_bf16'][0, 0]):04X}", "sigma": float(ev["sigma"][0, 0])}
    for c in CONTRACTS:
        bits = ev["out"][c][0:1, 0:1]
        value = float(_core.bf16_to_f32(bits)[0, 0])
        res[c] = {"bits": f"0x{int(bits[0, 0]):04X}", "value": value,
                  "ulp_vs_exact": int(ulp_distance(bits, ev["exact_bf16"][0:1, 0:1])[0, 0]),
                  "bound": float(bounds.bound_output(c, k, np.array(x), np.array(res["sigma"])))}
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m w8a16check.audit", description=__doc__.splitlines()[0])
    p.add_argument("--out", help="output folder (created)")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--columns", type=int, default=256, help="output columns sampled per shape")
    p.add_argument("--rows", default=",".join(map(str, ROWS)), help="M values, comma-separated")
    p.add_argument("--dists", default=",".join(data.DISTRIBUTIONS))
    p.add_argument("--shapes", default=";".join(f"{n}x{k}" for n, k in SHAPES), help="NxK;NxK;...")
    p.add_argument("--recordings", nargs="+", metavar="PATH",
                   help=".rec files or folders of device recordings (default golden/recordings)")
    p.add_argument("--order-dir", help="folder of device order recordings (default golden/order)")
    p.add_argument("--replay", nargs=6, metavar=("N", "K", "DIST", "SEED", "M_ROW", "N_COL"))
    args = p.parse_args(argv)
    if args.replay:
        n_total, k, dist, seed, m, n = args.replay
        try:
            print(json.dumps(replay(int(n_total), int(k), dist, int(seed), int(m), int(n)), indent=2))
        except ValueError as exc:
            p.error(f"--replay: {exc}")
        return 0
    if not args.out:
        p.error("--out DIR is required (or --replay)")
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(";") if s]
    rows = [int(v) for v in args.rows.split(",") if v]
    dists = [d for d in args.dists.split(",") if d]
    for d in dists:
        if d not in data.DISTRIBUTIONS:
            p.error(f"--dists: unknown distribution {d!r} (known: {', '.join(data.DISTRIBUTIONS)})")
    summary = run(args.out, shapes, rows, dists, args.seed, args.columns, recordings=args.recordings,
                  order_root=args.order_dir)
    t = summary["totals"]
    print(f"audit: {t['outputs']} outputs in {summary['seconds']} s; identical share {t['identical_share']:.4f}; "
          f"bound violations {t['bound_violations']}; report {args.out}/report.html")
    dr = summary["device_recordings"]
    if dr["mismatches"] or dr["mismatching_cases"]:
        print(f"audit: DEVICE RECORDING MISMATCH: {dr['mismatches']} outputs in {dr['mismatching_cases']} cases "
              "differ from the contract their entry point must meet", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
