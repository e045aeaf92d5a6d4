"""The closed-form error of a stack: per-head theory against the simulation, the paper's bound, shapes."""

import math

import numpy as np
import pytest
import torch

from pavlovlab.depth import chain as st
from pavlovlab.depth import theory as th


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _se(p, chains):
    return math.sqrt(max(p, 1e-4) * (1 - p) / chains)


@pytest.mark.parametrize("n, d_k", [(16, 16), (32, 32), (64, 32)])
def test_per_head_error_matches_theory(n, d_k):
    """Tolerance: 15 % of the theory plus 3 standard errors of the measurement."""
    r = st.chain_error(1, 3, n, d_k, trials=300, generator=_gen())
    p = th.hop_error_theory(n, d_k)
    draws = r.chains * 3
    assert abs(r.head_error - p) <= 0.15 * p + 3 * _se(p, draws), (r.head_error, p)


def test_paper_bound_derivation_and_vacuous_region():
    # literal three steps: Chebyshev per head, all H heads fail, union over L layers
    for L, H, n, d_k in [(3, 2, 9, 32), (5, 3, 17, 64), (1, 1, 40, 32)]:
        chebyshev = (n - 1) / d_k
        expected = sum(chebyshev ** H for _ in range(L))
        assert th.paper_bound(L, H, n, d_k, cap=False) == pytest.approx(expected)
        assert th.paper_bound(L, H, n, d_k) == pytest.approx(min(1.0, expected))
    loads = np.array([0.5, 0.99, 1.0, 1.5])
    raw = th.paper_bound(1, 3, loads * 64 + 1, 64, cap=False)
    assert list(raw >= 1) == [False, False, True, True]       # vacuous once (n − 1)/d_k ≥ 1, whatever H
    # it is an upper bound where it is not vacuous: measured error below it (n = 12, d_k = 32, L = 2, H = 1)
    r = st.chain_error(2, 1, 12, 32, trials=200, generator=_gen(11))
    assert r.error < th.paper_bound(2, 1, 12, 32)


def test_theory_shapes_and_paper_bound():
    assert isinstance(th.hop_error_theory(16, 32), float)
    grid = th.stack_error_theory(np.arange(1, 4)[:, None], np.arange(1, 3)[None, :], 16, 32)
    assert grid.shape == (3, 2) and np.all(np.diff(grid, axis=0) > 0) and np.all(np.diff(grid, axis=1) < 0)
    assert th.stack_error_theory(1, 1, 16, 32) == pytest.approx(th.hop_error_theory(16, 32))
    assert th.paper_bound(3, 2, 9, 32) == pytest.approx(3 * (8 / 32) ** 2)
    assert th.paper_bound(3, 1, 64, 32) == 1.0
    assert th.crosstalk_variance(17, 8, 8) == pytest.approx(16 / 64)


def test_bad_input():
    with pytest.raises(ValueError, match="d_k"):
        th.hop_error_theory(8, 2)
    with pytest.raises(ValueError, match="rule"):
        th.stack_error_theory(1, 1, 8, 8, rule="vote")

