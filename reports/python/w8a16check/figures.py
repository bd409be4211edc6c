# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's figures as data (what is plotted against what), built from summary.json, and one renderer.
"""Figures of the reassociation audit.

Each figure is first a *spec*: a dict of panels, each panel a list of series with their x and y
values, what quantity they are and which bound line they are compared with. ``specs(summary)``
builds every spec from the summary alone; ``draw(spec)`` renders one with matplotlib and tags each
artist with its series id (``Artist.get_gid()``), so a test can check both what the audit meant to
plot and what was drawn. The rules every spec follows:

- like with like: a measured series names the bound series it is read against (``against``), and
  the two are the same quantity: the FP32 accumulator's |acc - x| / sigma against beta(K), the BF16
  output's |C - x| / sigma against beta_out(K), the per-output ratio against 1 (bounds.py). A point
  above its line is a violation;
- K on a logarithmic axis at its true values, one point per shape (N, K): shapes that share a K
  are drawn with their own marker at the same K, never pooled;
- every histogram panel of a figure shares one log-y range that starts below 1, so a bin of one
  output is as visible in every panel;
- shares estimated from sampled columns carry their 95 % interval (stats.py).
"""
from __future__ import annotations

import base64
import io
import math

import matplotlib

matplotlib.use("Agg")  # headless: no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

from . import bounds  # noqa: E402

CONTRACTS = ("canonical", "gemv")
COLORS = {"canonical": "#1f63b4", "gemv": "#d62728"}
LABELS = {"canonical": "canonical fold", "gemv": "GEMV order"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")
COMPARISONS = ("canonical_vs_gemv", "canonical_vs_exact", "gemv_vs_exact")
DPI = 100


def shape_marker(summary: dict, n: int, k: int) -> str:
    shapes = [tuple(x) for x in summary["shapes"]]
    return MARKERS[shapes.index((n, k)) % len(MARKERS)]


def bound_k_grid(ks) -> np.ndarray:
    """K values for a bound's line across the plotted range: multiples of 128 (the bounds are defined
    there), dense on a log scale, the measured K among them."""
    lo, hi = min(ks) / 1.45, max(ks) * 1.45
    grid = np.round(np.geomspace(max(lo, 128), hi, 160) / 128.0) * 128.0
    return np.unique(np.concatenate([grid, np.asarray(ks, dtype=float)])).astype(np.int64)


def _k_axis(panel: dict, ks) -> None:
    ks = sorted(set(int(k) for k in ks))
    panel.update({"xscale": "log", "xlabel": "K (log scale)", "xticks": ks, "xticklabels": [str(k) for k in ks],
                  "xlim": [min(ks) / 1.45, max(ks) * 1.45]})


def _shape_legend(summary: dict) -> list[dict]:
    return [{"label": f"N x K = {n} x {k}", "color": "#444", "marker": shape_marker(summary, n, k), "filled": False}
            for n, k in summary["shapes"]]


# ---- bit-identical share ---------------------------------------------------------------------------
def identical_spec(s: dict) -> dict:
    """1 - bit-identical share (canonical vs GEMV) per configuration with its 95 % Wilson interval,
    one panel per (M, distribution), K on a log axis, one marker per shape."""
    panels, uppers = [], []
    for r, m in enumerate(s["rows"]):
        for c, dist in enumerate(s["distributions"]):
            series = []
            for n, k in s["shapes"]:
                conf = next(x for x in s["configs"] if (x["dist"], x["n"], x["k"], x["m"]) == (dist, n, k, m))
                iv = conf["identical"]
                differ, lo, hi = 1.0 - iv["share"], 1.0 - iv["hi"], 1.0 - iv["lo"]
                uppers.append(hi)
                series.append({"id": f"identical/{m}/{dist}/{n}x{k}", "kind": "interval", "role": "measured",
                               "quantity": "differing_share", "shape": [n, k], "m": m, "dist": dist,
                               "x": [k], "y": [differ], "lo": [lo], "hi": [hi], "color": "#333",
                               "marker": shape_marker(s, n, k), "filled": differ > 0})
            panel = {"row": r, "col": c, "title": f"{dist}, M = {m}", "yscale": "log",
                     "ylabel": "outputs differing\n(1 - bit-identical share)" if c == 0 else "", "series": series}
            _k_axis(panel, [k for _, k in s["shapes"]])
            panels.append(panel)
    positive = [v for p in panels for x in p["series"] for v in x["y"] + x["lo"] if v > 0]
    floor = 10.0 ** math.floor(math.log10(min(positive + [min(uppers)]) / 2.0))
    for p in panels:
        p["ylim"] = [floor, 1.0]
        p["percent_ticks"] = True
    return {"name": "identical_share", "rows": len(s["rows"]), "cols": len(s["distributions"]),
            "figsize": [4.3 * len(s["distributions"]), 2.5 * len(s["rows"]) + 0.9], "sharey": True,
            "title": "Outputs where the canonical fold and the GEMV order differ, with 95 % intervals",
            "legend": _shape_legend(s) + [
                {"label": "some differed: share (filled), bar = 95 % interval", "color": "#333", "marker": "o",
                 "filled": True},
                {"label": "none differed: 95 % upper bound (hollow, arrow down)", "color": "#333",
                 "marker": r"$\downarrow$", "filled": True}],
            "panels": panels}


# ---- ULP histograms -------------------------------------------------------------------------------
def _hist_panels(named_counts, bins, title_of) -> tuple[list[dict], float]:
    panels, top = [], 1.0
    for (r, c, key), counts in named_counts:
        counts = [int(v) for v in counts]
        top = max(top, max(counts))
        panels.append({"row": r, "col": c, "title": title_of(key, counts), "yscale": "log",
                       "xlabel": "BF16 ULP distance", "ylabel": "outputs" if c == 0 else "",
                       "xticks": list(range(0, len(bins), 2)), "xticklabels": [bins[i] for i in range(0, len(bins), 2)],
                       "xlim": [-0.6, len(bins) - 0.4], "series": [{"id": f"hist/{key}", "kind": "bars", "role": "measured", "quantity": "ulp_count",
                                   "x": list(range(len(bins))), "y": counts, "color": "#555", "count_labels": True}]})
    # One range for every panel: from below one output to above the largest count, so a bin of 1 to 10
    # outputs stands as high in every panel.
    ylim = [0.5, 10.0 ** math.ceil(math.log10(top * 3.0))]
    for p in panels:
        p["ylim"] = ylim
    return panels, ylim[1]


def histogram_spec(s: dict) -> dict:
    bins = s["ulp_histogram_bins"]
    named = [((r, c, f"{dist}/{name}"), s["ulp_histograms"][dist][name])
             for r, dist in enumerate(s["distributions"]) for c, name in enumerate(COMPARISONS)]
    maxima = {}
    for conf in s["configs"]:
        for name in COMPARISONS:
            key = f"{conf['dist']}/{name}"
            maxima[key] = max(maxima.get(key, 0), conf["ulp"][name]["max"])

    def title(key, counts):
        dist, name = key.split("/")
        return f"{dist}: {name.replace('_', ' ')} (max {maxima[key]:,.0f})"

    panels, _ = _hist_panels(named, bins, title)
    return {"name": "ulp_histograms", "rows": len(s["distributions"]), "cols": 3,
            "figsize": [13, 2.7 * len(s["distributions"]) + 0.5], "sharey": True,
            "title": "BF16 ULP distances, every shape and M (one common count axis)", "legend": [], "panels": panels}


def device_histogram_spec(s: dict) -> dict | None:
    dr = s.get("device_recordings")
    if not dr or not dr["found"]:
        return None
    bins = s["ulp_histogram_bins"]
    counts = {name: np.zeros(len(bins), dtype=np.int64) for name in ("device_vs_gemv", "device_vs_exact")}
    for f in dr["files"]:
        for g in f["groups"]:
            if g["contract"] == "canonical":
                for name in counts:
                    counts[name] += np.array(g["ulp_hist"][name], dtype=np.int64)
    if not any(c.sum() for c in counts.values()):
        return None
    named = [((0, c, name), counts[name].tolist()) for c, name in enumerate(counts)]
    panels, _ = _hist_panels(named, bins, lambda key, cnt: f"recorded tensor-core outputs: {key.replace('_', ' ')}"
                                                             f" ({sum(cnt):,} outputs)")
    return {"name": "device_ulp_histograms", "rows": 1, "cols": 2, "figsize": [11, 3.2], "sharey": True,
            "title": "Device bits (every recording, every tensor-core body) against the GEMV order and the exact result",
            "legend": [], "panels": panels}


# ---- against K ------------------------------------------------------------------------------------
def _measured(s, dist, contract, quantity, stat, big: bool, against: str | None):
    out = []
    for row in s["by_shape"][dist]:
        n, k = row["n"], row["k"]
        value = row[contract][quantity][stat]
        out.append({"id": f"{quantity}/{stat}/{dist}/{contract}/{n}x{k}", "kind": "points", "role": "measured",
                    "quantity": quantity, "stat": stat, "contract": contract, "shape": [n, k], "dist": dist,
                    "x": [k], "y": [value], "color": COLORS[contract], "marker": shape_marker(s, n, k),
                    "filled": stat == "max", "size": 9 if big else 5, "against": against})
    return out


def _bound_line(contract: str, quantity: str, ks, dist: str) -> dict:
    grid = bound_k_grid(ks)
    fn = bounds.beta if quantity == "beta" else bounds.beta_output
    name = "beta(K)" if quantity == "beta" else "beta_out(K)"
    return {"id": f"{quantity}/{dist}/{contract}", "kind": "line", "role": "bound", "quantity": quantity,
            "contract": contract, "label": f"{LABELS[contract]} bound {name}", "x": grid.tolist(),
            "y": [fn(contract, int(k)) for k in grid], "color": COLORS[contract],
            "linestyle": "--" if contract == "canonical" else ":", "linewidth": 1.6}


def error_spec(s: dict) -> dict:
    """Row 1: the FP32 accumulator's |acc - x| / sigma against beta(K); row 2: the BF16 output's
    |C - x| / sigma against beta_out(K). Maximum (filled) and 99.9th percentile (hollow) per shape."""
    panels = []
    ks = [k for _, k in s["shapes"]]
    rows = (("acc_err_sigma", "beta", "FP32 accumulator", "|acc - x| / sigma"),
            ("out_err_sigma", "beta_output", "BF16 output", "|C - x| / sigma"))
    for r, (quantity, bound_q, what, ylabel) in enumerate(rows):
        for c, dist in enumerate(s["distributions"]):
            series = []
            for contract in CONTRACTS:
                line = _bound_line(contract, bound_q, ks, dist)
                series.append(line)
                for stat in ("max", "p999"):
                    series += _measured(s, dist, contract, quantity, stat, contract == "canonical", line["id"])
            panel = {"row": r, "col": c, "title": f"{what}: {dist}", "yscale": "log",
                     "ylabel": ylabel if c == 0 else "", "series": series}
            _k_axis(panel, ks)
            panels.append(panel)
    _common_log_ylim(panels, by_row=True)
    return {"name": "error_vs_bounds", "rows": 2, "cols": len(s["distributions"]), "figsize": [4.4 * len(s["distributions"]), 7.2],
            "sharey": "row", "title": "Error against the a priori bounds: accumulator against beta(K), output against beta_out(K)",
            "legend": _contract_legend("per_contract") + _shape_legend(s), "panels": panels}


def ratio_spec(s: dict) -> dict:
    """|C - x| / bound_output(x, sigma) per output, against 1: the exact per-output test."""
    panels = []
    ks = [k for _, k in s["shapes"]]
    for c, dist in enumerate(s["distributions"]):
        line = {"id": f"unit/{dist}", "kind": "line", "role": "bound", "quantity": "unit", "label": "bound (ratio 1)",
                "x": [min(ks) / 1.45, max(ks) * 1.45], "y": [1.0, 1.0], "color": "k", "linestyle": "-", "linewidth": 1.2}
        series = [line]
        for contract in CONTRACTS:
            for stat in ("max", "p999"):
                series += _measured(s, dist, contract, "ratio", stat, contract == "canonical", line["id"])
        panel = {"row": 0, "col": c, "title": f"BF16 output against its own bound: {dist}", "yscale": "linear",
                 "ylim": [0.0, 1.12], "ylabel": "|C - x| / bound(x, sigma)" if c == 0 else "", "series": series}
        _k_axis(panel, ks)
        panels.append(panel)
    return {"name": "bound_ratio_vs_k", "rows": 1, "cols": len(s["distributions"]), "figsize": [4.4 * len(s["distributions"]), 3.9],
            "sharey": True, "title": "Each output's error over its own bound (1 = the bound)",
            "legend": _contract_legend("unit") + _shape_legend(s), "panels": panels}


def ulp_spec(s: dict) -> dict:
    """BF16 ULP distance to the exact result rounded once, maximum and 99.9th percentile per shape."""
    panels = []
    ks = [k for _, k in s["shapes"]]
    for r, stat in enumerate(("max", "p999")):
        for c, dist in enumerate(s["distributions"]):
            series = []
            for contract in CONTRACTS:
                series += _measured(s, dist, contract, "ulp", stat, contract == "canonical", None)
            for x in series:
                x["filled"] = x["contract"] == "gemv"  # GEMV filled inside the canonical hollow marker
            panel = {"row": r, "col": c, "title": f"{'maximum' if stat == 'max' else '99.9th percentile'}: {dist}",
                     "yscale": "symlog", "ylabel": "BF16 ULP to exact" if c == 0 else "", "series": series}
            _k_axis(panel, ks)
            panels.append(panel)
    top = max(v for p in panels for x in p["series"] for v in x["y"])
    for p in panels:
        p["ylim"] = [0.0, max(4.0, 2.5 * (top + 1.0))]
    return {"name": "ulp_vs_k", "rows": 2, "cols": len(s["distributions"]), "figsize": [4.4 * len(s["distributions"]), 6.4],
            "sharey": True, "title": "BF16 ULP distance to the exact result rounded once",
            "legend": [{"label": "canonical fold (hollow)", "color": COLORS["canonical"], "marker": "o", "filled": False},
                       {"label": "GEMV order (filled)", "color": COLORS["gemv"], "marker": "o", "filled": True}]
            + _shape_legend(s), "panels": panels}


def _contract_legend(lines: str) -> list[dict]:
    """Contracts' markers, then the bound lines: one per contract ('per_contract') or the ratio's 1."""
    out = [{"label": f"{LABELS[c]}: max (filled), p99.9 (hollow)", "color": COLORS[c], "marker": "o", "filled": True}
           for c in CONTRACTS]
    if lines == "per_contract":
        out += [{"label": f"{LABELS[c]} bound: beta(K) top, beta_out(K) bottom", "color": COLORS[c],
                 "line": "--" if c == "canonical" else ":"} for c in CONTRACTS]
    else:
        out.append({"label": "bound (ratio 1)", "color": "k", "line": "-"})
    return out


def _common_log_ylim(panels: list[dict], by_row: bool) -> None:
    groups = {}
    for p in panels:
        groups.setdefault(p["row"] if by_row else 0, []).append(p)
    for group in groups.values():
        values = [v for p in group for x in p["series"] for v in x["y"] if v > 0]
        lo, hi = min(values), max(values)
        group_lim = [10.0 ** math.floor(math.log10(lo) - 0.3), 10.0 ** math.ceil(math.log10(hi) + 0.3)]
        for p in group:
            p["ylim"] = group_lim


def specs(s: dict) -> dict:
    """Every figure of the report, in page order (device histograms only with device bits)."""
    out = {"identical_share": identical_spec(s), "ulp_histograms": histogram_spec(s), "ulp_vs_k": ulp_spec(s),
           "error_vs_bounds": error_spec(s), "bound_ratio_vs_k": ratio_spec(s)}
    dev = device_histogram_spec(s)
    if dev is not None:
        out["device_ulp_histograms"] = dev
    return out


# ---- rendering ------------------------------------------------------------------------------------
def _compact(count: int) -> str:
    return f"{count / 1000:.0f}k" if count >= 10000 else f"{count:,}"


def draw(spec: dict):
    """The matplotlib Figure of a spec; each series' artists carry gid = the series id."""
    fig, axes = plt.subplots(spec["rows"], spec["cols"], figsize=spec["figsize"], squeeze=False,
                             sharey=spec.get("sharey") if spec.get("sharey") in ("row", "col") else bool(spec.get("sharey")))
    for p in spec["panels"]:
        ax = axes[p["row"]][p["col"]]
        for x in p["series"]:
            _draw_series(ax, x, p)
        if p.get("xscale"):
            ax.set_xscale(p["xscale"])
        if p.get("yscale") == "symlog":
            ax.set_yscale("symlog", linthresh=1.0)
        elif p.get("yscale"):
            ax.set_yscale(p["yscale"])
        if "xlim" in p:
            ax.set_xlim(*p["xlim"])
        if "ylim" in p:
            ax.set_ylim(*p["ylim"])
        if "xticks" in p:
            ax.xaxis.set_major_locator(FixedLocator(p["xticks"]))
            # K ticks can sit close on a log axis (4096, 5120): slanted labels do not run into each other.
            slant = p.get("xscale") == "log"
            ax.set_xticklabels(p["xticklabels"], fontsize=7.5, rotation=35 if slant else 0,
                               ha="right" if slant else "center", rotation_mode="anchor" if slant else "default")
            ax.xaxis.set_minor_locator(NullLocator())
        if p.get("percent_ticks"):
            lo, hi = p["ylim"]
            ticks = [10.0 ** e for e in range(int(round(math.log10(lo))), int(round(math.log10(hi))) + 1)]
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.set_yticklabels([f"{100 * t:g} %" for t in ticks])
        ax.set_title(p["title"], fontsize=9)
        ax.set_xlabel(p.get("xlabel", ""), fontsize=8)
        if p.get("ylabel"):
            ax.set_ylabel(p["ylabel"], fontsize=8.5)
        ax.tick_params(labelsize=7.5)
        ax.grid(alpha=0.25, which="major")
    if spec.get("title"):
        fig.suptitle(spec["title"], fontsize=11)
    handles = [_legend_handle(h) for h in spec.get("legend", [])]
    bottom = 0.0
    if handles:
        nrows = 1 if len(handles) <= 4 else 2
        ncol = math.ceil(len(handles) / nrows)
        fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
        bottom = min(0.3, (0.22 * nrows + 0.1) / spec["figsize"][1])
    fig.tight_layout(rect=(0, bottom, 1, 0.97 if spec.get("title") else 1))
    return fig


def _draw_series(ax, x: dict, panel: dict) -> None:
    kind = x["kind"]
    if kind == "line":
        ax.plot(x["x"], x["y"], color=x["color"], ls=x.get("linestyle", "-"), lw=x.get("linewidth", 1.5), gid=x["id"],
                zorder=2)
    elif kind == "points":
        ax.plot(x["x"], x["y"], ls="none", marker=x["marker"], ms=x.get("size", 7), color=x["color"],
                mfc=x["color"] if x["filled"] else "none", mew=1.3, gid=x["id"], zorder=3)
    elif kind == "interval":
        y, lo, hi = x["y"][0], x["lo"][0], x["hi"][0]
        if y > 0:
            line = ax.errorbar(x["x"], [y], yerr=[[y - lo], [hi - y]], fmt=x["marker"], color=x["color"], ms=6,
                               mfc=x["color"], mew=1.2, capsize=3, elinewidth=1.1, zorder=3)
        else:  # nothing differed: the interval runs from 0 (off the log axis) up to `hi`; an arrow says so
            line = ax.errorbar(x["x"], [hi], yerr=[[hi * 0.7], [0.0]], uplims=True, fmt=x["marker"], color=x["color"],
                               ms=6, mfc="none", mew=1.2, elinewidth=1.1, zorder=3)
        line.lines[0].set_gid(x["id"])
    elif kind == "bars":
        counts = np.array(x["y"], dtype=float)
        bars = ax.bar(x["x"], np.where(counts > 0, counts, np.nan), color=x["color"], width=0.8)
        for patch in bars.patches:
            patch.set_gid(x["id"])
        if x.get("count_labels"):
            for xi, cnt in zip(x["x"], x["y"]):
                if 0 < cnt:
                    ax.annotate(_compact(int(cnt)), (xi, cnt), xytext=(0, 1.5), textcoords="offset points",
                                ha="center", va="bottom", fontsize=5.8, rotation=90 if cnt >= 1000 else 0,
                                color="#222")
    else:
        raise ValueError(f"unknown series kind {kind!r}")


def _legend_handle(h: dict):
    if h.get("line"):
        return Line2D([], [], color=h["color"], ls=h["line"], lw=1.6, label=h["label"])
    return Line2D([], [], ls="none", marker=h["marker"], color=h["color"], ms=7,
                  mfc=h["color"] if h.get("filled") else "none", mew=1.3, label=h["label"])


def png_data_uri(fig) -> str:
    """The figure as a data: URI (PNG, base64): the page carries its images."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
