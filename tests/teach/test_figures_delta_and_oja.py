"""The figures of notebook 06 draw what they say: the explorer's lines carry no markers (1,000 points each), the
fixed points of section 2b are where the rules go, the error on one key follows |1 − β|ⁿ."""

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from pavlovlab.forgetting import drift
from pavlovlab.teach.figures import delta_and_oja as figures


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_the_explorer_draws_long_lines_without_markers():
    fig = figures.drift_explorer("redraw", "all three", 0.5, 300)
    cosine, norm = fig.axes
    lines = [ln for ln in cosine.get_lines() if len(ln.get_xdata()) == 1000]
    assert len(lines) == 3                                   # Hebbian, delta, Oja subspace
    assert all(ln.get_marker() in ("", "None", None) for ln in lines + norm.get_lines()[:3])


@pytest.mark.parametrize("bad", [dict(kind="spiral"), dict(rule="oja")])
def test_the_explorer_names_a_bad_choice(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        figures.drift_explorer(**bad)


def test_the_error_on_one_key_follows_the_closed_form():
    """An independent computation: the error after n writes is |1 − β|ⁿ for a unit key from S = 0."""
    for beta in (0.5, 1.8, 2.2):
        n = torch.arange(1, 31, dtype=torch.float64)
        assert torch.allclose(figures.error_on_one_key(beta), abs(1 - beta) ** n, rtol=1e-9)
    fig = figures.draw_error_on_one_key((0.5, 2.2))
    assert len(fig.axes[0].get_lines()) == 4                 # two measured, two dashed theories


def test_fixed_points_by_foods_reaches_the_predicted_fixed_point_with_unit_foods():
    stream = drift.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=600, period=300, batch_shape=(2,),
                                 generator=torch.Generator().manual_seed(0))
    late, fixed, memories = figures.fixed_points_by_foods(stream, {"unit": torch.ones(8)}, lr=0.5)
    sub = late["unit"]["oja_subspace"]
    assert abs(sub["cosine"].mean().item() - fixed["unit", "oja_subspace"]["cosine"]) < 0.02
    assert abs(sub["norm"].mean().item() / fixed["unit", "oja_subspace"]["norm"] - 1) < 0.05
    assert late["unit"]["delta"]["cosine"].min() > 0.99
    S0, S, V, K = memories["unit"]
    assert S0.shape == S.shape == (2, 8, 8) and V.shape == (2, 4, 8) and K.shape == (2, 4, 8)
    fig = figures.draw_fixed_points(late, fixed)
    assert len(fig.axes) == 1


def test_delta_net_cost_and_oja_unit_draw():
    fig = figures.delta_net_cost((16, 32), heads=2, d=8, generator=torch.Generator().manual_seed(0))
    assert [len(ln.get_xdata()) for ln in fig.axes[0].get_lines()] == [2, 2]
    x = torch.randn(2, 50, 2)
    w = torch.nn.functional.normalize(torch.randn(2, 2), dim=-1)
    fig = figures.draw_oja_unit(x, w, w, torch.randn(2, 10, 2), torch.randn(2, 10, 2))
    assert len(fig.axes) == 2
