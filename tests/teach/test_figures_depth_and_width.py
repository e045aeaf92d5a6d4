"""Notebook 05's figures, headless: each draws from results of the package's own simulations at small sizes, shows
what its docstring says (the series, the log axes, the floors), and refuses input it cannot draw."""

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from pavlovlab.depth import chain
from pavlovlab.teach.figures import depth_and_width as figures


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _g():
    return torch.Generator().manual_seed(0)


def _labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_crosstalk_figure_shows_both_histograms_and_the_tail_under_markov():
    hop = chain.one_hop(8, 16, trials=200, generator=_g())
    fig = figures.crosstalk_figure(hop)
    left, right = fig.axes
    assert _labels(left)[:2] == ["all chains", "chains that failed"]
    measured, markov = right.get_lines()[:2]
    assert np.all(np.asarray(measured.get_ydata()) <= np.asarray(markov.get_ydata()) + 1e-12)   # Markov's bound
    with pytest.raises(TypeError, match="hop"):
        figures.crosstalk_figure((hop.failed, hop.crosstalk_norm))


def test_load_figure_takes_one_chain_count_per_load_and_leaves_zeros_off():
    ns = np.array([4, 8, 16])
    errors = {16: [0.0, 0.01, 0.1], 32: [0.0, 0.0, 0.02]}
    fig = figures.load_figure(ns, errors, chains=150 * ns)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    points = [c for c in ax.containers]                      # one errorbar per d_k, zeros left out
    assert [len(c.lines[0].get_xdata()) for c in points] == [2, 1]
    with pytest.raises(ValueError, match="chains"):
        figures.load_figure(ns, errors, chains=0)
    with pytest.raises(ValueError, match=r"errors\[16\]"):
        figures.load_figure(ns, {16: [0.1, 0.2]}, chains=100)


def test_bounds_heads_depth_and_raw_figures_draw_from_small_runs():
    rows = chain.bounds_against_heads(8, 16, [1, 2], trials=50, generator=_g())
    assert "n = 8" in figures.bounds_figure(rows, n=8, d_k=16).axes[0].get_title()
    Hs = [1, 2]
    avg = [chain.chain_error(1, H, 8, 8, trials=20, generator=_g()) for H in Hs]
    vote = [chain.chain_error(1, H, 8, 8, trials=20, combine="vote", generator=_g()) for H in Hs]
    labels = _labels(figures.heads_figure(Hs, avg, vote, 8, 8).axes[0])
    assert labels[:2] == ["measured: average", "measured: majority vote"]
    with pytest.raises(ValueError, match="one result per H"):
        figures.heads_figure([1, 2, 3], avg, vote, 8, 8)
    deep = chain.chain_error(4, 1, 8, 8, trials=20, generator=_g(), dtype=torch.float64)
    ax = figures.depth_figure(deep, 8, 8).axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    raw = chain.raw_chain(4, 8, 16, trials=20, generator=_g())
    clean = chain.chain_error(4, 1, 8, 16, trials=20, generator=_g())
    left, right = figures.raw_chain_figure(raw, clean, 8, 16).axes
    assert left.get_yscale() == "log" and right.get_xscale() == "log"
    assert min(right.get_lines()[1].get_ydata()) >= 1e-4           # zeros of the clean-up drawn at 1e-4


def test_contest_figure_draws_one_panel_per_number_of_hops():
    record = {"setup": {"seeds": 2, "steps": 50},
              "runs": [{"shape": "wide-shallow", "step": [0, 25, 50], "accuracy": [[0.1, 0.5, 0.9], [0.2, 0.6, 1.0]]},
                       {"shape": "4×1", "step": [0, 25, 50], "accuracy": [[0.1, 0.4, 0.8], [0.1, 0.5, 0.9]]}]}
    fig = figures.contest_figure({1: record, 2: record})
    assert len(fig.axes) == 2 and fig.axes[1].get_title().startswith("K = 2")
    assert np.allclose(fig.axes[0].get_lines()[0].get_ydata(), [0.15, 0.55, 0.95])   # the mean over seeds
    with pytest.raises(ValueError, match="cached"):
        figures.contest_figure({})


def test_budget_cuts_and_widget_inputs():
    assert figures.budget_cuts(64) == [1, 2, 4, 8, 16]
    assert figures.budget_cuts(12, min_head=4) == [1, 2, 3]
    with pytest.raises(ValueError, match="load"):
        figures.depth_and_width(2, 2, float("nan"))
    with pytest.raises(ValueError, match="H"):
        figures.depth_and_width(2, 0, 0.75)
