# SPDX-License-Identifier: MIT OR Apache-2.0
# The bindings return the C++ emulator's bits: decode, rounding, the MMA step and the contracts.
import numpy as np
import pytest

import w8a16check as w
from conftest import REPO
from w8a16check import data

ALL_CODES = np.arange(256, dtype=np.uint8)


def test_decode_e4m3_all_codes_match_the_cpp_table_bits():
    got = w.decode_e4m3(ALL_CODES).view(np.uint32)
    table = w.E4M3FN_TO_BF16_BITS.astype(np.uint32) << 16
    assert np.array_equal(got, table)
    # Anchors from the format's definition (e4m3fn.hpp): max, min subnormal, one, -0, NaN.
    assert got[0x7E] == np.float32(448).view(np.uint32)
    assert got[0x01] == np.float32(2.0 ** -9).view(np.uint32)
    assert got[0x38] == np.float32(1.0).view(np.uint32)
    assert got[0x80] == 0x80000000
    values = w.decode_e4m3(ALL_CODES)
    assert np.isnan(values[[0x7F, 0xFF]]).all() and np.isnan(values).sum() == 2


def test_decode_keeps_shape_and_agrees_with_bf16_path():
    codes = ALL_CODES.reshape(4, 8, 8)
    assert w.decode_e4m3(codes).shape == (4, 8, 8)
    assert np.array_equal(w.decode_e4m3(codes).view(np.uint32),
                          w.bf16_to_f32(w.e4m3_to_bf16_bits(codes)).view(np.uint32))


def test_round_bf16_rne_on_raw_bits():
    bits = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0xFFC00001, 0x00018000, 0x80000000],
                    dtype=np.uint32)
    want = np.array([0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7FFF, 0x0002, 0x8000], dtype=np.uint16)
    assert np.array_equal(w.round_bf16(bits), want)
    assert w.round_bf16(bits.reshape(7, 1)).shape == (7, 1)


def test_mma_replays_every_recorded_h200_vector(vectors_dir):
    files = sorted(vectors_dir.glob("*.mmav"))
    assert len(files) == 10
    for path in files:
        rec = w.read_mmav(str(path))
        # D[i][m][n] = mma(C[i][m][n]; A[i][m], Bt[i][n]): broadcast A over n and Bt over m.
        got = w.mma(rec["a"][:, :, None, :], rec["bt"][:, None, :, :], rec["c"])
        assert got.dtype == np.uint32 and got.shape == rec["d"].shape
        assert np.array_equal(got, rec["d"]), path.name


def test_mma_targeted_cases_from_numerics_md():
    one, tiny = np.uint16(0x3F80), np.uint16(0x3300)  # 1.0 and 2^-25
    # c = 1 plus 16 products of 2^-25 * 1 gives 0x3F800004 exactly (NUMERICS.md 1.1).
    assert w.mma(np.full(16, tiny, np.uint16), np.full(16, one, np.uint16), np.array(0x3F800000, np.uint32)) == 0x3F800004
    # -2^-150 + 0 would be -0: the step gives +0.
    assert w.mma(np.zeros(16, np.uint16), np.zeros(16, np.uint16), np.array(0x80000000, np.uint32)) == 0


def test_mma_broadcasts_leading_dims():
    rng = np.random.default_rng(1)
    a = rng.integers(0x3000, 0x4000, (5, 16), dtype=np.uint16)
    b = rng.integers(0x3000, 0x4000, 16, dtype=np.uint16)
    c = np.array(0x3F800000, dtype=np.uint32)
    got = w.mma(a, b, c)
    assert got.shape == (5,)
    for i in range(5):
        assert got[i] == w.mma(a[i], b, c)


def _problem(m=3, n=200, k=256, seed=0):
    rng = np.random.default_rng(seed)
    a = w.round_bf16(rng.standard_normal((m, k)).astype(np.float32).view(np.uint32))
    wq = rng.integers(0, 0x7F, (n, k), dtype=np.uint8) | (rng.integers(0, 2, (n, k), dtype=np.uint8) << 7)
    s = rng.uniform(0.5, 2.0, ((n + 127) // 128, k // 128)).astype(np.float32)
    return a, wq, s


def test_canonical_k128_unit_scale_is_the_rounded_mma_chain():
    # With K = 128 and S = 1 the fold is acc = fma(p, 1, +0) = p, so C = bf16(8 chained mma()).
    a, wq, _ = _problem(m=2, n=5, k=128)
    s = np.ones((1, 1), np.float32)
    b = w.e4m3_to_bf16_bits(wq)
    p = np.zeros((2, 5), np.uint32)
    for j in range(8):
        p = w.mma(a[:, None, 16 * j:16 * j + 16], b[None, :, 16 * j:16 * j + 16], p)
    assert np.array_equal(w.gemm(a, wq, s), w.round_bf16(p))


@pytest.mark.parametrize("contract", ["canonical", "gemv"])
def test_gemm_columns_equal_gemm(contract):
    a, wq, s = _problem()
    full = w.gemm(a, wq, s, contract=contract)
    cols = np.array([0, 1, 127, 128, 199])
    part = w.gemm_columns(a, wq[cols], s[cols // 128], contract=contract)
    assert np.array_equal(full[:, cols], part)


def test_canonical_accumulator_rounds_to_the_canonical_output():
    a, wq, s = data.operands("activation", 1, 512, np.arange(3), np.arange(40))
    acc = w.canonical_acc_columns(a, wq, s)
    assert acc.dtype == np.uint32
    assert np.array_equal(w.round_bf16(acc), w.gemm_columns(a, wq, s, contract="canonical"))


def test_gemv_accumulator_rounds_to_the_gemv_output_and_is_exact_on_small_integers():
    a, wq, s = data.operands("cancellation", 1, 1024, np.arange(3), np.arange(40))
    acc = w.gemv_acc_columns(a, wq, s)
    assert acc.dtype == np.uint32
    assert np.array_equal(w.round_bf16(acc), w.gemm_columns(a, wq, s, contract="gemv"))
    # The two orders' accumulators differ under cancellation (else the binding returned one order twice).
    assert not np.array_equal(acc, w.canonical_acc_columns(a, wq, s))
    # Small integers sum exactly in FP32 in any order: A = 1..4 (BF16), W = 1.0, S = 1, K = 256.
    ints = np.tile(np.array([0x3F80, 0x4000, 0x4040, 0x4080], dtype=np.uint16), 64)[None, :]
    ones = np.full((1, 256), 0x38, dtype=np.uint8)
    got = w.gemv_acc_columns(ints, ones, np.ones((1, 2), dtype=np.float32)).view(np.float32)
    assert got[0, 0] == np.float32(640.0)


def test_contract_argument_selects_a_different_order():
    # Well-conditioned sums mostly round to the same BF16; cancellation exposes the order.
    a, wq, s = data.operands("cancellation", 3, 1024, np.arange(4), np.arange(64))
    can = w.gemm_columns(a, wq, s, contract="canonical")
    gemv = w.gemm_columns(a, wq, s, contract="gemv")
    assert not np.array_equal(can, gemv)


@pytest.mark.parametrize("contract", ["canonical", "gemv"])
def test_strides_read_and_write_only_their_extents(contract):
    a, wq, s = _problem(m=3, n=130, k=256)
    dense = w.gemm(a, wq, s, contract=contract)
    padded = np.full((3, 264), 0x7FC0, dtype=np.uint16)  # NaN padding must never be read
    padded[:, :256] = a
    got = w.gemm(padded, wq, s, contract=contract, c_row_stride=133)
    assert got.shape == (3, 133)
    assert np.array_equal(got[:, :130], dense)
    assert not got[:, 130:].any()
    # A pitch smaller than the array's rows: rows start every 256 elements of the flat buffer.
    flat = np.concatenate([a.ravel(), np.full(8, 0x7FC0, np.uint16)]).reshape(1, -1)
    assert np.array_equal(w.gemm(np.repeat(flat, 3, axis=0)[:, :776], wq, s, contract=contract,
                                 a_row_stride=256), dense)


BAD_CALLS = [
    (lambda a, q, s: w.gemm(a.astype(np.float32), q, s), TypeError, "a"),
    (lambda a, q, s: w.gemm(a, q.view(np.int8), s), TypeError, "w"),
    (lambda a, q, s: w.gemm(a, q, s.astype(np.float64)), TypeError, "s"),
    (lambda a, q, s: w.gemm(a.tolist(), q, s), TypeError, "a"),
    (lambda a, q, s: w.gemm(a, q[:, :200], s), ValueError, "multiple of 128"),
    (lambda a, q, s: w.gemm(a, q, s[:, :1]), ValueError, "s must have shape"),
    (lambda a, q, s: w.gemm(a[:, :128], q, s), ValueError, "a_row_stride"),
    (lambda a, q, s: w.gemm(a, q, s, a_row_stride=300), ValueError, "a holds"),
    (lambda a, q, s: w.gemm(a, q, s, c_row_stride=10), ValueError, "c_row_stride"),
    (lambda a, q, s: w.gemm(a, q, s, c_row_stride=200.5), TypeError, "c_row_stride"),
    (lambda a, q, s: w.gemm(a, q, s, a_row_stride="256"), TypeError, "a_row_stride"),
    (lambda a, q, s: w.gemm(a, q, s, contract="fast"), ValueError, "contract"),
    (lambda a, q, s: w.gemm(a, q, s, arch="sm100"), ValueError, "arch"),
    (lambda a, q, s: w.gemm(a[0], q, s), ValueError, "a must be 2-D"),
    (lambda a, q, s: w.gemm_columns(a, q, s), ValueError, "s_rows"),
    (lambda a, q, s: w.mma(a[:, :15], a[:, :16], np.zeros(3, np.uint32)), ValueError, "a must have shape"),
    (lambda a, q, s: w.mma(a[:, :16], a[:, :16], np.zeros(4, np.uint32)), ValueError, "do not broadcast"),
    (lambda a, q, s: w.mma(a[:, :16], a[:, :16], np.zeros(3, np.int32)), TypeError, "c must have dtype"),
    (lambda a, q, s: w.mma(a[:, :16], a[:, :16], np.zeros(3, np.uint32), arch="sm7"), ValueError, "arch"),
    (lambda a, q, s: w.decode_e4m3(np.zeros(3, np.uint16)), TypeError, "codes"),
    (lambda a, q, s: w.round_bf16(np.zeros(3, np.float32)), TypeError, "bits"),
    (lambda a, q, s: w.read_mmav("/nonexistent/x.mmav"), ValueError, "no such file"),
    (lambda a, q, s: w.parse_mmav(b"MMAV0002" + bytes(8)), ValueError, "bad magic"),
    (lambda a, q, s: w.parse_mmav(b"MMAV0001" + bytes([1, 0, 0, 0, 1, 0, 0, 0])), ValueError, "size mismatch"),
]


@pytest.mark.parametrize("call,exc,needle", BAD_CALLS, ids=[f"{i}-{c[2]}" for i, c in enumerate(BAD_CALLS)])
def test_bad_arguments_raise_naming_the_argument(call, exc, needle):
    a, q, s = _problem()
    with pytest.raises(exc) as info:
        call(a, q, s)
    assert needle in str(info.value)


def test_plan_case_is_the_launch_layers_dispatch():
    core = w._core
    line = "case/1 w8a16_gemm_pipelined_m32_strided m={m} n={n} k={k} a_row_stride={k} c_row_stride={n} " \
           "dist=activation_like seed=0x1 gen=1"
    # The skinny body keeps small N at K <= 5120; the row-tile kernel takes long K and large N
    # (device/include/w8a16/device/plan.hpp tc_rows_takes), its strip width from geometry.hpp.
    assert core.plan_case(line.format(m=16, n=33, k=5120))["body"] == "m32_skinny"
    p = core.plan_case(line.format(m=1, n=12288, k=2048))
    assert (p["kernel"], p["body"], p["contract"], p["grid"]) == ("w8a16_tc_rows", "tc_rows_strip", "canonical",
                                                                  (384, 1, 1))
    assert core.plan_case(line.format(m=16, n=12288, k=2048))["grid"] == (192, 1, 1)   # 64-column strips
    assert core.plan_case(line.format(m=8, n=2048, k=8192))["grid"] == (128, 1, 1)     # 16-column strips
    # From 33 rows the Hopper tier (every kernel is present) takes every shape; the line's without=
    # takes it away, and the 32-row twin's tile runs.
    assert core.plan_case(line.format(m=33, n=40, k=128))["body"] == "wgmma_units"
    hopper = " without=w8a16_wgmma_rows,w8a16_wgmma_rows_n128,w8a16_wgmma_rows_n128_x2"
    assert core.plan_case(line.format(m=33, n=40, k=128) + hopper)["body"] == "m32_tile"
    assert core.parse_case(line.format(m=33, n=40, k=128) + hopper)["without"] == hopper.split("=")[1]
    assert core.parse_case(line.format(m=33, n=40, k=128))["without"] == ""
    gemv = line.replace("gemm_pipelined_m32_strided", "gemv_batch4_strided")
    assert core.plan_case(gemv.format(m=4, n=40, k=128))["contract"] == "gemv"
    with pytest.raises(ValueError, match="at most 4 rows"):
        core.plan_case(gemv.format(m=5, n=40, k=128))
    with pytest.raises(ValueError, match="line"):
        core.plan_case("case/1 nonsense")


def test_bodies_are_the_launch_layers_and_name_each_contract():
    core = w._core
    bodies = core.bodies()
    names = [b["name"] for b in bodies]
    assert len(set(names)) == len(names)
    assert {b["contract"] for b in bodies} == {"canonical", "gemv"}
    assert [b["name"] for b in bodies if b["contract"] == "gemv"] == ["gemv_strip"]
    # Every body the plan reaches over a spread of shapes and entries is in the list, with the
    # plan's own contract.
    contract = {b["name"]: b["contract"] for b in bodies}
    line = "case/1 w8a16_{e} m={m} n={n} k={k} a_row_stride={k} c_row_stride={n} dist=activation_like seed=0x1 gen=1"
    reached = set()
    for e in ("gemm_pipelined", "gemm_pipelined_m32_strided", "gemm_pipelined_m64_strided", "gemv_batch16_strided"):
        for m, n, k in ((1, 33, 256), (16, 12288, 2048), (40, 12288, 2048), (40, 40, 256), (16, 33, 5248)):
            try:
                p = core.plan_case(line.format(e=e, m=m, n=n, k=k))
            except ValueError:
                continue  # rows this entry refuses
            assert contract[p["body"]] == p["contract"], p
            reached.add(p["body"])
    assert reached <= set(names) and len(reached) >= 5


def test_build_info_names_the_cmake_version_and_a_commit():
    info = w._core.build_info()
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert f"project(w8a16check VERSION {info['version']} " in cmake
    assert info["commit"] == "unknown" or all(c in "0123456789abcdef" for c in info["commit"])


def test_bodies_rows_name_their_symbols_tier_and_the_order_probes_of_order_py():
    # The order probes a body's row names (bodies.def) are exactly PROBE_PLAN's lines for that body,
    # and each body's plan reaches one of its own symbols.
    from w8a16check import order

    bodies = w._core.bodies()
    planned = {}
    for name, _entry, body, _k, _rows in order.PROBE_PLAN:
        planned.setdefault(body, []).append(name)
    assert {b["name"]: b["order_probes"] for b in bodies} == {b["name"]: planned.get(b["name"], []) for b in bodies}
    assert set(planned) <= {b["name"] for b in bodies}
    for b in bodies:
        assert b["symbols"] and len(b["archs"]) == len(b["symbols"]) and b["entries"], b
        assert all(s.startswith("w8a16_") for s in b["symbols"]), b
        assert b["tier"] in ("first", "twin_first", "own"), b
    assert order.HOPPER_BODIES == ("wgmma_units", "wgmma_units128", "wgmma_units128_x2")
