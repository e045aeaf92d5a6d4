"""The course's plot style and the few plot shapes every notebook uses (theory dashed over measured bands).

Each helper checks the shapes it draws and names the argument on a mismatch. NaN entries are drawn as
gaps (matplotlib's convention): the package's non-finite policy covers computations, not display.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.rcsetup import cycler

from pavlovlab.conditioning.trials import Labels

OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
}
"""Okabe and Ito's colour-blind-safe palette (2008): every pair stays apart under protanopia and deuteranopia
(tests/teach/test_palette.py measures it)."""

COLORS = {
    "hebbian": OKABE_ITO["vermillion"], "delta": OKABE_ITO["bluish green"], "oja": OKABE_ITO["blue"],
    "oja_subspace": OKABE_ITO["blue"], "oja_clamped": OKABE_ITO["orange"],
    "linear": OKABE_ITO["vermillion"],  # linear attention is the Hebbian memory: one colour for one idea
    "softmax": OKABE_ITO["reddish purple"], "theory": OKABE_ITO["black"], "measured": OKABE_ITO["sky blue"],
}
"""One colour per learning rule / attention kind, the same in every notebook."""
MARKERS = {
    "hebbian": "o", "delta": "s", "oja": "^", "oja_subspace": "^", "oja_clamped": "v", "linear": "o",
    "softmax": "D", "theory": "", "measured": "P",
}
"""One marker per kind, beside its colour: a series is told apart without its colour (print, colour blindness)."""

CYCLE = {
    "color": [OKABE_ITO[n] for n in ("blue", "orange", "bluish green", "vermillion", "reddish purple", "sky blue",
                                     "yellow", "black")],
    "marker": ["o", "s", "^", "D", "v", "P", "X", "*"],
}
"""The default cycle of :func:`use_style`: each series of an axes gets its own colour and marker (line styles
keep their meaning: solid measured, dashed theory)."""


def use_style() -> None:
    """Set the course's matplotlib style: modest figure size and resolution (notebooks stay small), and the
    colour-blind-safe cycle (:data:`CYCLE`): a distinct colour and marker per series, markers
    spaced along long lines (``markevery``) so that dense curves stay readable."""
    mpl.rcParams.update({
        "figure.figsize": (6.4, 3.6), "figure.dpi": 80, "savefig.dpi": 80,
        "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
        "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9, "legend.frameon": False,
        "lines.linewidth": 1.8, "lines.markersize": 4.5,
        "axes.prop_cycle": cycler(**CYCLE) + cycler(markevery=[0.08] * len(CYCLE["color"])),
        "image.cmap": "viridis",
    })


def _np(x: object, name: str = "x", ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` (a tensor, array or sequence of numbers) as a float NumPy array, optionally of rank ``ndim``."""
    try:
        a = x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected numbers (a tensor, an array or a list), "
                        f"got {type(x).__name__}: {e}") from None
    if ndim is not None and a.ndim not in ((ndim,) if isinstance(ndim, int) else ndim):
        raise ValueError(f"{name}: expected {ndim if isinstance(ndim, int) else ' or '.join(map(str, ndim))} "
                         f"dimension(s), got shape {a.shape}")
    return a


def _check_ax(ax: object) -> None:
    if not hasattr(ax, "plot"):
        raise TypeError(f"ax: expected a matplotlib Axes, got {type(ax).__name__}")


def band(ax: plt.Axes, x: Numbers, samples: Numbers, *, label: str | None = None, color: str | None = None,
         quantiles: tuple[float, float] = (0.1, 0.9), marker: str | None = None) -> None:
    """Measured points: the mean over ``samples`` (trials, len(x)) with a shaded quantile band.

    ``color`` and ``marker`` default to the next entry of the axes' cycle (:func:`use_style`); a ``color`` of
    :data:`COLORS` without a ``marker`` takes that kind's marker (:data:`MARKERS`)."""
    _check_ax(ax)
    x, s = _np(x, "x", 1), _np(samples, "samples", 2)
    if s.shape[1] != x.shape[0] or s.shape[0] == 0:
        raise ValueError(f"samples: expected shape (trials >= 1, len(x) = {x.shape[0]}), got {s.shape}")
    if not (len(quantiles) == 2 and 0 <= quantiles[0] <= quantiles[1] <= 1):
        raise ValueError(f"quantiles: expected (low, high) with 0 <= low <= high <= 1, got {quantiles!r}")
    lo, hi = np.quantile(s, quantiles, axis=0)
    if marker is None and color is not None:
        marker = next((MARKERS[k] for k, c in COLORS.items() if c.lower() == str(color).lower()), None)
    line, = ax.plot(x, s.mean(axis=0), marker=marker, ms=3.5, lw=1.2, color=color, label=label, ls="-")
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def theory(ax: plt.Axes, x: Numbers, y: Numbers, *, label: str | None = "theory",
           color: str = COLORS["theory"]) -> None:
    """A theory curve: a dashed line; ``y`` of shape (len(x),) or (len(x), curves)."""
    _check_ax(ax)
    x, y = _np(x, "x", 1), _np(y, "y", (1, 2))
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"y: expected len(x) = {x.shape[0]} rows, got shape {y.shape}")
    ax.plot(x, y, ls="--", lw=1.5, color=color, label=label, marker="")


def labels(ax: plt.Axes, title: str, xlabel: str, ylabel: str, *, legend: bool = True) -> None:
    """Title and axis labels in words, and the legend when there is one."""
    _check_ax(ax)
    for name, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        if not isinstance(text, str):
            raise TypeError(f"{name}: expected a string, got {type(text).__name__}")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend()


Numbers = torch.Tensor | np.ndarray | Sequence[float]
"""What the drawing helpers accept for data: a tensor, an array or a sequence of numbers."""


def heatmap(ax: plt.Axes, matrix: Numbers, *, title: str, xlabel: str, ylabel: str,
            symmetric: bool = True) -> None:
    """A matrix as a picture (e.g. the memory S: rows = value units, columns = key units)."""
    _check_ax(ax)
    m = _np(matrix, "matrix", 2)
    if m.size == 0:
        raise ValueError(f"matrix: expected a non-empty matrix, got shape {m.shape}")
    lim = np.nanmax(np.abs(m)) if np.isfinite(m).any() else 1.0
    lim = float(lim) or 1.0
    im = ax.imshow(m, cmap="RdBu_r" if symmetric else "viridis", vmin=-lim if symmetric else None,
                   vmax=lim if symmetric else None, aspect="auto")
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    ax.grid(False)
    labels(ax, title, xlabel, ylabel, legend=False)


def mark_times(ax: plt.Axes, times: Sequence[float], *, label: str | None = None, color: str = "#777777") -> None:
    """Vertical dotted lines at event times (drifts, phase changes)."""
    _check_ax(ax)
    for i, t in enumerate(_np(times, "times", 1)):
        ax.axvline(float(t), ls=":", lw=1, color=color, label=label if i == 0 else None)


# ------------------------------------------------------------------------------ conditioning designs
_set_labels = labels  # the plots below take a ``labels`` argument (a design's Labels)

CS_COLORS = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["reddish purple"])
"""One colour per CS column (bell, light/buzzer, ...), the same in every conditioning plot."""
CS_MARKERS = ("o", "s", "^")
"""One marker per CS column, beside its colour."""
US_COLOR = OKABE_ITO["bluish green"]
"""The colour of the food (US) row in :func:`plot_design`."""


def _check_names(labels: object, n_cs: int, name: str) -> None:
    if not isinstance(labels, Labels):
        raise TypeError(f"labels: expected a design's Labels (design.labels), got {type(labels).__name__}")
    if len(labels.cs) != n_cs:
        raise ValueError(f"labels: expected one CS name per column of {name} ({n_cs}), got {len(labels.cs)} "
                         f"names {list(labels.cs)}")


def plot_strengths(ax: plt.Axes, V: torch.Tensor, labels: Labels, *, title: str | None = None, ls: str = "-",
                   suffix: str = "", marker: str | None = None, phases: bool = True, legend: bool = True) -> None:
    """Plot V (trials + 1, n_cs) against the trial number, one line per CS, phase changes dotted.

    Each CS has its colour and its marker (:data:`CS_COLORS`, :data:`CS_MARKERS`); ``marker`` replaces the
    markers of every CS (``""``: none). One sequence only: a V with leading (batch) dims is refused (plot
    ``V[0]``, or their mean)."""
    _check_ax(ax)
    v = torch.as_tensor(_np(V, "V", 2))
    _check_names(labels, v.shape[-1], "V")
    x = torch.arange(v.shape[-2])
    for i, name in enumerate(labels.cs):
        ax.plot(x, v[..., i], ls=ls, marker=CS_MARKERS[i % len(CS_MARKERS)] if marker is None else marker, ms=3.5,
                markevery=0.08, color=CS_COLORS[i % len(CS_COLORS)], label=f"V {name}{suffix}")
    if phases and labels.boundaries:
        mark_times(ax, labels.boundaries)
    ax.axhline(0.0, color="#999999", lw=0.8)
    _set_labels(ax, title or labels.description, "trial", "associative strength V", legend=legend)


def plot_design(ax: plt.Axes, cs: torch.Tensor, us: torch.Tensor, labels: Labels, *, title: str | None = None,
                xlabel: bool = True) -> None:
    """Draw a design as a table of coloured cells: one row per CS and one for the food, one column per trial.

    cs: (trials, n_cs); us: (trials,) (with leading dims, the first sequence is drawn). A cell is
    coloured when the stimulus is present (shade = intensity), white when absent; solid lines mark phases.
    """
    from matplotlib.colors import to_rgb

    _check_ax(ax)
    c, u = _np(cs, "cs"), _np(us, "us")
    if c.ndim < 2 or c.shape[-2] == 0 or c.shape[-1] == 0:
        raise ValueError(f"cs: expected a design (..., trials >= 1, n_cs >= 1), got shape {c.shape}")
    if u.ndim < 1 or u.shape[-1] != c.shape[-2]:
        raise ValueError(f"us: expected one US per trial, (..., {c.shape[-2]}), got shape {u.shape}")
    _check_names(labels, c.shape[-1], "cs")
    x = torch.as_tensor(c).reshape(-1, *c.shape[-2:])[0]
    food = torch.as_tensor(u).reshape(-1, u.shape[-1])[0]
    rows = torch.cat([x.T, (food / food.abs().max().clamp_min(1e-12))[None]]).clamp(0, 1)  # (n_cs + 1, trials)
    colors = [*(CS_COLORS[i % len(CS_COLORS)] for i in range(x.shape[1])), US_COLOR]
    rgb = torch.tensor([to_rgb(c) for c in colors], dtype=torch.float64)[:, None, :]      # (rows, 1, 3)
    image = 1 - rows[..., None] * (1 - rgb)                                               # white where absent
    T = rows.shape[1]
    ax.imshow(image.numpy(), aspect="auto", interpolation="nearest", extent=(0.5, T + 0.5, len(colors) - 0.5, -0.5))
    if T <= 120:  # thin white gaps: one cell per trial
        ax.vlines([t + 0.5 for t in range(1, T)], -0.5, len(colors) - 0.5, color="white", lw=0.6)
    ax.hlines([r + 0.5 for r in range(len(colors) - 1)], 0.5, T + 0.5, color="white", lw=1.5)
    for _, first, _ in labels.phases[1:]:
        ax.axvline(first + 0.5, color="black", lw=1.5)
    ax.set_yticks(range(len(colors)), [*labels.cs, "food (US)"])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    if xlabel:
        ax.set_xlabel("trial")
    ax.set_title(title or labels.description)
