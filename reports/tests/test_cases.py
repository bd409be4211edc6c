# SPDX-License-Identifier: MIT OR Apache-2.0
# Saved cases through the bindings: the same lines, the same regenerated inputs as the C++ CLI.
import re
import subprocess

import numpy as np
import pytest

import w8a16check as w
from conftest import REPO

CASE_FILE = REPO / "golden" / "cases" / "boundaries.case"


def test_case_file_lines_round_trip():
    cases = w.read_case_file(str(CASE_FILE))
    lines = [ln for ln in CASE_FILE.read_text().splitlines() if ln.startswith("case/")]
    assert [c["line"] for c in cases] == lines and len(lines) > 0
    for c in cases:
        assert w.parse_case(c["line"]) == c
        assert c["problem"] == ""
        assert c["contract"] == ("gemv" if "gemv" in c["entry"] else "canonical")


@pytest.mark.parametrize("index", [0, 15])
def test_inputs_digest_matches_cli_repro(cli, index):
    case = w.read_case_file(str(CASE_FILE))[index]
    inputs = w.case_inputs(case["line"])
    run = subprocess.run([cli, "repro", case["line"], "--backend", "sim"], capture_output=True, text=True, timeout=300)
    match = re.search(r"inputs: digest 0x([0-9a-f]{16}), special classes: (.*)", run.stdout)
    assert match, run.stdout + run.stderr
    assert int(match.group(1), 16) == inputs["digest"]
    assert match.group(2).split() == (inputs["special_classes"] or ["none"])


def test_case_inputs_layout_and_contract_output():
    case = w.read_case_file(str(CASE_FILE))[15]  # a GEMV with padded A rows and C pitch
    x = w.case_inputs(case["line"])
    assert x["a"].shape == (case["m"], case["a_row_stride"]) and x["w"].shape == (case["n"], case["k"])
    assert x["s"].shape == ((case["n"] + 127) // 128, case["k"] // 128)
    assert np.all(x["a"][:, case["k"]:] == 0xFFC1)  # the unread pitch tail is NaN padding
    c = w.gemm(x["a"], x["w"], x["s"], contract=x["contract"], c_row_stride=case["c_row_stride"])
    assert c.shape == (case["m"], case["c_row_stride"]) and not np.any(c[:, :case["n"]] == 0x7FA5)


@pytest.mark.parametrize("line,needle", [
    ("case/2 w8a16_gemm_pipelined m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1", "line:"),
    ("case/1 w8a16_gemm_bogus m=1 n=1 k=128 a_row_stride=128 c_row_stride=1 dist=specials seed=0x1 gen=1", "line:"),
])
def test_bad_case_lines_raise(line, needle):
    with pytest.raises(ValueError) as info:
        w.case_inputs(line)
    assert needle in str(info.value)
    with pytest.raises(ValueError):
        w.parse_case(line)


def test_missing_case_file_raises():
    with pytest.raises(ValueError) as info:
        w.read_case_file("/nonexistent/x.case")
    assert "path" in str(info.value)


def test_seed_bodies_case_file_reaches_the_body_each_group_names():
    # golden/cases/seed_bodies.case: each "# <body>:" comment heads lines that must plan to that
    # body, so the saved cases and the recordings hold every one of the seed's bodies on an sm_90a
    # module (the Hopper tier taken away by the lines' without=).
    path = REPO / "golden" / "cases" / "seed_bodies.case"
    body, seen = None, {}
    for ln in path.read_text().splitlines():
        head = re.match(r"# (\w+): ", ln)
        if head:
            body = head.group(1)
        elif ln.startswith("case/"):
            assert body is not None, ln
            assert w._core.plan_case(ln)["body"] == body, ln
            seen[body] = seen.get(body, 0) + 1
    bodies = {b["name"] for b in w._core.bodies()}
    # Not the Hopper tier's, not the GEMVs', not the packed entry point's strips (packed.case).
    seed = {b for b in bodies if not b.startswith("wgmma") and b not in ("gemv_strip", "tc_rows_packed")}
    assert set(seen) == seed and min(seen.values()) >= 2, seen
