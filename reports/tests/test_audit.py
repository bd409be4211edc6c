# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit on a tiny configuration: its JSON carries what the HTML shows, its worst cases replay,
# the bounds hold, and the recovered reduction orders are the documented ones.
import json
import re

import numpy as np
import pytest

from w8a16check import audit, bounds, data, order


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit")
    summary = audit.run(str(out), shapes=[(300, 256), (200, 1024)], rows=[1, 3], dists=list(data.DISTRIBUTIONS),
                        seed=4, columns=12, log=lambda _: None)
    return out, summary


def test_json_has_every_field_the_html_shows(tiny):
    out, summary = tiny
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["totals"] == json.loads(json.dumps(summary["totals"]))
    for key in ("seed", "columns_per_shape", "sampling", "shapes", "rows", "distributions",
                "distribution_descriptions", "mma_policy", "bound", "totals", "ulp_histograms",
                "ulp_histogram_bins", "configs", "by_k", "worst_cases", "reduction_order", "seconds",
                "device_recordings", "device_order"):
        assert key in on_disk, key
    assert len(on_disk["configs"]) == 2 * 2 * 3
    config = on_disk["configs"][0]
    for key in ("n", "k", "m", "dist", "outputs", "identical_share", "ulp", "bound_ratio", "bound_violations",
                "cond_median", "canonical_acc_bound_ratio", "canonical_acc_bound_violations"):
        assert key in config, key
    assert set(config["ulp"]) == {"canonical_vs_gemv", "canonical_vs_exact", "gemv_vs_exact"}
    assert sum(on_disk["ulp_histograms"]["activation"]["canonical_vs_gemv"]) == sum(
        c["outputs"] for c in on_disk["configs"] if c["dist"] == "activation")
    html = (out / "report.html").read_text()
    for png in re.findall(r"src='([^']+\.png)'", html):
        assert (out / png).stat().st_size > 1000, png
    # Five plots, plus the device recordings' ULP histograms when a recording is committed.
    device_plot = on_disk["device_recordings"]["found"]
    assert len(re.findall(r"src='([^']+\.png)'", html)) == 5 + device_plot
    # The device sections are in the JSON and the HTML, each saying what it found.
    for key in ("device_recordings", "device_order"):
        assert "found" in on_disk[key], key
    assert "Device recordings" in html and "recovered on a GPU" in html
    if not on_disk["device_order"]["found"]:
        assert "no device order recording" in html
    assert f"{on_disk['totals']['outputs']:,} outputs" in html


def test_bounds_hold_and_worst_cases_replay_bit_for_bit(tiny):
    _, summary = tiny
    assert summary["totals"]["bound_violations"] == {"canonical": 0, "gemv": 0}
    assert summary["totals"]["canonical_acc_bound_violations"] == 0
    assert 0.0 < summary["totals"]["identical_share"] <= 1.0
    for worst in summary["worst_cases"][:4]:
        r = audit.replay(worst["n_shape"], worst["k"], worst["dist"], worst["seed"], worst["m"], worst["n"])
        assert r["canonical"]["bits"] == worst["canonical_bits"]
        assert r["gemv"]["bits"] == worst["gemv_bits"]
        assert r["exact_bf16_bits"] == worst["exact_bf16_bits"]


def test_a_column_regenerates_alone():
    # Worst cases are replayed from (dist, seed, K, m, n): a column's data must not depend on the others.
    for dist in data.DISTRIBUTIONS:
        a, w, s = data.operands(dist, 9, 512, np.arange(3), np.arange(250))
        a1, w1, s1 = data.operands(dist, 9, 512, np.array([2]), np.array([200]))
        assert np.array_equal(a[2:3], a1) and np.array_equal(w[200:201], w1)
        assert np.array_equal(s[200:201].view(np.uint32), s1.view(np.uint32))


def test_bound_is_not_vacuous():
    # The bound must be able to fail: an output moved by a few BF16 ulps exceeds it.
    x = np.array([1.0])
    sigma = np.array([1.0])
    assert bounds.bound_output("gemv", 2048, x, sigma)[0] < 4 * 2.0 ** -7
    assert bounds.beta("canonical", 25600) > bounds.beta("gemv", 25600) > 0


def test_ulp_distance_on_raw_bits():
    bits = np.array([0x0000, 0x8000, 0x3F80, 0x3F81, 0x0001, 0x8001], dtype=np.uint16)
    assert audit.ulp_distance(bits[0:1], bits[1:2])[0] == 0
    assert audit.ulp_distance(bits[2:3], bits[3:4])[0] == 1
    assert audit.ulp_distance(bits[4:5], bits[5:6])[0] == 2


@pytest.mark.parametrize("contract", ["canonical", "gemv"])
def test_recovered_order_is_the_documented_one(contract):
    leaves = np.arange(256)
    r = order.recover(contract, 256, leaves)
    assert r["matches_documented"], r
    assert r["internal_nodes_measured"] == {"canonical": 17, "gemv": 255}[contract]


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
