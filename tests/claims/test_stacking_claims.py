"""Notebook 05's claims against independent computations: a literal loop simulation of one hop with the
nearest-value clean-up (NumPy, its own random numbers, one trial at a time), closed forms, and np.polyfit."""

import itertools
import math

import numpy as np
import pytest
import torch

from pavlovlab.depth import chain as st
from pavlovlab.depth import theory as th
from pavlovlab.statistics import fit_log_slope


def _unit(rng, *shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def literal_hop(n, d_k, d_v, H, trials, seed):
    """One hop, written out: H heads, each S = Σ_i v_π(i) k_iᵀ built pair by pair; the scores v_m·r averaged
    over heads; the clean-up picks the nearest stored value. Per trial: failed?, the norm of the averaged
    crosstalk ‖c̃‖ = √(Σ_h ‖c_h‖² / H), the averaged cosine of the winner and of the closest competitor."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        perm = rng.permutation(n)
        x, j = 0, perm[0]
        scores, cos, power = np.zeros(n), np.zeros(n), 0.0
        for _ in range(H):
            K, V = _unit(rng, n, d_k), _unit(rng, n, d_v)
            S = np.zeros((d_v, d_k))
            for i in range(n):
                S += np.outer(V[perm[i]], K[i])
            r = S @ K[x]
            scores += V @ r / H
            cos += V @ V[j] / H
            power += ((r - V[j]) ** 2).sum() / H
        m = int(np.argmax(scores))
        out.append((m != j, math.sqrt(power), cos[m], np.delete(cos, j).max()))
    failed, norm, t_win, t_max = (np.array(col) for col in zip(*out, strict=True))
    return failed.astype(bool), norm, t_win, t_max


def test_loss_threshold_is_the_closest_crosstalk_that_wins():
    """Brute force in 2-D: the smallest ‖c‖ with which m beats j (searched over all directions and norms)."""
    for t in (-0.5, 0.0, 0.3, 0.9):
        vj, vm = np.array([1.0, 0.0]), np.array([t, math.sqrt(1 - t * t)])
        angles = np.linspace(0, 2 * np.pi, 20001)
        dirs = np.stack([np.cos(angles), np.sin(angles)], -1)
        # m wins iff (vm − vj)·c > 1 − t; along each direction the needed norm is (1 − t)/((vm − vj)·u)
        proj = dirs @ (vm - vj)
        needed = np.where(proj > 0, (1 - t) / np.where(proj > 0, proj, 1), np.inf).min()
        assert th.loss_threshold(t) == pytest.approx(needed, rel=1e-6)
    assert th.loss_threshold(0.0) == pytest.approx(math.sqrt(0.5))


@pytest.mark.parametrize("n, d_k, H", [(8, 16, 1), (12, 16, 1), (24, 16, 2)])
def test_every_failure_has_crosstalk_above_the_threshold(n, d_k, H):
    failed, norm, t_win, _ = literal_hop(n, d_k, d_k, H, trials=1500, seed=n + H)
    assert failed.sum() >= 10
    assert np.all(norm[failed] >= np.sqrt((1 - t_win[failed]) / 2) - 1e-9)


def test_failures_with_crosstalk_below_the_signal_are_common():
    """The paper's step "the crosstalk outweighs the signal (‖c‖ ≥ 1)" misses many failures."""
    failed, norm, _, _ = literal_hop(8, 16, 16, 1, trials=6000, seed=1)
    small = (norm[failed] < 1).mean()
    se = math.sqrt(small * (1 - small) / failed.sum())
    assert failed.sum() >= 40 and small - 3 * se > 0.1, (failed.sum(), small)


@pytest.mark.parametrize("n, d_k, d_v, H", [(8, 32, 32, 1), (4, 64, 3, 1), (8, 32, 32, 2), (3, 16, 16, 1)])
def test_derived_bound_is_above_the_literal_error(n, d_k, d_v, H):
    trials = 3000
    failed, _, _, t_max = literal_hop(n, d_k, d_v, H, trials=trials, seed=7)
    p = failed.mean()
    conditional = np.minimum(1, 2 * (n - 1) / (d_k * (1 - t_max)))        # Markov given the codebook
    assert p <= conditional.mean()
    assert np.allclose(th.hop_failure_bound(n, d_k, d_v, H, t_max=t_max), conditional)
    # the unconditional bound is above E[conditional bound] (it bounds P(t_max ≥ τ) by a tail)
    se = conditional.std() / math.sqrt(trials)
    assert th.hop_failure_bound(n, d_k, d_v, H) >= conditional.mean() - 3 * se
    assert th.hop_failure_bound(n, d_k, d_v, H) >= 2 * (n - 1) / d_k or th.hop_failure_bound(n, d_k, d_v, H) == 1


def test_sphere_overlap_tail_is_sub_gaussian():
    """The tail used by hop_failure_bound: P(mean of H overlaps ≥ τ) ≤ exp(−H d τ²/2), counted literally."""
    rng = np.random.default_rng(3)
    for d, H in ((4, 1), (16, 1), (8, 3)):
        t = (_unit(rng, 200_000, H, d)[..., 0]).mean(-1)      # the first coordinate: the overlap with e_1
        for tau in (0.2, 0.5, 0.8):
            assert (t >= tau).mean() <= math.exp(-H * d * tau ** 2 / 2) + 3e-3


def test_paper_form_is_not_a_bound_for_close_values():
    """With d_v = 2 the values are close, and the error exceeds (n − 1)/d_k by more than 3 standard errors."""
    failed, _, _, _ = literal_hop(3, 64, 2, 1, trials=6000, seed=11)
    p, se = failed.mean(), failed.std() / math.sqrt(failed.size)
    assert p - 3 * se > th.paper_bound(1, 1, 3, 64), (p, se)
    assert p <= th.hop_failure_bound(3, 64, 2)


def test_package_hop_error_matches_the_literal_simulation():
    failed, _, _, _ = literal_hop(16, 16, 16, 1, trials=3000, seed=5)
    r = st.chain_error(1, 1, 16, 16, trials=400, generator=torch.Generator().manual_seed(5))
    se = math.sqrt(r.error * (1 - r.error) / r.chains + failed.var() / failed.size)
    assert abs(r.error - failed.mean()) < 4 * se, (r.error, failed.mean())


@pytest.mark.parametrize("combine", ["average", "vote"])
def test_package_chains_match_a_literal_loop_draw_for_draw(combine):
    """L = 3 hops of H = 2 heads with the package's own draws (one generator, in its order: per hop a permutation,
    the keys, the values), then every memory built pair by pair and every chain followed hop by hop in a plain
    loop: the error at every depth, and the heads' and hops' error rates, are the same counts. A hop that reused
    another hop's permutation or codes, or followed the decoded item where the true one belongs, gives others."""
    from pavlovlab.sampling import random_keys

    L, H, n, d_k, d_v, T = 3, 2, 12, 8, 6, 40
    g = torch.Generator().manual_seed(9)
    hops = []
    for _ in range(L):
        perm = torch.rand(T, n, generator=g).argsort(dim=-1).numpy()
        K = random_keys(T, H, n, d=d_k, kind="sphere", generator=g, dtype=torch.float64).numpy()
        V = random_keys(T, H, n, d=d_v, kind="sphere", generator=g, dtype=torch.float64).numpy()
        hops.append((perm, K, V))
    wrong_at = np.zeros(L)
    head_wrong = hop_wrong = 0
    for t in range(T):
        for start in range(n):
            decoded = truth = start
            for depth, (perm, K, V) in enumerate(hops):
                target = perm[t, decoded]                      # the right next item from where the chain is
                scores, votes = np.zeros(n), np.zeros(n)
                for h in range(H):
                    S = np.zeros((d_v, d_k))
                    for i in range(n):
                        S += np.outer(V[t, h, perm[t, i]], K[t, h, i])
                    head_scores = V[t, h] @ (S @ K[t, h, decoded])
                    scores += head_scores / H
                    votes[np.argmax(head_scores)] += 1
                    head_wrong += np.argmax(head_scores) != target
                if combine == "average":
                    decoded = int(np.argmax(scores))
                else:                                          # most votes; a tie goes to the higher mean score
                    decoded = max(range(n), key=lambda m: (votes[m], scores[m]))
                hop_wrong += decoded != target
                truth = perm[t, truth]
                wrong_at[depth] += decoded != truth
    r = st.chain_error(L, H, n, d_k, d_v=d_v, combine=combine, trials=T, generator=torch.Generator().manual_seed(9),
                       dtype=torch.float64)
    chains = T * n
    assert r.chains == chains and wrong_at[-1] > 0
    np.testing.assert_allclose(r.error_by_depth.numpy(), wrong_at / chains, rtol=0, atol=1e-12)
    assert r.head_error == pytest.approx(head_wrong / (chains * H * L), abs=1e-12)
    assert r.hop_error == pytest.approx(hop_wrong / (chains * L), abs=1e-12)


def test_theory_overestimates_where_competitors_correlate():
    """hop_error_theory treats competitors as independent given the answer: above the measurement at n = 24, d = 16."""
    r = st.chain_error(1, 1, 24, 16, trials=1500, generator=torch.Generator().manual_seed(2))
    se = math.sqrt(r.error * (1 - r.error) / r.chains)
    assert th.hop_error_theory(24, 16) > r.error + 5 * se, (th.hop_error_theory(24, 16), r.error)


def test_exponential_fits_the_fall_with_heads_better_than_a_power_law():
    H = np.arange(1, 5)
    errs = np.array([st.chain_error(1, int(h), 24, 16, trials=600, generator=torch.Generator().manual_seed(int(h)))
                     .error for h in H])
    ly = np.log(errs)

    def r2(x):
        fit = np.polyval(np.polyfit(x, ly, 1), x)
        return 1 - ((ly - fit) ** 2).sum() / ((ly - ly.mean()) ** 2).sum()

    assert fit_log_slope(H, errs)[1] == pytest.approx(r2(H))
    assert fit_log_slope(np.log(H), errs)[1] == pytest.approx(r2(np.log(H)))
    assert r2(H) > 0.99 and r2(H) > r2(np.log(H)) + 0.02, (r2(H), r2(np.log(H)))


def test_at_fixed_value_size_a_bigger_key_at_the_same_load_fails_more():
    """"Not a function of the load alone" is about d_v = d_k: with d_v = 16 fixed, load 1 (n = d_k) fails
    more often as d_k grows (more competitors, same value space)."""
    e = [st.chain_error(1, 1, d, d, d_v=16, trials=400, generator=torch.Generator().manual_seed(d))
         for d in (16, 32, 64)]
    for a, b in itertools.pairwise(e):
        se = math.sqrt(a.error * (1 - a.error) / a.chains + b.error * (1 - b.error) / b.chains)
        assert b.error > a.error + 3 * se, (a.error, b.error)


def test_one_hop_matches_the_literal_simulation():
    """The package's vectorised hop against the literal loop: failure rate, share of failures with ‖c‖ < 1, the
    closest competitor's cosine; and no failure below the threshold of the closest competitor."""
    failed, norm, _, t_max = literal_hop(8, 16, 16, 1, trials=4000, seed=4)
    h = st.one_hop(8, 16, trials=1500, generator=torch.Generator().manual_seed(4))
    pf, pn = h.failed.double().mean().item(), failed.mean()
    assert abs(pf - pn) < 4 * math.sqrt(pn * (1 - pn) / failed.size + pf * (1 - pf) / h.failed.numel())
    assert abs(h.t_max.mean().item() - t_max.mean()) < 4 * t_max.std() / math.sqrt(t_max.size)
    sp, sn = (h.crosstalk_norm[h.failed] < 1).double().mean().item(), (norm[failed] < 1).mean()
    assert abs(sp - sn) < 4 * math.sqrt(0.25 / failed.sum() + 0.25 / h.failed.sum().item())
    threshold = torch.as_tensor(th.loss_threshold(h.t_max[h.failed].double()))
    assert torch.all(h.crosstalk_norm[h.failed] >= threshold - 1e-5)
