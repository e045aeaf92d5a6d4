"""Rescorla–Wagner and its Hebbian contrast: the classic phenomena, the equivalence with the delta-rule
memory, vectorisation, devices, dtypes and bad inputs."""

import math

import pytest
import torch
from badinput import check, parametrize, with_nan
from hypothesis import given, settings
from hypothesis import strategies as st

from pavlovlab import AssociativeMemory
from pavlovlab.conditioning import learning as C
from pavlovlab.conditioning import trials as Tt


def _to(design, device, dtype):
    return design.cs.to(device, dtype), design.us.to(device, dtype)


# ---------------------------------------------------------------- the phenomena


def test_acquisition_approaches_lambda_as_theory(device, dtype):
    cs, us, labels = Tt.acquisition(25, lam=0.8, dtype=dtype, device=device)
    V = C.rescorla_wagner(cs, us, alpha=0.2, beta=0.5)
    assert V.shape == (26, 1) and V.device.type == device.type and V.dtype == dtype
    n = torch.arange(26, dtype=torch.float64)
    theory = 0.8 * (1 - (1 - 0.2 * 0.5) ** n)
    torch.testing.assert_close(V[:, 0].cpu().double(), theory, rtol=1e-5, atol=1e-6)
    assert abs(V[-1, 0].item() - 0.8) < 0.06
    assert bool((V[1:, 0] > V[:-1, 0]).all())  # monotone increase
    assert labels.cs == (Tt.BELL,)


def test_extinction_returns_toward_zero(device):
    cs, us, labels = Tt.extinction(30, device=device)
    V = C.rescorla_wagner(cs, us, alpha=0.3)
    assert V[30, 0].item() > 0.99
    assert V[-1, 0].item() < 0.01
    assert bool((V[31:, 0] < V[30:-1, 0]).all())
    assert labels.boundaries == [30]
    # the plain Hebbian rule does not extinguish: λ = 0 changes nothing
    H = C.hebbian_conditioning(cs, us, alpha=0.3)
    assert H[-1, 0].item() == pytest.approx(H[30, 0].item())


def test_reacquisition_and_partial_reinforcement():
    cs, us, labels = Tt.reacquisition(20)
    V = C.rescorla_wagner(cs, us)
    assert [p[0] for p in labels.phases] == ["acquisition A+", "extinction A−", "reacquisition A+"]
    assert V[-1, 0].item() > 0.99 and V[40, 0].item() < 0.01
    g = torch.Generator().manual_seed(1)
    cs, us, _ = Tt.partial_reinforcement(200, p=0.3, batch_shape=(500,), generator=g)
    assert cs.shape == (200, 1) and us.shape == (500, 200)
    assert set(us.unique().tolist()) <= {0.0, 1.0}
    V = C.rescorla_wagner(cs, us, alpha=0.1)
    assert V.shape == (500, 201, 1)
    assert abs(V[:, 100:, 0].mean().item() - 0.3) < 0.02  # V hovers around p λ


def test_blocking_and_its_control(device, dtype):
    cs, us = _to(Tt.blocking(30), device, dtype)
    V_block = C.rescorla_wagner(cs, us, alpha=0.3)
    cs, us = _to(Tt.blocking_control(30), device, dtype)
    V_ctrl = C.rescorla_wagner(cs, us, alpha=0.3)
    assert V_block[-1, 1].item() < 0.05
    assert V_ctrl[-1, 1].item() > 0.4


def test_hebbian_cannot_block():
    block, ctrl = Tt.blocking(30), Tt.blocking_control(30)
    H_block = C.hebbian_conditioning(block.cs, block.us, alpha=0.3)
    H_ctrl = C.hebbian_conditioning(ctrl.cs, ctrl.us, alpha=0.3)
    assert H_block[-1, 1].item() == pytest.approx(H_ctrl[-1, 1].item())  # the light learns the same
    assert H_block[-1, 1].item() == pytest.approx(0.3 * 30)  # ΔV = αβλ per pairing
    assert H_block[-1, 0].item() > 1.0  # and grows without bound


def test_overshadowing_splits_by_salience(dtype):
    V, _ = C.simulate("overshadowing", n_trials=60, alpha=0.4, salience=(1.0, 0.25), dtype=dtype)
    a = torch.tensor([0.4, 0.1], dtype=torch.float64)
    expected = a / a.sum()
    torch.testing.assert_close(V[-1].double(), expected, rtol=1e-4, atol=1e-4)
    # ratio holds on every trial (both see the same error)
    torch.testing.assert_close(V[1:, 0] / V[1:, 1], torch.full((60,), 4.0, dtype=dtype), rtol=1e-4, atol=1e-4)
    # the bell alone would have reached λ: the light overshadows it
    V_alone, _ = C.simulate("acquisition", n_trials=60, alpha=0.4)
    assert V[-1, 0].item() < V_alone[-1, 0].item() - 0.1


def test_conditioned_inhibition_and_overexpectation():
    V, _ = C.simulate("conditioned inhibition", n_trials=80, alpha=0.3)
    assert V[-1, 0].item() > 0.9 and V[-1, 1].item() < -0.8
    V, _ = C.simulate("overexpectation", n_trials=40, alpha=0.3)
    assert V[40, 0].item() > 0.95 and V[40, 1].item() > 0.95
    torch.testing.assert_close(V[-1], torch.tensor([0.5, 0.5]), rtol=0, atol=1e-3)


# ---------------------------------------------------------------- the same thing as the delta-rule memory


def _memory_trace(cs, us, rule, lr):
    mem = AssociativeMemory(cs.shape[-1], 1, rule=rule, lr=lr, batch_shape=cs.shape[:-2], dtype=cs.dtype,
                            device=cs.device)
    trace = [mem.S[..., 0, :].clone()]
    for t in range(cs.shape[-2]):
        mem.write(cs[..., t, :], us[..., t, None])
        trace.append(mem.S[..., 0, :].clone())
    return torch.stack(trace, dim=-2)


def test_rescorla_wagner_is_the_delta_rule_memory(device, dtype, gen):
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for design in (Tt.blocking(10), Tt.conditioned_inhibition(8), Tt.overexpectation(7)):
        cs, us = _to(design, device, dtype)
        V = C.rescorla_wagner(cs, us, alpha=0.3, beta=0.5)
        S = _memory_trace(cs, us, "delta", lr=0.3 * 0.5)
        assert (V - S).abs().max().item() < tol
    # random intensities and US magnitudes, with batch dims
    cs = (torch.rand(2, 3, 17, 4, generator=gen, dtype=torch.float64) * 0.8).to(device, dtype)
    us = torch.rand(2, 3, 17, generator=gen, dtype=torch.float64).to(device, dtype)
    V = C.rescorla_wagner(cs, us, alpha=0.4)
    assert (V - _memory_trace(cs, us, "delta", 0.4)).abs().max().item() < tol
    H = C.hebbian_conditioning(cs, us, alpha=0.4)
    assert (H - _memory_trace(cs, us, "hebbian", 0.4)).abs().max().item() < tol


def test_per_cs_alpha_matches_a_custom_memory_rule(gen):
    alpha = torch.tensor([0.5, 0.1, 0.3], dtype=torch.float64)
    cs = (torch.rand(25, 3, generator=gen, dtype=torch.float64) > 0.4).double()
    us = torch.rand(25, generator=gen, dtype=torch.float64)

    def salient_delta(S, k, v):
        return alpha * (v - S @ k)[:, None] * k[None, :]

    V = C.rescorla_wagner(cs, us, alpha=alpha, beta=0.7)
    S = _memory_trace(cs, us, salient_delta, lr=0.7)
    assert (V - S).abs().max().item() < 1e-12


# ---------------------------------------------------------------- shapes, broadcasting, V0, prediction


def test_vectorised_over_leading_dims_and_alpha_sweep(gen):
    cs = (torch.rand(5, 12, 2, generator=gen) > 0.5).float()
    us = torch.rand(5, 12, generator=gen)
    V = C.rescorla_wagner(cs, us, alpha=[0.2, 0.4])
    for b in range(5):
        torch.testing.assert_close(V[b], C.rescorla_wagner(cs[b], us[b], alpha=[0.2, 0.4]))
    alphas = torch.tensor([0.1, 0.3, 0.6])[:, None, None]  # (3, 1, 1): broadcast against (5,)
    W = C.rescorla_wagner(cs, us, alpha=alphas)
    assert W.shape == (3, 5, 13, 2)
    torch.testing.assert_close(W[1], C.rescorla_wagner(cs, us, alpha=0.3))
    # a design without batch dims broadcasts against a batch of US sequences
    one = C.rescorla_wagner(cs[0], us, alpha=0.3)
    assert one.shape == (5, 13, 2)


def test_v0_zero_trials_and_prediction():
    cs, us, _ = Tt.extinction(10)
    V0 = torch.tensor([1.0])
    V = C.rescorla_wagner(cs[10:], us[10:], V0=V0)
    torch.testing.assert_close(V[0], V0)
    torch.testing.assert_close(V[-1], torch.tensor([0.7 ** 10]))
    empty = C.rescorla_wagner(torch.zeros(0, 2), torch.zeros(0), V0=torch.tensor([0.1, 0.2]))
    torch.testing.assert_close(empty, torch.tensor([[0.1, 0.2]]))
    V = C.rescorla_wagner(cs, us)
    pred = C.prediction(V, cs)
    assert pred.shape == (20,)
    assert pred[0].item() == 0.0 and pred[10].item() == pytest.approx(V[10, 0].item())


def test_simulate_runs_every_design():
    for name in Tt.TABLES:
        V, d = C.simulate(name, n_trials=6, rule="hebbian")
        assert V.shape[-2:] == (d.cs.shape[0] + 1, d.cs.shape[1])


# ---------------------------------------------------------------- bad inputs


ONES = torch.ones(3, 2), torch.ones(3)


@pytest.mark.parametrize("call, error, words", [
    (lambda: C.rescorla_wagner([[1.0]], torch.ones(1)), TypeError, "cs: expected a torch.Tensor"),
    (lambda: C.rescorla_wagner(torch.ones(3), torch.ones(3)), ValueError, "cs: expected a tensor of rank >= 2"),
    (lambda: C.rescorla_wagner(torch.ones(3, 2, dtype=torch.long), torch.ones(3)), TypeError, "floating-point"),
    (lambda: C.rescorla_wagner(torch.ones(3, 2), torch.ones(4)), ValueError, "us: expected one US per trial"),
    (lambda: C.rescorla_wagner(ONES[0], ONES[1].double()), TypeError, "us: expected dtype"),
    (lambda: C.rescorla_wagner(*ONES, alpha=[0.1, 0.2, 0.3]), ValueError,
     "alpha: expected one salience per CS"),
    (lambda: C.rescorla_wagner(*ONES, alpha=-0.1), ValueError, "alpha: expected a number >= 0"),
    (lambda: C.rescorla_wagner(*ONES, alpha="big"), TypeError, "alpha: expected a real number"),
    (lambda: C.rescorla_wagner(*ONES, beta=float("nan")), ValueError, "beta: expected a finite"),
    (lambda: C.rescorla_wagner(*ONES, V0=torch.zeros(3)), ValueError,
     "V0: expected one strength per CS"),
    (lambda: C.rescorla_wagner(torch.ones(4, 3, 2), torch.ones(5, 3)), ValueError,
     "leading (batch/head) dims must broadcast"),
    (lambda: C.rescorla_wagner(torch.full((3, 2), float("inf")), torch.ones(3)), ValueError, "cs: expected finite"),
    (lambda: C.hebbian_conditioning(torch.ones(3, 0), torch.ones(3)), ValueError, "cs: expected at least one CS"),
    (lambda: C.simulate("second-order"), ValueError, "design: expected one of"),
    (lambda: C.simulate("blocking", rule="oja"), ValueError, "rule: expected one of"),
    (lambda: C.prediction(torch.zeros(4, 2), torch.zeros(4, 2)), ValueError, "V: expected trials + 1"),
])
def test_bad_inputs_are_rejected_clearly(call, error, words):
    with pytest.raises(error, match=None) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------- plots


def test_plots_draw_every_design():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pavlovlab.teach import plotting as P  # the conditioning plots live with the course tooling

    for name in Tt.TABLES:
        V, (cs, us, labels) = C.simulate(name, n_trials=5)
        fig, (ax0, ax1) = plt.subplots(1, 2)
        P.plot_strengths(ax0, V, labels, marker="o")
        P.plot_design(ax1, cs, us, labels)
        assert len(ax0.get_lines()) >= len(labels.cs)
        assert [t.get_text() for t in ax1.get_yticklabels()] == [*labels.cs, "food (US)"]
        plt.close(fig)
    fig, ax = plt.subplots()
    cs, us, labels = Tt.partial_reinforcement(8, batch_shape=(3,))  # a batch of animals: the first is drawn
    P.plot_design(ax, cs, us, labels)
    image = ax.get_images()[0].get_array()
    assert image.shape == (2, 8, 3)
    plt.close(fig)


# ---------------------------------------------------------------- blocking against pretraining length


def _literal_blocking(n, m, alpha, beta=1.0, lam=1.0):
    """A literal loop over trials, written out by hand (no package code): V_light after n A+ then m AB+."""
    vb = vl = 0.0
    for _ in range(n):
        vb += alpha * beta * (lam - vb)
    for _ in range(m):
        delta = lam - vb - vl
        vb += alpha * beta * delta
        vl += alpha * beta * delta
    return vl


@pytest.mark.parametrize("alpha, beta, m", [(0.2, 1.0, 30), (0.45, 0.5, 7), (0.05, 1.0, 1)])
def test_blocking_curve_matches_literal_loop_and_closed_form(alpha, beta, m, device):
    n = torch.tensor([0, 1, 2, 5, 13, 40])
    got = C.blocking_curve(n, n_compound=m, alpha=alpha, beta=beta, lam=1.5, device=device)
    assert got.shape == (6,) and got.device.type == torch.device(device).type
    want = torch.tensor([_literal_blocking(int(k), m, alpha, beta, lam=1.5) for k in n], dtype=torch.float64)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(C.blocking_theory(n, n_compound=m, alpha=alpha, beta=beta, lam=1.5), want,
                               rtol=1e-12, atol=1e-14)


def test_blocking_curve_float32_and_unsorted_lengths():
    n = [7, 0, 3]
    got = C.blocking_curve(n, n_compound=10, alpha=0.3, dtype=torch.float32)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), torch.tensor([_literal_blocking(k, 10, 0.3) for k in n],
                               dtype=torch.float64), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("bad, match", [([], "n_pretrain"), ([[1, 2]], "n_pretrain"), ([-1, 2], "n_pretrain"),
                                        ([1.5], "n_pretrain")])
def test_blocking_curve_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        C.blocking_curve(torch.tensor(bad) if bad and not isinstance(bad[0], list) else bad)
    with pytest.raises((ValueError, TypeError), match="n_compound"):
        C.blocking_curve([1, 2], n_compound=0)


# ---------------------------------------------------------------------------------------------------- bad input
def _literal_rw(cs, us, alpha, beta):
    """Rescorla–Wagner by hand, in Python floats: the independent reference."""
    V = [0.0] * len(cs[0])
    out = [list(V)]
    for x, lam in zip(cs, us, strict=True):
        err = lam - sum(xi * vi for xi, vi in zip(x, V, strict=True))
        V = [vi + alpha * beta * err * xi for xi, vi in zip(x, V, strict=True)]
        out.append(list(V))
    return out


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.conditioning.learning``: one row ``(case, call, expect, fragment)`` a case."""
    cs, us = torch.ones(30, 1), torch.ones(30)

    def grad_flows():
        alpha = torch.tensor([0.3], requires_grad=True)
        C.rescorla_wagner(cs, us, alpha=alpha)[-1].sum().backward()
        return alpha.grad is not None and float(alpha.grad.abs().sum()) > 0

    two = torch.ones(40, 2)                       # two CSs present on every trial
    two_us = torch.ones(40)
    return [
        ("alpha 2.5", lambda: C.rescorla_wagner(cs, us, alpha=2.5), ValueError, "alpha: expected α·β <= 2"),
        ("alpha·beta > 2", lambda: C.rescorla_wagner(cs, us, alpha=1.5, beta=1.5), ValueError, "alpha: expected α·β"),
        ("alpha keeps its gradient", grad_flows, "ok", ""),
        ("NaN cs", lambda: C.rescorla_wagner(with_nan(cs), us), ValueError, "cs: expected finite"),
        ("design typo", lambda: C.simulate("blockin"), ValueError, "design"),
        ("RW two CSs together, alpha = 1.5", lambda: C.rescorla_wagner(two, two_us, alpha=1.5), ValueError,
         "alpha: expected α·β <= 2 summed over the CSs present together"),
        ("RW two CSs together, alpha = 1.0 (the boundary, 2αβ = 2) stays bounded",
         lambda: bool(C.rescorla_wagner(two, two_us, alpha=1.0).abs().max() <= 1.0), "ok", ""),
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
         lambda: torch.equal(C.rescorla_wagner(two, two_us, beta=torch.tensor(0.5)),
                             C.rescorla_wagner(two, two_us, beta=0.5)),
         "ok", ""),
        ("rescorla_wagner(beta=tensor([0.5, 0.2]))",
         lambda: C.rescorla_wagner(two, two_us, beta=torch.tensor([0.5, 0.2])),
         TypeError, "beta: expected a real number (a one-element tensor without gradient is accepted), got a tensor "
         "of shape (2,)"),
        ("rescorla_wagner(beta=tensor that requires grad)",
         lambda: C.rescorla_wagner(two, two_us, beta=torch.tensor(0.5, requires_grad=True)), TypeError,
         "that requires grad"),
        ("hebbian_conditioning us of the wrong length", lambda: C.hebbian_conditioning(torch.ones(3, 1), torch.ones(4)),
         ValueError, "us: expected one US per trial"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


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
