# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's device-recordings section: the committed H200 recording meets every contract, a
# changed output bit or digest is reported as a mismatch, an absent recording is said so, and the
# body the section names is the one the launch layer's plan chooses.
import re
import subprocess

import numpy as np
import pytest

import w8a16check as w
from conftest import REPO
from w8a16check import recordings, report

REC = REPO / "golden" / "recordings" / "h200.rec"
GROUP_FIELDS = ("entry", "body", "contract", "cases", "cases_with_bits", "digest_only_checked",
                "digest_only_not_replayed", "outputs_compared", "mismatches", "mismatching_cases")


@pytest.fixture(scope="module")
def committed():
    if not REC.exists():
        pytest.skip("golden/recordings/h200.rec is not committed")
    return recordings.section([str(REC)])


def _html(section):
    return "\n".join(report._device_recordings_html({"device_recordings": section}))


def test_committed_recording_meets_every_contract(committed):
    assert committed["found"] and committed["cases"] == 313
    assert committed["mismatches"] == 0 and committed["mismatching_cases"] == 0
    (f,) = committed["files"]
    assert f["outputs_compared"] > 100000
    entries = {g["entry"] for g in f["groups"]}
    assert len(entries) == 9
    for g in f["groups"]:
        for key in GROUP_FIELDS:
            assert key in g, key
        assert g["cases"] == g["cases_with_bits"] + g["digest_only_checked"] + g["digest_only_not_replayed"]
        if g["contract"] == "canonical" and g["outputs_compared"]:
            assert 0.0 <= g["identical_to_gemv_share"] <= 1.0
            assert sum(g["ulp_hist"]["device_vs_exact"]) == g["ulp_finite_outputs"]
    html = _html(committed)
    assert "every recorded output checked is the contract" in html and "MISMATCH" not in html
    assert f"{f['outputs_compared']:,} outputs compared" in html


def _small_case_with_bits():
    rec = w.read_recording(str(REC))
    for out in rec["outputs"]:
        if out["bits"] is not None and out["case"]["contract"] == "canonical" and out["bits"].size >= 4:
            return rec, out
    raise AssertionError("no case with bits")


def _rec_text(rec, out_lines):
    h = rec["header"]
    return (f"w8a16check-recording 1\ngpu: {h['gpu']}\ncompute_capability: {h['compute_capability']}\n"
            f"driver: {h['driver']}\ncuda: {h['cuda']}\ncommit: {h['commit']}\ndigest: fnv1a64-bf16le-rows\n"
            + "".join(out_lines))


def test_one_flipped_output_bit_is_a_mismatch(tmp_path):
    if not REC.exists():
        pytest.skip("no committed recording")
    rec, out = _small_case_with_bits()
    bits = out["bits"].copy()
    bits[0, 0] ^= 0x0001  # a recording made consistent with its digest, one bit off the contract
    line = (f"out 0x{w.outputs_digest(bits):016x} {bits.size} {''.join(f'{v:04x}' for v in bits.ravel())} "
            f"{out['case']['line']}\n")
    path = tmp_path / "flipped.rec"
    path.write_text(_rec_text(rec, [line]))
    sec = recordings.section([str(tmp_path)])
    assert sec["mismatches"] == 1 and sec["mismatching_cases"] == 1
    (m,) = sec["files"][0]["mismatch_list"]
    assert "C[0][0]" in m["detail"]
    html = _html(sec)
    assert "MISMATCH" in html and "class='bad'" in html


def test_a_wrong_digest_only_case_is_a_mismatch(tmp_path):
    if not REC.exists():
        pytest.skip("no committed recording")
    rec = w.read_recording(str(REC))
    out = min((o for o in rec["outputs"] if o["bits"] is None),
              key=lambda o: o["case"]["m"] * o["case"]["n"] * o["case"]["k"])
    line = f"out 0x{out['digest'] ^ 1:016x} {out['outputs']} - {out['case']['line']}\n"
    (tmp_path / "d.rec").write_text(_rec_text(rec, [line]))
    sec = recordings.section([str(tmp_path / "d.rec")])
    assert sec["mismatches"] == 0 and sec["mismatching_cases"] == 1
    assert sec["files"][0]["mismatch_list"][0]["outputs_differing"] is None
    assert "MISMATCH" in _html(sec)


def test_no_recording_is_said_visibly(tmp_path):
    sec = recordings.section([str(tmp_path)])
    assert not sec["found"] and "no device recording found" in sec["note"]
    assert "no device recording found" in _html(sec)


def test_body_is_the_plans_choice(cli, committed):
    # One case per (entry, body) group: the CLI's repro prints the plan the launch layer makes.
    seen = {}
    for out in w.read_recording(str(REC))["outputs"]:
        c = out["case"]
        key = (c["entry"], recordings.kernel_body(c["line"]))
        if key not in seen and c["m"] * c["n"] * c["k"] <= 2 ** 22:
            seen[key] = c["line"]
    assert len(seen) >= 12
    for (entry, body), line in seen.items():
        r = subprocess.run([cli, "repro", line, "--backend", "sim"], capture_output=True, text=True)
        plan = re.search(r"plan: kernel \S+, body (\w+)", r.stdout)
        assert plan and plan.group(1) == body, (line, r.stdout[:400])
