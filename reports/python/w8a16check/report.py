# SPDX-License-Identifier: MIT OR Apache-2.0
# Writes the audit's summary.json and report.html: one self-contained page, its figures embedded.
"""The audit's report. Everything report.html shows is read from summary.json's fields; the figures
are drawn from them (figures.py, trees.py) and embedded as data: URIs, so the page and the JSON are
the whole artifact (attach them to a CI run or a bug report). Each part of the page is one
<section> with an id; the browser check (browser.py) fails a page with an empty one.
"""
from __future__ import annotations

import html
import json
import os
import re

from . import figures, stats, trees

CONTRACTS = ("canonical", "gemv")
e = html.escape


def _policy_label(arch: str) -> str:
    """The policy's name, and UNVERIFIED where no recording of that architecture confirms it
    (docs/NUMERICS.md 3): a report that uses such a policy must say so."""
    from . import _core

    return arch if _core.mma_policy(arch)["verified"] else f"{arch} (UNVERIFIED: no recording)"


_NUMBER = re.compile(r"^[-+]?(\d[\d,]*(\.\d+)?(e[-+]?\d+)?|inf)( %)?( \(.*\))?$")


def _cell(v) -> str:
    if isinstance(v, Raw):
        return f"<td>{v.html}</td>"
    text = str(v)
    # Numbers right-aligned (their digits line up), words left-aligned.
    return f"<td class='n'>{e(text)}</td>" if _NUMBER.match(text) else f"<td>{e(text)}</td>"


def _table(header, rows, cls: str = "", row_classes=None) -> str:
    """A table in a box that scrolls sideways on its own, so a wide table never widens the page."""
    head = "".join(f"<th>{e(str(h))}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        rc = row_classes[i] if row_classes else ""
        body.append((f"<tr class='{rc}'>" if rc else "<tr>") + "".join(_cell(v) for v in row) + "</tr>")
    attr = f" class='{cls}'" if cls else ""
    return (f"<div class='tablebox'><table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div>")


class Raw:
    """A table cell that is already HTML."""

    def __init__(self, text: str):
        self.html = text


CSS = """body{font-family:'DejaVu Sans',system-ui,sans-serif;max-width:1320px;margin:1.2em auto;padding:0 1em;color:#222;line-height:1.35}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}td.n{text-align:right;white-space:nowrap}.tablebox{max-width:100%;overflow-x:auto}table.kv td.n{text-align:left}pre{background:#f7f7f7;padding:.6em;font-size:11px;white-space:pre-wrap;word-break:break-all}
img{max-width:100%;border:1px solid #ddd;margin:.4em 0;display:block}.ok{color:#080;font-weight:bold}.bad{color:#b00;font-weight:bold}
tr.bad td{background:#fde8e8}tr.warn td{background:#fff5d6}.verdict{border:2px solid;padding:.4em .8em;margin:.6em 0}
.verdict.good{border-color:#080;background:#effaef}.verdict.fail{border-color:#b00;background:#fdeeee}
h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}code{background:#f3f3f3;padding:0 3px}
figure{margin:.6em 0}figcaption{font-size:12px;color:#444;max-width:1100px}.small{font-size:12px;color:#444}"""


def _section(ident: str, title: str, body: list[str]) -> str:
    return f"<section id='{ident}'><h2>{e(title)}</h2>\n" + "\n".join(body) + "\n</section>"


def _img(uri: str, alt: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f"<figure><img src='{uri}' alt='{e(alt)}'>{cap}</figure>"


def _fig(spec: dict, caption: str) -> str:
    return _img(figures.png_data_uri(figures.draw(spec)), spec["title"], caption)


def write(out_dir: str, s: dict) -> None:
    """summary.json and report.html into out_dir (created); nothing else."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    with open(os.path.join(out_dir, "report.html"), "w") as f:
        f.write(render_html(s))


# ---- small formatters -----------------------------------------------------------------------------
def _interval(iv: dict | None) -> Raw | str:
    """share [lo, hi] of a stats.share_interval, in percent, on one line."""
    if not iv:
        return "-"
    def num(v):
        return f"{100 * v:.2f}" if 0.0005 < v < 0.9995 or v in (0.0, 1.0) else f"{100 * v:.3f}"
    return Raw(f"<span style='white-space:nowrap'>{num(iv['share'])} % [{num(iv['lo'])}, {num(iv['hi'])}]</span>")


def _replay(r: dict) -> str:
    return f"--replay {r['n_shape']} {r['k']} {r['dist']} {r['seed']} {r['m']} {r['n']}"


def _cond(r: dict) -> str:
    return "inf (x = 0)" if r["cond"] is None else f"{r['cond']:.3g}"


def _why(r: dict, contract: str) -> str:
    """One clause on why an output's ULP distance is large or small, from its own numbers."""
    value, x = r[contract]["value"], r["exact"]
    parts = []
    if x != 0 and value != 0 and (value < 0) != (x < 0):
        parts.append("sign flipped")
    if r["cond"] is None or r["cond"] > 1e3:
        parts.append(f"cancellation (sigma/|x| = {_cond(r)})")
    return ", ".join(parts) if parts else "well conditioned"


# ---- page parts -----------------------------------------------------------------------------------
def _provenance_html(s: dict) -> list[str]:
    p = s["provenance"]
    commit = p["commit"] or "unknown (not a git checkout)"
    dirty = " with uncommitted changes" if p["dirty"] else ""
    core = p["core_build_commit"]
    dev = "".join(f"<li>{e(d['source'])}: {e(d['kind'])}; GPU {e(str(d.get('gpu') or 'not recorded'))}"
                  f"{', driver ' + e(str(d['driver'])) if d.get('driver') else ''}"
                  f"{', CUDA ' + e(str(d['cuda'])) if d.get('cuda') else ''}; binaries of commit "
                  f"{e(str(d.get('commit') or 'not recorded'))}</li>" for d in p["device_data"])
    return [f"<p>w8a16check {e(p['version'])}, commit <code>{e(commit)}</code>{dirty} "
            f"(<code>_core</code> configured at <code>{e(core)}</code>). Emulator numbers: "
            f"{e(p['emulator'])}. Device data shown: " + ("GPU " + ", ".join(e(g) for g in p["gpus"]) if p["gpus"]
                                                          else "<b class='bad'>none</b>") + ".</p>",
            f"<ul class='small'>{dev}</ul>" if dev else ""]


def _verdict_html(s: dict) -> str:
    v = s["verdict"]
    if v["ok"]:
        return ("<div class='verdict good'><span class='ok'>PASS</span>: no output and no FP32 accumulator exceeds its "
                "bound; the emulator's recovered trees are the documented ones; every recorded device output and tree "
                "meets its contract.</div>")
    return ("<div class='verdict fail'><span class='bad'>FAIL</span>:<ul>" +
            "".join(f"<li>{e(x)}</li>" for x in v["problems"]) + "</ul></div>")


def _headline_html(s: dict) -> list[str]:
    t, h = s["totals"], s["headline"]
    iv = t["identical"]
    rows = []
    for c in CONTRACTS:
        u, r, a = h[c]["largest_ulp"], h[c]["largest_bound_ratio"], h[c]["largest_acc_bound_ratio"]
        rows.append([figures.LABELS[c], f"{u['score']:,.0f}", f"{u[c]['bound_ratio']:.3g}",
                     f"{u['exact']:.4g}; {_cond(u)}; {_why(u, c)}", f"{r['score']:.3g} ({r[c]['ulp_vs_exact']} ULP)",
                     f"{t['bound_violations'][c]:,}", f"{a['score']:.3g}", f"{t['acc_bound_violations'][c]:,}",
                     Raw(f"<code>{e(_replay(u))}</code>")])
    g = h["canonical_vs_gemv"]
    rows.append(["canonical vs GEMV", f"{g['score']:,.0f}",
                 f"canonical {g['canonical']['bound_ratio']:.3g}, GEMV {g['gemv']['bound_ratio']:.3g}",
                 f"{g['exact']:.4g}; {_cond(g)}", "-", "-", "-", "-", Raw(f"<code>{e(_replay(g))}</code>")])
    u = h["canonical"]["largest_ulp"]
    note = (f"The largest ULP distance, {u['score']:,.0f} (canonical fold against the exact result rounded once), is "
            f"an output whose exact value is {u['exact']:.3g} with sigma/|x| = {_cond(u)}: {_why(u, 'canonical')}. "
            f"Its error is {u['canonical']['bound_ratio']:.3g} of what the bound allows, because a ULP is relative to "
            "the tiny exact result while the bound is relative to sigma. The bound ratio, not the ULP count, says "
            "whether the arithmetic did what the contract guarantees.")
    return [
        _table(["quantity", "value"], [
            ["outputs bit-identical between the contracts (95 % interval)", _interval(iv)],
            ["outputs compared", f"{t['outputs']:,} (effective sample size {iv['n_eff']:,.0f}, stats.py)"],
            ["largest BF16 ULP distance, canonical vs GEMV", f"{t['max_ulp']['canonical_vs_gemv']:,.0f}"],
        ] + _device_headline(s), cls="kv"),
        "<p>Each contract's largest errors, side by side with the bound ratio of the same output:</p>",
        _table(["contract", "largest BF16 ULP distance to exact", "same output: |C - x| / bound",
                "same output: x; sigma/|x|; why", "largest |C - x| / bound (its ULP)", "outputs above their bound",
                "largest |acc - x| / (beta sigma)", "FP32 accumulators above beta sigma", "replay (largest ULP)"], rows),
        f"<p class='small'>{e(note)}</p>",
    ]


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
    tiers_ = s.get("tiers")
    if tiers_:
        missing = [t["body"] for t in tiers_ if t["status"] == "no device recording"]
        rows.append(["kernel bodies without a device recording",
                     Raw("<b class='bad'>" + e(", ".join(missing)) + "</b>") if missing else "none"])
        treeless = [t["body"] for t in tiers_ if t.get("device_trees") == "none"]
        rows.append(["kernel bodies without reduction trees recovered on a GPU",
                     Raw("<b class='bad'>" + e(", ".join(treeless)) + "</b>") if treeless else "none"])
    return rows


def _tiers_html(s: dict) -> list[str]:
    rows, classes = [], []
    for t in s["tiers"]:
        can = t["contract"] == "canonical"
        probes = t["order_probes"]
        same = sum(p["matches_documented"] for p in probes)
        trees_ = (f"{same} of {len(probes)} probes: same tree" if probes
                  else Raw("<b class='bad'>no device order probe</b>"))
        if t["status"] == "no device recording":
            status = Raw("<b class='bad'>NO DEVICE RECORDING</b>: no recording holds a case of this body")
            classes.append("bad")
        elif t["status"] == "MISMATCH":
            status = Raw("<b class='bad'>MISMATCH</b>")
            classes.append("bad")
        elif t["status"] != "recorded":
            status = t["status"]
            classes.append("warn")
        else:
            status = Raw("<span class='ok'>meets its contract</span>")
            classes.append("")
        ulp = t.get("ulp_max") or {}
        rows.append([Raw(f"<b>{e(t['body'])}</b>"), "tensor core, canonical fold" if can else "scalar, GEMV order",
                     Raw("<br>".join(e(k) for k in t["kernels"]) or "-"),
                     Raw("<br>".join(e(x) for x in t["entries"]) or "-"),
                     f"{t['cases']:,}", f"{t['outputs_compared']:,}", f"{t['mismatches']:,}",
                     _interval(t.get("identical_to_gemv_interval")) if can else "-",
                     "-" if ulp.get("device_vs_exact") is None else ulp["device_vs_exact"],
                     "-" if ulp.get("device_vs_gemv") is None else ulp["device_vs_gemv"], trees_, status])
    files = sorted({f for t in s["tiers"] for f in t["recordings"]})
    return [
        "<p>Every kernel body the launch layer knows (<code>_core.bodies()</code>, from <code>device::kAllBodies</code>), "
        "so a body added in C++ is listed here without a change to the audit; a body no recording holds is marked. "
        "For each: the device bits recorded on a GPU (" + (", ".join(f"<code>{e(f)}</code>" for f in files) or "none")
        + ") and checked bit for bit against the contract the body must meet (NUMERICS.md 2.1 for the tensor-core "
        "bodies, 2.2 for the GEMV), how often they equal the GEMV order, the largest ULP distances (finite outputs "
        "only) and the reduction trees recovered on the device. The body of a recorded case is the one this "
        "checkout's plan chooses for it. For the share, each recorded case is one cluster of the 95 % interval; the "
        "cases are the recording corpus' draws (special classes included: with wide exponents one order overflows to "
        "Inf where the other meets Inf - Inf = NaN), not a sample of a workload.</p>",
        _table(["body", "tier", "kernels", "entry points", "cases", "outputs compared bit for bit", "mismatches",
                "bit-identical to GEMV (95 %)", "max ULP to exact", "max ULP to GEMV", "trees recovered on a device",
                "status"], rows, row_classes=classes)]


def _device_recordings_html(s: dict) -> list:
    dr = s["device_recordings"]
    parts = []
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
                 "commit (its header) may have run another body of the same contract. For the tensor-core bodies the "
                 "recorded bits are also set against the GEMV order and the exact result rounded once, on the same "
                 "inputs: the reassociation measured on hardware. ULP distances skip outputs where any of the three is "
                 "NaN or Inf. Cases recorded as a digest only are checked by digest; those above "
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
            bad_g = g["mismatches"] or g["mismatching_cases"]
            rows.append([g["entry"], g["body"], ", ".join(g.get("kernels", [])), g["contract"],
                         f"{g['cases']} ({g['cases_with_bits']}, {g['digest_only_checked']}, {g['digest_only_not_replayed']})",
                         f"{g['outputs_compared']:,}",
                         Raw(("<b class='bad'>MISMATCH</b> " if bad_g else "") +
                             f"{g['mismatches']:,} ({g['mismatching_cases']} cases)"),
                         _interval(g.get("identical_to_gemv_interval")) if can else "-",
                         f"{g['ulp_max']['device_vs_gemv']} / {g['ulp_max']['device_vs_exact']}" if can else "-"])
        parts.append(_table(["entry", "body", "kernels", "contract",
                             "cases (with bits, digest only checked, digest only not replayed)", "outputs compared",
                             "mismatches vs contract", "bit-identical to GEMV (95 %)", "max ULP device to GEMV / exact"],
                            rows))
        if f["mismatch_list"]:
            parts.append("<p class='bad'>Mismatching cases (explain one with <code>w8a16check repro 'CASE'</code>):</p>")
            parts.append(_table(["entry", "body", "outputs differing", "detail", "case"],
                                [[m["entry"], m["body"], m["outputs_differing"] if m["outputs_differing"] is not None
                                  else "digest", m["detail"], m["case"]] for m in f["mismatch_list"]]))
    spec = figures.device_histogram_spec(s) if "ulp_histogram_bins" in s else None
    if spec is not None:
        parts.append(_fig(spec, "Every recorded tensor-core output with bits, against the GEMV order and against "
                                "the exact result rounded once, on the same inputs; both panels share one count axis."))
    return parts


def _tree_key(positions, nodes) -> tuple:
    return tuple(positions), tuple(tuple(n) for n in nodes)


def _trees_html(items: list[dict]) -> list[str]:
    """One picture per distinct recovered tree, listing every probe that produced it; a tree that
    differs from its documented one is drawn above the documented one, differences in red."""
    groups: dict[tuple, dict] = {}
    for it in items:
        r = it["result"]
        if "measured_nodes" not in r:
            continue
        key = _tree_key(r["leaf_positions"], r["measured_nodes"])
        g = groups.setdefault(key, {"result": r, "names": [], "match": r["matches_documented"]})
        g["names"].append(it["name"])
        g["match"] = g["match"] and r["matches_documented"]
    out = []
    for g in groups.values():
        r = g["result"]
        head = (f"K = {r['k']}, {r['leaves']}: recovered from the outputs of "
                f"{', '.join(g['names'])}")
        if g["match"]:
            fig = trees.figure(r["measured_nodes"], r["leaf_positions"],
                               f"{r['contract']} (recovered = documented, {r['internal_nodes_measured']} joins)")
            caption = e(head) + ": <span class='ok'>the documented order, node for node</span>."
        else:
            fig = trees.figure(r["measured_nodes"], r["leaf_positions"], "recovered", r["documented_nodes"],
                               f"documented ({r['contract']})")
            caption = e(head) + ": <span class='bad'>DIFFERENT TREE</span> (red: nodes the other tree lacks)."
        text = (f"<details><summary>the trees as text</summary><p>recovered</p><pre>{e(r['measured_tree'])}</pre>"
                f"<p>documented</p><pre>{e(r['documented_tree'])}</pre></details>")
        out.append(_img(figures.png_data_uri(fig), f"reduction tree, {head}", caption) + text)
    return out


def _order_html(s: dict) -> list[str]:
    parts = ["<p>Probes put +2<sup>40</sup> and -2<sup>40</sup> at two leaves and 1 at the others; the output counts "
             "the units outside the two leaves' lowest common ancestor, which rebuilds the reduction tree "
             "(order.py, after FPRev). The pictures draw each distinct tree: leaves along the bottom in K order, each "
             "join as a bar over what it adds, its height the depth of the join; a chain of accumulations reads as a "
             "staircase, the GEMV's lane butterfly as a balanced tree on top.</p>",
             "<h3>The emulator's contracts</h3>",
             _table(["contract", "MMA policy", "K", "leaves", "probes", "nodes measured", "nodes documented", "same tree"],
                    [[o["contract"], _policy_label(o["arch"]) if o["contract"] == "canonical" else "-", o["k"], o["leaves"],
                      o["probes"], o["internal_nodes_measured"], o["internal_nodes_documented"],
                      "yes" if o["matches_documented"] else "NO"] for o in s["reduction_order"]])]
    items = [{"name": f"the {o['contract']} contract" + (f" ({o['arch']})" if o["contract"] == "canonical" else ""),
              "result": o} for o in s["reduction_order"]]
    do = s.get("device_order")
    if do is not None:
        parts.extend(_device_order_html(s))
        for dev in do.get("devices", []):
            items += [{"name": f"{dev['device']}/{r['name']}", "result": r} for r in dev["results"]]
    parts.append("<h3>The trees</h3>")
    parts.extend(_trees_html(items))
    return parts


def _device_order_html(s: dict) -> list:
    do = s["device_order"]
    parts = ["<h3>The kernels' trees, recovered on a GPU</h3>"]
    if not do["found"]:
        parts.append(f"<p class='bad'>no device order recording: {e(do['note'])}. The rows above are the "
                     "emulator's contracts only.</p>")
        return parts
    for dev in do["devices"]:
        ok = dev["all_match"]
        run = dev.get("run") or {}
        parts.append(f"<p>golden/order/{e(dev['device'])} ({e(str(run.get('gpu') or 'GPU not recorded'))}, binaries "
                     f"of commit {e(str(run.get('commit') or 'not recorded'))}): <span class='{'ok' if ok else 'bad'}'>"
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
    return parts


def _dist_row(s: dict, dist: str) -> list:
    configs = [c for c in s["configs"] if c["dist"] == dist]
    shapes = s["by_shape"][dist]
    iv = stats.pooled([c["identical"] for c in configs])
    return [dist, f"{iv['outputs']:,}", _interval(iv),
            f"{max(x['canonical']['ulp']['max'] for x in shapes):,.0f}",
            f"{max(x['gemv']['ulp']['max'] for x in shapes):,.0f}",
            f"{max(x['canonical']['ratio']['max'] for x in shapes):.3g}",
            f"{max(x['gemv']['ratio']['max'] for x in shapes):.3g}",
            f"{max(x['canonical']['acc_ratio']['max'] for x in shapes):.3g}",
            f"{max(x['gemv']['acc_ratio']['max'] for x in shapes):.3g}"]


def _contract_html(s: dict) -> list:
    """The line naming the contract the tiers were held to (--contract, NUMERICS.md 2.4); a summary
    written before contracts were data has none and gets no line."""
    c = s.get("contract")
    if not c:
        return []
    src = "" if c["source"] in ("library", "") else f" from <code>{e(c['source'])}</code>"
    return [f"<p class='small' id='contract'>Tiers held to contract <b>{e(c['name'])}</b>{src} "
            f"(NUMERICS.md 2.4): tensor-core tiers <code>{e(c['tc'])}</code>; GEMV <code>{e(c['gemv'])}</code>. "
            + ("" if c["name"] == "canonical" else " The a priori bounds are the canonical orders' (2.1, 2.2).")
            + "</p>"]


def render_html(s: dict) -> str:
    t = s["totals"]
    spec = figures.specs(s)
    sections = []
    sections.append(_section("headline", "Headline", _headline_html(s) + [
        "<p>Per distribution (every shape and M):</p>",
        _table(["dist", "outputs", "bit-identical (95 %)", "max ULP can/exact", "max ULP gemv/exact",
                "max |C-x|/bound can", "max |C-x|/bound gemv", "max |acc-x|/(beta sigma) can",
                "max |acc-x|/(beta sigma) gemv"], [_dist_row(s, d) for d in s["distributions"]])]))
    if "tiers" in s:
        sections.append(_section("tiers", "Every kernel body, with its recorded device bits", _tiers_html(s)))
    sections.append(_section("distributions", "Distributions", [
        "<ul>" + "".join(f"<li><b>{e(d)}</b>: {e(txt)}</li>" for d, txt in s["distribution_descriptions"].items()) + "</ul>",
        "<p>The GEMV entry points take M &le; 4 and M &le; 16 rows; at M = 64 the GEMV numbers are its contract "
        "(NUMERICS.md 2.2) applied to each row, which is exact because every output depends only on its own row: a "
        "larger sample of the same per-output arithmetic, not a launch a kernel would make.</p>"]))
    sections.append(_section("identical", "Bit-identical share", [
        _fig(spec["identical_share"],
             "The share of sampled outputs where the canonical fold and the GEMV order give different bits, per shape "
             "(marker), M (row) and distribution (column), K at its true value on a log axis. Bars: 95 % Wilson "
             "intervals at the effective sample size (stats.py): the sampled columns are the clusters, their M rows "
             "share the column's W row. Where no output differed the interval runs from 0 (off the log axis) up to its "
             "95 % upper bound: a hollow marker there with an arrow down. Every panel shares one axis."),
        f"<details><summary>How the interval is computed (stats.py)</summary><pre>{e(s['identical_interval_method'])}</pre></details>"]))
    sections.append(_section("histograms", "BF16 ULP distance histograms", [
        _fig(spec["ulp_histograms"],
             "Every shape and M pooled per distribution; the exact result is rounded once to BF16 (RNE). All nine "
             "panels share one logarithmic count axis starting below 1, so a bin of a single output shows in every "
             "panel; counts below 100 are written on their bars.")]))
    sections.append(_section("ulp-vs-k", "ULP distance against K", [
        _fig(spec["ulp_vs_k"],
             "The largest and the 99.9th-percentile BF16 ULP distance to the exact result, one point per shape (N x K, "
             "marker) pooled over M, K at its true value on a log axis. A ULP is relative to the output itself: near "
             "an exact zero (cancellation) a small absolute error is many ULPs; the bounds below say whether it is "
             "allowed.")]))
    sections.append(_section("bounds", "Error against the a priori bounds", [
        "<p>x is the exact output, sigma = sum |a w S|. Top row: each contract's FP32 accumulator before the BF16 "
        "rounding, |acc - x| / sigma, against its accumulation bound beta(K). Bottom row: the BF16 output, "
        "|C - x| / sigma, against beta_out(K) = (1 + 2<sup>-8</sup>) beta(K) + 2<sup>-8</sup>, the largest the "
        "output bound can be (at |x| = sigma). Like is set against like: a point above its line breaks its bound. "
        "The output's own bound is tighter where |x| &lt; sigma; the ratio figure after it is the exact per-output "
        "test.</p>",
        _fig(spec["error_vs_bounds"], "Maximum (filled) and 99.9th percentile (hollow) per shape; lines: the bounds of "
                                      "bounds.py, drawn over every multiple of 128 in the range."),
        _fig(spec["bound_ratio_vs_k"], "|C - x| / bound_output(x, sigma) for every output: the bound is 1 on a linear "
                                       "axis, so the margin reads as it is. A ratio above 1 would contradict the model "
                                       "or the derivation; the audit counts them (the headline)."),
        f"<p>Outputs above their bound: canonical {t['bound_violations']['canonical']:,}, GEMV "
        f"{t['bound_violations']['gemv']:,}; FP32 accumulators above beta sigma: canonical "
        f"{t['acc_bound_violations']['canonical']:,}, GEMV {t['acc_bound_violations']['gemv']:,}.</p>",
        f"<details open><summary>Derivation of the bounds (bounds.py)</summary><pre>{e(s['bound']['statement'])}</pre></details>"]))
    sections.append(_section("configs", "Per configuration", [
        _table(["dist", "N", "K", "M", "outputs", "bit-identical (95 %)", "max ULP can/gemv", "max ULP can/exact",
                "max ULP gemv/exact", "max |C-x|/bound can", "max |C-x|/bound gemv", "max |acc-x|/(beta sigma) can",
                "max |acc-x|/(beta sigma) gemv", "median sigma/|x|"],
               [[c["dist"], c["n"], c["k"], c["m"], f"{c['outputs']:,}", _interval(c["identical"]),
                 f"{c['ulp']['canonical_vs_gemv']['max']:,.0f}", f"{c['ulp']['canonical_vs_exact']['max']:,.0f}",
                 f"{c['ulp']['gemv_vs_exact']['max']:,.0f}", f"{c['bound_ratio']['canonical']['max']:.3g}",
                 f"{c['bound_ratio']['gemv']['max']:.3g}", f"{c['acc_bound_ratio']['canonical']['max']:.3g}",
                 f"{c['acc_bound_ratio']['gemv']['max']:.3g}", f"{c['cond_median']:.3g}"] for c in s["configs"]])]))
    sections.append(_section("worst", "Worst cases (replayable)", [
        "<p>The worst output of each configuration per contract and metric, the ten highest per metric, each with its "
        "ULP distance and its bound ratios side by side. Each line regenerates its one output: "
        "<code>python -m w8a16check.audit --replay N K DIST SEED M_ROW N_COL</code>. '= RNE(x)' says whether the "
        "contract's output is the exact result rounded once.</p>",
        _table(["metric", "contract", "score", "ULP can / gemv", "|C-x|/bound can / gemv", "|acc-x|/(beta sigma) can / gemv",
                "x", "sigma/|x|", "canonical", "GEMV", "exact (BF16)", "= RNE(x)", "replay"],
               [[w["metric"], w["contract"], f"{w['score']:.4g}",
                 f"{w['canonical']['ulp_vs_exact']:,} / {w['gemv']['ulp_vs_exact']:,}",
                 f"{w['canonical']['bound_ratio']:.3g} / {w['gemv']['bound_ratio']:.3g}",
                 f"{w['canonical']['acc_bound_ratio']:.3g} / {w['gemv']['acc_bound_ratio']:.3g}",
                 f"{w['exact']:.6g}", _cond(w), w["canonical_bits"], w["gemv_bits"], w["exact_bf16_bits"],
                 ("yes" if w[f"{w['contract']}_bits"] == w["exact_bf16_bits"] else "no")
                 if w["contract"] in CONTRACTS else "-", Raw(f"<code>{e(_replay(w))}</code>")]
                for w in s["worst_cases"]])]))
    sections.append(_section("order", "Reduction order, recovered from outputs", _order_html(s)))
    if "device_recordings" in s:
        sections.append(_section("device-recordings", "Device recordings: recorded GPU outputs against the contracts",
                                 _device_recordings_html(s)))
    head = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>w8a16check reassociation audit</title>"
            f"<style>{CSS}</style></head><body>",
            "<h1>Reassociation audit: canonical fold vs scalar GEMV vs exact</h1>",
            *_provenance_html(s),
            f"<p class='small'>{t['outputs']:,} outputs; seed {s['seed']}; MMA policy <code>{e(s['mma_policy']['name'])}"
            f"</code> ({e(s['mma_policy']['evidence'])}); {s['seconds']} s. {e(s['sampling'])}: "
            f"{s['columns_per_shape']} columns per shape, M in {e(str(s['rows']))}.</p>",
            *_contract_html(s),
            _verdict_html(s)]
    return "\n".join(head + sections + ["</body></html>"])
