"""Bad input for ``pavlovlab.conditioning``, ``pavlovlab.conditioning.trials`` and their plots
(``pavlovlab.teach.plotting``): the exact calls of the hostile-input run, the several-CS stability bound, a
property-based test, and tests that catch plausible bugs (negative predictions, the bound's boundary)."""

from __future__ import annotations

import math

import pytest
import torch
from badinput import check, parametrize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pavlovlab.conditioning import learning as C  # noqa: E402
from pavlovlab.conditioning import trials as Tt  # noqa: E402


def _plots():
    from matplotlib.figure import Figure

    from pavlovlab.teach import plotting as P

    ax = Figure().add_subplot()
    cs, us, labels = Tt.blocking(5)
    V = C.rescorla_wagner(cs, us)
    return [
        ("plot_strengths batched V", lambda: P.plot_strengths(ax, V.expand(3, *V.shape), labels), ValueError,
         "V: expected 2 dimension"),
        ("plot_strengths too many labels", lambda: P.plot_strengths(ax, V[:, :1], labels), ValueError,
         "labels: expected one CS name per column of V (1), got 2"),
        ("plot_design 1-D cs", lambda: P.plot_design(ax, cs[:, 0], us, labels), ValueError, "cs: expected a design"),
        ("plot_design T = 0", lambda: P.plot_design(ax, cs[:0], us[:0], labels), ValueError,
         "cs: expected a design (..., trials >= 1"),
        ("plot_design us of the wrong length", lambda: P.plot_design(ax, cs, us[:3], labels), ValueError,
         "us: expected one US per trial"),
        ("plot_design draws a batched design (first sequence)",
         lambda: P.plot_design(ax, cs.expand(2, *cs.shape), us.expand(2, *us.shape), labels) is None, "ok", ""),
    ]


def rows():
    two = torch.ones(40, 2)                       # two CSs present on every trial
    us = torch.ones(40)
    return [
        ("RW two CSs together, alpha = 1.5", lambda: C.rescorla_wagner(two, us, alpha=1.5), ValueError,
         "alpha: expected α·β <= 2 summed over the CSs present together"),
        ("RW two CSs together, alpha = 1.0 (the boundary, 2αβ = 2) stays bounded",
         lambda: bool(C.rescorla_wagner(two, us, alpha=1.0).abs().max() <= 1.0), "ok", ""),
        ("RW intensities count squared: x = 2, alpha = 0.6", lambda: C.rescorla_wagner(2 * torch.ones(5, 1),
                                                                                      torch.ones(5), alpha=0.6),
         ValueError, "alpha: expected α·β <= 2"),
        ("blocking_theory(10, alpha=1.5)", lambda: C.blocking_theory(10, alpha=1.5), ValueError,
         "alpha: expected α·β <= 1 (the compound trials present two CSs"),
        ("blocking_theory(10, lam=nan)", lambda: C.blocking_theory(10, lam=math.nan), ValueError,
         "lam: expected a finite number"),
        ("blocking_theory(-5)", lambda: C.blocking_theory(-5), ValueError, "n_pretrain: expected numbers >= 0"),
        ("blocking_theory(['a'])", lambda: C.blocking_theory(["a"]), TypeError, "n_pretrain: expected a number"),
        ("blocking_curve alpha = 1.5 (two CSs on compound trials)", lambda: C.blocking_curve([0, 3], alpha=1.5),
         ValueError, "alpha: expected α·β <= 2 summed"),
        ("rescorla_wagner(beta=tensor(0.5)) is beta=0.5 (accepted by contract)",
         lambda: torch.equal(C.rescorla_wagner(two, us, beta=torch.tensor(0.5)), C.rescorla_wagner(two, us, beta=0.5)),
         "ok", ""),
        ("rescorla_wagner(beta=tensor([0.5, 0.2]))", lambda: C.rescorla_wagner(two, us, beta=torch.tensor([0.5, 0.2])),
         TypeError, "beta: expected a real number (a one-element tensor without gradient is accepted), got a tensor "
         "of shape (2,)"),
        ("rescorla_wagner(beta=tensor that requires grad)",
         lambda: C.rescorla_wagner(two, us, beta=torch.tensor(0.5, requires_grad=True)), TypeError,
         "that requires grad"),
        ("acquisition(dtype='float32') (accepted by contract)",
         lambda: Tt.acquisition(3, dtype="float32").cs.dtype == torch.float32, "ok", ""),
        ("acquisition(dtype='float')", lambda: Tt.acquisition(3, dtype="floaty"), TypeError, "dtype: expected"),
        *_plots(),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


# ------------------------------------------------------------------ tests that catch plausible bugs
def _literal_rw(cs, us, alpha, beta):
    """Rescorla–Wagner by hand, in Python floats: the independent reference."""
    V = [0.0] * len(cs[0])
    out = [list(V)]
    for x, lam in zip(cs, us, strict=True):
        err = lam - sum(xi * vi for xi, vi in zip(x, V, strict=True))
        V = [vi + alpha * beta * err * xi for xi, vi in zip(x, V, strict=True)]
        out.append(list(V))
    return out


def test_negative_strengths_and_predictions_match_a_literal_loop():
    """Conditioned inhibition drives V_X below 0 and AX− trials predict less than 0 on the way: a prediction
    clamped at 0 (or a strength clamped at 0) fails here."""
    cs, us, _ = Tt.conditioned_inhibition(20, dtype=torch.float64)
    cs = torch.cat([cs, torch.tensor([[0.0, 1.0]] * 5, dtype=torch.float64)])   # X alone, no food: V_X < 0 shows
    us = torch.cat([us, torch.zeros(5, dtype=torch.float64)])
    V = C.rescorla_wagner(cs, us, alpha=0.3)
    ref = torch.tensor(_literal_rw(cs.tolist(), us.tolist(), 0.3, 1.0), dtype=torch.float64)
    assert torch.allclose(V, ref, atol=1e-12)
    assert float(V[-1, 1]) < -0.1                                   # X is an inhibitor
    p = C.prediction(V, cs)
    ref_p = torch.tensor([sum(x * v for x, v in zip(xr, vr, strict=True)) for xr, vr in
                          zip(cs.tolist(), ref[:-1].tolist(), strict=True)], dtype=torch.float64)
    assert float(ref_p.min()) < -0.1 and torch.allclose(p, ref_p, atol=1e-12)


@pytest.mark.parametrize("present", [1, 2, 3])
def test_the_bound_is_alpha_beta_times_the_cs_present(present):
    """αβ·present = 2 exactly is allowed (the surprise flips sign but never grows); a hair above is refused."""
    cs, us = torch.ones(30, present, dtype=torch.float64), torch.ones(30, dtype=torch.float64)
    edge = 2.0 / present
    V = C.rescorla_wagner(cs, us, alpha=edge)
    surprise = us - C.prediction(V, cs)
    assert float(surprise.abs().max()) <= 1.0 + 1e-12
    with pytest.raises(ValueError, match="alpha: expected α·β <= 2 summed"):
        C.rescorla_wagner(cs, us, alpha=edge * 1.001)


def test_the_bound_keeps_mixed_designs_bounded():
    """Trials that alternate A, B and AB at the bound (β Σ α_i x_i² <= 2 on each) stay bounded over many trials."""
    pattern = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    cs = pattern.repeat(200, 1)
    us = torch.rand(600, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    V = C.rescorla_wagner(cs, us, alpha=1.0)
    assert bool(torch.isfinite(V).all()) and float(V.abs().max()) < 10


# ------------------------------------------------------------------ property-based: generated bad input
@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(alpha=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3), st.none()),
       lam=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(), max_size=2)),
       n=st.integers(-5, 5))
def test_property_bad_hyper_parameters_name_an_argument(alpha, lam, n):
    """Whatever is generated, the functions either return finite numbers or raise ValueError/TypeError naming
    the argument that was wrong (never a traceback from inside torch, never NaN)."""
    for call, names in [
        (lambda: C.rescorla_wagner(torch.ones(max(n, 0), 2), torch.ones(max(n, 0)), alpha=alpha), ("alpha",)),
        (lambda: C.blocking_theory(n, alpha=0.3 if alpha is None else alpha, lam=lam), ("alpha", "lam", "n_pretrain")),
        (lambda: Tt.acquisition(n, lam=lam), ("n_trials", "lam")),
    ]:
        try:
            out = call()
        except (ValueError, TypeError) as e:
            assert any(str(e).startswith(f"{name}:") for name in names), str(e)
            continue
        values = out.cs if isinstance(out, Tt.Design) else out
        assert bool(torch.isfinite(torch.as_tensor(values)).all())
