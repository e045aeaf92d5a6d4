"""The course's plot style and the few plot shapes every notebook uses (theory dashed over measured bands)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch

COLORS = {
    "hebbian": "#d95f02", "delta": "#1b9e77", "oja": "#7570b3", "linear": "#d95f02",
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


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def band(ax: plt.Axes, x, samples, *, label: str | None = None, color: str | None = None,
         quantiles: tuple[float, float] = (0.1, 0.9), marker: str = "o") -> None:
    """Measured points: the mean over ``samples`` (trials, len(x)) with a shaded quantile band."""
    x, s = _np(x), _np(samples)
    lo, hi = np.quantile(s, quantiles, axis=0)
    line, = ax.plot(x, s.mean(axis=0), marker=marker, ms=3.5, lw=1.2, color=color, label=label)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)


def theory(ax: plt.Axes, x, y, *, label: str | None = "theory", color: str = COLORS["theory"]) -> None:
    """A theory curve: a dashed line."""
    ax.plot(_np(x), _np(y), ls="--", lw=1.5, color=color, label=label)


def labels(ax: plt.Axes, title: str, xlabel: str, ylabel: str, *, legend: bool = True) -> None:
    """Title and axis labels in words, and the legend when there is one."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend()


def heatmap(ax: plt.Axes, matrix, *, title: str, xlabel: str, ylabel: str, symmetric: bool = True) -> None:
    """A matrix as a picture (e.g. the memory S: rows = value units, columns = key units)."""
    m = _np(matrix)
    lim = np.abs(m).max() or 1.0
    im = ax.imshow(m, cmap="RdBu_r" if symmetric else "viridis", vmin=-lim if symmetric else None,
                   vmax=lim if symmetric else None, aspect="auto")
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    ax.grid(False)
    labels(ax, title, xlabel, ylabel, legend=False)


def mark_times(ax: plt.Axes, times: Sequence[float], *, label: str | None = None, color: str = "#999999") -> None:
    """Vertical dotted lines at event times (drifts, phase changes)."""
    for i, t in enumerate(times):
        ax.axvline(float(t), ls=":", lw=1, color=color, label=label if i == 0 else None)
