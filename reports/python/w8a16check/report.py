# SPDX-License-Identifier: MIT OR Apache-2.0
# Writes the audit's summary.json, its PNG plots (matplotlib, Agg) and report.html from the summary.
"""The audit's report: everything shown in report.html is read from summary.json's fields."""
from __future__ import annotations

import html
import json
import os

import matplotlib

matplotlib.use("Agg")  # headless: no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"canonical": "#1f77b4", "gemv": "#d62728"}
COMPARISONS = ("canonical_vs_gemv", "canonical_vs_exact", "gemv_vs_exact")



def _policy_label(arch: str) -> str:
    """The policy's name, and UNVERIFIED where no recording of that architecture confirms it
    (docs/NUMERICS.md 3): a report that uses such a policy must say so."""
    from . import _core

    return arch if _core.mma_policy(arch)["verified"] else f"{arch} (UNVERIFIED: no recording)"

def _plot_identical(s, path):
    dists = s["distributions"]
    fig, axes = plt.subplots(1, len(dists), figsize=(4.2 * len(dists), 3.4), squeeze=False, sharey=True)
    labels = [f"{n}x{k}" for n, k in s["shapes"]]
    width = 0.8 / len(s["rows"])
    for ax, dist in zip(axes[0], dists):
        for r, m in enumerate(s["rows"]):
            share = [next(c["identical_share"] for c in s["configs"]
                          if c["dist"] == dist and c["m"] == m and [c["n"], c["k"]] == list(shape))
                     for shape in s["shapes"]]
            ax.bar(np.arange(len(labels)) + (r - (len(s["rows"]) - 1) / 2) * width, share, width, label=f"M={m}")
        ax.set_title(dist)
        ax.set_xticks(np.arange(len(labels)), labels, rotation=35, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    # Shares sit near 1: zoom the axis to the data (the axis does not start at 0, the labels say so).
    low = min(c["identical_share"] for c in s["configs"])
    axes[0][0].set_ylim(max(0.0, np.floor((low - 0.005) * 100) / 100), 1.0)
    axes[0][0].set_ylabel("share of outputs bit-identical\n(canonical vs GEMV; axis zoomed)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_hist(s, path):
    dists = s["distributions"]
    bins = s["ulp_histogram_bins"]
    fig, axes = plt.subplots(len(dists), 3, figsize=(12, 2.6 * len(dists)), squeeze=False)
    for r, dist in enumerate(dists):
        for c, name in enumerate(COMPARISONS):
            ax = axes[r][c]
            counts = np.array(s["ulp_histograms"][dist][name], dtype=float)
            ax.bar(np.arange(len(bins)), np.where(counts > 0, counts, np.nan), color="#555")
            ax.set_yscale("log")
            ax.set_xticks(np.arange(0, len(bins), 2), [bins[i] for i in range(0, len(bins), 2)], fontsize=7)
            ax.set_title(f"{dist}: {name.replace('_', ' ')}", fontsize=9)
            if c == 0:
                ax.set_ylabel("outputs")
            if r == len(dists) - 1:
                ax.set_xlabel("BF16 ULP distance")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_vs_k(s, path, metric, ylabel, with_beta=False, unit_line=False):
    dists = s["distributions"]
    fig, axes = plt.subplots(1, len(dists), figsize=(4.2 * len(dists), 3.6), squeeze=False)
    for ax, dist in zip(axes[0], dists):
        per_k = s["by_k"][dist]
        ks = sorted(int(k) for k in per_k)
        xs = np.arange(len(ks))  # K values are far apart and uneven (2048 .. 25600): evenly spaced axis
        for c, color in COLORS.items():
            mx = [per_k[str(k)][c][metric]["max"] for k in ks]
            p999 = [per_k[str(k)][c][metric]["p999"] for k in ks]
            # GEMV drawn a little wider so a canonical line on top of it stays visible.
            lw = 3.5 if c == "gemv" else 1.5
            ax.plot(xs, mx, "o-", color=color, lw=lw, alpha=0.75, label=f"{c} max")
            ax.plot(xs, p999, "s--", color=color, lw=lw, alpha=0.5, label=f"{c} p99.9")
            if with_beta:
                ax.plot(xs, [per_k[str(k)]["beta"][c] for k in ks], ":", color=color, lw=2, label=f"{c} bound beta(K)")
        if with_beta:
            acc = [per_k[str(k)]["canonical"]["acc_err_sigma"]["max"] for k in ks]
            ax.plot(xs, acc, "^-", color="#2ca02c", label="canonical FP32 acc max")
        if unit_line:
            ax.axhline(1.0, color="k", lw=1, label="bound")
        if metric == "ulp":
            ax.set_yscale("symlog", linthresh=1)
            ax.set_ylim(bottom=0)
        elif metric == "ratio":
            ax.set_ylim(0, 1.08)  # the bound is 1: a linear axis shows the margin as it is
        else:
            ax.set_yscale("log")
        ax.set_xticks(xs, [str(k) for k in ks], fontsize=8)
        ax.set_xlabel("K")
        ax.set_title(dist)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=min(len(names), 6), fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_device_hist(s, path):
    """Device (recorded) vs GEMV order and vs exact, pooled over the tensor-core groups of every recording."""
    bins = s["ulp_histogram_bins"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3), squeeze=False)
    for ax, name in zip(axes[0], ("device_vs_gemv", "device_vs_exact")):
        counts = np.zeros(len(bins))
        for f in s["device_recordings"]["files"]:
            for g in f["groups"]:
                if g["contract"] == "canonical":
                    counts += np.array(g["ulp_hist"][name], dtype=float)
        ax.bar(np.arange(len(bins)), np.where(counts > 0, counts, np.nan), color="#555")
        ax.set_yscale("log")
        ax.set_xticks(np.arange(0, len(bins), 2), [bins[i] for i in range(0, len(bins), 2)], fontsize=7)
        ax.set_title(f"recorded tensor-core outputs (every recording): {name.replace('_', ' ')}", fontsize=9)
        ax.set_xlabel("BF16 ULP distance")
    axes[0][0].set_ylabel("outputs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _table(header, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


CSS = """body{font-family:system-ui,sans-serif;max-width:1280px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}pre{background:#f7f7f7;padding:.6em;font-size:11px;white-space:pre-wrap;word-break:break-all}
img{max-width:100%;border:1px solid #ddd;margin:.4em 0}.ok{color:#080;font-weight:bold}.bad{color:#b00;font-weight:bold}
h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}code{background:#f3f3f3;padding:0 3px}"""


def write(out_dir: str, s: dict) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    _plot_identical(s, os.path.join(out_dir, "identical_share.png"))
    _plot_hist(s, os.path.join(out_dir, "ulp_histograms.png"))
    _plot_vs_k(s, os.path.join(out_dir, "ulp_vs_k.png"), "ulp", "BF16 ULP to exact (rounded once)")
    _plot_vs_k(s, os.path.join(out_dir, "bound_ratio_vs_k.png"), "ratio", "|C - x| / bound", unit_line=True)
    _plot_vs_k(s, os.path.join(out_dir, "err_sigma_vs_k.png"), "err_sigma", "|C - x| / sigma", with_beta=True)
    if _has_device_ulp(s):
        _plot_device_hist(s, os.path.join(out_dir, "device_ulp_histograms.png"))
    with open(os.path.join(out_dir, "report.html"), "w") as f:
        f.write(render_html(s))


def _device_headline(s: dict) -> list:
    rows = []
    dr = s.get("device_recordings")
    if dr is not None:
        rows.append(["device recordings: outputs differing from their contract",
                     (f"{dr['mismatches']} outputs, {dr['mismatching_cases']} cases of {dr['cases']}"
                      + (" (MISMATCH)" if dr["mismatches"] or dr["mismatching_cases"] else ""))
                     if dr["found"] else dr["note"]])
    do = s.get("device_order")
    if do is not None:
        rows.append(["kernels' reduction trees recovered on a GPU",
                     ("documented order everywhere" if do["all_match"] else "MISMATCH or probe error")
                     if do["found"] else "no device order recording"])
    return rows


def _has_device_ulp(s: dict) -> bool:
    dr = s.get("device_recordings")
    return bool(dr and dr["found"] and any(g["contract"] == "canonical" and g["outputs_compared"]
                                            for f in dr["files"] for g in f["groups"]))


def _device_recordings_html(s: dict) -> list:
    e = html.escape
    dr = s["device_recordings"]
    parts = ["<h2 id='device-recordings'>Device recordings: recorded GPU outputs against the contracts</h2>"]
    if not dr["found"]:
        parts.append(f"<p class='bad'>{e(dr['note'])}: no device bits in this audit.</p>")
        return parts
    bad = dr["mismatches"] or dr["mismatching_cases"]
    verdict = (f"<span class='bad'>MISMATCH: {dr['mismatches']} recorded outputs in {dr['mismatching_cases']} cases "
               "differ from the contract their entry point must meet</span>" if bad else
               f"<span class='ok'>every recorded output checked is the contract's ({dr['outputs_compared']:,} outputs "
               "bit for bit, the digest-only cases by digest)</span>")
    parts.append(f"<p>Verdict: {verdict}.</p><p>Each case was run on the GPU by <code>w8a16check record</code>; "
                 "the contract an entry must meet is the canonical fold (NUMERICS.md 2.1) for the tensor-core "
                 "entries and the GEMV order (2.2) for gemv_batch*. The body is the one this checkout's launch layer "
                 "plans for that shape (plan.hpp, through <code>_core.plan_case</code>); a recording made at another "
                 "commit (its header) may have run another body of the same contract. For the tensor-core bodies the recorded bits are also set against the "
                 "GEMV order and the exact result rounded once, on the same inputs: the reassociation measured on "
                 "hardware. ULP distances skip outputs where any of the three is NaN or Inf. Cases recorded as a "
                 "digest only are checked by digest; those above "
                 f"{dr['max_macs']:,} m&middot;n&middot;k are not emulated here (<code>{e(dr['replay_command'])}"
                 "</code> replays them).</p>")
    for f in dr["files"]:
        h = f["header"]
        parts.append(f"<h3>{e(f['path'])}</h3><p>{e(h['gpu'])}, compute capability {e(h['compute_capability'])}, "
                     f"driver {e(h['driver'])}, CUDA {e(h['cuda'])}, commit {e(h['commit'])}: {f['cases']} cases, "
                     f"{f['outputs_compared']:,} outputs compared, <b class='{'bad' if f['mismatches'] or f['mismatching_cases'] else 'ok'}'>"
                     f"{f['mismatches']} mismatching outputs, {f['mismatching_cases']} mismatching cases</b>.</p>")
        rows = []
        for g in f["groups"]:
            can = g["contract"] == "canonical"
            share = g.get("identical_to_gemv_share")
            rows.append([g["entry"], g["body"], g["contract"], g["cases"], g["cases_with_bits"],
                         g["digest_only_checked"], g["digest_only_not_replayed"], f"{g['outputs_compared']:,}",
                         ("MISMATCH " if g["mismatches"] or g["mismatching_cases"] else "") +
                         f"{g['mismatches']} ({g['mismatching_cases']} cases)",
                         f"{share:.4f}" if can and share is not None else "-",
                         g["ulp_max"]["device_vs_gemv"] if can else "-", g["ulp_max"]["device_vs_exact"] if can else "-"])
        parts.append(_table(["entry", "body", "contract", "cases", "with bits", "digest only, checked",
                             "digest only, not replayed", "outputs compared", "mismatches vs contract",
                             "bit-identical to GEMV", "max ULP device/GEMV", "max ULP device/exact"], rows))
        if f["mismatch_list"]:
            parts.append("<p class='bad'>Mismatching cases (explain one with <code>w8a16check repro 'CASE'</code>):</p>")
            parts.append(_table(["entry", "body", "outputs differing", "detail", "case"],
                                [[m["entry"], m["body"], m["outputs_differing"] if m["outputs_differing"] is not None
                                  else "digest", m["detail"], m["case"]] for m in f["mismatch_list"]]))
    if _has_device_ulp(s):
        parts.append("<img src='device_ulp_histograms.png' alt='device ULP histograms'>")
    return parts


def _device_order_html(s: dict) -> list:
    e = html.escape
    do = s["device_order"]
    parts = ["<h3>The kernels' trees, recovered on a GPU</h3>"]
    if not do["found"]:
        parts.append(f"<p class='bad'>no device order recording: {e(do['note'])}. The rows above are the "
                     "emulator's contracts only.</p>")
        return parts
    for dev in do["devices"]:
        ok = dev["all_match"]
        parts.append(f"<p>golden/order/{e(dev['device'])}: <span class='{'ok' if ok else 'bad'}'>"
                     f"{'every body reduces in the documented order of its contract' if ok else 'MISMATCH or probe error'}"
                     "</span>. The same probes as above, run through each entry point by "
                     "<code>w8a16check run-operands</code>; the body is the one the plan chose on the device.</p>")
        parts.append(_table(["probe", "entry", "body", "kernel", "contract", "K", "leaves", "probes", "nodes measured",
                             "nodes documented", "same tree"],
                            [[r["name"], r["entry"], r.get("body") or "-", r.get("kernel") or "-", r["contract"], r["k"],
                              r.get("leaves", "-"), r["probes"], r.get("internal_nodes_measured", "-"),
                              r.get("internal_nodes_documented", "-"),
                              "ERROR: " + r["error"] if r.get("error") else ("yes" if r["matches_documented"] else "NO")]
                             for r in dev["results"]]))
        for r in dev["results"]:
            if "measured_tree" in r:
                parts.append(f"<details><summary>{e(r['name'])} ({e(r['entry'])}, {e(str(r.get('body')))}), K = {r['k']}: "
                             f"recovered and documented trees</summary><p>recovered</p><pre>{e(r['measured_tree'])}</pre>"
                             f"<p>documented ({e(r['contract'])})</p><pre>{e(r['documented_tree'])}</pre></details>")
    return parts


def _dist_row(s: dict, dist: str) -> list:
    configs = [c for c in s["configs"] if c["dist"] == dist]
    outputs = sum(c["outputs"] for c in configs)
    per_k = s["by_k"][dist].values()
    return [dist, f"{outputs:,}", f"{sum(c['identical_share'] * c['outputs'] for c in configs) / outputs:.4f}",
            f"{max(k['canonical']['ulp']['max'] for k in per_k):.0f}",
            f"{max(k['canonical']['ulp']['p999'] for k in per_k):.3g}",
            f"{max(k['gemv']['ulp']['max'] for k in per_k):.0f}",
            f"{max(k['gemv']['ulp']['p999'] for k in per_k):.3g}",
            f"{max(k['canonical']['ratio']['max'] for k in per_k):.3g}",
            f"{max(k['gemv']['ratio']['max'] for k in per_k):.3g}"]


def render_html(s: dict) -> str:
    t = s["totals"]
    e = html.escape
    viol = t["bound_violations"]
    acc_viol = t["canonical_acc_bound_violations"]
    verdict = ('<span class="ok">no output and no canonical accumulator exceeds its bound</span>'
               if not any(viol.values()) and not acc_viol
               else f'<span class="bad">bound exceeded: outputs {e(str(viol))}, canonical accumulators {acc_viol}</span>')
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>w8a16check reassociation audit</title>"
             f"<style>{CSS}</style></head><body>",
             "<h1>Reassociation audit: canonical fold vs scalar GEMV vs exact</h1>",
             f"<p>w8a16check {e(s['w8a16check']['version'])} (commit {e(s['w8a16check']['commit'])}); "
             f"{t['outputs']:,} outputs; seed {s['seed']}; MMA policy <code>{e(s['mma_policy']['name'])}</code> "
             f"({e(s['mma_policy']['evidence'])}); {s['seconds']} s. {e(s['sampling'])}: "
             f"{s['columns_per_shape']} columns per shape, M in {e(str(s['rows']))}.</p>",
             "<p>The GEMV entry points take M &le; 4 and M &le; 16 rows; at M = 64 the GEMV numbers are its "
             "contract (NUMERICS.md 2.2) applied to each row, which is exact because every output depends only on "
             "its own row: a larger sample of the same per-output arithmetic, not a launch a kernel would make.</p>",
             "<h2>Headline</h2>",
             _table(["quantity", "value"], [
                 ["outputs bit-identical between the contracts", f"{100 * t['identical_share']:.2f} %"],
                 ["max BF16 ULP, canonical vs GEMV", f"{t['max_ulp']['canonical_vs_gemv']:.0f}"],
                 ["max BF16 ULP, canonical vs exact", f"{t['max_ulp']['canonical_vs_exact']:.0f}"],
                 ["max BF16 ULP, GEMV vs exact", f"{t['max_ulp']['gemv_vs_exact']:.0f}"],
                 ["max |C - x| / bound, canonical", f"{t['max_bound_ratio']['canonical']:.3g}"],
                 ["max |C - x| / bound, GEMV", f"{t['max_bound_ratio']['gemv']:.3g}"],
                 ["outputs above their bound (canonical, GEMV)", f"{viol['canonical']}, {viol['gemv']}"],
                 ["max |acc - x| / (beta sigma), canonical FP32 accumulator", f"{t['max_canonical_acc_bound_ratio']:.3g}"],
                 ["canonical accumulators above beta sigma", f"{t['canonical_acc_bound_violations']}"],
             ] + _device_headline(s)),
             f"<p>Verdict on the bounds: {verdict}.</p>",
             "<p>Per distribution (all shapes and M pooled; the 99.9th percentile is taken per K and the worst K shown):</p>",
             _table(["dist", "outputs", "identical", "max ULP can/exact", "p99.9 ULP can/exact (worst K)",
                     "max ULP gemv/exact", "p99.9 ULP gemv/exact (worst K)", "max ratio can", "max ratio gemv"],
                    [_dist_row(s, d) for d in s["distributions"]]),
             "<p>A ULP distance measures relative error in the output's own binade: where the exact result is "
             "tiny (heavy cancellation) a small absolute error, or a wrong sign, is thousands of ULPs. The bound "
             "ratio below measures the error against what the arithmetic can guarantee.</p>",
             "<h2>Distributions</h2><ul>" + "".join(f"<li><b>{e(d)}</b>: {e(txt)}</li>"
                                                     for d, txt in s["distribution_descriptions"].items()) + "</ul>",
             "<h2>Bit-identical share</h2><img src='identical_share.png' alt='identical share'>",
             "<h2>BF16 ULP distance histograms</h2><p>All shapes and M pooled per distribution; the exact result "
             "is rounded once to BF16 (RNE).</p><img src='ulp_histograms.png' alt='ULP histograms'>",
             "<h2>Error against K</h2><p>Maximum and 99.9th percentile over every sampled output with that K.</p>"
             "<img src='ulp_vs_k.png' alt='ULP vs K'>",
             "<h2>Error against the theoretical bound</h2>"
             "<p>x is the exact output, sigma = sum |a w S|. The bound on |C - x| is "
             "beta(K) sigma + 2<sup>-8</sup>(|x| + beta(K) sigma), with beta from the derivation below. "
             "A ratio above 1 would contradict the model or the derivation.</p>"
             "<img src='bound_ratio_vs_k.png' alt='bound ratio vs K'>"
             "<p>The accumulation part alone: |C - x| / sigma against beta(K) (dotted). Where |x| is close to sigma "
             "the final BF16 rounding (2<sup>-8</sup>|x|) dominates and the measured values sit above beta. The "
             "green line is the canonical fold's FP32 accumulator before that rounding (reference/ exposes it; it "
             "does not expose the GEMV's), which must stay below the blue dotted beta(K).</p>"
             "<img src='err_sigma_vs_k.png' alt='error over sigma vs K'>",
             f"<details open><summary>Derivation of the bounds (bounds.py)</summary><pre>{e(s['bound']['statement'])}</pre></details>",
             "<h2>Per configuration</h2>",
             _table(["dist", "N", "K", "M", "outputs", "identical", "max ULP can/gemv", "max ULP can/exact",
                     "max ULP gemv/exact", "max ratio can", "max ratio gemv", "median sigma/|x|"],
                    [[c["dist"], c["n"], c["k"], c["m"], c["outputs"], f"{c['identical_share']:.4f}",
                      f"{c['ulp']['canonical_vs_gemv']['max']:.0f}", f"{c['ulp']['canonical_vs_exact']['max']:.0f}",
                      f"{c['ulp']['gemv_vs_exact']['max']:.0f}", f"{c['bound_ratio']['canonical']['max']:.3g}",
                      f"{c['bound_ratio']['gemv']['max']:.3g}", f"{c['cond_median']:.3g}"] for c in s["configs"]]),
             "<h2>Worst cases (replayable)</h2><p>The worst output of each configuration per contract and "
             "metric, the ten highest per metric. Each line regenerates its one output: "
             "<code>python -m w8a16check.audit --replay N K DIST SEED M_ROW N_COL</code>.</p>",
             "<p>'= RNE(x)' says whether the contract's output is the exact result rounded once: where it is, "
             "the ratio measures the tightness of the bound's BF16 term, not the accumulation.</p>",
             _table(["metric", "contract", "score", "canonical", "GEMV", "exact (BF16)", "= RNE(x)", "exact", "replay"],
                    [[w["metric"], w["contract"], f"{w['score']:.4g}", w["canonical_bits"], w["gemv_bits"],
                      w["exact_bf16_bits"], "yes" if w[f"{w['contract']}_bits"] == w["exact_bf16_bits"] else "no",
                      f"{w['exact']:.6g}",
                      f"--replay {w['n_shape']} {w['k']} {w['dist']} {w['seed']} {w['m']} {w['n']}"]
                     for w in s["worst_cases"]]),
             "<h2>Reduction order, recovered from outputs (FPRev-style)</h2>"
             "<p>Probes put +2<sup>40</sup> and -2<sup>40</sup> at two leaves and 1 at the others; the output counts "
             "the units outside the two leaves' lowest common ancestor, which rebuilds the reduction tree "
             "(order.py). A node's children are joined by '+'; 'a..b' is a run of leaves summed in one node.</p>",
             _table(["contract", "MMA policy", "K", "leaves", "probes", "nodes measured", "nodes documented", "same tree"],
                    [[o["contract"], _policy_label(o["arch"]) if o["contract"] == "canonical" else "-", o["k"], o["leaves"],
                      o["probes"], o["internal_nodes_measured"],
                      o["internal_nodes_documented"], "yes" if o["matches_documented"] else "NO"]
                     for o in s["reduction_order"]])]
    for o in s["reduction_order"]:
        policy = f", {o['arch']}" if o["contract"] == "canonical" else ""
        parts.append(f"<details><summary>{e(o['contract'])}{e(policy)}, K = {o['k']} ({e(o['leaves'])}): recovered and "
                     f"documented trees</summary><p>recovered</p><pre>{e(o['measured_tree'])}</pre>"
                     f"<p>documented</p><pre>{e(o['documented_tree'])}</pre></details>")
    if "device_order" in s:
        parts.extend(_device_order_html(s))
    if "device_recordings" in s:
        parts.extend(_device_recordings_html(s))
    parts.append("</body></html>")
    return "\n".join(parts)
