"""Stacked conditioning circuits: error linear in depth, exponential in width, per-head theory."""

import itertools
import math

import numpy as np
import pytest
import torch
from badinput import check, parametrize
from conftest import needs_cuda

from pavlovlab.depth import chain as st
from pavlovlab.depth import theory as th
from pavlovlab.statistics import fit_log_slope, fit_slope


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _se(p, chains):
    return math.sqrt(max(p, 1e-4) * (1 - p) / chains)


def test_error_grows_linearly_with_depth():
    L = np.arange(1, 9)
    r = st.chain_error(8, 1, 32, 32, trials=250, generator=_gen(1))
    assert r.error_by_depth.shape == (8,) and r.error == float(r.error_by_depth[-1])
    assert 0.005 < r.error_by_depth[0] < 0.05 and r.error < 0.2          # the low-error regime
    slope = fit_slope(L, r.error_by_depth, drop_nonpositive=True)
    assert 0.8 <= slope <= 1.2, slope
    theory = th.stack_error_theory(L, 1, 32, 32)
    assert np.allclose(r.error_by_depth.numpy(), theory, rtol=0.2, atol=0.005)


def test_log_error_falls_linearly_with_heads():
    H = np.arange(1, 5)
    errs = [st.chain_error(1, h, 24, 16, trials=600, generator=_gen(int(h))).error for h in H]
    slope, r2 = fit_log_slope(H, errs)
    assert slope < -1.0 and r2 > 0.97, (slope, r2, errs)
    assert all(b < a / 3 for a, b in itertools.pairwise(errs)), errs
    theory = th.hop_error_theory(24, 16, H=H[:3])
    assert np.allclose(errs[:3], theory, rtol=0.25, atol=0.002), (errs, theory)


def test_vote_close_to_all_heads_fail():
    p = th.hop_error_theory(24, 16)
    errs = [st.chain_error(1, h, 24, 16, trials=600, combine="vote", generator=_gen(10 + h)).error for h in (1, 2, 3)]
    assert errs[0] > errs[1] > errs[2]
    for h, e in zip((1, 2, 3), errs, strict=True):
        assert p ** h / 2 < e < 2 * p ** h, (h, e, p ** h)
    assert float(th.stack_error_theory(2, 3, 24, 16, rule="all_fail")) == pytest.approx(1 - (1 - p ** 3) ** 2)


def test_many_heads_give_a_finite_moment_ratio():
    """At H = 150 each Z = Σ_h ‖c^h‖² is about 150, so Z^H overflows float64: M_H is taken as mean((Z/mean Z)^H)."""
    (row,) = st.bounds_against_heads(9, 8, [150], trials=200, generator=_gen())
    assert math.isfinite(row["M"]) and row["M"] > 1
    assert all(0 <= row[k] <= 1 for k in ("averaged", "all_fail", "second"))


def test_width_control_at_equal_memory_entries():
    """One hop at n = 24: 4 heads of 16×16 against one head of the same 1024 entries (64×16, 32×32) and one
    16×16 head. Expected ordering and sizes from the reviewer's independent runs (0.0014, 0.0040, 0.0043, 0.257):
    the size explains most of the gain, and the four independent heads still beat one head of equal size."""
    g = _gen(7)
    e = {shape: st.chain_error(1, H, 24, dk, d_v=dv, trials=500, generator=g).error
         for shape, (H, dk, dv) in {"1x16": (1, 16, 16), "4x16": (4, 16, 16), "1x64x16": (1, 64, 16),
                                    "1x32": (1, 32, 32)}.items()}
    assert 0.2 < e["1x16"] < 0.32
    for big in ("1x64x16", "1x32"):
        assert 0.0015 < e[big] < 0.008, e           # 12 000 chains: ~50 errors, ± 30 %
        assert e["4x16"] < e[big] / 1.5, e          # redundancy adds beyond size
    assert e["4x16"] < 0.003, e


def test_same_load_different_error():
    """At the same load n/d_k = 1 the bigger head fails less: σ² = (n−1)/(d_k d_v) is smaller (reviewer's
    figure: 0.11 at d_k = 16, 0.015 at d_k = 32)."""
    small = st.chain_error(1, 1, 16, 16, trials=400, generator=_gen(8)).error
    big = st.chain_error(1, 1, 32, 32, trials=400, generator=_gen(9)).error
    assert 0.08 < small < 0.14 and 0.008 < big < 0.025, (small, big)


def test_raw_chain_compounds_and_cleanup_is_linear():
    """Without clean-up the read-out's noise power grows at least linearly (ρ_L ≥ L·λ, first layer ≈ λ) and the
    decoding error grows faster than linearly in L; with clean-up the same memories give ≈ linear growth."""
    n, d, L = 16, 32, 6
    lam = (n - 1) / d
    raw = st.raw_chain(L, n, d, trials=300, generator=_gen(12))
    assert raw.error_by_depth.shape == raw.noise_by_depth.shape == (L,) and raw.chains == 300 * n
    rho = raw.noise_by_depth.numpy()
    assert rho[0] == pytest.approx(lam, rel=0.1)                         # notebook 04: 1/fidelity² − 1
    assert np.all(np.diff(rho) > 0) and np.all(rho >= 0.95 * lam * np.arange(1, L + 1))
    assert th.raw_noise_theory(2, n, d) == pytest.approx((1 + lam) ** 2 - 1)
    err = raw.error_by_depth.numpy()
    assert fit_slope(np.arange(2, 5), err[1:4], drop_nonpositive=True) > 1.5, err        # compounds
    clean = st.chain_error(L, 1, n, d, trials=300, generator=_gen(13)).error_by_depth.numpy()
    assert err[-1] > 20 * clean[-1], (err, clean)


def test_raw_chain_literal_loop():
    """The vectorised stack against a literal loop over one trial's chains (same codes and permutations)."""
    g1, g2 = _gen(14), _gen(14)
    res = st.raw_chain(2, 6, 8, trials=1, generator=g1, dtype=torch.float64)
    from pavlovlab.sampling import random_keys
    C = [random_keys(1, 6, d=8, kind="sphere", generator=g2, dtype=torch.float64)[0]]
    perms = []
    for _ in range(2):
        C.append(random_keys(1, 6, d=8, kind="sphere", generator=g2, dtype=torch.float64)[0])
        perms.append(torch.rand(1, 6, generator=g2).argsort(dim=-1)[0])
    errors = []
    for layer in range(1, 3):
        wrong = 0
        for x in range(6):
            r, item = C[0][x].clone(), x
            for ell in range(layer):
                S = sum(torch.outer(C[ell + 1][perms[ell][i]], C[ell][i]) for i in range(6))
                r, item = S @ r, int(perms[ell][item])
            wrong += int(max(range(6), key=lambda m: float(C[layer][m] @ r)) != item)
        errors.append(wrong / 6)
    assert res.error_by_depth.tolist() == pytest.approx(errors)


@needs_cuda
def test_cuda_gives_the_same_numbers():
    # the reference is the CPU run (its numbers are checked against the theory and the literal loops above)
    a = st.chain_error(3, 2, 16, 16, trials=50, generator=_gen(5))
    b = st.chain_error(3, 2, 16, 16, trials=50, generator=_gen(5), device="cuda")
    assert torch.allclose(a.error_by_depth, b.error_by_depth, atol=2e-3)


def test_bad_input():
    with pytest.raises(ValueError, match="combine"):
        st.chain_error(1, 1, 8, 8, combine="median")
    with pytest.raises(ValueError, match="n"):
        st.chain_error(1, 1, 1, 8)
    with pytest.raises(TypeError, match="H"):
        st.chain_error(1, 2.0, 8, 8)


# ---------------------------------------------------------------------------------------------------- bad input
def _one_hop_two_items():
    """With n = 2 unit pairs the read-out is r = v_j + c v_m (c = k_x·k_y, |c| ≤ 1): m wins iff
    (c − 1)(1 − t) > 0, impossible, so no hop fails; both chains see the same |c| and the same t = v_1·v_2."""
    h = st.one_hop(np.int64(2), 16, trials=20, generator=_gen(3), dtype="float64")
    return bool(not h.failed.any() and torch.allclose(h.crosstalk_norm[:, 0], h.crosstalk_norm[:, 1])
                and torch.allclose(h.t_max[:, 0], h.t_max[:, 1]) and (h.crosstalk_norm <= 1 + 1e-12).all())


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.depth.chain``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("one_hop(n=1)", lambda: st.one_hop(1, 8), ValueError, "n: expected at least 2 stored associations"),
        ("one_hop(n=3.0)", lambda: st.one_hop(3.0, 8), TypeError, "n: expected an integer"),
        ("one_hop(d_k=0)", lambda: st.one_hop(3, 0), ValueError, "d_k: expected an integer >= 1"),
        ("one_hop(device='gpu0')", lambda: st.one_hop(3, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("one_hop(dtype=torch.int32)", lambda: st.one_hop(3, 8, dtype=torch.int32), TypeError,
         "dtype: expected a floating-point dtype"),
        ("one_hop with n = 2 never fails (|k·k'| ≤ 1)", _one_hop_two_items, "ok", ""),
        ("heads_hop(H=0)", lambda: st.heads_hop(3, 8, 0), ValueError, "H: expected an integer >= 1"),
        ("heads_hop(n=1)", lambda: st.heads_hop(1, 8, 2), ValueError, "n: expected at least 2 stored associations"),
        ("heads_hop(dtype=torch.int32)", lambda: st.heads_hop(3, 8, 2, dtype=torch.int32), TypeError,
         "dtype: expected a floating-point dtype"),
        ("bounds_against_heads(heads=3)", lambda: st.bounds_against_heads(3, 8, 3), TypeError,
         "heads: expected a non-empty sequence"),
        ("bounds_against_heads(heads=[0])", lambda: st.bounds_against_heads(3, 8, [0]), ValueError,
         "heads: expected an integer >= 1"),
        ("chain_error(device='gpu0')", lambda: st.chain_error(2, 1, 8, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("raw_chain(n=1)", lambda: st.raw_chain(2, 1, 8), ValueError, "n: expected at least 2 stored associations"),
        ("chain_error(generator='g')", lambda: st.chain_error(2, 1, 8, 8, generator="g"), TypeError,
         "generator: expected a torch.Generator or None, got str"),
        ("heads_hop(generator=1)", lambda: st.heads_hop(3, 8, 2, generator=1), TypeError,
         "generator: expected a torch.Generator or None, got int"),
        ("chain_error: 24 PB of values refused", lambda: st.chain_error(1, 2, 3, 8, d_v=10 ** 9, trials=10 ** 6),
         ValueError,
         "shape: (*shape, d) = 6e+15 float32 entries (24 PB) do not fit"),
        ("one_hop: 12 PB of keys refused", lambda: st.one_hop(3, 10 ** 9, trials=10 ** 6), ValueError,
         "shape: (*shape, d) = 3e+15 float32 entries (12 PB) do not fit"),
        ("raw_chain: 12 PB of codes refused", lambda: st.raw_chain(2, 3, 10 ** 9, trials=10 ** 6), ValueError,
         "shape: (*shape, d) = 3e+15 float32 entries (12 PB) do not fit"),
        ("bounds_against_heads(n=1, heads=[2, 0]): the first count, then the hop",
         lambda: st.bounds_against_heads(1, 8, [2, 0]), ValueError, "n: expected at least 2 stored associations"),
        ("bounds_against_heads: a later count's 1.9 PB of keys refused",
         lambda: st.bounds_against_heads(3, 8, [1, 10 ** 9], trials=10 ** 4, generator=_gen()), ValueError,
         "shape: (*shape, d) = 2.4e+14 float64 entries (1.92 PB) do not fit"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
