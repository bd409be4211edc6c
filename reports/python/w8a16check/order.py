# SPDX-License-Identifier: MIT OR Apache-2.0
# Recovering a contract's K-reduction order from its outputs alone, in the manner of FPRev.
"""Empirical reduction order (after FPRev: Xie et al., "FPRev: Revealing the Order of
Floating-Point Summation", ISSTA 2025), applied to the emulator's two contracts.

Probe: pick a set of leaf positions L along K. For a pair (i, j) of leaves put A[i] = +M,
A[j] = -M, A[l] = 1 on the other leaves and 0 off L; W = 1.0 (code 0x38) and S = 1. With M = 2^40,
a unit that meets a partial sum holding +-M is lost (FP32 keeps 24 bits; the MMA step truncates
it on the grid 2^(E-25)), and +M, -M cancel exactly where their partial sums meet: at the lowest
common ancestor (LCA) of i and j in the reduction tree. Units below the LCA are lost, all others
survive, so the output is |L| - |leaves under LCA(i, j)|: each probe measures one LCA's size. The
set of clusters {l : size(LCA(i, l)) <= t} over every i and t is then exactly the set of internal
nodes of the tree (up to nodes with one child), which rebuilds the tree. Zero terms leave the
arithmetic unchanged (an MMA step ignores them; an FMA adds +0), so leaves may be a subset of K.
Outputs are BF16: counts up to 256 are exact, so |L| <= 258.

The documented orders (NUMERICS.md 2.1 and reference/gemv.hpp) are built here as trees of index
sets only; no arithmetic is involved. Two rooted trees without one-child nodes are equal exactly
when their sets of clusters are equal, which is what `compare` checks.
"""
from __future__ import annotations

import numpy as np

from . import _core

_ONE_E4M3 = np.uint8(0x38)     # 1.0
_M_BF16 = np.uint16(0x5380)    # 2^40
_ONE_BF16 = np.uint16(0x3F80)  # 1.0
_MINUS = np.uint16(0x8000)


def probe_pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The probe rows' leaf pairs (i, j), i < j, in row order."""
    if count > 258:
        raise ValueError(f"at most 258 leaves (BF16 counts are exact to 256), got {count}")
    pi, pj = np.triu_indices(count, 1)
    return pi.astype(np.int64), pj.astype(np.int64)


def probe_base_row(k: int, leaves: np.ndarray) -> np.ndarray:
    """The A row every probe starts from: 1 on the leaves, 0 elsewhere."""
    base = np.zeros(k, dtype=np.uint16)
    base[leaves] = _ONE_BF16
    return base


def probe_patches(leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per probe row, the two elements that differ from the base row: (+M at leaf i, -M at leaf j)."""
    pi, pj = probe_pairs(leaves.size)
    cols = np.stack([leaves[pi], leaves[pj]], axis=1).astype(np.int64)
    bits = np.empty_like(cols, dtype=np.uint16)
    bits[:, 0] = _M_BF16
    bits[:, 1] = _M_BF16 | _MINUS
    return cols, bits


def sizes_from_outputs(out: np.ndarray, count: int) -> np.ndarray:
    """sizes[i, j] = leaves under LCA(i, j), from the probe rows' BF16 outputs (one per pair, in order)."""
    pi, pj = probe_pairs(count)
    if out.shape != pi.shape:
        raise ValueError(f"{pi.size} probe outputs expected, got {out.shape}")
    survivors = _core.bf16_to_f32(out.astype(np.uint16)).astype(np.float64)
    bad = ~((survivors == np.round(survivors)) & (survivors >= 0) & (survivors <= count - 2))
    if np.any(bad):
        first = int(np.flatnonzero(bad)[0])
        raise RuntimeError(f"probe outputs are not unit counts ({int(bad.sum())} of {out.size}; first: pair "
                           f"({int(pi[first])}, {int(pj[first])}) gave 0x{int(out[first]):04X}): the probe's "
                           "assumptions do not hold")
    sizes = np.ones((count, count), dtype=np.int64)
    sizes[pi, pj] = count - survivors.astype(np.int64)
    sizes[pj, pi] = sizes[pi, pj]
    return sizes


def probe_lca_sizes(contract: str, k: int, leaves: np.ndarray, arch: str = "sm90") -> np.ndarray:
    """sizes[i, j] = number of leaves under LCA(leaves[i], leaves[j]), measured on the emulator (diagonal 1)."""
    cols, bits = probe_patches(leaves)
    a = np.tile(probe_base_row(k, leaves), (cols.shape[0], 1))
    rows = np.arange(cols.shape[0])
    a[rows, cols[:, 0]] = bits[:, 0]
    a[rows, cols[:, 1]] = bits[:, 1]
    w = np.full((1, k), _ONE_E4M3, dtype=np.uint8)
    s = np.ones((1, k // 128), dtype=np.float32)
    out = _core.gemm(a, w, s, contract=contract, arch=arch)[:, 0]
    return sizes_from_outputs(out, leaves.size)


def clusters_from_sizes(sizes: np.ndarray) -> set[frozenset[int]]:
    """Internal nodes (as sets of leaf indices 0..count-1) implied by the LCA sizes."""
    count = sizes.shape[0]
    out: set[frozenset[int]] = set()
    for i in range(count):
        for t in np.unique(sizes[i]):
            if t < 2:
                continue
            cluster = frozenset(np.flatnonzero(sizes[i] <= t).tolist())
            if len(cluster) != t:
                raise RuntimeError(f"inconsistent probe: leaf {i}, LCA size {t}, cluster of {len(cluster)}")
            out.add(cluster)
    return out


# ---- documented orders, as trees of leaf-index sets -------------------------------------------
def _node(children):
    """A node whose children are leaves (ints) or nodes (frozensets); empty children are dropped."""
    parts = [frozenset([c]) if isinstance(c, int) else c for c in children]
    return frozenset().union(*[p for p in parts if p])


def documented_clusters(contract: str, k: int, leaves: np.ndarray, arch: str = "sm90") -> set[frozenset[int]]:
    """The clusters of the documented order restricted to `leaves` (leaf index = position in it).

    For the canonical fold the MMA's own structure comes from the emulator's policy for `arch`
    (mma.hpp): `blocks` chained fused steps per k16 instruction (1 on sm_90, 2 on sm_80)."""
    blocks = _core.mma_policy(arch)["blocks"]
    where = {int(pos): idx for idx, pos in enumerate(leaves)}
    clusters: set[frozenset[int]] = set()

    def emit(children):
        node = _node(children)
        # A node with one non-empty child is invisible to any probe: record only real joins.
        if sum(1 for c in children if isinstance(c, int) or c) >= 2:
            clusters.add(node)
        return node

    def leaf(pos):
        return [where[pos]] if pos in where else []

    if contract == "canonical":  # NUMERICS.md 2.1
        acc = frozenset()
        for step in range(k // 128):
            p = frozenset()
            for j in range(8):           # one MMA: `blocks` fused nodes over its 16 products and c = p
                width = 16 // blocks
                for blk in range(blocks):
                    k0 = 128 * step + 16 * j + width * blk
                    p = emit([p] + [x for t in range(width) for x in leaf(k0 + t)])
            acc = emit([p, acc])         # fma(p, S, acc)
        root = acc
    elif contract == "gemv":  # reference/gemv.hpp
        lanes = []
        for lane in range(32):
            acc = frozenset()
            for c in range(lane, k // 16, 32):
                p = frozenset()
                for j in range(16):      # fma(a, w, p), one product per node
                    p = emit([p] + leaf(16 * c + j))
                acc = emit([p, acc])     # fma(p, S, acc)
            lanes.append(acc)
        off = 16
        while off >= 1:                  # xor butterfly; lane 0's value is the output
            lanes = [emit([lanes[l], lanes[l ^ off]]) for l in range(32)]
            off //= 2
        root = lanes[0]
    else:
        raise ValueError(f"contract must be 'canonical' or 'gemv', got {contract!r}")
    # Only lane 0's final value is the output: keep the clusters under its root.
    return {c for c in clusters if c <= root and len(c) >= 2}


def render(clusters: set[frozenset[int]], leaves: np.ndarray) -> str:
    """The tree as nested parentheses over K positions; runs of sibling leaves as 'a..b'."""
    nodes = sorted(clusters, key=len)
    count = len(leaves)

    def children_of(node):
        inner = [c for c in nodes if c < node]
        maximal = [c for c in inner if not any(c < d for d in inner)]
        covered = frozenset().union(*maximal) if maximal else frozenset()
        return maximal, sorted(node - covered)

    def text(node):
        kids, single = children_of(node)
        parts = [(min(c), "(" + text(c) + ")") for c in kids]
        runs = []
        for idx in single:  # leaves joined at this node, consecutive ones as one run
            if runs and idx == runs[-1][1] + 1:
                runs[-1][1] = idx
            else:
                runs.append([idx, idx])
        for lo, hi in runs:
            if hi - lo <= 1:
                parts.extend((i, f"{int(leaves[i])}") for i in range(lo, hi + 1))
            else:
                parts.append((lo, f"{int(leaves[lo])}..{int(leaves[hi])}"))
        parts.sort()
        return " + ".join(p for _, p in parts)

    roots = [c for c in nodes if not any(c < d for d in nodes)]
    if len(roots) != 1 or len(roots[0]) != count:
        return "(no single root: " + str(len(roots)) + " top-level clusters)"
    return text(roots[0])


def tree_nodes(clusters: set[frozenset[int]], count: int) -> list[list[int]]:
    """The tree as node lists for drawing and for JSON: node j (0-based, children before parents,
    the root last) lists its children, each a leaf index (< count) or count + the index of a node.
    A cluster's parent is the smallest cluster strictly containing it (the clusters of a tree nest)."""
    nodes = sorted(clusters, key=lambda c: (len(c), min(c)))
    ident = {c: count + j for j, c in enumerate(nodes)}
    children: list[list[int]] = [[] for _ in nodes]
    for j, c in enumerate(nodes):
        parent = next((d for d in nodes[j + 1:] if c < d), None)
        if parent is not None:
            children[ident[parent] - count].append(ident[c])
    for leaf in range(count):
        parent = next((d for d in nodes if leaf in d), None)
        if parent is not None:
            children[ident[parent] - count].append(leaf)
    lowest = {ident[c]: min(c) for c in nodes}
    return [sorted(kids, key=lambda x: lowest.get(x, x)) for kids in children]


def recover(contract: str, k: int, leaves: np.ndarray, arch: str = "sm90") -> dict:
    """Probe, rebuild and compare with the documented order; a JSON-ready summary."""
    sizes = probe_lca_sizes(contract, k, leaves, arch)
    measured = clusters_from_sizes(sizes)
    documented = documented_clusters(contract, k, leaves, arch)
    return {
        "contract": contract,
        "arch": arch,
        "k": k,
        "leaves": leaf_text(leaves, k),
        "leaf_positions": [int(x) for x in leaves],
        "probes": int(leaves.size * (leaves.size - 1) // 2),
        "internal_nodes_measured": len(measured),
        "internal_nodes_documented": len(documented),
        "matches_documented": measured == documented,
        "only_measured": len(measured - documented),
        "only_documented": len(documented - measured),
        "measured_tree": render(measured, leaves),
        "documented_tree": render(documented, leaves),
        "measured_nodes": tree_nodes(measured, leaves.size),
        "documented_nodes": tree_nodes(documented, leaves.size),
    }


def leaf_ranges(leaves) -> str:
    """Sorted K positions as runs: 'a..b' (consecutive), 'a..b every s' (a stride), single values.
    Greedy from the left: each run is the longest arithmetic progression starting there (at least
    3 values), so 0..15, 16, 32, ... reads '0..16, 32..256 every 16, ...'."""
    xs = [int(x) for x in leaves]
    parts, i = [], 0
    while i < len(xs):
        j = i
        if i + 2 < len(xs):
            step = xs[i + 1] - xs[i]
            j = i + 1
            while j + 1 < len(xs) and xs[j + 1] - xs[j] == step:
                j += 1
            if j - i < 2:
                j = i
        if j == i:
            parts.append(str(xs[i]))
            i += 1
            continue
        step = xs[i + 1] - xs[i]
        parts.append(f"{xs[i]}..{xs[j]}" + ("" if step == 1 else f" every {step}"))
        i = j + 1
    return ", ".join(parts)


def leaf_text(leaves, k: int) -> str:
    """What the leaf set is, for tables: 'every position' or the count and the ranges."""
    leaves = np.asarray(leaves)
    if leaves.size == k and np.array_equal(leaves, np.arange(k)):
        return "every position"
    return f"{leaves.size} positions: {leaf_ranges(leaves)}"


# ---- the same probes on the kernels (golden/order/README.md) ----------------------------------
# write-probes writes one operand bundle per (entry point, kernel body); `w8a16check run-operands`
# runs each on the sim or cuda backend (tools/gpu-order on the GPU machine); recover reads the
# outputs back, rebuilds each tree and compares it with the order of the contract the entry must
# meet: the canonical fold (NUMERICS.md 2.1) for the tensor-core entries, the GEMV order (2.2) for
# gemv_batch*. Rows per launch follow the launch layer's rules (device/include/w8a16/device/plan.hpp,
# geometry.hpp): at these N (1 column) the skinny body takes at most 16 rows and the row-tile kernel
# 1..32 (probed here at 8 rows, its 16-column strip, and at 16, its 32-column strip; its 64- and
# 128-column strips need N >= 3969 and are checked byte for byte by the GPU tests instead), the
# GEMVs 4 and 16; the twins' tiles are reached with every probe in one launch (32,640 rows).
PROBE_FORMAT = "w8a16check-order-probes 1"
SKINNY_MAX_K = 5120        # geometry.hpp kSkinnyMaxK: above it, 1..16 rows go to w8a16_tc_rows
TC_ROWS_K = 5248           # the smallest K > kSkinnyMaxK that is a multiple of 128


def _tc_rows_leaves(k: int) -> np.ndarray:
    """Leaves at K = 5248 (41 steps; 328 k16 chunks do not fit in 258 leaves): every position of the
    first and the last k16, every k16 start of the first two and the last two 128-K steps, every
    half-step start (64) of every step: the MMA's inside, the chain of 8 MMAs and the fold over steps."""
    pos = set(range(16)) | set(range(k - 16, k)) | set(range(0, k, 32))
    for step in (0, 1, k // 128 - 2, k // 128 - 1):
        pos |= set(range(128 * step, 128 * step + 128, 16))
    return np.array(sorted(pos), dtype=np.int64)


# (name, entry, body the plan must choose, K, rows per launch: 0 = every probe row in one launch)
PROBE_PLAN = (
    ("gemm128_tile", "gemm_pipelined", "gemm128_tile", 256, 0),
    ("by_m_gemm128_tile", "gemm_pipelined_by_m", "gemm128_tile", 256, 0),
    ("m32_tile", "gemm_pipelined_m32", "m32_tile", 256, 0),
    ("m32_strided_m32_tile", "gemm_pipelined_m32_strided", "m32_tile", 256, 0),
    ("m32_skinny", "gemm_pipelined_m32", "m32_skinny", 256, 16),
    ("m64_tile", "gemm_pipelined_m64", "m64_tile", 256, 0),
    ("m64_strided_m64_tile", "gemm_pipelined_m64_strided", "m64_tile", 256, 0),
    ("m32_strided_tc_rows_thin", "gemm_pipelined_m32_strided", "tc_rows_strip", TC_ROWS_K, 8),
    ("m32_strided_tc_rows", "gemm_pipelined_m32_strided", "tc_rows_strip", TC_ROWS_K, 16),
    ("m64_strided_tc_rows", "gemm_pipelined_m64_strided", "tc_rows_strip", TC_ROWS_K, 16),
    # The Hopper tier: at n = 1 its 64-column symbol takes 33..64 rows a launch, its 128-column one
    # 8,576 rows (67 units fill more than half of 132 SMs: plan.hpp wgmma_choice). The two-CTA
    # symbol takes 1..16 rows only where the 128-column units fill two CTAs per SM: X2_N columns
    # (below), of which the output keeps X2_COLUMNS.
    ("by_m_wgmma_units", "gemm_pipelined_by_m", "wgmma_units", 256, 64),
    ("by_m_wgmma_units128", "gemm_pipelined_by_m", "wgmma_units128", 256, 8576),
    ("by_m_wgmma_units128_x2", "gemm_pipelined_by_m", "wgmma_units128_x2", 256, 16),
    ("gemv_batch4", "gemv_batch4_strided", "gemv_strip", 256, 4),
    ("gemv_batch16", "gemv_batch16_strided", "gemv_strip", 256, 16),
)
# A reduced leaf set (the tests' pipeline on the sim backend, seconds on 2 cores): a few positions
# inside one k16, k16 and GEMV-chunk starts, both 128-K steps; at 5248, step starts and the ends.
REDUCED_LEAVES = {256: np.array([0, 1, 2, 15, 16, 17, 31, 127, 128, 129, 200, 255]),
                  TC_ROWS_K: np.array([0, 1, 15, 16, 128, 129, 2560, 5120, 5121, 5247])}


# The bodies of the tier every tensor-core entry point tries first (bodies.def's tier column).
HOPPER_BODIES = tuple(b["name"] for b in _core.bodies() if b["tier"] == "first")

# The two-CTA symbol's probe. plan.hpp wgmma_choice gives it 1..16 rows when the 128-column units
# number at least two per SM (264 on the H200's 132 SMs); 265 units (N = 33,920) make 264 CTAs
# (geometry.hpp wgmma_ctas) share 530 steps of 128 K, so wgmma_cta_pieces cuts some units between
# two CTAs: CTA c starts at step floor(530 c / 264), which is odd from c = 132 on. Column 0 lies in
# unit 0, folded whole by CTA 0; column 132 * 128 in unit 132, whose first step CTA 131 folds and
# hands over in the workspace and whose second CTA 132 folds (the hand-over of NUMERICS.md 2.1's
# fold between CTAs). Every column has W = 1.0, so every column's tree must be the documented one;
# the output keeps these two (run-operands --columns), 2 bytes a probe each, not 68 KB.
X2_N = 265 * 128
X2_COLUMNS = (0, 132 * 128)
# Per probe: (n, the columns the output keeps or None for all of C).
PROBE_COLUMNS = {"by_m_wgmma_units128_x2": (X2_N, X2_COLUMNS)}


def probe_n_columns(name: str) -> tuple:
    """(n, kept columns) of a PROBE_PLAN line: n = 1 and column 0 unless PROBE_COLUMNS says more."""
    n, cols = PROBE_COLUMNS.get(name, (1, None))
    return n, (list(cols) if cols else [0])


DEFAULT_MAX_MACS = 1 << 34  # run-operands' --max-macs default (work_limits.hpp)


def run_flags(body: str, name: str = "", macs: int = 0) -> list:
    """run-operands flags a probe needs: the Hopper tier goes before the seed's tile bodies and the
    row-tile kernel in the plan (plan.hpp wgmma_choice), so their probes plan without it; a probe
    of many columns keeps only the ones it reads (--columns); one of more multiply-adds than
    run-operands runs by default (`macs`, all launches) raises --max-macs to the power of two above."""
    flags = [] if body in HOPPER_BODIES else ["--without-hopper-tier"]
    if name in PROBE_COLUMNS:
        flags += ["--columns", ",".join(str(c) for c in PROBE_COLUMNS[name][1])]
    if macs > DEFAULT_MAX_MACS:
        flags += ["--max-macs", str(1 << (macs - 1).bit_length())]
    return flags


def entry_contract(entry: str) -> str:
    """The contract an entry point must meet (as golden::entry_point_is_gemv decides)."""
    return "gemv" if entry.startswith("gemv_") else "canonical"


def probe_leaves(k: int, reduced: bool = False) -> np.ndarray:
    if reduced:
        return REDUCED_LEAVES[k]
    return np.arange(k) if k == 256 else _tc_rows_leaves(k)


def write_probes(out_dir, reduced: bool = False, only=None) -> dict:
    """One bundle per PROBE_PLAN line, plus manifest.json (all recover needs) and probes.list
    ("ENTRY BUNDLE OUTPUT [FLAGS]" lines, for tools/gpu-order, which has no JSON parser)."""
    import json
    import os

    from . import operands

    os.makedirs(out_dir, exist_ok=True)
    manifest = {"format": PROBE_FORMAT, "reduced": reduced,
                "probe": "A = base row (1.0 on the leaves) with +2^40 at leaf i and -2^40 at leaf j for each "
                         "pair i < j in row order; W = 1.0 (E4M3 0x38), S = 1, n = 1",
                "probes": []}
    lines = []
    for name, entry, body, k, per_launch in PROBE_PLAN:
        if only and name not in only:
            continue
        leaves = probe_leaves(k, reduced)
        cols, bits = probe_patches(leaves)
        pairs = cols.shape[0]
        m = per_launch or pairs
        launches = -(-pairs // m)
        pad = launches * m - pairs           # the last launch is filled with copies of the last probe
        cols = np.concatenate([cols, np.repeat(cols[-1:], pad, axis=0)])
        bits = np.concatenate([bits, np.repeat(bits[-1:], pad, axis=0)])
        n, columns = probe_n_columns(name)
        w = np.full((n, k), _ONE_E4M3, dtype=np.uint8)
        s = np.ones(((n + 127) // 128, k // 128), dtype=np.float32)
        size = operands.write_bundle(os.path.join(out_dir, name + ".bundle"), entry, m, n, k, launches,
                                     probe_base_row(k, leaves), cols, bits, w, s)
        flags = run_flags(body, name, launches * m * n * k)
        manifest["probes"].append({"name": name, "entry": entry, "expected_body": body,
                                   "contract": entry_contract(entry), "k": k, "n": n, "columns": columns, "m": m,
                                   "launches": launches, "pairs": pairs, "leaves": leaves.tolist(), "run_flags": flags,
                                   "bundle": name + ".bundle", "output": name + ".out", "bundle_bytes": size})
        lines.append(" ".join([entry, name + ".bundle", name + ".out"] + flags))
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(out_dir, "probes.list"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return manifest


def recover_outputs(probe: dict, output: dict, arch: str = "sm90") -> dict:
    """One probe's outputs -> its recovered tree, compared with its entry's documented order."""
    leaves = np.array(probe["leaves"], dtype=np.int64)
    contract = entry_contract(probe["entry"])
    res = {"name": probe["name"], "entry": probe["entry"], "expected_body": probe["expected_body"],
           "body": output.get("body"), "kernel": output.get("kernel"), "backend": output.get("backend"),
           "contract": contract, "k": probe["k"], "leaves": leaf_text(leaves, probe["k"]),
           "leaf_positions": [int(x) for x in leaves], "probes": int(probe["pairs"]), "error": None,
           "matches_documented": False}
    problems = []
    # An output of run-operands --columns holds only those columns: its n is their count.
    columns = probe.get("columns") or [0]
    want = dict(probe, n=len(columns) if probe.get("run_flags") and "--columns" in probe["run_flags"] else probe["n"])
    for key in ("entry", "m", "n", "launches"):
        if output.get(key) != want[key]:
            problems.append(f"output {key} {output.get(key)!r}, manifest {want[key]!r}")
    if output.get("body") != probe["expected_body"]:
        problems.append(f"the plan chose body {output.get('body')!r}, the probe is for {probe['expected_body']!r}")
    if output.get("contract") != contract:
        problems.append(f"the plan's contract is {output.get('contract')!r}, the entry must meet {contract!r}")
    documented = documented_clusters(contract, probe["k"], leaves, arch)
    res["internal_nodes_documented"] = len(documented)
    res["documented_tree"] = render(documented, leaves)
    res["documented_nodes"] = tree_nodes(documented, leaves.size)
    if problems:
        res["error"] = "; ".join(problems)
        return res
    # Every kept column is a probe of its own (the same rows, another CTA's or unit's path through
    # the kernel); the first one that differs from the documented tree is the one reported.
    measured = None
    try:
        for i, col in enumerate(columns):
            sizes = sizes_from_outputs(output["c"][:probe["pairs"], i], leaves.size)
            measured = clusters_from_sizes(sizes)
            if measured != documented:
                res["column"] = int(col)
                break
    except (RuntimeError, ValueError) as exc:
        res["error"] = (f"column {col}: " if len(columns) > 1 else "") + str(exc)
        return res
    res["columns"] = [int(c) for c in columns]
    res.update({"internal_nodes_measured": len(measured), "matches_documented": measured == documented,
                "only_measured": len(measured - documented), "only_documented": len(documented - measured),
                "measured_tree": render(measured, leaves), "measured_nodes": tree_nodes(measured, leaves.size)})
    return res


def recover_dir(directory, outputs_dir=None) -> dict:
    """Every probe of DIR/manifest.json from its output file (in outputs_dir, default DIR)."""
    import json
    import os

    from . import operands

    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("format") != PROBE_FORMAT:
        raise ValueError(f"{directory}/manifest.json: format {manifest.get('format')!r}, expected {PROBE_FORMAT!r}")
    results = []
    for probe in manifest["probes"]:
        path = os.path.join(outputs_dir or directory, probe["output"])
        if not os.path.exists(path):
            results.append({"name": probe["name"], "entry": probe["entry"], "expected_body": probe["expected_body"],
                            "contract": entry_contract(probe["entry"]), "k": probe["k"], "probes": probe["pairs"],
                            "matches_documented": False, "error": f"no output file {probe['output']}"})
            continue
        try:
            output = operands.read_output(path)
        except ValueError as exc:
            results.append({"name": probe["name"], "entry": probe["entry"], "expected_body": probe["expected_body"],
                            "contract": entry_contract(probe["entry"]), "k": probe["k"], "probes": probe["pairs"],
                            "matches_documented": False, "error": str(exc)})
            continue
        results.append(recover_outputs(probe, output))
    return {"format": "w8a16check-order-recovered 1", "directory": str(directory), "reduced": manifest.get("reduced"),
            "all_match": bool(results) and all(r["matches_documented"] and not r["error"] for r in results),
            "results": results}


def main(argv=None) -> int:
    import argparse
    import json
    import os

    p = argparse.ArgumentParser(prog="python -m w8a16check.order",
                                description="Reduction-order probes for the kernels (golden/order/README.md)")
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write-probes", help="write operand bundles, manifest.json and probes.list")
    w.add_argument("--out", required=True, help="folder (created); e.g. build/gpu/order-probes")
    w.add_argument("--reduced", action="store_true", help="a dozen leaves per probe (tests)")
    r = sub.add_parser("recover", help="rebuild each kernel's tree from run-operands outputs")
    r.add_argument("dir", help="folder with manifest.json (and the outputs, unless --outputs)")
    r.add_argument("--outputs", help="folder of the .out files")
    r.add_argument("--json", help="result file (default DIR/recovered.json)")
    args = p.parse_args(argv)
    if args.cmd == "write-probes":
        m = write_probes(args.out, args.reduced)
        total = sum(x["bundle_bytes"] for x in m["probes"])
        for x in m["probes"]:
            print(f"{x['name']:24s} {x['entry']:28s} K={x['k']:5d} {len(x['leaves']):3d} leaves, "
                  f"{x['pairs']:6d} probes, {x['launches']:5d} launches of {x['m']}, {x['bundle_bytes'] / 1e6:.2f} MB")
        print(f"write-probes: {len(m['probes'])} bundles, {total / 1e6:.1f} MB in {args.out}")
        return 0
    res = recover_dir(args.dir, args.outputs)
    out = args.json or os.path.join(args.dir, "recovered.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    for x in res["results"]:
        verdict = "ERROR " + x["error"] if x["error"] else ("same tree" if x["matches_documented"] else "DIFFERENT TREE")
        print(f"{x['name']:24s} {x['entry']:28s} body {x.get('body')}: {verdict}")
    print(f"recover: {'every tree is the documented one' if res['all_match'] else 'MISMATCH or error'}; {out}")
    return 0 if res["all_match"] else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
