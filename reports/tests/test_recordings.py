# SPDX-License-Identifier: MIT OR Apache-2.0
# GPU recordings through the bindings: an emulator result written as a recording reads back, and a
# wrong digest or wrong bytes are refused by the same C++ parser the CLI uses.
import numpy as np
import pytest

import w8a16check as w

HEADER = """w8a16check-recording 1
gpu: NVIDIA H200
compute_capability: 9.0
driver: 580.159
cuda: 13.0
commit: 0123456789ab
digest: fnv1a64-bf16le-rows
"""
LINE = "case/1 w8a16_gemv_batch4_strided m=2 n=3 k=128 a_row_stride=136 c_row_stride=5 dist=activation_like seed=0x0000000000000042 gen=1"


def _emulated_used_outputs(line):
    x = w.case_inputs(line)
    c = w.gemm(x["a"], x["w"], x["s"], contract=x["contract"], c_row_stride=x["c_row_stride"])
    return c[:, :x["n"]]


def _out_line(digest, used, line):
    return f"out 0x{digest:016x} {used.size} {''.join(f'{v:04x}' for v in used.ravel())} {line}\n"


def test_an_emulated_output_round_trips_as_a_recording():
    used = _emulated_used_outputs(LINE)
    rec = w.parse_recording(HEADER + _out_line(w.outputs_digest(used), used, LINE))
    assert rec["header"]["gpu"] == "NVIDIA H200" and rec["header"]["compute_capability"] == "9.0"
    (out,) = rec["outputs"]
    assert out["case"]["line"] == LINE and out["outputs"] == 6
    assert out["digest"] == w.outputs_digest(used)
    assert np.array_equal(out["bits"], used)


def test_a_wrong_digest_or_a_wrong_byte_is_refused():
    used = _emulated_used_outputs(LINE)
    digest = w.outputs_digest(used)
    with pytest.raises(ValueError) as info:
        w.parse_recording(HEADER + _out_line(digest ^ 1, used, LINE), "bad.rec")
    assert "bad.rec" in str(info.value)
    changed = used.copy()
    changed[1, 2] ^= 1
    with pytest.raises(ValueError):
        w.parse_recording(HEADER + _out_line(digest, changed, LINE))
    assert w.outputs_digest(changed) != digest


def test_digest_arguments_are_checked():
    with pytest.raises(TypeError):
        w.outputs_digest(np.zeros((2, 3), np.uint32))
    with pytest.raises(ValueError):
        w.outputs_digest(np.zeros(6, np.uint16))
    with pytest.raises(ValueError) as info:
        w.read_recording("/nonexistent/x.rec")
    assert "path" in str(info.value)


def _committed_recordings():
    from conftest import REPO

    return sorted((REPO / "golden" / "recordings").glob("*.rec"))


@pytest.mark.parametrize("path", _committed_recordings() or [None])
def test_committed_gpu_recordings_match_the_emulator_through_python(path):
    if path is None:
        pytest.skip("no hardware recording committed under golden/recordings yet")
    checked = 0
    for out in w.read_recording(str(path))["outputs"]:
        case = out["case"]
        if case["m"] * case["n"] * case["k"] > 2 ** 26:  # the model shapes are replayed by the C++ test
            continue
        assert w.outputs_digest(_emulated_used_outputs(case["line"])) == out["digest"], case["line"]
        checked += 1
    assert checked > 0


def test_the_verdict_is_the_shared_one_on_the_shipped_failing_example():
    # golden/examples/one_output_changed.rec: C[2][17] of its second case changed by one ULP. The
    # verdict comes from golden's recorded_verdict, the one `replay --recordings` prints.
    from conftest import REPO
    rec = w.read_recording(str(REPO / "golden" / "examples" / "one_output_changed.rec"))
    verdicts = []
    for out in rec["outputs"]:
        used = np.ascontiguousarray(_emulated_used_outputs(out["case"]["line"]))
        verdicts.append(w._core.recorded_verdict(out, used))
    assert [v["verdict"] for v in verdicts] == ["equal", "differs"]
    bad = verdicts[1]
    assert bad["outputs_differing"] == 1 and bad["first"] == (2, 17) and not bad["digest_only"]
    assert "1 outputs differ, first C[2][17] = 0xC09A, recorded 0xC09B" in bad["text"]
    assert w._core.recorded_verdict(rec["outputs"][0], None)["verdict"] == "not replayed"


def test_a_digest_only_verdict_counts_no_elements():
    # 65 x 64 outputs: above the full-bytes limit, so the recording holds the digest only.
    line = ("case/1 w8a16_gemm_pipelined m=65 n=64 k=128 a_row_stride=128 c_row_stride=64 "
            "dist=activation_like seed=0x0000000000000007 gen=1")
    used = np.ascontiguousarray(_emulated_used_outputs(line))
    rec = w.parse_recording(HEADER + f"out 0x{w.outputs_digest(used):016x} {used.size} - {line}\n")
    (out,) = rec["outputs"]
    v = w._core.recorded_verdict(out, used)
    assert v["verdict"] == "equal" and v["digest_only"] and v["outputs_differing"] is None
    changed = used.copy()
    changed[64, 63] ^= 1
    v = w._core.recorded_verdict(out, changed)
    assert v["verdict"] == "differs" and v["outputs_differing"] is None and v["first"] is None
    assert "the recording holds the digest only" in v["text"]
