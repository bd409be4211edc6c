# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit: its JSON carries what the page shows, the page is one file, its worst cases replay,
# the bounds hold, the recovered reduction orders are the documented ones, and every figure plots
# what it says against the line it says (checked on the figure data and on the drawn artists).
import base64
import json
import re

import numpy as np
import pytest

from conftest import AUDIT_ROWS, AUDIT_SHAPES
from w8a16check import _core, audit, bounds, data, figures, order, report, stats


def _html(out):
    return (out / "report.html").read_text()


def test_json_has_every_field_the_html_shows(audit_run):
    out, summary = audit_run
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["totals"] == json.loads(json.dumps(summary["totals"]))
    for key in ("version", "commit", "gpu", "provenance", "seed", "columns_per_shape", "sampling", "shapes", "rows",
                "distributions", "distribution_descriptions", "mma_policy", "bound", "identical_interval_method",
                "totals", "headline", "ulp_histograms", "ulp_histogram_bins", "configs", "by_shape", "worst_cases",
                "reduction_order", "seconds", "device_recordings", "device_order", "tiers", "verdict"):
        assert key in on_disk, key
    assert len(on_disk["configs"]) == len(data.DISTRIBUTIONS) * len(AUDIT_SHAPES) * len(AUDIT_ROWS)
    config = on_disk["configs"][0]
    for key in ("n", "k", "m", "dist", "outputs", "identical", "identical_share", "ulp", "bound_ratio",
                "bound_violations", "acc_bound_ratio", "acc_bound_violations", "beta", "beta_output", "cond_median"):
        assert key in config, key
    assert set(config["ulp"]) == {"canonical_vs_gemv", "canonical_vs_exact", "gemv_vs_exact"}
    assert sum(on_disk["ulp_histograms"]["activation"]["canonical_vs_gemv"]) == sum(
        c["outputs"] for c in on_disk["configs"] if c["dist"] == "activation")
    html = _html(out)
    for key in ("device_recordings", "device_order"):
        assert "found" in on_disk[key], key
    assert "Device recordings" in html and "recovered on a GPU" in html
    if not on_disk["device_order"]["found"]:
        assert "no device order recording" in html
    assert f"{on_disk['totals']['outputs']:,} outputs" in html
    assert on_disk["verdict"] == {"ok": True, "problems": []} and "PASS" in html


def test_the_page_is_one_file_with_its_images_embedded(audit_run):
    out, summary = audit_run
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "summary.json"]
    html = _html(out)
    srcs = re.findall(r"""\b(?:src|href)\s*=\s*['"]([^'"]*)['"]""", html)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs), [s[:40] for s in srcs]
    assert "<link" not in html and "<script" not in html
    # One image per figure spec and per distinct recovered tree, each a real PNG.
    trees = {(tuple(r["leaf_positions"]), json.dumps(r["measured_nodes"]))
             for r in summary["reduction_order"] + [r for d in summary["device_order"].get("devices", [])
                                                     for r in d["results"] if "measured_nodes" in r]}
    assert len(srcs) == len(figures.specs(summary)) + len(trees)
    for src in srcs:
        png = base64.b64decode(src.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width >= 600 and height >= 200, (width, height)
    # Every section of the page has content besides its heading.
    sections = re.findall(r"<section id='([^']+)'><h2>[^<]*</h2>\n(.*?)\n</section>", html, re.S)
    assert {s for s, _ in sections} >= {"headline", "tiers", "identical", "histograms", "ulp-vs-k", "bounds",
                                         "configs", "worst", "order", "device-recordings"}
    assert all(len(body.strip()) > 50 for _, body in sections)


def test_json_names_version_commit_and_gpu_of_its_data(audit_run, monkeypatch):
    import subprocess

    import w8a16check
    from w8a16check import provenance

    _, summary = audit_run
    p = summary["provenance"]
    assert summary["version"] == p["version"] == provenance.package_version()
    head = subprocess.run(["git", "-C", str(provenance.REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert summary["commit"] == p["commit"] == head.stdout.strip()
    assert p["core_build_commit"] == _core.build_info()["commit"]
    rec = [d for d in p["device_data"] if d["source"].endswith(".rec")]
    assert len(rec) == len(summary["device_recordings"]["files"])
    for d, f in zip(rec, summary["device_recordings"]["files"]):
        assert (d["gpu"], d["commit"]) == (f["header"]["gpu"], f["header"]["commit"])
    for dev in summary["device_order"].get("devices", []):
        assert dev["run"]["gpu"] and dev["run"]["commit"], dev["run"]
    assert summary["gpu"] == sorted({d["gpu"] for d in p["device_data"] if d["gpu"]})
    if summary["device_recordings"]["found"]:
        assert summary["gpu"]
    # The version: the package's own __version__ where it has one, else the CMake project version.
    monkeypatch.delattr(w8a16check, "__version__", raising=False)
    assert provenance.package_version() == _core.build_info()["version"]
    monkeypatch.setattr(w8a16check, "__version__", "9.8.7", raising=False)
    assert provenance.package_version() == "9.8.7"


def test_order_run_log_names_gpu_driver_and_commit(tmp_path):
    from w8a16check import provenance

    log = tmp_path / "run.log"
    log.write_text("== gpu-order 2026-11-30T08:42:50Z, backend cuda\nGPU 0: NVIDIA H200 (UUID: GPU-5164)\n"
                   "NVIDIA H200, 580.159.04\nbinaries built at commit: d76f0aa797d1\n")
    assert provenance.order_run_gpu(log) == {"gpu": "NVIDIA H200", "driver": "580.159.04", "commit": "d76f0aa797d1"}
    assert provenance.order_run_gpu(tmp_path / "absent") == {"gpu": None, "driver": None, "commit": None}


def test_bounds_hold_and_worst_cases_replay_bit_for_bit(audit_run):
    _, summary = audit_run
    t = summary["totals"]
    assert t["bound_violations"] == {"canonical": 0, "gemv": 0}
    assert t["acc_bound_violations"] == {"canonical": 0, "gemv": 0}
    assert 0.0 < t["identical_share"] <= 1.0
    assert summary["worst_cases"] and all(w["score"] > 0 for w in summary["worst_cases"])
    for worst in summary["worst_cases"][:3] + summary["worst_cases"][-2:]:
        r = audit.replay(worst["n_shape"], worst["k"], worst["dist"], worst["seed"], worst["m"], worst["n"])
        for key in ("canonical_bits", "gemv_bits", "exact_bf16_bits", "exact", "sigma", "canonical_vs_gemv_ulp"):
            assert r[key] == worst[key], key
        for c in ("canonical", "gemv"):
            for key in ("value", "acc", "ulp_vs_exact", "bound_ratio", "acc_bound_ratio"):
                assert r[c][key] == worst[c][key], (c, key)
            assert r[c]["bound"] == pytest.approx(abs(r[c]["value"] - r["exact"]) / r[c]["bound_ratio"], rel=1e-12) \
                if r[c]["bound_ratio"] else True


def test_a_column_regenerates_alone():
    # Worst cases are replayed from (dist, seed, K, m, n): a column's data must not depend on the others.
    for dist in data.DISTRIBUTIONS:
        a, w, s = data.operands(dist, 9, 512, np.arange(3), np.arange(250))
        a1, w1, s1 = data.operands(dist, 9, 512, np.array([2]), np.array([200]))
        assert np.array_equal(a[2:3], a1) and np.array_equal(w[200:201], w1)
        assert np.array_equal(s[200:201].view(np.uint32), s1.view(np.uint32))


def test_bound_is_not_vacuous_and_the_output_line_covers_every_output():
    # The bound must be able to fail: an output moved by a few BF16 ulps exceeds it.
    x = np.array([1.0])
    sigma = np.array([1.0])
    assert bounds.bound_output("gemv", 2048, x, sigma)[0] < 4 * 2.0 ** -7
    assert bounds.beta("canonical", 25600) > bounds.beta("gemv", 25600) > 0
    # beta_output * sigma is the largest bound_output over |x| <= sigma, reached at |x| = sigma.
    for c in ("canonical", "gemv"):
        for k in (128, 2048, 25600):
            xs = np.linspace(-1.0, 1.0, 201)
            b = bounds.bound_output(c, k, xs, np.ones_like(xs))
            assert np.all(b <= bounds.beta_output(c, k) * (1 + 1e-15))
            assert b.max() == pytest.approx(bounds.beta_output(c, k), rel=1e-15)
            assert bounds.beta_output(c, k) > bounds.beta(c, k)


def test_ulp_distance_on_raw_bits():
    bits = np.array([0x0000, 0x8000, 0x3F80, 0x3F81, 0x0001, 0x8001], dtype=np.uint16)
    assert audit.ulp_distance(bits[0:1], bits[1:2])[0] == 0
    assert audit.ulp_distance(bits[2:3], bits[3:4])[0] == 1
    assert audit.ulp_distance(bits[4:5], bits[5:6])[0] == 2


# ---- the figures: what is plotted against what ------------------------------------------------------
def _series(spec, **match):
    return [(p, x) for p in spec["panels"] for x in p["series"] if all(x.get(k) == v for k, v in match.items())]


def _line_at(line: dict, k: int) -> float:
    xs = list(line["x"])
    return line["y"][xs.index(k)] if k in xs else float(np.interp(k, xs, line["y"]))


def test_error_figure_sets_accumulator_and_output_each_against_its_own_bound(audit_run):
    _, s = audit_run
    spec = figures.error_spec(s)
    assert spec["rows"] == 2
    for p in spec["panels"]:
        lines = {x["id"]: x for x in p["series"] if x["role"] == "bound"}
        measured = [x for x in p["series"] if x["role"] == "measured"]
        want_q, want_b = ("acc_err_sigma", "beta") if p["row"] == 0 else ("out_err_sigma", "beta_output")
        assert measured and {x["quantity"] for x in measured} == {want_q}
        assert {x["quantity"] for x in lines.values()} == {want_b}
        for x in measured:
            line = lines[x["against"]]
            assert line["contract"] == x["contract"]  # like with like: a contract against its own bound
            fn = bounds.beta if want_b == "beta" else bounds.beta_output
            assert line["y"] == [fn(x["contract"], int(k)) for k in line["x"]]
            assert x["x"][0] in line["x"] and _line_at(line, x["x"][0]) == fn(x["contract"], x["x"][0])
            # The real data sits below its line.
            assert x["y"][0] < _line_at(line, x["x"][0]), (x["id"], x["y"], _line_at(line, x["x"][0]))
    ratio = figures.ratio_spec(s)
    for p in ratio["panels"]:
        (unit,) = [x for x in p["series"] if x["role"] == "bound"]
        assert set(unit["y"]) == {1.0}
        assert all(x["against"] == unit["id"] and x["quantity"] == "ratio" and 0 < x["y"][0] <= 1.0
                   for x in p["series"] if x["role"] == "measured")


def test_figure_points_are_the_audits_own_numbers(audit_run):
    # One shape recomputed from scratch: the plotted maximum over every M is the measured maximum.
    _, s = audit_run
    n, k = AUDIT_SHAPES[3]
    dist = "cancellation"
    cols = data.sample_columns(s["seed"], n, k, s["columns_per_shape"])
    want = {c: {"acc_err_sigma": [], "out_err_sigma": [], "ratio": [], "ulp": []} for c in ("canonical", "gemv")}
    for m in AUDIT_ROWS:
        ev = audit.evaluate(dist, s["seed"], k, np.arange(m), cols)
        x, sigma = ev["exact"], ev["sigma"]
        for c in ("canonical", "gemv"):
            acc = ev["acc"][c].astype(np.float64)
            out = _core.bf16_to_f32(ev["out"][c]).astype(np.float64)
            want[c]["acc_err_sigma"].append(np.abs(acc - x) / sigma)
            want[c]["out_err_sigma"].append(np.abs(out - x) / sigma)
            want[c]["ratio"].append(np.abs(out - x) / bounds.bound_output(c, k, x, sigma))
            want[c]["ulp"].append(audit.ulp_distance(ev["out"][c], ev["exact_bf16"]))
    specs = figures.specs(s)
    for c in ("canonical", "gemv"):
        for q, fig in (("acc_err_sigma", "error_vs_bounds"), ("out_err_sigma", "error_vs_bounds"),
                       ("ratio", "bound_ratio_vs_k"), ("ulp", "ulp_vs_k")):
            values = np.concatenate([v.ravel() for v in want[c][q]])
            (pt,) = [x for _, x in _series(specs[fig], quantity=q, contract=c, dist=dist, stat="max", shape=[n, k])]
            assert pt["x"] == [k] and pt["y"] == [float(values.max())], (c, q)
            (p999,) = [x for _, x in _series(specs[fig], quantity=q, contract=c, dist=dist, stat="p999", shape=[n, k])]
            assert p999["y"] == [float(np.quantile(values, 0.999))]


def test_k_is_a_log_axis_at_true_positions_with_shapes_kept_apart(audit_run):
    _, s = audit_run
    ks = sorted({k for _, k in AUDIT_SHAPES})
    assert len(ks) < len(AUDIT_SHAPES)  # some shapes share a K: they must not be pooled
    for name in ("identical_share", "ulp_vs_k", "error_vs_bounds", "bound_ratio_vs_k"):
        spec = figures.specs(s)[name]
        fig = figures.draw(spec)
        axes = fig.axes[:spec["rows"] * spec["cols"]]
        for p, ax in zip(spec["panels"], axes):
            assert p["xscale"] == "log" and ax.get_xscale() == "log"
            assert p["xticks"] == ks and list(ax.get_xticks()) == ks
            measured = [x for x in p["series"] if x["role"] == "measured"]
            by_key = {}
            for x in measured:
                assert x["x"] == [x["shape"][1]]  # each point at its own shape's K
                by_key.setdefault((x.get("contract"), x.get("stat")), []).append(tuple(x["shape"]))
            for shapes in by_key.values():
                assert sorted(shapes) == sorted(AUDIT_SHAPES)  # one point per shape, none pooled
            # What was drawn is what the spec says.
            drawn = {a.get_gid(): a for a in ax.get_lines() if a.get_gid()}
            for x in measured:
                art = drawn[x["id"]]
                assert list(art.get_xdata()) == x["x"]
                if x["kind"] == "points" or x["y"][0] > 0:
                    assert list(art.get_ydata()) == x["y"]
        markers = {figures.shape_marker(s, n, k) for n, k in AUDIT_SHAPES}
        assert len(markers) == len(AUDIT_SHAPES)


def test_histograms_share_one_log_range_that_shows_a_single_output(audit_run):
    _, s = audit_run
    for spec in (figures.histogram_spec(s), figures.device_histogram_spec(s)):
        if spec is None:
            continue
        lims = {tuple(p["ylim"]) for p in spec["panels"]}
        assert len(lims) == 1
        (lo, hi), = lims
        assert lo < 1.0 and hi > max(max(x["y"]) for p in spec["panels"] for x in p["series"])
        fig = figures.draw(spec)
        drawn = {tuple(ax.get_ylim()) for ax in fig.axes[:len(spec["panels"])]}
        assert drawn == {(lo, hi)} and all(ax.get_yscale() == "log" for ax in fig.axes[:len(spec["panels"])])
        for p, ax in zip(spec["panels"], fig.axes):
            counts = p["series"][0]["y"]
            bars = [b for b in ax.patches if b.get_gid() == p["series"][0]["id"]]
            assert len(bars) == len(counts)
            for b, cnt in zip(bars, counts):
                assert (b.get_height() == cnt) if cnt else np.isnan(b.get_height())
    # The counts are the configurations' own: pooled over shapes and M per distribution.
    spec = figures.histogram_spec(s)
    (p,) = [p for p in spec["panels"] if p["series"][0]["id"] == "hist/cancellation/canonical_vs_exact"]
    assert p["series"][0]["y"] == s["ulp_histograms"]["cancellation"]["canonical_vs_exact"]


def test_identical_share_carries_a_wilson_interval_from_its_sampled_columns(audit_run):
    _, s = audit_run
    for c in s["configs"]:
        iv = c["identical"]
        assert iv["lo"] <= iv["share"] <= iv["hi"] and iv["hi"] - iv["lo"] > 0
        assert iv["clusters"] == c["columns"] and iv["outputs"] == c["outputs"]
        assert c["columns"] <= iv["n_eff"] <= c["outputs"]
    # Recomputed for one configuration from the outputs themselves.
    n, k = AUDIT_SHAPES[1]
    conf = next(c for c in s["configs"] if (c["dist"], c["n"], c["k"], c["m"]) == ("cancellation", n, k, 16))
    cols = data.sample_columns(s["seed"], n, k, s["columns_per_shape"])
    ev = audit.evaluate("cancellation", s["seed"], k, np.arange(16), cols)
    same = ev["out"]["canonical"] == ev["out"]["gemv"]
    assert conf["identical"] == stats.share_interval(same.sum(axis=0), np.full(same.shape[1], 16))
    # The figure plots the differing share with the interval turned round.
    (pt,) = [x for _, x in _series(figures.identical_spec(s), dist="cancellation", m=16, shape=[n, k])]
    iv = conf["identical"]
    assert pt["x"] == [k] and pt["y"] == [1 - iv["share"]] and pt["lo"] == [1 - iv["hi"]] and pt["hi"] == [1 - iv["lo"]]
    t = s["totals"]["identical"]
    assert t == stats.pooled([c["identical"] for c in s["configs"]])


def test_headline_sets_the_largest_ulp_beside_the_bound_ratio_of_that_output(audit_run):
    out, s = audit_run
    html = _html(out)
    for c in ("canonical", "gemv"):
        u = s["headline"][c]["largest_ulp"]
        assert u["score"] == s["totals"]["max_ulp"][f"{c}_vs_exact"]
        r = audit.replay(u["n_shape"], u["k"], u["dist"], u["seed"], u["m"], u["n"])
        assert r[c]["ulp_vs_exact"] == u["score"] and r[c]["bound_ratio"] == u[c]["bound_ratio"]
        assert s["headline"][c]["largest_bound_ratio"]["score"] == s["totals"]["max_bound_ratio"][c]
        # One table row holds the largest ULP distance and that output's bound ratio, side by side.
        row = re.search(rf"<tr><td>{figures.LABELS[c]}</td>(.*?)</tr>", html).group(1)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[0] == f"{u['score']:,.0f}" and cells[1] == f"{u[c]['bound_ratio']:.3g}"


# ---- planted violations go above their lines -----------------------------------------------------
PLANT_SHAPES = [(300, 256), (200, 1024)]


def _plant(target: str):
    """An evaluate() that moves one output, the best-conditioned of the (activation, K = 1024, M = 3)
    configuration (largest |x| / sigma, so the move is far beyond any bound), out of its bound: 'acc'
    scales the canonical FP32 accumulator by 1 + 2^-10, 'out' sets the canonical BF16 output to -x."""
    def evaluate(dist, seed, k, rows, cols):
        ev = audit.evaluate(dist, seed, k, rows, cols)
        if dist == "activation" and k == 1024 and len(rows) == 3:
            i, j = np.unravel_index(np.argmax(np.abs(ev["exact"]) / ev["sigma"]), ev["exact"].shape)
            if target == "acc":
                ev["acc"]["canonical"][i, j] = np.float32(ev["exact"][i, j] * (1 + 2.0 ** -10))
            else:
                neg = np.array([-ev["exact"][i, j]], dtype=np.float32).view(np.uint32)
                ev["out"]["canonical"][i, j] = _core.round_bf16(neg)[0]
        return ev
    return evaluate


@pytest.mark.parametrize("target", ["acc", "out"])
def test_a_planted_violation_shows_above_its_line_and_fails_the_audit(tmp_path, target):
    s = audit.run(str(tmp_path), shapes=PLANT_SHAPES, rows=[1, 3], dists=["activation", "wide"], seed=4,
                  columns=12, log=lambda _: None, recordings=[str(tmp_path / "none")],
                  order_root=str(tmp_path / "none"), evaluate_fn=_plant(target))
    quantity = "acc_err_sigma" if target == "acc" else "out_err_sigma"
    violations = s["totals"]["acc_bound_violations" if target == "acc" else "bound_violations"]
    assert violations == {"canonical": 1, "gemv": 0}
    assert not s["verdict"]["ok"] and s["verdict"]["problems"]
    spec = figures.error_spec(s)
    above = []
    for p, x in _series(spec, role="measured", stat="max", quantity=quantity):
        line = next(y for y in p["series"] if y["id"] == x["against"])
        if x["y"][0] > _line_at(line, x["x"][0]):
            above.append((x["dist"], x["contract"], tuple(x["shape"])))
    assert above == [("activation", "canonical", (200, 1024))]
    if target == "out":  # the exact test sees it too: a ratio above 1
        (pt,) = [x for _, x in _series(figures.ratio_spec(s), stat="max", contract="canonical", dist="activation",
                                       shape=[200, 1024])]
        assert pt["y"][0] > 1.0
    html = (tmp_path / "report.html").read_text()
    assert "FAIL" in html and "class='verdict fail'" in html
    # Nothing else moved: the other contract, distribution and shape are below their lines.
    others = [x for p, x in _series(spec, role="measured", quantity=quantity)
              if (x["dist"], x["contract"], tuple(x["shape"])) != ("activation", "canonical", (200, 1024))]
    assert others


def test_every_kernel_body_of_the_launch_layer_is_a_tier_and_a_new_one_says_it_has_no_recording(
        audit_run, tmp_path, monkeypatch):
    _, s = audit_run
    assert [t["body"] for t in s["tiers"]] == [b["name"] for b in _core.bodies()]
    if s["device_recordings"]["found"]:
        for t in s["tiers"]:
            assert t["mismatches"] == 0 and t["cases_with_bits"] + t["digest_only_checked"] > 0, t
            assert t["status"] == ("recorded" if t["outputs_compared"] > 0 else "recorded, digest only"), t
            if t["contract"] == "canonical" and t["outputs_compared"] > 0:
                assert t["identical_to_gemv_interval"]["lo"] <= t["identical_to_gemv_interval"]["hi"]
        # The Hopper tier's two-CTA symbols take only shapes with more outputs than a recording keeps
        # as bits (4096; the unpacked one needs 264 units of 128 columns, the packed one 264, or 67
        # at 9..16 rows), so they are checked by digest alone; the one-CTA 128-column symbol has
        # bits from the saved cases that take the 64-column symbol away (hopper_tier.case). No other
        # body may be digest-only.
        assert {t["body"] for t in s["tiers"] if t["status"] == "recorded, digest only"} <= {
            "wgmma_units128_x2", "wgmma_packed128_x2"}
    # A body the C++ adds later (here: the binding made to report one more) appears with no Python
    # edit, and the page says visibly that it has no recording.
    real = _core.bodies
    monkeypatch.setattr(_core, "bodies", lambda: real() + [{"name": "wgmma_tile", "contract": "canonical"}])
    s2 = audit.run(str(tmp_path), shapes=PLANT_SHAPES[:1], rows=[1], dists=["activation"], seed=4, columns=4,
                   log=lambda _: None)
    tier = s2["tiers"][-1]
    assert tier["body"] == "wgmma_tile" and tier["status"] == "no device recording" and tier["cases"] == 0
    html = (tmp_path / "report.html").read_text()
    row = re.search(r"<tr class='bad'><td><b>wgmma_tile</b></td>.*?</tr>", html)
    assert row and "NO DEVICE RECORDING" in row.group(0)
    # With recordings every real body has one, so the new body is the only one named; without any
    # (an installed package not pointed at a data folder) every body is.
    listed = re.search(r"kernel bodies without a device recording</td><td><b class='bad'>([^<]*)</b>", html)
    assert listed and listed.group(1).split(", ")[-1] == "wgmma_tile"
    if s["device_recordings"]["found"]:
        assert listed.group(1) == "wgmma_tile"
    # Likewise a body no device order probe reached (the new one, and any body golden/order/ has no
    # output of) is named in the headline and marked in its row.
    assert tier["device_trees"] == "none" and tier["order_probes"] == []
    treeless = re.search(r"kernel bodies without reduction trees recovered on a GPU</td><td><b class='bad'>([^<]*)</b>",
                         html)
    assert treeless and "wgmma_tile" in treeless.group(1).split(", ")
    assert set(treeless.group(1).split(", ")) == {t["body"] for t in s2["tiers"] if not t["order_probes"]}
    assert "<b class='bad'>no device order probe</b>" in row.group(0)


# ---- the reduction orders ------------------------------------------------------------------------
@pytest.mark.parametrize("contract", ["canonical", "gemv"])
def test_recovered_order_is_the_documented_one(contract):
    leaves = np.arange(256)
    r = order.recover(contract, 256, leaves)
    assert r["matches_documented"], r
    assert r["internal_nodes_measured"] == {"canonical": 17, "gemv": 255}[contract]
    assert r["measured_nodes"] == r["documented_nodes"] and len(r["measured_nodes"]) == r["internal_nodes_measured"]


def test_order_comparison_tells_the_contracts_apart():
    leaves = np.arange(0, 2048, 16)
    measured = order.clusters_from_sizes(order.probe_lca_sizes("gemv", 2048, leaves))
    assert measured == order.documented_clusters("gemv", 2048, leaves)
    assert measured != order.documented_clusters("canonical", 2048, leaves)


def test_probe_sees_inside_one_mma():
    # sm_80's policy chains two fused blocks of 8 per k16 instruction; sm_90 fuses all 16.
    leaves = np.arange(256)
    sm80 = order.clusters_from_sizes(order.probe_lca_sizes("canonical", 256, leaves, arch="sm80"))
    assert sm80 == order.documented_clusters("canonical", 256, leaves, arch="sm80")
    assert sm80 != order.documented_clusters("canonical", 256, leaves, arch="sm90")


def test_leaf_sets_read_as_ranges():
    assert order.leaf_ranges([0, 1, 2, 3]) == "0..3"
    assert order.leaf_ranges([0, 16, 32, 48, 50]) == "0..48 every 16, 50"
    assert order.leaf_ranges([5, 9]) == "5, 9"
    assert order.leaf_text(np.arange(256), 256) == "every position"
    text = order.leaf_ranges(order.probe_leaves(order.TC_ROWS_K))
    assert text == "0..16, 32..256 every 16, 288..4992 every 32, 5008..5232 every 16, 5233..5247"
    # Exact: the ranges expand back to the leaf set.
    back = []
    for part in text.split(", "):
        lo, _, rest = part.partition("..")
        hi, _, step = rest.partition(" every ")
        back += list(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    assert back == order.probe_leaves(order.TC_ROWS_K).tolist()


def test_tree_pictures_are_drawn_from_the_recovered_nodes():
    from w8a16check import trees

    leaves = np.arange(256)
    r = order.recover("canonical", 256, leaves)
    nodes = r["measured_nodes"]
    pos = trees.layout(nodes, 256)
    # Children below parents; the root (last) spans every leaf; 16 MMA steps of 17 terms, 1 fold of 2.
    for j, kids in enumerate(nodes):
        assert all(pos["h"][c] < pos["h"][256 + j] for c in kids)
    assert trees.node_leaves(nodes, 256)[-1] == frozenset(range(256))
    assert sorted(len(k) for k in nodes) == [2] + [16] * 2 + [17] * 14
    assert pos["h"].max() == 9
    fig = trees.figure(nodes, r["leaf_positions"], "t")
    colls = [c for c in fig.axes[0].collections if (c.get_gid() or "").startswith("tree/")]
    segments = sum(len(c.get_segments()) for c in colls)
    assert segments == len(nodes) + sum(len(k) for k in nodes)  # one bar per node, one drop per child
    # A tree that differs from the other is drawn above it with the nodes the other lacks in red:
    # sm_80's two blocks of 8 per MMA add 16 joins (the first block of each), sm_90 has none of its own.
    other = order.recover("canonical", 256, leaves, "sm80")["measured_nodes"]
    fig = trees.figure(other, r["leaf_positions"], "sm80", nodes, "sm90")
    red = [[c for c in ax.collections if c.get_gid() == f"tree/{trees.DIFFERENT}"] for ax in fig.axes[:2]]
    assert len(red[0]) == 1 and red[1] == []
    mine = trees.node_leaves(other, 256)
    extra = [j for j, c in enumerate(mine) if c not in set(trees.node_leaves(nodes, 256))]
    assert len(extra) == 16 and all(len(mine[j]) % 16 == 8 for j in extra)
    assert len(red[0][0].get_segments()) == sum(1 + len(other[j]) for j in extra)


def test_a_different_device_tree_is_drawn_against_the_documented_one():
    leaves = np.arange(256)
    r = order.recover("canonical", 256, leaves)
    wrong = dict(r, matches_documented=False, measured_nodes=order.recover("gemv", 256, leaves)["measured_nodes"])
    html = "\n".join(report._trees_html([{"name": "h200/planted", "result": wrong}]))
    assert "DIFFERENT TREE" in html and html.count("<img") == 1
