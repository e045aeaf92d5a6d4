"""Notebook 04's widget (section 9, Play), run headless and driven through every option of every control."""

import json
import pathlib

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from pavlovlab.teach.widgets import interactive_plot

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "course" / "04_capacity_limits.ipynb"


@pytest.fixture(scope="module")
def widget():
    """The notebook's own widget cell, run with a draw function that records each figure's title."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    source = next("".join(c["source"]) for c in cells
                  if c["cell_type"] == "code" and "interactive_plot(" in "".join(c["source"]))
    titles: list[str] = []
    made: list = []

    def recording_plot(draw, **specs):
        def record(**kw):
            draw(**kw)
            titles.append(plt.gcf().axes[0].get_title())
            plt.close("all")
        made.append(interactive_plot(record, **specs))
        return made[-1]

    scope = {"interactive_plot": recording_plot}
    exec("from pavlovlab.teach.figures import capacity_limits as figures\n", scope)
    exec(source, scope)
    return made[0], titles


def test_the_default_view_shows_what_the_text_says(widget):
    box, titles = widget
    assert {n: c.value for n, c in box.controls.items()} == {"d_k": 32, "n": 32, "kind": "gaussian",
                                                               "threshold": 0.8}
    assert titles[0].startswith("d_k = 32: cosine at n = 32 is 0.7")   # 1/√(1 + 31/32) ≈ 0.71 at n = d_k
    assert "capacity at θ" in titles[0]


def test_every_option_draws(widget):
    box, titles = widget
    c = box.controls
    for kind in c["kind"].options:                 # every key kind
        c["kind"].value = kind
        assert titles[-1].startswith("d_k = 32: cosine at n = 32 is ")
    c["kind"].value = "orthogonal"                 # orthogonal keys at n = d_k: perfect recall, as the text asks
    assert "cosine at n = 32 is 1.00" in titles[-1]
    c["kind"].value = "gaussian"
    for name in ("d_k", "n", "threshold"):         # both ends of every slider
        default = c[name].value
        for value in (c[name].min, c[name].max):
            c[name].value = value
            assert titles[-1].startswith(f"d_k = {c['d_k'].value}: cosine at n = {c['n'].value} is ")
        c[name].value = default
