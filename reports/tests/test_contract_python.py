# SPDX-License-Identifier: MIT OR Apache-2.0
# The contract as data from Python (docs/NUMERICS.md 2.4): the library and the text form round-trip,
# compare(contract=) holds an output to the named contract, and identify() names exactly the
# candidates a stand-in keeps. Raw bits, no tolerances; small shapes so the file runs in seconds.
import numpy as np
import pytest

import w8a16check as w
from w8a16check import _core


def _operands(m=16, n=64, k=256, dist="fold_ties", seed=3):
    d = _core.case_inputs(f"case/1 w8a16_gemm_pipelined m={m} n={n} k={k} a_row_stride={k} c_row_stride={n} "
                          f"dist={dist} seed=0x{seed:x} gen=1")
    return np.ascontiguousarray(d["a"][:, :k]), d["w"], d["s"]


def test_library_round_trips():
    lib = w.contract_library()
    assert [c.name for c in lib][:4] == ["canonical", "seed-tile", "seed-skinny", "seed-rows"]
    for c in lib:
        again = w.parse_contract(c.text)
        assert again.text == c.text and again.tc == c.tc and again.gemv == c.gemv
        assert w.format_contract(c.name) == c.text
        assert w.load_contract(c.name).library
    skinny = w.load_contract("seed-skinny")
    assert skinny.tc["nan"] == "zero" and skinny.tc["fold"] == "mul-add"
    assert w.describe("seed-skinny", "tc") == _core.describe_contract("seed-skinny", "tc")


def test_file_and_text(tmp_path):
    text = "contract = mine\nbase = seed-tile\ntc.fold = mul-add\n"
    f = tmp_path / "mine.contract"
    f.write_text(text)
    from_file, from_text = w.load_contract(str(f)), w.load_contract(text)
    assert from_file.text == from_text.text and from_file.name == "mine"
    assert from_file.tc == w.load_contract("seed-skinny").tc


@pytest.mark.parametrize("text, line", [("tc.nan = propagate\ntc.fold = bogus\n", "line 2"),
                                        ("# c\ntc.nan = zero\ntc.nan = zero\n", "line 3"),
                                        ("gemv.lanes = 48\n", "line 1"),
                                        ("tc.k-order = 0 1 2\n", "line 1"),
                                        ("nope = 1\n", "line 1")])
def test_bad_text_names_the_line(text, line):
    with pytest.raises(ValueError, match=line):
        w.parse_contract(text)


def test_unknown_name_and_bad_part():
    with pytest.raises(ValueError, match="library name"):
        w.load_contract("seed-nothing")
    a, q, s = _operands(m=2, n=8, k=128)
    with pytest.raises(ValueError, match="part"):
        _core.gemm(a, q, s, contract="seed-tile")
    with pytest.raises(ValueError, match="part"):
        w.emulate(a, q, s, contract="seed-tile", part="both")


def test_legacy_calls_keep_their_bytes():
    a, q, s = _operands(m=4, n=16, k=256, dist="every_special")
    assert np.array_equal(_core.gemm(a, q, s), w.emulate(a, q, s, "canonical", "tc"))
    assert np.array_equal(_core.gemm(a, q, s, contract="gemv"), w.emulate(a, q, s, "canonical", "gemv"))
    assert np.array_equal(_core.gemm(a, q, s, "canonical", "sm90", None, None, 1), _core.gemm(a, q, s))


def test_compare_holds_to_the_named_contract():
    a, q, s = _operands()
    skinny = w.emulate(a, q, s, contract="seed-skinny", part="tc")
    assert not np.array_equal(skinny, w.emulate(a, q, s))  # the probe tells the two apart
    canonical = w.compare(skinny, a, q, s, "gemm_pipelined")
    assert not canonical and canonical.contract_name == "canonical" and canonical.contract == "canonical"
    held = w.compare(skinny, a, q, s, "gemm_pipelined", contract="seed-skinny")
    assert held and held.contract_name == "seed-skinny" and held.part == "tc"
    assert "seed-skinny contract, tc:" in held.explain()
    # Canonical bytes held to seed-skinny fail, and explain() shows seed-skinny's fold.
    wrong = w.compare(w.emulate(a, q, s), a, q, s, "gemm_pipelined", contract="seed-skinny")
    assert not wrong and "seed-skinny fold of C[" in wrong.explain()
    assert any("canonical's tc part" in d for d in wrong.diagnosis)
    # contract="canonical" is exactly the default.
    same = w.compare(skinny, a, q, s, "gemm_pipelined", contract="canonical")
    assert same.mismatches == canonical.mismatches and np.array_equal(same.expected, canonical.expected)


def test_compare_gemv_part():
    a, q, s = _operands(m=4, n=16, k=256)
    c = w.emulate(a, q, s, contract="seed-tile", part="gemv")
    r = w.compare(c, a, q, s, "gemv_batch4_strided", contract="seed-tile")
    assert r and r.part == "gemv"
    bad = c.copy()
    bad[1, 2] ^= 1
    r = w.compare(bad, a, q, s, "gemv_batch4_strided", contract="seed-tile")
    assert r.mismatches == 1 and "seed-tile GEMV of C[1][2]" in r.explain()


def _stand_in(text, part):
    return lambda a, q, s: w.emulate(a, q, s, contract=text, part=part)


_SWAPPED = " ".join(str(i) for i in list(range(16, 32)) + list(range(16)) + list(range(32, 128)))

# One stand-in per field alternative of the tensor-core part over its whole range, and the library
# values: each is named exactly, by the same engine as `w8a16check identify`.
TC_STAND_INS = {
    "canonical": "canonical",
    "seed-skinny": "seed-skinny",
    "seed-rows": "seed-rows",
    "nan=finite": "tc.nan = finite",
    "fold=prescale": "tc.fold = prescale",
    "bias=7": "tc.bias = 7",
    "bias=61": "tc.bias = 61",
    "k-order": "tc.k-order = " + _SWAPPED,
    "prescale-end-bf16": "tc.fold = prescale\ntc.period = end\ntc.scales = bf16",
}


@pytest.mark.parametrize("label", list(TC_STAND_INS))
def test_identify_names_each_tc_stand_in_exactly(label):
    spec = TC_STAND_INS[label]
    r = w.identify(_stand_in(spec, "tc"), n=128, k=256, m_values=(1, 16, 17))
    want = spec if "=" not in spec else w.describe(spec, "tc")
    assert r and r.keeps == [want], r.explain()
    assert r.candidates == 1512 and r.nearest is None and r.k_order_determined
    assert not r.undetermined() and r.confirm_cases >= 1


def test_identify_names_both_gemv_trees():
    r = w.identify(_stand_in("seed-tile", "gemv"), n=16, k=4096, m_values=(1,), entry_kind="gemv")
    assert r, r.explain()
    desc = w.describe("seed-tile", "gemv")
    assert any(k == desc or "seed-tile" in k for k in r.keeps)
    # Never one tree picked: every kept candidate's other tree is kept too.
    names = set(r.keeps)
    for c in _core.identify_candidates("gemv"):
        if c["name"] in names:
            twin = c["description"].replace("tree=xor", "tree=down") if "tree=xor" in c["description"] \
                else c["description"].replace("tree=down", "tree=xor")
            assert any(twin == d["description"] and d["name"] in names for d in _core.identify_candidates("gemv"))
    assert sum("tree=down" in d["description"] for d in _core.identify_candidates("gemv") if d["name"] in names) >= 1


def test_identify_confirms_at_other_m_and_refutes_bytes_that_change_with_m():
    fma, two = _stand_in("canonical", "tc"), _stand_in("tc.fold = mul-add", "tc")
    r = w.identify(lambda a, q, s: (fma if a.shape[0] <= 8 else two)(a, q, s), n=128, k=256)
    assert not r and r.keeps == [], r.explain()
    assert r.confirm_failure.startswith("case/1 ") and " m=" in r.confirm_failure, r.confirm_failure
    assert "fails the confirmation" in r.explain()


def test_identify_names_a_gemv_over_the_whole_space_and_refuses_a_split_k_one():
    # 128 lanes: past the plan's candidates (32 or 64); the split probes name it with its tree twin.
    r = w.identify(_stand_in("gemv.lanes = 128", "gemv"), n=16, k=4096, entry_kind="gemv")
    assert r and len(r.keeps) == 2, r.explain()
    assert r.fields["gemv.lanes"] == ["128"] and r.undetermined() == {"gemv.tree": ["xor", "down"]}
    assert any(p.dist.startswith("gemv_split") for p in r.probes)

    # Two K halves, each a canonical GEMV, their FP32 partials added: no GEMV of the language.
    def split_k(a, q, s):
        h = a.shape[1] // 2
        lo = w.emulate(a[:, :h].copy(), q[:, :h].copy(), s[:, :h // 128].copy(), "canonical", "gemv")
        hi = w.emulate(a[:, h:].copy(), q[:, h:].copy(), s[:, h // 128:].copy(), "canonical", "gemv")
        f = (lo.astype(np.uint32) << 16).view(np.float32) + (hi.astype(np.uint32) << 16).view(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)  # truncated: a kernel of its own rounding

    r = w.identify(split_k, n=16, k=4096, entry_kind="gemv")
    assert not r and r.nearest is not None, r.explain()


def test_identify_refuses_a_planted_bug():
    good = _stand_in("seed-skinny", "tc")

    def planted(a, q, s):
        c = good(a, q, s)
        c[0, 5] ^= 0x0001  # one element one bit off, in every probe
        return c

    r = w.identify(planted, n=128, k=256)
    assert not r and r.keeps == []
    assert r.nearest == "seed-skinny"
    assert r.nearest_differ == [1] * len(r.probes) and r.nearest_total == len(r.probes)
    assert "KEEPS NONE (nearest: seed-skinny" in r.explain()


def test_identify_bad_callables():
    def raises(a, q, s):
        raise ZeroDivisionError("boom")

    with pytest.raises(RuntimeError, match=r"fn\(a, w, s\) on case/1 .*raised ZeroDivisionError: boom"):
        w.identify(raises, n=8, k=128)
    with pytest.raises(ValueError, match=r"fn\(a, w, s\) on case/1 .*returned shape \(8, 1\)"):
        w.identify(lambda a, q, s: np.zeros((q.shape[0], a.shape[0]), np.uint16), n=8, k=128, m_values=(1,))
    with pytest.raises(TypeError, match=r"fn\(a, w, s\) on case/1 .*float32"):
        w.identify(lambda a, q, s: np.zeros((a.shape[0], q.shape[0]), np.float32), n=8, k=128)
    with pytest.raises(ValueError, match="NaN in every element"):
        w.identify(lambda a, q, s: np.full((a.shape[0], q.shape[0]), 0x7FC0, np.uint16), n=8, k=128)
    with pytest.raises(TypeError, match="callable"):
        w.identify(None, n=8, k=128)
    with pytest.raises(ValueError, match="multiple of 128"):
        w.identify(_stand_in("canonical", "tc"), n=8, k=100)
    # Work past the limits is refused before fn is called once.
    called = []
    with pytest.raises(ValueError, match="exceed"):
        w.identify(lambda a, q, s: called.append(1), n=1 << 19, k=1 << 19)
    with pytest.raises(ValueError, match="limit"):  # a case, but past 2^34 multiply-adds
        w.identify(lambda a, q, s: called.append(1), n=4096, k=65536)
    assert called == []


def test_audit_names_the_contract(tmp_path):
    from w8a16check import audit, report
    out = tmp_path / "audit"
    audit.main(["--out", str(out), "--shapes", "256x256", "--rows", "1", "--dists", "activation", "--columns", "4",
                "--contract", "seed-skinny"])
    summary = __import__("json").loads((out / "summary.json").read_text())
    assert summary["contract"]["name"] == "seed-skinny"
    assert "Tiers held to contract <b>seed-skinny</b>" in (out / "report.html").read_text()
    # Without --contract the page names canonical (the rest of the page is as before).
    c = w.load_contract("canonical")
    summary["contract"] = {"name": "canonical", "source": "library", "tc": c.tc_description,
                           "gemv": c.gemv_description}
    assert "Tiers held to contract <b>canonical</b>" in report._contract_html(summary)[0]


def test_audit_tiers_follow_the_contract():
    from w8a16check import audit
    rows, cols = np.arange(2), np.arange(4)
    held = audit.evaluate("wide", 8, 256, rows, cols, w.load_contract("seed-rows"))
    base = audit.evaluate("wide", 8, 256, rows, cols)
    a, q, s = base["a"], base["w"], base["s"]
    assert np.array_equal(held["out"]["canonical"], _core.gemm_columns(a, q, s, contract="seed-rows", part="tc"))
    assert np.array_equal(held["out"]["gemv"], _core.gemm_columns(a, q, s, contract="seed-rows", part="gemv"))
    assert np.array_equal(base["out"]["canonical"], _core.gemm_columns(a, q, s, contract="canonical"))


def test_audit_refuses_a_bad_contract(tmp_path, capsys):
    from w8a16check import audit
    bad = tmp_path / "bad.contract"
    bad.write_text("tc.nan = propagate\ntc.fold = bogus\n")
    with pytest.raises(SystemExit) as ex:
        audit.main(["--out", str(tmp_path / "o"), "--contract", str(bad)])
    assert ex.value.code == 2 and "line 2" in capsys.readouterr().err


def test_a_contract_path_that_is_no_regular_file_is_refused_before_it_is_read(tmp_path):
    import os
    import pathlib
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        w.load_contract(fifo)  # a PathLike: read as a file, never opened to wait for a writer
    with pytest.raises(ValueError, match="not a regular file"):
        w.load_contract(pathlib.Path("/dev/zero"))
    big = tmp_path / "big.contract"
    big.write_text("# x\n" * 40000)
    with pytest.raises(ValueError, match="larger than"):
        w.load_contract(big)
