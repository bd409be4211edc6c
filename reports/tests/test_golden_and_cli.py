# SPDX-License-Identifier: MIT OR Apache-2.0
# .mmav files written from Python are the files the C++ CLI replays, and mma() agrees with the CLI.
import subprocess

import numpy as np

import w8a16check as w


def _cases(count=64, seed=5):
    """Random MMAs across regimes: moderate, wide exponents, cancelling pairs, specials."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 0x10000, (count, 16, 16), dtype=np.uint16)
    bt = rng.integers(0, 0x10000, (count, 8, 16), dtype=np.uint16)
    moderate = slice(0, count // 2)
    a[moderate] = (a[moderate] & 0x807F) | (rng.integers(124, 131, a[moderate].shape, dtype=np.uint16) << 7)
    bt[moderate] = (bt[moderate] & 0x807F) | (rng.integers(124, 131, bt[moderate].shape, dtype=np.uint16) << 7)
    bt[count // 4:count // 2, :, 8:] = bt[count // 4:count // 2, :, :8] ^ 0x8000  # cancelling halves
    a[count // 4:count // 2, :, 8:] = a[count // 4:count // 2, :, :8]
    c = rng.integers(0, 2 ** 32, (count, 16, 8), dtype=np.uint32)
    c[::3] = 0
    d = w.mma(a[:, :, None, :], bt[:, None, :, :], c)
    return a, bt, c, d


def _replay(cli, path):
    return subprocess.run([cli, "vectors", str(path)], capture_output=True, text=True, timeout=120)


def test_cli_replays_a_file_written_from_python_with_zero_mismatches(cli, tmp_path):
    a, bt, c, d = _cases()
    path = tmp_path / "python.mmav"
    w.write_mmav(str(path), a, bt, c, d)
    run = _replay(cli, path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"0 mismatches of {a.shape[0] * 128} dot products" in run.stdout


def test_cli_sees_each_flipped_bit(cli, tmp_path):
    # The agreement above is not vacuous: one wrong output bit is one mismatch for the CLI.
    a, bt, c, d = _cases()
    d = d.copy()
    d[7, 3, 5] ^= 1
    d[40, 15, 0] ^= 0x80000000
    path = tmp_path / "flipped.mmav"
    w.write_mmav(str(path), a, bt, c, d)
    run = _replay(cli, path)
    assert run.returncode == 1
    assert f"2 mismatches of {a.shape[0] * 128} dot products" in run.stdout
    assert "case 7 m=3 n=5" in run.stdout and "case 40 m=15 n=0" in run.stdout


def test_mmav_round_trip_in_memory_and_on_disk(tmp_path):
    a, bt, c, d = _cases(count=9)
    blob = w.serialize_mmav(a, bt, c, d)
    assert len(blob) == 16 + 9 * 1792 and blob[:8] == b"MMAV0001"
    path = tmp_path / "rt.mmav"
    w.write_mmav(str(path), a, bt, c, d)
    assert path.read_bytes() == blob
    for rec in (w.parse_mmav(blob), w.read_mmav(str(path))):
        assert rec["kind"] == 1
        for name, want in (("a", a), ("bt", bt), ("c", c), ("d", d)):
            assert rec[name].dtype == want.dtype and np.array_equal(rec[name], want), name


def test_recorded_files_reserialise_to_their_own_bytes(vectors_dir):
    for path in sorted(vectors_dir.glob("*.mmav")):
        rec = w.read_mmav(str(path))
        assert w.serialize_mmav(rec["a"], rec["bt"], rec["c"], rec["d"]) == path.read_bytes(), path.name
