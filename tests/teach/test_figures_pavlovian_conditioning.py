"""The figures of notebook 01: what each panel shows is the model's own numbers, and nothing leaves the plot."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from pavlovlab.conditioning import trials
from pavlovlab.teach.figures import pavlovian_conditioning as figures


def _lines(ax):
    return {line.get_label(): line.get_ydata() for line in ax.get_lines()}


def test_blocking_both_rules_shows_blocking_only_under_rescorla_wagner():
    fig = figures.blocking_both_rules(trials.blocking(30), trials.blocking_control(30))
    rw, hebb = (_lines(ax) for ax in fig.axes)
    assert rw["light, blocking group"][-1] < 0.05 < 0.4 < rw["light, control group"][-1]
    assert list(hebb["light, blocking group"]) == list(hebb["light, control group"])
    arrow = fig.axes[1].texts[0]
    low, high = fig.axes[1].get_ylim()
    assert low <= arrow.xyann[1] <= high
    assert arrow.xy[1] == pytest.approx(hebb["light, blocking group"][int(arrow.xy[0])])   # it points at the light
    plt.close(fig)


def test_blocking_growth_draws_the_measurement_when_there_is_one():
    n_pre = torch.arange(0, 31, 3)
    fig = figures.blocking_growth(n_pre, 0.5 * 0.8 ** n_pre.double())
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2 and len(ax.get_lines()[0].get_ydata()) == 11
    plt.close(fig)
    fig = figures.blocking_growth()                       # Exercise 3 still a stub: the closed form alone
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)


@pytest.mark.parametrize("design", ["extinction", "overexpectation", "blocking"])
def test_draw_design_keeps_the_hebbian_lines_inside(design):
    fig = figures.draw_design(alpha=0.3, lam=1.0, n_trials=30, design=design, hebbian=True)
    (ax,) = fig.axes
    low, high = ax.get_ylim()
    ys = [y for y in _lines(ax).values() if len(y) > 1]
    assert any(", Hebbian" in label for label in _lines(ax)) and ys
    assert all(low <= min(y) and max(y) <= high for y in ys)
    plt.close(fig)


def test_draw_design_names_the_designs_it_knows():
    with pytest.raises(ValueError, match="design: expected one of"):
        figures.draw_design(alpha=0.3, lam=1.0, n_trials=10, design="sensory preconditioning", hebbian=False)
