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


def probe_lca_sizes(contract: str, k: int, leaves: np.ndarray, arch: str = "sm90") -> np.ndarray:
    """sizes[i, j] = number of leaves under LCA(leaves[i], leaves[j]), measured (diagonal 1)."""
    count = leaves.size
    if count > 258:
        raise ValueError(f"at most 258 leaves (BF16 counts are exact to 256), got {count}")
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    a = np.zeros((len(pairs), k), dtype=np.uint16)
    a[:, leaves] = _ONE_BF16
    rows = np.arange(len(pairs))
    pi = np.array([p[0] for p in pairs])
    pj = np.array([p[1] for p in pairs])
    a[rows, leaves[pi]] = _M_BF16
    a[rows, leaves[pj]] = _M_BF16 | _MINUS
    w = np.full((1, k), _ONE_E4M3, dtype=np.uint8)
    s = np.ones((1, k // 128), dtype=np.float32)
    out = _core.gemm(a, w, s, contract=contract, arch=arch)[:, 0]
    survivors = _core.bf16_to_f32(out).astype(np.float64)
    if not np.all((survivors == np.round(survivors)) & (survivors >= 0) & (survivors <= count - 2)):
        raise RuntimeError("probe outputs are not unit counts: the probe's assumptions do not hold")
    sizes = np.ones((count, count), dtype=np.int64)
    sizes[pi, pj] = count - survivors.astype(np.int64)
    sizes[pj, pi] = sizes[pi, pj]
    return sizes


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


def recover(contract: str, k: int, leaves: np.ndarray, arch: str = "sm90") -> dict:
    """Probe, rebuild and compare with the documented order; a JSON-ready summary."""
    sizes = probe_lca_sizes(contract, k, leaves, arch)
    measured = clusters_from_sizes(sizes)
    documented = documented_clusters(contract, k, leaves, arch)
    return {
        "contract": contract,
        "arch": arch,
        "k": k,
        "leaves": "every position" if leaves.size == k else f"{leaves.size} positions: " + _leaf_text(leaves),
        "probes": int(leaves.size * (leaves.size - 1) // 2),
        "internal_nodes_measured": len(measured),
        "internal_nodes_documented": len(documented),
        "matches_documented": measured == documented,
        "only_measured": len(measured - documented),
        "only_documented": len(documented - measured),
        "measured_tree": render(measured, leaves),
        "documented_tree": render(documented, leaves),
    }


def _leaf_text(leaves: np.ndarray) -> str:
    step = np.diff(leaves)
    if step.size and np.all(step == step[0]):
        return f"{int(leaves[0])}, {int(leaves[1])}, ..., {int(leaves[-1])} (every {int(step[0])})"
    return ", ".join(str(int(x)) for x in leaves)
