"""The widgets of notebooks 06 and 07, driven headless through every option (each dropdown choice, each slider
at its minimum, default and maximum): no option may raise or draw a non-finite curve."""

import json
import pathlib

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _widget(notebook: str):
    """Run the notebook's setup cell and its widget cell with ``interactive_plot`` recorded, not displayed."""
    cells = [c for c in json.loads((ROOT / "course" / notebook).read_text())["cells"]
             if c["cell_type"] == "code" and "launch" not in c.get("metadata", {}).get("tags", [])]   # not Colab's
    setup = "".join(cells[0]["source"])
    widget = next("".join(c["source"]) for c in cells[1:] if "interactive_plot(" in "".join(c["source"]))
    seen = {}
    namespace = {}
    exec(compile(setup, notebook, "exec"), namespace)
    namespace["interactive_plot"] = lambda draw, **specs: seen.update(draw=draw, specs=specs)
    exec(compile(widget, notebook, "exec"), namespace)
    return seen["draw"], seen["specs"]


def _settings(specs: dict) -> list[dict]:
    """The default, every option of each dropdown with the others at their defaults, then each slider at its
    minimum and maximum."""
    default = {n: (s[0] if isinstance(s, list) else s[3]) for n, s in specs.items()}
    runs = [default]
    lists = [n for n, s in specs.items() if isinstance(s, list)]
    for n in lists:
        runs += [{**default, n: option} for option in specs[n]]
    for n, s in specs.items():
        if isinstance(s, tuple):
            runs += [{**default, n: s[0]}, {**default, n: s[1]}]
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["06_delta_and_oja.ipynb", "07_decay_and_unlearning.ipynb"])
def test_every_widget_option_draws(notebook):
    draw, specs = _widget(notebook)
    runs = _settings(specs)
    assert len(runs) > len(specs)
    for kwargs in runs:
        draw(**kwargs)
        fig = plt.gcf()
        for ax in fig.axes:
            for line in ax.get_lines():
                y = line.get_ydata()
                assert len(y) == 0 or all(abs(float(v)) < 1e300 for v in y), (notebook, kwargs)
        plt.close("all")


def test_the_delta_and_oja_default_shows_the_hebbian_norm_growing_and_rotation_keeps_it_small():
    """The text of 06 §7: the default (redraw, P = 300) shows the Hebbian norm climbing; rotation at P = 50 keeps
    it near 4 over the 1,000 steps."""
    draw, specs = _widget("06_delta_and_oja.ipynb")
    default = {n: (s[0] if isinstance(s, list) else s[3]) for n, s in specs.items()}
    assert default["kind"] == "redraw" and default["period"] == 300
    for kind, period in (("redraw", 300), ("rotation", 50)):
        draw(**{**default, "kind": kind, "period": period, "rule": "hebbian"})
        norm = plt.gcf().axes[1].get_lines()[0].get_ydata()
        plt.close("all")
        if kind == "redraw":
            assert norm[-1] > 1.5 * norm[299]          # still climbing after the third redraw
        else:
            assert 2 < norm[-1] < 6
