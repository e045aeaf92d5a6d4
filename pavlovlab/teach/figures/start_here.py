"""The figure of ``00_start_here``: the match of a test stimulus with the bell, as the test turns away from it.

In the notebook: ``interactive_plot(figures.draw_match, angle=(0, 180, 5, 30))``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from pavlovlab._checks import check_real
from pavlovlab.teach import plotting

BELL = (1.0, 0.5)
"""The bell's two features in the picture."""


def rotated(vector: np.ndarray, angle: float) -> np.ndarray:
    """``vector`` (2,) turned counter-clockwise by ``angle`` degrees (2,)."""
    a = np.deg2rad(angle)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ vector


def draw_match(angle: float) -> plt.Figure:
    """One figure: the bell ``k`` and a test stimulus ``q``, the bell turned by ``angle`` degrees, as arrows, with
    their match ``k · q`` in the title (largest at 0°, zero at 90°, negative beyond)."""
    angle = check_real("angle", angle)
    bell = np.array(BELL)
    test = rotated(bell, angle)
    fig, ax = plt.subplots(figsize=(4, 3.6))
    arrows = [(bell, "bell k", plotting.OKABE_ITO["vermillion"]), (test, "test q", plotting.OKABE_ITO["blue"])]
    for vec, name, col in arrows:
        ax.annotate("", xy=(vec[0], vec[1]), xytext=(0, 0), arrowprops=dict(arrowstyle="->", lw=2, color=col))
        ax.text(1.12 * vec[0], 1.12 * vec[1], name, color=col, ha="center")
    ax.set_xlim(-1.4, 1.4)
    ax.set_ylim(-1.4, 1.4)
    ax.set_aspect("equal")
    plotting.labels(ax, f"match k·q = {bell @ test:+.2f}", "feature 1", "feature 2", legend=False)
    return fig


__all__ = ["BELL", "draw_match", "rotated"]
