# SPDX-License-Identifier: MIT OR Apache-2.0
# Confidence intervals for shares estimated from sampled outputs (the audit's bit-identical share).
"""Interval estimates for a share (e.g. "outputs bit-identical between the contracts") measured on a
sample of outputs that comes in clusters: the audit samples output columns and takes all M rows of
each, a device recording holds whole cases. Outputs of one cluster share operands (a column's W row,
a case's inputs) and need not be independent draws.

Method. The point estimate is the pooled share p = (sum of successes) / (sum of sizes). Its
variance is estimated between clusters (the ratio estimator of cluster sampling, Cochran, Sampling
Techniques, 3rd ed., section 6.8):

    var(p) = C / (C - 1) * sum_j (y_j - p m_j)^2 / (sum_j m_j)^2      (C clusters, y_j of m_j succeed)

and turned into Kish's design effect deff = var(p) / (p (1 - p) / n), clipped to [1, n / C] (no
better than independent outputs, no worse than one draw per cluster), and the effective sample
size n_eff = n / deff. The interval is Wilson's score interval (Wilson 1927; Brown, Cai and
DasGupta, Statistical Science 16, 2001, recommend it over the Wald interval, which collapses to a
point at p = 0 or 1) at n_eff:

    centre = (p + z^2 / (2 n_eff)) / (1 + z^2 / n_eff)
    half   = z / (1 + z^2 / n_eff) * sqrt(p (1 - p) / n_eff + z^2 / (4 n_eff^2))

with z = 1.959964 (95 %, two-sided). Where every sampled output succeeds (or none does) the data
cannot say how failures would cluster, so the interval takes the conservative end, n_eff = C (one
draw per cluster): 256 columns all identical give [0.9852, 1], whatever M is. A share pooled over
several configurations (strata) uses the sum of their effective sizes (`pooled`).
"""
from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal


def wilson(p: float, n_eff: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a share p observed on n_eff independent draws."""
    if n_eff <= 0:
        raise ValueError(f"n_eff must be positive, got {n_eff}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    z2 = z * z / n_eff
    centre = (p + z2 / 2.0) / (1.0 + z2)
    half = z / (1.0 + z2) * math.sqrt(p * (1.0 - p) / n_eff + z * z / (4.0 * n_eff * n_eff))
    # At p = 0 or 1 the interval touches 0 or 1 exactly; rounding must not move it off.
    lo = 0.0 if p == 0.0 else max(0.0, centre - half)
    hi = 1.0 if p == 1.0 else min(1.0, centre + half)
    return lo, hi


def share_interval(successes, sizes) -> dict:
    """Share, 95 % Wilson interval and design effect from per-cluster counts (module docstring).

    successes[j], sizes[j]: the successes and outputs of cluster j (a sampled column, a recorded case).
    """
    y = np.asarray(successes, dtype=np.float64).ravel()
    m = np.asarray(sizes, dtype=np.float64).ravel()
    if y.shape != m.shape or y.size == 0 or np.any(m <= 0) or np.any(y < 0) or np.any(y > m):
        raise ValueError("successes and sizes must be equally long, non-empty, with 0 <= successes <= sizes > 0")
    clusters = int(y.size)
    n = float(m.sum())
    p = float(y.sum() / n)
    if p in (0.0, 1.0) or clusters < 2:
        deff = n / clusters  # nothing to estimate clustering from: one draw per cluster
    else:
        var = clusters / (clusters - 1) * float(np.sum((y - p * m) ** 2)) / (n * n)
        deff = min(max(var / (p * (1.0 - p) / n), 1.0), n / clusters)
    n_eff = n / deff
    lo, hi = wilson(p, n_eff)
    return {"share": p, "lo": lo, "hi": hi, "outputs": int(n), "clusters": clusters, "design_effect": deff,
            "n_eff": n_eff, "method": "Wilson score 95 %, n_eff = n / Kish design effect (stats.py)"}


def pooled(intervals: list[dict]) -> dict:
    """One share over several configurations: the pooled share, at the sum of their effective sizes."""
    if not intervals:
        raise ValueError("no intervals to pool")
    n = sum(i["outputs"] for i in intervals)
    p = sum(i["share"] * i["outputs"] for i in intervals) / n
    n_eff = sum(i["n_eff"] for i in intervals)
    lo, hi = wilson(min(max(p, 0.0), 1.0), n_eff)
    return {"share": p, "lo": lo, "hi": hi, "outputs": int(n), "clusters": sum(i["clusters"] for i in intervals),
            "design_effect": n / n_eff, "n_eff": n_eff,
            "method": "Wilson score 95 % at the summed effective sizes of the configurations (stats.py)"}
