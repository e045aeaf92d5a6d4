"""Stacked conditioning circuits: error linear in depth, exponential in width, per-head theory."""

import math

import numpy as np
import pytest
import torch

from pavlovlab import stacking as st


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _se(p, chains):
    return math.sqrt(max(p, 1e-4) * (1 - p) / chains)


@pytest.mark.parametrize("n, d_k", [(16, 16), (32, 32), (64, 32)])
def test_per_head_error_matches_theory(n, d_k):
    """Tolerance: 15 % of the theory plus 3 standard errors of the measurement."""
    r = st.chain_error(1, 3, n, d_k, trials=300, generator=_gen())
    p = st.hop_error_theory(n, d_k)
    draws = r.chains * 3
    assert abs(r.head_error - p) <= 0.15 * p + 3 * _se(p, draws), (r.head_error, p)


def test_error_grows_linearly_with_depth():
    L = np.arange(1, 9)
    r = st.chain_error(8, 1, 32, 32, trials=250, generator=_gen(1))
    assert r.error_by_depth.shape == (8,) and r.error == float(r.error_by_depth[-1])
    assert 0.005 < r.error_by_depth[0] < 0.05 and r.error < 0.2          # the low-error regime
    slope = st.fit_exponent(L, r.error_by_depth)
    assert 0.8 <= slope <= 1.2, slope
    theory = st.stack_error_theory(L, 1, 32, 32)
    assert np.allclose(r.error_by_depth.numpy(), theory, rtol=0.2, atol=0.005)


def test_log_error_falls_linearly_with_heads():
    H = np.arange(1, 5)
    errs = [st.chain_error(1, h, 24, 16, trials=600, generator=_gen(int(h))).error for h in H]
    slope, r2 = st.fit_log_slope(H, errs)
    assert slope < -1.0 and r2 > 0.97, (slope, r2, errs)
    assert all(b < a / 3 for a, b in zip(errs, errs[1:])), errs
    theory = st.hop_error_theory(24, 16, H=H[:3])
    assert np.allclose(errs[:3], theory, rtol=0.25, atol=0.002), (errs, theory)


def test_vote_close_to_all_heads_fail():
    p = st.hop_error_theory(24, 16)
    errs = [st.chain_error(1, h, 24, 16, trials=600, combine="vote", generator=_gen(10 + h)).error for h in (1, 2, 3)]
    assert errs[0] > errs[1] > errs[2]
    for h, e in zip((1, 2, 3), errs):
        assert p ** h / 2 < e < 2 * p ** h, (h, e, p ** h)
    assert float(st.stack_error_theory(2, 3, 24, 16, rule="all_fail")) == pytest.approx(1 - (1 - p ** 3) ** 2)


def test_fixed_budget_wide_and_shallow_wins():
    rows = st.fixed_budget(4, 16, 16, trials=200, generator=_gen(2))
    assert [(r["L"], r["H"]) for r in rows] == [(1, 4), (2, 2), (4, 1)] == st.budget_shapes(4)
    measured = [r["measured"] for r in rows]
    theory = [r["theory"] for r in rows]
    assert measured[0] < measured[1] < measured[2] and theory[0] < theory[1] < theory[2]


def test_theory_shapes_and_paper_bound():
    assert isinstance(st.hop_error_theory(16, 32), float)
    grid = st.stack_error_theory(np.arange(1, 4)[:, None], np.arange(1, 3)[None, :], 16, 32)
    assert grid.shape == (3, 2) and np.all(np.diff(grid, axis=0) > 0) and np.all(np.diff(grid, axis=1) < 0)
    assert st.stack_error_theory(1, 1, 16, 32) == pytest.approx(st.hop_error_theory(16, 32))
    assert st.paper_bound(3, 2, 9, 32) == pytest.approx(3 * (8 / 32) ** 2)
    assert st.paper_bound(3, 1, 64, 32) == 1.0
    assert st.crosstalk_variance(17, 8, 8) == pytest.approx(16 / 64)
    assert st.fit_exponent([1, 2, 4], [3, 6, 12]) == pytest.approx(1.0)
    slope, r2 = st.fit_log_slope([1, 2, 3], [1e-1, 1e-2, 1e-3])
    assert slope == pytest.approx(-math.log(10)) and r2 == pytest.approx(1.0)


def test_device_gives_the_same_numbers(device):
    a = st.chain_error(3, 2, 16, 16, trials=50, generator=_gen(5))
    b = st.chain_error(3, 2, 16, 16, trials=50, generator=_gen(5), device=device)
    assert torch.allclose(a.error_by_depth, b.error_by_depth, atol=2e-3)


def test_bad_input():
    with pytest.raises(ValueError, match="combine"):
        st.chain_error(1, 1, 8, 8, combine="median")
    with pytest.raises(ValueError, match="n"):
        st.chain_error(1, 1, 1, 8)
    with pytest.raises(TypeError, match="H"):
        st.chain_error(1, 2.0, 8, 8)
    with pytest.raises(ValueError, match="d_k"):
        st.hop_error_theory(8, 2)
    with pytest.raises(ValueError, match="rule"):
        st.stack_error_theory(1, 1, 8, 8, rule="vote")
    with pytest.raises(ValueError, match="positive"):
        st.fit_exponent([1, 2], [0, 0])
