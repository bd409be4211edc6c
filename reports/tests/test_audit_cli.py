# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's command line against bad arguments and bad data folders, run as a subprocess because its
# exit code and its stderr are what a user and CI see: a bad argument is one argparse-style line and
# exit 2 before anything is computed, and a data folder that is missing, empty, cut or incomplete is a
# FAIL (exit 1) that names what is wrong, never a green report.
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PROG = "python -m w8a16check.audit"
# One small configuration: seconds, most of it the import.
SMALL = ["--shapes", "512x256", "--rows", "1", "--columns", "4", "--dists", "activation"]


def audit(args, tmp_path, env=None, timeout=300) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "w8a16check.audit", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=full, timeout=timeout)


def assert_usage_error(r: subprocess.CompletedProcess, needle: str) -> None:
    assert r.returncode == 2, f"exit {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{PROG}: error: ") and needle in last, r.stderr
    # Refused before the computation: no configuration was audited.
    assert "audit: activation" not in r.stdout, r.stdout


@pytest.mark.parametrize("args,needle", [
    (["--rows", "0"], "--rows: 0 is out of range (1..65536)"),
    (["--rows", "-4"], "--rows: -4 is out of range"),
    (["--rows", "1,x"], "--rows: 'x' is not an integer"),
    (["--rows", ","], "--rows: no M value given"),
    (["--shapes", "512x100"], "--shapes 512x100: K: 100 is out of range"),
    (["--shapes", "512x384"], "K = 384 must be a multiple of 256"),
    (["--shapes", "0x256"], "--shapes 0x256: N: 0 is out of range"),
    (["--shapes", "512"], "--shapes: '512' is not NxK"),
    (["--shapes", ";"], "--shapes: no shape given"),
    (["--columns", "1"], "--columns: 1 must be at least 2"),
    (["--columns", "0"], "--columns: 0 must be at least 2"),
    (["--seed", "-1"], "--seed: -1 is out of range"),
    (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["--dists", ","], "--dists: no distribution given"),
    (["--dists", "gauss"], "--dists: unknown distribution 'gauss'"),
    (["--recordings", "/nonexistent/x.rec"], "--recordings /nonexistent/x.rec: no such file or folder"),
    (["--order-dir", "/nonexistent"], "--order-dir /nonexistent: no such folder"),
])
def test_a_bad_argument_is_one_line_and_exit_2(tmp_path, args, needle):
    assert_usage_error(audit([*SMALL, "--out", str(tmp_path / "out"), *args], tmp_path), needle)


@pytest.mark.parametrize("replay,needle", [
    (["512", "256", "activation", "8", "0", "512"], "--replay: n must be in [0, 512), got 512"),
    (["512", "100", "activation", "8", "0", "1"], "--replay: K: 100 is out of range"),
    (["512", "256", "gauss", "8", "0", "1"], "--replay: unknown distribution 'gauss'"),
    (["512", "256", "activation", "-8", "0", "1"], "--replay: SEED: -8 is out of range"),
    (["512", "256", "activation", "8", "x", "1"], "--replay: M_ROW: 'x' is not an integer"),
])
def test_a_bad_replay_is_one_line_and_exit_2(tmp_path, replay, needle):
    assert_usage_error(audit(["--replay", *replay], tmp_path), needle)


def test_an_unwritable_out_is_refused_before_the_computation(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    cases = [(str(tmp_path / "file"), "exists and is not a folder"),
             (str(tmp_path / "file" / "sub"), "cannot write there: Not a directory"),
             ("/proc/w8a16check-audit", "cannot write there"),
             ("", "--out: an empty path")]
    if os.path.exists("/dev/full"):
        cases.append(("/dev/full", "exists and is not a folder"))
    for out, needle in cases:
        assert_usage_error(audit([*SMALL, "--out", out], tmp_path), needle)
    # The default audit (minutes) is refused as quickly: nothing runs before the check.
    r = audit(["--out", str(tmp_path / "file" / "sub")], tmp_path, timeout=60)
    assert_usage_error(r, "cannot write there")


def test_a_data_dir_that_does_not_exist_is_refused(tmp_path):
    r = audit([*SMALL, "--out", str(tmp_path / "out")], tmp_path, env={"W8A16_DATA_DIR": "/nonexistent"})
    assert_usage_error(r, "W8A16_DATA_DIR=/nonexistent: no such folder")
    assert not (tmp_path / "out" / "summary.json").exists()


def _fail(r: subprocess.CompletedProcess) -> list[str]:
    assert r.returncode == 1, f"exit {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    return [line for line in r.stderr.splitlines() if line.startswith("audit: FAIL: ")]


def test_a_data_dir_without_the_evidence_is_a_fail_not_a_green_report(tmp_path):
    import json

    data = tmp_path / "data"
    data.mkdir()
    r = audit([*SMALL, "--out", str(tmp_path / "out")], tmp_path, env={"W8A16_DATA_DIR": str(data)})
    fails = _fail(r)
    assert any(f"{data}/recordings: missing from the data folder" in f for f in fails), fails
    assert any(f"{data}/order: missing from the data folder" in f for f in fails), fails
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"]["ok"] is False and summary["evidence"]["problems"]
    assert "FAIL" in (tmp_path / "out" / "report.html").read_text()
    # Folders that are there but hold nothing are no better.
    (data / "recordings").mkdir()
    (data / "order").mkdir()
    fails = _fail(audit([*SMALL, "--out", str(tmp_path / "out")], tmp_path, env={"W8A16_DATA_DIR": str(data)}))
    assert any("recordings: holds no device recording (.rec)" in f for f in fails), fails
    assert any("order: holds no device order recording" in f for f in fails), fails


def test_a_cut_recording_and_a_missing_probe_output_are_named(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REPO / "golden" / "recordings", data / "recordings")
    shutil.copytree(REPO / "golden" / "order", data / "order")
    rec = data / "recordings" / "h200.rec"
    rec.write_bytes(rec.read_bytes()[:5000])
    gone = sorted((data / "order" / "h200").glob("*.out"))[0]
    gone.unlink()
    fails = _fail(audit([*SMALL, "--out", str(tmp_path / "out")], tmp_path, env={"W8A16_DATA_DIR": str(data)}))
    text = "\n".join(fails)
    assert f"{rec}: 5000 bytes, its manifest says" in text, text             # the manifest's size
    assert f"device evidence that cannot be read: {rec}" in text, text       # the reader's refusal, not a traceback
    assert f"{gone}: missing" in text, text


def test_the_checkouts_data_folder_passes(tmp_path):
    # The committed evidence meets its manifests: the checks above are not a FAIL for every folder.
    from w8a16check import _core

    for name in ("recordings", "order"):
        assert _core.check_evidence(str(REPO / "golden" / name))["problems"] == []
