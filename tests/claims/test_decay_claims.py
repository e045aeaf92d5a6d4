"""Notebook 07's recall-by-age comparison of decay, Hebbian and delta memories, against a literal loop."""

import itertools

import numpy as np
import pytest
import torch

from pavlovlab.forgetting import decay
from pavlovlab.sampling import random_keys


def _literal(K: np.ndarray, V: np.ndarray, gamma: float | None, beta: float | None) -> np.ndarray:
    """Write the pairs in order (decayed Hebbian, or delta), read every key at the end: cosines by age."""
    S = np.zeros((V.shape[1], K.shape[1]))
    for k, v in zip(K, V, strict=True):
        S = (gamma * S + np.outer(v, k)) if beta is None else S + beta * np.outer(v - S @ k, k)
    R = K @ S.T
    cos = (R * V).sum(1) / np.linalg.norm(R, axis=1) / np.linalg.norm(V, axis=1)
    return cos[::-1]


def test_recall_by_age_equals_a_literal_loop():
    g = torch.Generator().manual_seed(0)
    out = decay.recall_by_age(40, d_k=12, d_v=8, gammas=(0.9,), betas=(0.5,), n_trials=3, dtype=torch.float64,
                              generator=g)
    g = torch.Generator().manual_seed(0)
    k = random_keys(3, 40, d=12, kind="sphere", generator=g, dtype=torch.float64)
    v = random_keys(3, 40, d=8, kind="sphere", generator=g, dtype=torch.float64)
    for b in range(3):
        K, V = k[b].numpy(), v[b].numpy()
        assert np.abs(out["hebbian"][b].numpy() - _literal(K, V, 1.0, None)).max() < 1e-10
        assert np.abs(out["decay 0.9"][b].numpy() - _literal(K, V, 0.9, None)).max() < 1e-10
        assert np.abs(out["delta 0.5"][b].numpy() - _literal(K, V, None, 0.5)).max() < 1e-10


@pytest.mark.slow
def test_at_equal_load_decay_trades_old_pairs_for_recent_and_the_delta_rule_does_better_at_every_age():
    """256 pairs in d_k = 64: Hebbian recall is flat in age; decay γ = 0.95 recalls the last 16 better and
    pairs older than 128 not at all; the delta rule with β = 1 beats decay 0.95 in every age bucket (by more
    than 4 standard errors over 128 trials)."""
    out = decay.recall_by_age(256, gammas=(0.95,), betas=(1.0,), n_trials=128, dtype=torch.float64,
                              generator=torch.Generator().manual_seed(2))
    buckets = [(0, 16), (16, 64), (64, 128)]
    mean = {name: [c[:, a:b].mean(-1) for a, b in buckets] for name, c in out.items()}   # per-trial bucket means
    hebb = out["hebbian"]
    assert abs(float(hebb[:, :16].mean() - hebb[:, 128:].mean())) < 0.03
    assert float(mean["decay 0.95"][0].mean()) > float(mean["hebbian"][0].mean()) + 0.3
    assert float(out["decay 0.95"][:, 128:].mean().abs()) < 0.02
    for d, h in zip(mean["delta 1"], mean["decay 0.95"], strict=True):
        diff = d - h
        assert float(diff.mean()) > 4 * float(diff.std() / len(diff) ** 0.5)


def test_age_group_margin_equals_a_literal_paired_comparison():
    g = torch.Generator().manual_seed(6)
    a, b = torch.rand(30, 20, generator=g, dtype=torch.float64), torch.rand(30, 20, generator=g, dtype=torch.float64)
    edges = (0, 3, 11, 20)
    got = decay.age_group_margin(a, b, edges)
    A, B = a.numpy(), b.numpy()
    for i, (lo, hi) in enumerate(itertools.pairwise(edges)):
        d = [A[t, lo:hi].mean() - B[t, lo:hi].mean() for t in range(30)]
        assert abs(float(got[i]) - np.mean(d) / (np.std(d, ddof=1) / np.sqrt(30))) < 1e-10
    with pytest.raises(ValueError, match="edges"):
        decay.age_group_margin(a, b, (0, 25))
    with pytest.raises(ValueError, match="baseline"):
        decay.age_group_margin(a, b[:, :5], edges)


@pytest.mark.slow
def test_over_a_grid_every_decay_is_beaten_at_every_age_by_some_delta_rule():
    """Notebook 07 §2b with other draws: γ from 0.9 to 0.995 against β from 0.25 to 1, 256 pairs in d_k = 64."""
    gammas, betas, edges = (0.9, 0.95, 0.97, 0.98, 0.99, 0.995), (0.25, 0.5, 0.75, 1.0), (0, 16, 64, 128, 256)
    out = decay.recall_by_age(256, gammas=gammas, betas=betas, n_trials=128, generator=torch.Generator().manual_seed(9))
    for gm in gammas:
        best = max(float(decay.age_group_margin(out[f"delta {b:g}"], out[f"decay {gm:g}"], edges).min()) for b in betas)
        assert best > 4, gm


@pytest.mark.slow
def test_half_life_standard_error_matches_the_spread_of_independent_runs():
    """The bootstrap standard error of one run's measured half-life against the spread over 40 runs of 128 trials
    (γ = 0.95, theory 13.5 steps); and the notebook's 4-s.e. band holds in these runs while a 1-s.e. band does not
    always (the check can fail)."""
    gamma, runs = 0.95, 40
    curves = decay.recall_vs_lag(gamma, 30, n_trials=128 * runs, generator=torch.Generator().manual_seed(11))
    curves = curves.reshape(runs, 128, -1)
    measured = decay.measured_half_life(curves.mean(-2)).double()
    se = decay.half_life_se(curves[:8], resamples=200, generator=torch.Generator().manual_seed(0))
    assert abs(float(se.mean() / measured.std()) - 1) < 0.3
    z = (measured - decay.half_life(gamma)) / measured.std()
    assert float(z.abs().max()) < 4 and float(z.abs().max()) > 1


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="gammas"):
        decay.recall_by_age(8, gammas=(1.0,))
    with pytest.raises(ValueError, match="betas"):
        decay.recall_by_age(8, betas=(0.0,))
    with pytest.raises(ValueError, match="n_pairs"):
        decay.recall_by_age(0)
