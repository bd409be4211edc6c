# SPDX-License-Identifier: MIT OR Apache-2.0
# Draws a recovered K-reduction tree (order.py's node lists) as a dendrogram, with matplotlib only.
"""Pictures of reduction trees.

A tree comes as order.py's ``tree_nodes``: node j lists its children, leaf i (< L) or L + node.
``layout`` places leaf i at x = i (its rank among the probed K positions; the tick labels give the
positions) and every internal node at height 1 + the largest height of its children, so a chain
of accumulations reads as a staircase and a butterfly as a balanced tree; a node's x is the middle
of its children's. ``draw`` draws each node as a horizontal bar over its children with a vertical
drop to each child: nodes that add three or more terms in one rounding (a fused MMA step) in blue,
nodes of two terms (an FMA, an add) in grey, nodes named in ``highlight`` (those the other tree
lacks) in red.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

FUSED, BINARY, DIFFERENT = "#1f63b4", "#777777", "#d62728"


def layout(nodes: list[list[int]], count: int) -> dict:
    """x and height of every leaf (ids 0..count-1) and node (count + j); children come before parents."""
    x = np.zeros(count + len(nodes))
    h = np.zeros(count + len(nodes), dtype=np.int64)
    x[:count] = np.arange(count)
    for j, kids in enumerate(nodes):
        if not kids:
            raise ValueError(f"node {j} has no children")
        if any(k >= count + j for k in kids):
            raise ValueError(f"node {j} names a child that is not below it")
        xs = [x[k] for k in kids]
        x[count + j] = (min(xs) + max(xs)) / 2.0
        h[count + j] = 1 + max(h[k] for k in kids)
    return {"x": x, "h": h}


def node_leaves(nodes: list[list[int]], count: int) -> list[frozenset[int]]:
    """The leaves under each node (its cluster), for comparing two trees node by node."""
    out: list[frozenset[int]] = []
    for kids in nodes:
        out.append(frozenset().union(*[frozenset([k]) if k < count else out[k - count] for k in kids]))
    return out


def draw(ax, nodes: list[list[int]], positions: list[int], highlight: set[int] = frozenset(), k: int | None = None):
    """One tree on ax. positions: the K position of each leaf. highlight: node indices to draw red."""
    count = len(positions)
    pos = layout(nodes, count)
    x, h = pos["x"], pos["h"]
    segs = {FUSED: [], BINARY: [], DIFFERENT: []}
    for j, kids in enumerate(nodes):
        colour = DIFFERENT if j in highlight else (FUSED if len(kids) >= 3 else BINARY)
        top = h[count + j]
        xs = [x[c] for c in kids]
        segs[colour].append([(min(xs), top), (max(xs), top)])
        for c in kids:
            segs[colour].append([(x[c], h[c]), (x[c], top)])
    for colour, lines in segs.items():
        if lines:
            ax.add_collection(LineCollection(lines, colors=colour, linewidths=0.9 if colour != DIFFERENT else 1.4,
                                             gid=f"tree/{colour}"))
    height = int(h.max()) if len(h) else 1
    ax.set_xlim(-1, count)
    ax.set_ylim(-0.5, height + 0.8)
    # Faint bands mark each 128-K step (one FP8 scale block, one fold point of the canonical order).
    steps = np.asarray(positions) // 128
    for i in range(1, count):
        if steps[i] != steps[i - 1]:
            ax.axvline(i - 0.5, color="#e0a000", lw=0.5, alpha=0.5, zorder=0)
    ticks = [i for i in range(count) if i == 0 or steps[i] != steps[i - 1]] + [count - 1]
    if len(ticks) > 22:
        stride = int(np.ceil(len(ticks) / 22))
        ticks = ticks[::stride] + ([count - 1] if ticks[::stride][-1] != count - 1 else [])
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(positions[i]) for i in ticks], fontsize=7)
    ax.set_xlabel("K position of each probed leaf (leaves evenly spaced; orange lines: 128-K step boundaries)",
                  fontsize=7.5)
    ax.set_ylabel("depth of the join", fontsize=7.5)
    ax.tick_params(labelsize=7)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return pos


def figure(nodes: list[list[int]], positions: list[int], title: str, other: list[list[int]] | None = None,
           other_title: str = ""):
    """A tree, or (when `other` is given and differs) both trees, each with the nodes the other lacks in red."""
    count = len(positions)
    rows = 1 if other is None else 2
    fig, axes = plt.subplots(rows, 1, figsize=(12, 2.9 * rows + 0.3), squeeze=False)
    mine_only, other_only = set(), set()
    if other is not None:
        a, b = node_leaves(nodes, count), node_leaves(other, count)
        mine_only = {j for j, c in enumerate(a) if c not in set(b)}
        other_only = {j for j, c in enumerate(b) if c not in set(a)}
    draw(axes[0][0], nodes, positions, mine_only)
    axes[0][0].set_title(title, fontsize=9)
    if other is not None:
        draw(axes[1][0], other, positions, other_only)
        axes[1][0].set_title(other_title, fontsize=9)
    handles = [Line2D([], [], color=FUSED, label="join of 3 or more terms in one rounding (fused MMA step)"),
               Line2D([], [], color=BINARY, label="join of 2 terms (FMA, add)")]
    if mine_only or other_only:
        handles.append(Line2D([], [], color=DIFFERENT, lw=1.4, label="node the other tree does not have"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.07 if rows == 1 else 0.04, 1, 1))
    return fig
