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
                      "wgmma_units", "wgmma_units128"}
    entries = {r["entry"] for r in res["results"]}
    assert len(entries) == 8  # every entry point
    for r in res["results"]:
        assert r["contract"] == ("gemv" if r["entry"].startswith("gemv") else "canonical")
        assert r["measured_tree"] == r["documented_tree"]


def test_full_probe_set_stays_small():
    # The bundles travel to the GPU machine with the binaries in one 64 MiB carry.
    sizes, rows = 0, []
    for name, entry, body, k, per_launch in order.PROBE_PLAN:
        count = order.probe_leaves(k).size
        assert count <= 258
        pairs = count * (count - 1) // 2
        rows.append(pairs)
        sizes += 2 * k + 8 * 2 * pairs + k + 4 * (k // 128) + 80
    assert max(rows) <= 35000 and sizes < 8e6


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
