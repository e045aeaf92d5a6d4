"""Notebook 05's derived bounds of the paper's form, with their constants, against independent computations: a
literal loop over heads (NumPy, its own random numbers, one trial at a time) and the closed forms by hand."""

import math

import numpy as np
import pytest
import torch

from pavlovlab.depth import chain as st
from pavlovlab.depth import theory as th


def _unit(rng, *shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def literal_heads_hop(n, d_k, d_v, H, trials, seed):
    """One hop through H heads, written out pair by pair. Per trial: averaged decoder failed?, every head
    failed?, Z = Σ_h ‖c_h‖², each head's closest competitor cosine, the closest head-averaged cosine."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(trials):
        perm = rng.permutation(n)
        x, j = 0, perm[0]
        scores, mean_cos, power, each_failed, t_max = np.zeros(n), np.zeros(n), 0.0, [], []
        for _ in range(H):
            K, V = _unit(rng, n, d_k), _unit(rng, n, d_v)
            S = sum(np.outer(V[perm[i]], K[i]) for i in range(n))
            r = S @ K[x]
            scores += V @ r / H
            mean_cos += V @ V[j] / H
            power += ((r - V[j]) ** 2).sum()
            each_failed.append(int(np.argmax(V @ r)) != j)
            t_max.append(np.delete(V @ V[j], j).max())
        rows.append((int(np.argmax(scores)) != j, all(each_failed), power, t_max, np.delete(mean_cos, j).max()))
    avg, every, Z, t_max, t_mean = (np.array(col) for col in zip(*rows, strict=True))
    return avg.astype(bool), every.astype(bool), Z, t_max, t_mean


def test_all_heads_fail_bound_is_the_product_of_the_per_head_bounds():
    t = np.array([[0.1, 0.3, 0.5], [0.0, 0.95, -0.2]])
    by_hand = [min(1, 2 * 7 / (32 * 0.9)) * min(1, 2 * 7 / (32 * 0.7)) * min(1, 2 * 7 / (32 * 0.5)),
               min(1, 2 * 7 / 32) * 1.0 * min(1, 2 * 7 / (32 * 1.2))]
    assert th.all_heads_fail_bound(8, 32, t) == pytest.approx(by_hand)
    assert th.all_heads_fail_bound(8, 32, [0.2]) == pytest.approx(14 / (32 * 0.8))
    with pytest.raises(ValueError, match="t_max"):
        th.all_heads_fail_bound(8, 32, 0.2)


def test_averaged_heads_bound_by_hand():
    """M_H (2(n − 1)/(d_k(1 − t̄)))^H, capped at 1; with H = 1 and M = 1 it is hop_failure_bound."""
    assert th.averaged_heads_bound(8, 32, 0.2, 3, 1.35) == pytest.approx(1.35 * (14 / (32 * 0.8)) ** 3)
    assert th.averaged_heads_bound(8, 32, 0.2, 1, 1.0) == pytest.approx(th.hop_failure_bound(8, 32, t_max=0.2))
    assert th.averaged_heads_bound(24, 16, 0.2, 2, 1.2) == 1.0
    with pytest.raises(ValueError, match="moment_ratio"):
        th.averaged_heads_bound(8, 32, 0.2, 2, -1.0)


@pytest.mark.parametrize("n, d_k, d_v, H", [(6, 16, 16, 2), (8, 32, 32, 3), (4, 64, 3, 2)])
def test_heads_hop_matches_the_literal_loop(n, d_k, d_v, H):
    trials = 1500
    avg, every, Z, _, t_mean = literal_heads_hop(n, d_k, d_v, H, trials, seed=n * H)
    s = st.heads_hop(n, d_k, H, d_v=d_v, trials=300, generator=torch.Generator().manual_seed(n * H),
                     dtype=torch.float64)
    for package, literal in ((s.failed_average, avg), (s.failed_each.all(1), every)):
        p, q = package.double().mean().item(), literal.mean()
        se = math.sqrt(max(p * (1 - p), 1e-4) / package.numel() + max(q * (1 - q), 1e-4) / literal.size)
        assert abs(p - q) < 4 * se, (p, q)
    # E[Z] = H (n − 1)/d_k exactly (closed form), in both
    for z in (s.crosstalk_power.flatten().numpy(), Z):
        assert abs(z.mean() - H * (n - 1) / d_k) < 4 * z.std() / math.sqrt(z.size)
    assert abs(s.t_mean_max.mean().item() - t_mean.mean()) < 4 * math.sqrt(
        s.t_mean_max.var().item() / s.t_mean_max.numel() + t_mean.var() / t_mean.size)


@pytest.mark.parametrize("n, d_k, d_v, H", [(4, 64, 3, 1), (4, 64, 3, 2), (4, 64, 4, 3), (8, 32, 32, 2)])
def test_derived_bounds_lie_above_the_literal_errors(n, d_k, d_v, H):
    """Both bounds of the paper's form, with their constants, above the errors of their decoders."""
    avg, every, Z, t_max, t_mean = literal_heads_hop(n, d_k, d_v, H, trials=3000, seed=3 + H)
    M = (Z ** H).mean() / Z.mean() ** H
    assert every.mean() <= np.mean([np.prod(np.minimum(1, 2 * (n - 1) / (d_k * (1 - t)))) for t in t_max])
    assert avg.mean() <= np.minimum(1, M * (2 * (n - 1) / (d_k * (1 - t_mean))) ** H).mean()


def test_moment_ratio_grows_with_the_number_of_heads():
    """M_H = E[Z^H]/(E Z)^H: 1 for one head (by definition), then above 1 and rising (Jensen, and Z's spread)."""
    g = torch.Generator().manual_seed(0)
    M = []
    for H in (1, 2, 3, 4):
        Z = st.heads_hop(8, 32, H, trials=2000, generator=g, dtype=torch.float64).crosstalk_power
        M.append(((Z ** H).mean() / Z.mean() ** H).item())
    assert M[0] == pytest.approx(1.0) and 1 < M[1] < M[2] < M[3] < 2.5, M
