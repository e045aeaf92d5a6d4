"""Notebook 05's widget, headless: every value of every slider, and the default view says what the text says."""

import itertools
import json
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

NOTEBOOK = Path(__file__).resolve().parents[2] / "course" / "05_depth_and_width.ipynb"


@pytest.fixture(scope="module")
def widget():
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"]
             if c["cell_type"] == "code" and "launch" not in c.get("metadata", {}).get("tags", [])]   # not Colab's
    setup = "".join(cells[0]["source"])
    sources = ["".join(c["source"]) for c in cells]
    call = next(src for src in sources if "interactive_plot(figures.depth_and_width" in src)
    scope: dict = {}
    exec(setup, scope)
    exec("box = " + call, scope)
    plt.close("all")
    scope["box"].draw = scope["figures"].depth_and_width
    return scope["box"]


def _bars():
    """Labels and heights of the right panel of the figure just drawn."""
    ax = plt.gcf().axes[1]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    heights = np.array([p.get_height() for p in ax.patches])
    return labels, heights


def test_default_view_ranks_one_big_head_first(widget):
    """Section 5 measures, at the default (2 hops, H·d_k = 64, n = 24), the fewest errors with one head of 64."""
    c = widget.controls
    assert (c["L"].value, c["H"].value, c["load"].value) == (2, 2, 0.75)
    widget.redraw()
    labels, heights = _bars()
    assert labels[int(np.argmin(heights))] == "1×64" and heights.min() < heights[1:].min()
    plt.close("all")


@pytest.mark.slow  # draws every combination of the sliders: about 9 s
def test_every_slider_value_draws(widget):
    c = widget.controls
    defaults = {name: w.value for name, w in c.items()}
    for name, w in c.items():
        values = np.arange(w.min, w.max + w.step / 2, w.step)
        for v in values:
            w.value = type(defaults[name])(v)   # each change redraws through the observer
            labels, heights = _bars()
            assert len(labels) == len(heights) > 0 and np.all(np.isfinite(heights)) and np.all(heights > 0)
            plt.close("all")
        w.value = defaults[name]


def test_one_big_head_is_never_beaten_in_the_right_panel(widget):
    """What the text says about the other settings: at every H and load the undivided head has the lowest
    predicted error (shapes below the 1e-12 floor tie with it); L does not change the ranking (the chain's error
    1 − (1 − p)^L rises with p at every L)."""
    for H, load in itertools.product(range(1, 7), (0.25, 2.0)):
        widget.draw(L=2, H=H, load=load)
        labels, heights = _bars()
        assert labels[0] == f"1×{32 * H}" and heights[0] == heights.min(), (H, load, heights)
        plt.close("all")


def test_the_legend_names_only_curves_that_can_be_seen():
    """At a low load the curves of many heads lie below the panel's floor at every depth: the legend names them in
    one entry (at the default view, "H = 4–6: below 10^-9"), and every "H = h" entry of its own is a curve that
    reaches the panel."""
    from pavlovlab.teach.figures import depth_and_width as figures
    default = figures.depth_and_width(L=2, H=2, load=0.75)
    assert [t.get_text() for t in default.axes[0].get_legend().get_texts()][-1] == "H = 4–6: below $10^{-9}$"
    plt.close(default)
    for H, load in itertools.product((1, 2, 6), (0.25, 0.75, 2.0)):
        fig = figures.depth_and_width(L=2, H=H, load=load)
        ax = fig.axes[0]
        lines = {line.get_label(): line for line in ax.get_lines()}
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        for text in texts:
            if text.startswith("H = ") and "below" not in text:
                assert np.asarray(lines[text].get_ydata()).max() >= figures.WIDGET_YMIN, (H, load, text)
        drawn = [line for line in ax.get_lines() if line.get_label().startswith("_") and len(line.get_ydata()) > 1]
        hidden = [line for line in drawn if np.asarray(line.get_ydata()).max() < figures.WIDGET_YMIN]
        assert bool(hidden) == any("below" in t for t in texts), (H, load, texts)
        plt.close(fig)
