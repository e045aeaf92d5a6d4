"""Interactive controls for the notebooks, built so that they also run headless (nbval, CI).

``interactive_plot(draw, n=(1, 64, 1, 8), kind=["gaussian", "binary"])`` makes one slider or
drop-down per keyword, calls ``draw(**values)`` once at once and again whenever a control moves,
and shows the figure in an output area under the controls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W
import matplotlib.pyplot as plt


def control(name: str, spec: Any) -> W.ValueWidget:
    """A widget from a compact spec.

    - ``(min, max, step, value)`` of ints -> IntSlider; with any float -> FloatSlider;
    - a list of strings -> Dropdown (first item selected); a bool -> Checkbox;
    - an existing ipywidgets widget is used as is.
    """
    style = {"description_width": "initial"}
    if isinstance(spec, W.ValueWidget):
        return spec
    if isinstance(spec, bool):
        return W.Checkbox(value=spec, description=name)
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        return W.Dropdown(options=list(spec), value=spec[0], description=name, style=style)
    if isinstance(spec, tuple) and len(spec) == 4 and all(isinstance(s, (int, float)) and not isinstance(s, bool)
                                                          for s in spec):
        lo, hi, step, value = spec
        if not (lo < hi and step > 0 and lo <= value <= hi):
            raise ValueError(f"{name}: expected (min, max, step, value) with min < max, step > 0 and "
                             f"min <= value <= max, got {spec!r}")
        cls = W.IntSlider if all(isinstance(s, int) for s in spec) else W.FloatSlider
        return cls(min=lo, max=hi, step=step, value=value, description=name, continuous_update=False, style=style)
    raise TypeError(f"{name}: expected (min, max, step, value), a list of option strings, a bool or a widget, "
                    f"got {spec!r}")


def interactive_plot(draw: Callable[..., Any], **specs: Any) -> W.VBox:
    """Controls for ``draw``'s keyword arguments above an output area; ``draw`` makes one figure.

    Returns the widget box (displayed when it is the last expression of a cell). The figure is drawn
    once immediately, so the cell shows a picture even where widgets cannot be interacted with.
    """
    if not callable(draw):
        raise TypeError(f"draw: expected a function drawing one figure, got {type(draw).__name__}")
    if not specs:
        raise ValueError("specs: expected at least one control, e.g. interactive_plot(draw, n=(1, 64, 1, 8))")
    controls = {name: control(name, spec) for name, spec in specs.items()}
    out = W.Output()

    def redraw(_change: object = None) -> None:
        with out:
            out.clear_output(wait=True)
            draw(**{name: c.value for name, c in controls.items()})
            plt.show()

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    box = W.VBox([W.HBox(list(controls.values()), layout=W.Layout(flex_flow="row wrap")), out])
    box.controls = controls  # for tests and for learners who want to set values from code
    box.redraw = redraw
    return box


__all__ = ["control", "interactive_plot"]
