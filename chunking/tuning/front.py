"""The quality–cost front: the trials no other trial beats on both at once.

Trial ``j`` dominates trial ``i`` when its quality is at least as high and its cost at
most as high, and it is strictly better on one of the two. The front is every trial
that nothing dominates (quality up, cost down). A trial without a quality (NaN) is
never on the front and dominates nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def dominates(quality_a: float, cost_a: float, quality_b: float, cost_b: float) -> bool:
    """Whether trial a dominates trial b (higher quality up, lower cost down)."""
    return (
        quality_a >= quality_b and cost_a <= cost_b and (quality_a > quality_b or cost_a < cost_b)
    )


def front_mask(quality: Sequence[float], cost: Sequence[float]) -> list[bool]:
    """For each trial, whether it is on the front (non-dominated)."""
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    if q.shape != c.shape:
        raise ValueError("a quality and a cost per trial")
    known = ~(np.isnan(q) | np.isnan(c))
    out = []
    for i in range(len(q)):
        if not known[i]:
            out.append(False)
            continue
        beaten = (q[known] >= q[i]) & (c[known] <= c[i]) & ((q[known] > q[i]) | (c[known] < c[i]))
        out.append(not bool(beaten.any()))
    return out
