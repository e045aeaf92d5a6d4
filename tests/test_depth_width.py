"""Depth against width: shapes of a stack compared at an equal budget."""

import math

import pytest
import torch

from pavlovlab.depth import contest as dw


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_same_task_budget_scores_one_task():
    rows = dw.same_task_budget(2, 32, 12, trials=60, generator=_gen(15))
    assert [(r["L"], r["H"], r["d_k"]) for r in rows] == [(2, 1, 32), (2, 2, 16), (2, 4, 8), (2, 8, 4)]
    assert all(r["H"] * r["d_k"] == 32 and r["entries"] == r["H"] * r["d_k"] ** 2 for r in rows)
    # the paper's own formula at fixed H·d_k: L ((n−1)H/B)^H, minimised near H = B/(e(n−1)) < 2 here
    assert [r["paper_bound"] for r in rows] == pytest.approx([2 * (11 * h / 32) ** h for h in (1, 2, 4, 8)])
    measured = [r["measured"] for r in rows]
    assert measured[0] < measured[-1], measured               # at equal projections one big head wins here


def test_shape_difference_is_a_welch_interval():
    """By hand: a = (1, 2, 3), b = (1, 1, 1): se² = 1/3, Welch df = 2, t(0.975, 2) = 4.303."""
    r = dw.shape_difference([1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    assert r.diff == pytest.approx(1.0) and r.df == pytest.approx(2.0)
    assert (r.lo, r.hi) == pytest.approx((1 - 4.303 / math.sqrt(3), 1 + 4.303 / math.sqrt(3)))
    # equal sizes and spreads: df = 2(n − 1) = 4, t = 2.776
    r = dw.shape_difference([0.5, 0.6, 0.7], [0.1, 0.2, 0.3])
    assert r.df == pytest.approx(4.0) and r.hi - r.diff == pytest.approx(2.776 * math.sqrt(2 * 0.01 / 3))
    with pytest.raises(ValueError, match="at least 2 seeds"):
        dw.shape_difference([0.5], [0.4, 0.3])
