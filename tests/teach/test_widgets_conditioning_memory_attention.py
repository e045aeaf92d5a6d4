"""The widgets of notebooks 00–03, run headless from the notebooks' own cells and driven through every option
of every control (every choice of every drop-down and tick box together, both ends of every slider)."""

from __future__ import annotations

import itertools
import pathlib
import re

import matplotlib
import nbformat
import pytest

matplotlib.use("Agg")

import ipywidgets as W
import matplotlib.pyplot as plt

from pavlovlab.teach.widgets import interactive_plot

COURSE = pathlib.Path(__file__).resolve().parents[2] / "course"
NOTEBOOKS = ["00_start_here", "01_pavlovian_conditioning", "02_hebbian_memory", "03_linear_attention"]


def _widget(name: str):
    """Run the notebook's set-up cell, the cells that define helpers the widget uses, then its widget cell with
    an ``interactive_plot`` that records, for every figure drawn, its axes' titles, y-limits and line data."""
    code = [c.source for c in nbformat.read(COURSE / f"{name}.ipynb", as_version=4).cells
            if c.cell_type == "code" and "launch" not in c.metadata.get("tags", [])]   # not the Colab install cell
    widget_cell = next(s for s in code if "interactive_plot(" in s and not s.lstrip().startswith(("import", "from")))
    helpers = [s for s in code if s is not widget_cell and "raise NotImplementedError" not in s
               and any(f"{m}(" in widget_cell for m in re.findall(r"^def (\w+)\(", s, flags=re.M))]
    figures: list[list[dict]] = []
    made: list[W.VBox] = []

    def recording_plot(draw, **specs):
        def record(**kw):
            draw(**kw)
            figures.append([{"title": ax.get_title(), "ylim": ax.get_ylim(),
                             "lines": [line.get_ydata() for line in ax.get_lines()]} for ax in plt.gcf().axes])
            plt.close("all")
        made.append(interactive_plot(record, **specs))
        return made[-1]

    scope: dict = {}
    exec(code[0], scope)
    for s in helpers:
        exec(s, scope)
    scope["interactive_plot"] = recording_plot
    exec(widget_cell, scope)
    plt.close("all")
    return made[0], figures


def _choices(control: W.ValueWidget) -> list:
    if isinstance(control, W.Dropdown):
        return list(control.options)
    if isinstance(control, W.Checkbox):
        return [False, True]
    return [control.min, control.max]


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_option_draws(name):
    box, figures = _widget(name)
    controls = box.controls
    discrete = [n for n, c in controls.items() if isinstance(c, (W.Dropdown, W.Checkbox))]
    sliders = [n for n in controls if n not in discrete]
    for combo in itertools.product(*(_choices(controls[n]) for n in discrete)):   # every discrete combination
        for n, value in zip(discrete, combo, strict=True):
            controls[n].value = value
        for n in sliders:                                                           # and both ends of each slider
            default = controls[n].value
            for value in _choices(controls[n]):
                before = len(figures)
                controls[n].value = value
                assert len(figures) == before + (value != default), f"{name}: {n} = {value} drew nothing"
            controls[n].value = default
    assert figures and all(fig for fig in figures)


def test_conditioning_hebbian_lines_stay_inside_the_plot():
    """The Hebbian comparison the text suggests (extinction, overexpectation) must be visible."""
    box, figures = _widget("01_pavlovian_conditioning")
    c = box.controls
    c["hebbian"].value = True
    for design in ("extinction", "overexpectation"):
        if design not in c["design"].options:
            continue
        c["design"].value = design
        (ax,) = figures[-1]
        low, high = ax["ylim"]
        for y in ax["lines"]:
            if len(y) > 1:
                assert low <= min(y) and max(y) <= high, f"{design}: a line leaves the plot ({min(y)}, {max(y)})"
