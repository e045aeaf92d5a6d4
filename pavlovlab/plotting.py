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

COLORS = {
    "hebbian": "#d95f02", "delta": "#1b9e77", "oja": "#7570b3", "oja_subspace": "#7570b3", "oja_clamped": "#e6ab02", "linear": "#d95f02",
    "softmax": "#e7298a", "theory": "#444444", "measured": "#1f78b4",
}
"""One colour per learning rule / attention kind, the same in every notebook."""


def use_style() -> None:
    """Set the course's matplotlib style: modest figure size and resolution (notebooks stay small)."""
    mpl.rcParams.update({
        "figure.figsize": (6.4, 3.6), "figure.dpi": 80, "savefig.dpi": 80,
        "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
        "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9, "legend.frameon": False,
        "lines.linewidth": 1.8,
    })


def _np(x, name: str = "x", ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` (a tensor, array or sequence of numbers) as a float NumPy array, optionally of rank ``ndim``."""
    try:
        a = x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected numbers (a tensor, an array or a list), got {type(x).__name__}: {e}") from None
    if ndim is not None and a.ndim not in ((ndim,) if isinstance(ndim, int) else ndim):
        raise ValueError(f"{name}: expected {ndim if isinstance(ndim, int) else ' or '.join(map(str, ndim))} "
                         f"dimension(s), got shape {a.shape}")
    return a


def _check_ax(ax: object) -> None:
    if not hasattr(ax, "plot"):
        raise TypeError(f"ax: expected a matplotlib Axes, got {type(ax).__name__}")


def band(ax: plt.Axes, x, samples, *, label: str | None = None, color: str | None = None,
         quantiles: tuple[float, float] = (0.1, 0.9), marker: str = "o") -> None:
    """Measured points: the mean over ``samples`` (trials, len(x)) with a shaded quantile band."""
    _check_ax(ax)
    x, s = _np(x, "x", 1), _np(samples, "samples", 2)
    if s.shape[1] != x.shape[0] or s.shape[0] == 0:
        raise ValueError(f"samples: expected shape (trials >= 1, len(x) = {x.shape[0]}), got {s.shape}")
    if not (len(quantiles) == 2 and 0 <= quantiles[0] <= quantiles[1] <= 1):
        raise ValueError(f"quantiles: expected (low, high) with 0 <= low <= high <= 1, got {quantiles!r}")
    lo, hi = np.quantile(s, quantiles, axis=0)
    line, = ax.plot(x, s.mean(axis=0), marker=marker, ms=3.5, lw=1.2, color=color, label=label)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def theory(ax: plt.Axes, x, y, *, label: str | None = "theory", color: str = COLORS["theory"]) -> None:
    """A theory curve: a dashed line; ``y`` of shape (len(x),) or (len(x), curves)."""
    _check_ax(ax)
    x, y = _np(x, "x", 1), _np(y, "y", (1, 2))
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"y: expected len(x) = {x.shape[0]} rows, got shape {y.shape}")
    ax.plot(x, y, ls="--", lw=1.5, color=color, label=label)


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


def heatmap(ax: plt.Axes, matrix, *, title: str, xlabel: str, ylabel: str, symmetric: bool = True) -> None:
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


def mark_times(ax: plt.Axes, times: Sequence[float], *, label: str | None = None, color: str = "#999999") -> None:
    """Vertical dotted lines at event times (drifts, phase changes)."""
    _check_ax(ax)
    times = _np(times, "times", 1)
    for i, t in enumerate(times):
        ax.axvline(float(t), ls=":", lw=1, color=color, label=label if i == 0 else None)
