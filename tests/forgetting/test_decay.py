"""Decay and its memory horizon: γ^ℓ retention, half-lives as measured, RetNet heads, gated decay forms."""

import math

import numpy as np
import pytest
import torch
from badinput import FAST, NAN, check, parametrize
from conftest import TOL, rel_rms
from hypothesis import given
from hypothesis import strategies as st

import pavlovlab as pl
from pavlovlab.forgetting import decay as D


def test_retnet_decays_values():
    g = D.retnet_decays(4, dtype=torch.float64)
    assert torch.equal(g, torch.tensor([1 - 2 ** -5, 1 - 2 ** -6, 1 - 2 ** -7, 1 - 2 ** -8], dtype=torch.float64))
    assert D.retnet_decays(3, first=2).tolist() == pytest.approx([0.75, 0.875, 0.9375])
    # float64 keeps heads that float32 rounds to 1 (from head 20 on): 1 − 2^−m is exact in a double up to m = 53
    g = D.retnet_decays(40, dtype=torch.float64)
    assert g.dtype == torch.float64 and g.tolist() == [1 - 2.0 ** -(5 + h) for h in range(40)]
    assert D.half_life(g)[-1].item() == pytest.approx(math.log(2) * 2.0 ** 44, rel=1e-9)
    assert D.retention(g[-1], torch.tensor([2 ** 44])).item() == pytest.approx(math.exp(-1), rel=1e-9)


def test_half_life_and_window():
    assert D.half_life(0.5) == pytest.approx(1.0)
    assert D.half_life(2 ** -0.1) == pytest.approx(10.0)
    assert D.half_life(1.0) == math.inf
    hl = D.half_life(D.retnet_decays(5, dtype=torch.float64))
    assert torch.allclose(hl[1:] / hl[:-1], torch.full((4,), 2.0, dtype=torch.float64), rtol=0.01)  # doubles per head
    assert D.effective_window(0.75) == pytest.approx(4.0)
    assert torch.isinf(D.effective_window(torch.tensor([1.0, 0.5])))[0]
    # γ^(ℓ½) = 1/2 exactly
    g = torch.tensor([0.3, 0.9, 0.999], dtype=torch.float64)
    assert torch.allclose(g ** D.half_life(g), torch.full((3,), 0.5, dtype=torch.float64))


def test_retention_shape():
    r = D.retention(D.retnet_decays(3), torch.arange(10))
    assert r.shape == (3, 10) and torch.allclose(r[:, 0], torch.ones(3))


def test_readout_shrinks_as_gamma_power_lag_exactly_without_crosstalk(device, dtype):
    """Orthogonal distractors: the read-out at lag ℓ is γ^ℓ (to rounding) for every head."""
    gammas = torch.tensor([0.5, 0.8, 0.95])
    r = D.recall_vs_lag(gammas, 40, d_k=16, d_v=8, n_trials=3, orthogonal=True, chunk_size=7,
                        generator=torch.Generator().manual_seed(1), device=device, dtype=dtype)
    assert r.shape == (3, 3, 41) and r.device.type == device.type and r.dtype == dtype
    theory = D.retention(gammas.to(device=device, dtype=dtype), torch.arange(41, device=device))
    assert rel_rms(r, theory[:, None, :].expand_as(r)) < 100 * TOL[dtype]


def test_float64_readout_fades_with_decays_that_float32_would_round_to_one():
    """Heads 20 to 24 (γ = 1 − 2^−25 … 1 − 2^−29): the read-out falls by 2^−m per lag, far above float64's
    rounding; a float32 step anywhere on the float64 path makes those γ equal to 1 and the read-out flat."""
    g = D.retnet_decays(25, dtype=torch.float64)[20:]
    r = D.recall_vs_lag(g, 40, d_k=8, d_v=4, n_trials=2, orthogonal=True, chunk_size=16,
                        generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    lags = torch.arange(41, dtype=torch.float64)
    theory = torch.exp(lags * torch.log1p(-(2.0 ** -torch.arange(25.0, 30.0, dtype=torch.float64)))[:, None])
    assert r.dtype == torch.float64 and (1 - r[..., 1:]).min().item() > 1e-10
    assert (r - theory[:, None, :]).abs().max().item() < 1e-12


def test_measured_half_life_matches_theory_with_random_distractors():
    """With random keys the crosstalk is noise around γ^ℓ: the mean curve halves at ln 2 / (−ln γ)."""
    gammas = D.retnet_decays(3)
    r = D.recall_vs_lag(gammas, 150, d_k=64, d_v=64, n_trials=128, generator=torch.Generator().manual_seed(0))
    measured = D.measured_half_life(r.mean(-2))
    theory = D.half_life(gammas)
    assert torch.allclose(measured, theory, rtol=0.06), (measured, theory)
    # and the fitted decay rate of the mean read-out is ln γ (log-linear fit over strong lags)
    lags = torch.arange(151, dtype=torch.float64)
    mean = r.mean(-2).double()
    for h in range(3):
        keep = mean[h] > 0.3
        slope = torch.linalg.lstsq(torch.stack([lags[keep], torch.ones_like(lags[keep])], 1),
                                   mean[h, keep].log()[:, None]).solution[0, 0]
        assert slope.item() == pytest.approx(math.log(gammas[h].item()), rel=0.1)


def test_measured_half_life_interpolates_and_flags_never():
    curve = torch.tensor([[1.0, 0.8, 0.6, 0.4, 0.2], [1.0, 0.9, 0.9, 0.9, 0.9], [0.4, 0.3, 0.2, 0.1, 0.0]])
    out = D.measured_half_life(curve)
    assert out[0].item() == pytest.approx(2.5) and math.isinf(out[1].item()) and out[2].item() == 0.0


def test_no_decay_never_fades():
    r = D.recall_vs_lag(1.0, 30, n_trials=4, orthogonal=True, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(r, torch.ones_like(r), atol=1e-5)


@pytest.mark.parametrize("T", [1, 5, 37])
def test_gated_forms_agree(device, dtype, T):
    gen = torch.Generator().manual_seed(T)
    q, k = (torch.randn(2, 3, T, 5, generator=gen, dtype=torch.float64) for _ in range(2))
    v = torch.randn(1, 3, T, 6, generator=gen, dtype=torch.float64)
    g = torch.rand(2, 1, T, generator=gen, dtype=torch.float64) * 0.9 + 0.1
    S0 = torch.randn(6, 5, generator=gen, dtype=torch.float64)
    q, k, v, g, S0 = (x.to(device=device, dtype=dtype) for x in (q, k, v, g, S0))
    gated = pl.attention.scalar_gated_linear_attention
    o_p, S_p = gated(q, k, v, g, mode="parallel", initial_state=S0, return_state=True)
    o_r, S_r = gated(q, k, v, g, mode="recurrent", initial_state=S0, return_state=True)
    assert o_p.shape == (2, 3, T, 6) and S_p.shape == (2, 3, 6, 5)
    assert rel_rms(o_p, o_r) < TOL[dtype] * 10 and rel_rms(S_p, S_r) < TOL[dtype] * 10


def test_constant_gate_is_fixed_decay(dtype):
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(4, 50, 8, generator=gen).to(dtype) for _ in range(3))
    gamma = torch.tensor([0.5, 0.9, 0.99, 1.0], dtype=dtype)
    o_gate = pl.attention.scalar_gated_linear_attention(q, k, v, gamma[:, None].expand(4, 50).contiguous())
    o_fixed = pl.linear_attention(q, k, v, decay=gamma, mode="recurrent")
    assert rel_rms(o_gate, o_fixed) < TOL[dtype] * 10


def test_gate_near_zero_wipes_memory():
    g = torch.ones(40, dtype=torch.float64)
    g[20] = 1e-9                                      # a context boundary at t = 20
    r = D.gated_recall(g, n_trials=32, generator=torch.Generator().manual_seed(0), dtype=torch.float64).mean(0)
    assert r[:20].min() > 0.8 and r[20:].abs().max() < 0.15


def test_bad_inputs():
    with pytest.raises(ValueError, match="gamma"):
        D.half_life(1.5)
    with pytest.raises(ValueError, match="gamma"):
        D.half_life(torch.tensor([0.5, 0.0]))
    with pytest.raises(TypeError, match="gamma"):
        D.half_life("0.9")
    with pytest.raises(ValueError, match="n_heads"):
        D.retnet_decays(0)
    with pytest.raises(ValueError, match="max_lag"):
        D.recall_vs_lag(0.9, -1)
    with pytest.raises(ValueError, match="lags"):
        D.retention(0.9, torch.tensor([-1, 2]))
    q = torch.randn(2, 6, 4)
    with pytest.raises(ValueError, match="g: expected gates in"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.zeros(2, 6))
    with pytest.raises(ValueError, match="g: expected values <= 1"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.full((2, 6), 1.5))
    with pytest.raises(ValueError, match="g: expected sequence length"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.full((2, 5), 0.5))
    with pytest.raises(ValueError, match="mode"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.full((2, 6), 0.5), mode="chunk")
    with pytest.raises(TypeError, match="g"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.full((2, 6), 0.5, dtype=torch.float64))
    with pytest.raises(ValueError, match="initial_state"):
        pl.attention.scalar_gated_linear_attention(q, q, q, torch.full((2, 6), 0.5), initial_state=torch.zeros(3, 4))


# ---------------------------------------------------------------------------------------------------- bad input
def _recall_by_age_one_pair():
    """One unit pair: S = v kᵀ in every memory (γ⁰ = 1; the delta rule's first write with β = 1), so S k = v."""
    out = D.recall_by_age(1, d_k=4, d_v=3, gammas=[0.9], betas=np.array([1.0]), n_trials=3, dtype="float64")
    return set(out) == {"hebbian", "decay 0.9", "delta 1"} and \
        all(torch.allclose(c, torch.ones(3, 1, dtype=torch.float64)) for c in out.values())


def _curve() -> torch.Tensor:
    return torch.linspace(1, 0, 10)


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40), st.text(max_size=2),
                    st.none())


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.forgetting.decay``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("retnet_decays(24) float32", lambda: D.retnet_decays(24), ValueError,
         "n_heads: in torch.float32 only the first"),
        ("retnet_decays(24) float64", lambda: bool((D.retnet_decays(24, dtype=torch.float64) < 1).all()), "ok", ""),
        ("half_life_se(one trial)", lambda: D.half_life_se(torch.ones(1, 5)), ValueError,
         "curves: expected at least 2"),
        ("age_group_margin(edges not increasing)",
         lambda: D.age_group_margin(torch.ones(3, 4), torch.ones(3, 4), (2, 1)),
         ValueError, "edges: expected"),
        ("recall_by_age(0)", lambda: D.recall_by_age(0), ValueError, "n_pairs: expected an integer >= 1"),
        ("recall_by_age(gammas=0.9)", lambda: D.recall_by_age(3, gammas=0.9), TypeError,
         "gammas: expected a sequence of numbers"),
        ("recall_by_age(betas='ab')", lambda: D.recall_by_age(3, betas="ab"), TypeError,
         "betas: expected a sequence of numbers"),
        ("recall_by_age(gammas=[nan])", lambda: D.recall_by_age(3, gammas=[NAN]), ValueError,
         "gammas: expected a finite number"),
        ("recall_by_age(betas=[3.0]) (the delta rule's bound)", lambda: D.recall_by_age(3, betas=[3.0]), ValueError,
         "betas: expected a number <= 2.0"),
        ("recall_by_age(device='gpu0')", lambda: D.recall_by_age(3, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_by_age(dtype=torch.int64)", lambda: D.recall_by_age(3, dtype=torch.int64), TypeError,
         "dtype: expected a floating-point dtype"),
        ("recall_by_age of one pair reads it back exactly (dtype name accepted)", _recall_by_age_one_pair, "ok", ""),
        ("measured_half_life(level above the curve)", lambda: D.measured_half_life(_curve(), level=1.5), ValueError,
         "level: expected a level the curves reach"),
        ("measured_half_life(level at the start)", lambda: D.measured_half_life(_curve(), level=1.0).item() == 0.0,
         "ok", ""),
        ("measured_half_life(level below the curve)",
         lambda: math.isinf(D.measured_half_life(_curve(), level=-0.5).item()), "ok", ""),
        ("measured_half_life(L=0)", lambda: D.measured_half_life(torch.ones(0)), ValueError,
         "strength: expected a curve over at least 2 lags"),
        ("measured_half_life(L=1)", lambda: D.measured_half_life(torch.ones(1)), ValueError,
         "strength: expected a curve over at least 2 lags"),
        ("measured_half_life(L=2) interpolates", lambda: float(D.measured_half_life(torch.tensor([1.0, 0.0])))
         == 0.5, "ok", ""),
        ("retnet_decays(device='gpu0')", lambda: D.retnet_decays(4, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_vs_lag(dtype='float64') (accepted by contract)",
         lambda: D.recall_vs_lag(0.9, 3, d_k=4, d_v=4, n_trials=2, dtype="float64").dtype == torch.float64, "ok", ""),
        ("effective_window(1.5)", lambda: D.effective_window(1.5), ValueError, "gamma: expected a number <= 1"),
        ("gated_recall(g with a NaN)", lambda: D.gated_recall(torch.tensor([0.5, math.nan])), ValueError,
         "g: expected finite values"),
        # what only the draws and the forms checked, now checked by the doors (the same messages)
        ("recall_vs_lag(generator='seed')", lambda: D.recall_vs_lag(0.9, 5, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("gated_recall(generator='seed')", lambda: D.gated_recall(torch.ones(5), generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("recall_by_age(generator='seed')", lambda: D.recall_by_age(5, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("recall_vs_lag(chunk_size=0)", lambda: D.recall_vs_lag(0.9, 5, chunk_size=0), ValueError,
         "chunk_size: expected an integer >= 1, got 0"),
        ("recall_vs_lag(chunk_size=2.0)", lambda: D.recall_vs_lag(0.9, 5, chunk_size=2.0), TypeError,
         "chunk_size: expected an integer, got float"),
        ("recall_vs_lag: 1e16 keys", lambda: D.recall_vs_lag(0.9, 10**7 - 1, d_k=10**6, n_trials=10**3), ValueError,
         "shape: (*shape, d) = 1e+16 float64 entries"),
        ("recall_by_age: 1e15 keys", lambda: D.recall_by_age(10**6, d_k=10**6, n_trials=10**3), ValueError,
         "shape: (*shape, d) = 1e+15 float64 entries"),
        ("recall_vs_lag: chunks of 1e4 steps for 1e4 heads",
         lambda: D.recall_vs_lag(torch.full((10**4,), 0.9), 10**5, d_k=1, d_v=1, n_trials=10**3, chunk_size=10**4),
         ValueError, "chunk_size: the chunks' scores, batch × chunks × chunk_size²"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_retnet_decays_rounding_boundary_in_every_dtype(dtype):
    """``1 − 2^−m`` is below 1 in a dtype exactly while ``m <= nmant + 1`` (the spacing just below 1 is
    ``eps / 2 = 2^−(nmant+1)``), so with ``first = 5`` the last head that still forgets is h = nmant − 4.
    A check made in float64 before the cast (always "below 1") passes the next head silently."""
    nmant = round(-math.log2(torch.finfo(dtype).eps))
    ok = nmant - 3                                                  # heads h = 0 .. nmant − 4
    if ok > 60:
        pytest.skip("float64 is exact for every practical number of heads")
    g = D.retnet_decays(ok, dtype=dtype)
    assert g.dtype == dtype and bool((g < 1).all())
    with pytest.raises(ValueError, match=f"only the first {ok} of {ok + 1} heads"):
        D.retnet_decays(ok + 1, dtype=dtype)


@FAST
@given(strength=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
       level=st.one_of(st.floats(allow_nan=True), st.none()), gamma=numbers)
def test_property_decay_names_the_argument(strength, level, gamma):
    for call, names in [(lambda: D.measured_half_life(torch.tensor(strength), level=level), {"strength", "level"}),
                        (lambda: D.half_life(gamma), {"gamma"}),
                        (lambda: D.retention(gamma, torch.arange(3)), {"gamma"})]:
        try:
            call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in names, str(e)
