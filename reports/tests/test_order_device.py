# SPDX-License-Identifier: MIT OR Apache-2.0
# The kernels' order probes end to end on the sim backend (write-probes -> CLI run-operands ->
# recover), what a corrupted output does to the verdict, the CLI's refusals, and the audit's
# device-order section with and without a recording (golden/order/README.md).
import json
import shutil
import struct
import subprocess

import numpy as np
import pytest

from w8a16check import audit, operands, order, report


def _run(cli, probe_dir, backend="sim"):
    for line in (probe_dir / "probes.list").read_text().splitlines():
        entry, bundle, output, *flags = line.split()
        r = subprocess.run([cli, "run-operands", "--backend", backend, "--entry", entry, "--in",
                            str(probe_dir / bundle), "--out", str(probe_dir / output)] + flags,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def sim_probes(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("order") / "sim"
    manifest = order.write_probes(str(d), reduced=True)
    _run(cli, d)
    return d, manifest


def test_every_body_recovers_the_documented_order_on_the_sim_backend(sim_probes):
    d, manifest = sim_probes
    res = order.recover_dir(str(d))
    assert res["all_match"], json.dumps(res, indent=1)
    bodies = {r["body"] for r in res["results"]}
    assert bodies == {"gemm128_tile", "m32_tile", "m32_skinny", "m64_tile", "tc_rows_strip", "gemv_strip",
                      "wgmma_units", "wgmma_units128", "wgmma_units128_x2"}
    entries = {r["entry"] for r in res["results"]}
    assert len(entries) == 8  # every entry point
    for r in res["results"]:
        assert r["contract"] == ("gemv" if r["entry"].startswith("gemv") else "canonical")
        assert r["measured_tree"] == r["documented_tree"]


def test_full_probe_set_stays_small():
    # The bundles travel to the GPU machine with the binaries (about 30 MB) in one 64 MiB carry.
    # The two-CTA symbol's probe has N = 33,920 columns of W (8.7 MB); its output keeps two of them.
    sizes, rows, outputs = 0, [], 0
    for name, entry, body, k, per_launch in order.PROBE_PLAN:
        count = order.probe_leaves(k).size
        assert count <= 258
        pairs = count * (count - 1) // 2
        rows.append(pairs)
        n, columns = order.probe_n_columns(name)
        sizes += 2 * k + 8 * 2 * pairs + n * k + 4 * ((n + 127) // 128) * (k // 128) + 80
        outputs += 2 * (pairs + per_launch) * len(columns) + 160
    assert max(rows) <= 35000 and sizes < 20e6 and outputs < 2.5e6


def test_the_two_cta_probe_keeps_a_column_of_a_unit_cut_between_ctas():
    # geometry.hpp wgmma_cta_pieces on the H200 (132 SMs, two CTAs each) at the probe's shape: column 0's
    # unit is folded by one CTA, the second kept column's unit by two (a head and a tail piece).
    n, columns = order.probe_n_columns("by_m_wgmma_units128_x2")
    units, steps, ctas = -(-n // 128), 2, min(-(-n // 128), 2 * 132)
    assert units >= 2 * 132  # plan.hpp wgmma_choice: the two-CTA symbol at 1..16 rows
    starts = [units * steps * c // ctas for c in range(ctas)]
    cut = {s // steps for s in starts if s % steps}
    assert columns[0] // 128 not in cut and columns[1] // 128 in cut
    assert order.run_flags("wgmma_units128_x2", "by_m_wgmma_units128_x2") == ["--columns", "0,16896"]


@pytest.mark.parametrize("damage", ["flip", "truncate", "missing", "body"])
def test_a_damaged_output_is_never_a_pass(sim_probes, tmp_path, damage):
    d, _ = sim_probes
    bad = tmp_path / "bad"
    shutil.copytree(d, bad)
    path = bad / "m32_skinny.out"
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[160 + 2 * 7 + 1] ^= 0x01          # one output's exponent bit: no longer the right count
    elif damage == "truncate":
        raw = raw[:-2]
    elif damage == "body":
        raw[92:124] = b"m32_tile".ljust(32, b"\0")
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(bytes(raw))
    res = order.recover_dir(str(bad))
    assert not res["all_match"]
    (r,) = [x for x in res["results"] if x["name"] == "m32_skinny"]
    assert r["error"] or not r["matches_documented"]
    assert sum(1 for x in res["results"] if x["matches_documented"] and not x["error"]) == len(res["results"]) - 1
    assert order.main(["recover", str(bad)]) == 1


def test_a_swapped_output_is_a_different_tree(sim_probes, tmp_path):
    # A GEMV output read as a tensor-core body's: unit counts, but not the canonical tree.
    d, _ = sim_probes
    bad = tmp_path / "swap"
    shutil.copytree(d, bad)
    gemv = operands.read_output(str(bad / "gemv_batch16.out"))
    raw = bytearray((bad / "m32_skinny.out").read_bytes())
    raw[160:] = gemv["c"].astype("<u2").tobytes()
    (bad / "m32_skinny.out").write_bytes(bytes(raw))
    (r,) = [x for x in order.recover_dir(str(bad))["results"] if x["name"] == "m32_skinny"]
    assert r["error"] is None and not r["matches_documented"] and r["measured_tree"] != r["documented_tree"]


def test_cli_refuses_bad_bundles_and_shapes(sim_probes, cli, tmp_path):
    d, _ = sim_probes
    src = (d / "gemv_batch4.bundle").read_bytes()

    def run(data, entry="gemv_batch4_strided"):
        p = tmp_path / "b.bundle"
        p.write_bytes(data)
        return subprocess.run([cli, "run-operands", "--backend", "sim", "--entry", entry, "--in", str(p),
                               "--out", str(tmp_path / "o.out")], capture_output=True, text=True)

    r = run(b"XXXX" + src[4:])
    assert r.returncode == 2 and "magic" in r.stderr
    r = run(src[:-1])
    assert r.returncode == 2 and "size" in r.stderr
    r = run(src + b"\0")
    assert r.returncode == 2 and "trailing" in r.stderr
    r = run(src, entry="gemv_batch16_strided")
    assert r.returncode == 2 and "bundle for gemv_batch4_strided" in r.stderr
    # 5 rows per launch: the batch-4 GEMV refuses, and says so.
    header = bytearray(src[:80])
    m, launches = struct.unpack_from("<I", header, 44)[0], struct.unpack_from("<I", header, 64)[0]
    assert m == 4
    rows = m * launches
    struct.pack_into("<I", header, 44, 5)
    struct.pack_into("<I", header, 64, 1)
    k = struct.unpack_from("<I", header, 52)[0]
    patches = src[80 + 2 * k: 80 + 2 * k + 8 * 2 * 5]
    tail = src[80 + 2 * k + 8 * 2 * rows:]
    r = run(bytes(header) + src[80:80 + 2 * k] + patches + tail)
    assert r.returncode == 2 and "refuses" in r.stderr and "m=5" in r.stderr, r.stderr


def test_columns_keeps_those_columns_of_the_full_output_and_refuses_bad_lists(sim_probes, cli, tmp_path):
    d, _ = sim_probes

    def run(*flags, bundle="m32_skinny.bundle", entry="gemm_pipelined_m32"):
        out = tmp_path / ("o%d.out" % len(list(tmp_path.iterdir())))
        r = subprocess.run([cli, "run-operands", "--backend", "sim", "--entry", entry, "--in", str(d / bundle),
                            "--out", str(out), "--without-hopper-tier", *flags], capture_output=True, text=True)
        return r, out

    # A bundle of 300 columns (W = 1.0 everywhere), run whole and with three columns kept: the same bits.
    src = operands.read_output(str(d / "m32_skinny.out"))
    base = order.probe_base_row(256, order.REDUCED_LEAVES[256])
    cols, bits = order.probe_patches(order.REDUCED_LEAVES[256])
    wide = tmp_path / "wide.bundle"
    cols, bits = cols[:16], bits[:16]        # one launch of the skinny body's 16 rows
    operands.write_bundle(str(wide), "gemm_pipelined_m32", 16, 300, 256, 1, base, cols, bits,
                          np.full((300, 256), 0x38, dtype=np.uint8), np.ones((3, 2), dtype=np.float32))
    r, full = run(bundle=str(wide))
    assert r.returncode == 0, r.stderr
    r, kept = run("--columns", "0,129,299", bundle=str(wide))
    assert r.returncode == 0 and "3 columns kept" in r.stdout, r.stderr
    full, kept = operands.read_output(str(full)), operands.read_output(str(kept))
    assert kept["n"] == kept["c_row_stride"] == 3 and kept["body"] == full["body"]
    assert np.array_equal(kept["c"], full["c"][:, [0, 129, 299]])
    assert np.array_equal(kept["c"][:, 0], src["c"][:16, 0])
    for flags, why in ((["--columns", "1,1"], "must increase"), (["--columns", "300"], "below n=300"),
                       (["--columns", "0", "--check"], "does not go with --columns")):
        r, _ = run(*flags, bundle=str(wide))
        assert r.returncode == 2 and why in r.stderr, (flags, r.stderr)


def test_the_two_cta_probe_recovers_each_kept_column_and_names_a_damaged_one(sim_probes, tmp_path):
    d, _ = sim_probes
    (r,) = [x for x in order.recover_dir(str(d))["results"] if x["name"] == "by_m_wgmma_units128_x2"]
    assert r["matches_documented"] and r["body"] == "wgmma_units128_x2" and r["columns"] == [0, 16896]
    bad = tmp_path / "x2"
    shutil.copytree(d, bad)
    path = bad / "by_m_wgmma_units128_x2.out"
    raw = bytearray(path.read_bytes())
    raw[160 + 2 * (2 * 3 + 1) + 1] ^= 0x01   # row 3, the cut unit's column: no longer a unit count
    path.write_bytes(bytes(raw))
    (r,) = [x for x in order.recover_dir(str(bad))["results"] if x["name"] == "by_m_wgmma_units128_x2"]
    assert not r["matches_documented"] and r["error"].startswith("column 16896: ")


def test_audit_shows_a_device_order_recording_or_says_there_is_none(sim_probes, tmp_path):
    d, _ = sim_probes
    none = audit.device_order_section(tmp_path / "empty")
    assert not none["found"] and "no device order recording" in none["note"]
    root = tmp_path / "order"
    shutil.copytree(d, root / "sim")
    found = audit.device_order_section(root)
    assert found["found"] and found["all_match"] and found["devices"][0]["device"] == "sim"
    for sec, text in ((none, "no device order recording"), (found, "every body reduces in the documented order")):
        html = "\n".join(report._device_order_html({"device_order": sec}))
        assert text in html
