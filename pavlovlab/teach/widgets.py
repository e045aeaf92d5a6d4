"""Interactive controls for the notebooks, built so that they also run headless (nbval, CI).

``interactive_plot(draw, n=(1, 64, 1, 8), kind=["gaussian", "binary"])`` makes one slider or
drop-down per keyword, calls ``draw(**values)`` once at once and again whenever a control moves,
and shows the figure in an output area under the controls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import matplotlib.pyplot as plt
import torch


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


def draw_probe(design: str, rule: str, lr: float, m: int, d_key: int, compound: str = "unit", *, n: int = 200,
               seed: int = 0) -> plt.Figure:
    """One figure: a design's responses on a hand-built memory, design against control (notebook 08).

    ``n`` sequences of ``design`` (:func:`pavlovlab.phenomena.sequences.make_probes`, seed ``seed``) are written into an
    :class:`~pavlovlab.memory.AssociativeMemory` with ``rule``, learning rate ``lr``, ``m`` trials per block,
    random unit keys in ``d_key`` dims and ``compound`` keys (:func:`pavlovlab.phenomena.probes.memory_response`);
    the histogram shows the strength of o at the test cue in both arms, the title the mean effect (and
    Rescorla–Wagner's value for the delta rule). The bins span the data (a constant response gets one
    narrow bin around it), so identical arms draw as one bar.
    """
    from ..phenomena import probes, sequences
    from .plotting import COLORS, labels

    batch = sequences.make_probes(design, n, m=m, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    resp = {arm: probes.memory_response(w, batch.outcome, batch.n_keys, rule=rule, lr=lr, d_key=d_key,
                                        compound=compound, generator=torch.Generator().manual_seed(seed + 1))
            for arm, w in (("design", batch.design), ("control", batch.control))}
    effect = round(float((resp["design"] - resp["control"]).mean()) * (1 if batch.design_higher else -1), 2) + 0.0
    both = torch.cat(list(resp.values()))
    lo, hi = float(both.min()), float(both.max())
    pad = max(0.02, 1e-6 * abs(lo)) if hi - lo < 1e-3 else 0.0
    edges = torch.linspace(lo - pad, hi + pad, 31).tolist()
    rw = (f", Rescorla–Wagner {sequences.rw_effect(design, m=m, lr=lr, compound=compound):+.2f}"
          if rule == "delta" else "")
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.hist([resp["design"].numpy(), resp["control"].numpy()], bins=edges, label=["design", "control"],
            color=[COLORS[rule], "#999999"])
    labels(ax, f"{design}, {rule} memory: effect {effect:+.2f}{rw}", "response (strength of o)", "sequences")
    return fig


def probe_widget(n: int = 200) -> W.VBox:
    """Notebook 08's widget: :func:`draw_probe` with a control per argument (design, rule, compound,
    learning rate, trials per block, key dimension), ``n`` sequences per arm; the default view is extinction
    on the delta memory."""
    from ..phenomena import sequences

    return interactive_plot(functools.partial(draw_probe, n=n), design=[*sequences.DESIGNS[1:], "acquisition"],
                            rule=["delta", "hebbian"], lr=(0.05, 1.0, 0.05, 0.5), m=(1, 4, 1, 2),
                            d_key=(4, 128, 4, 64), compound=list(sequences.COMPOUNDS))


__all__ = ["control", "draw_probe", "interactive_plot", "probe_widget"]
