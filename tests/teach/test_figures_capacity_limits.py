"""The figures of notebook 04: the recall-curve explorer marks the chosen n and threshold, and its title reads
the capacity off the measured curve."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from pavlovlab.teach.figures import capacity_limits as figures


@pytest.mark.parametrize("kind", figures.KINDS)
def test_recall_explorer_marks_n_and_the_threshold(kind):
    fig = figures.draw_recall_curve(16, 20, kind, 0.8)
    ax = fig.axes[0]
    xs = [line.get_xdata()[0] for line in ax.get_lines()]
    ys = [line.get_ydata()[0] for line in ax.get_lines()]
    assert 20 in xs and 0.8 in ys
    assert ax.get_title().startswith("d_k = 16: cosine at n = 20 is ")
    plt.close(fig)


def test_orthogonal_keys_recall_perfectly_up_to_d_k():
    fig = figures.draw_recall_curve(16, 16, "orthogonal", 0.95)
    assert "cosine at n = 16 is 1.00" in fig.axes[0].get_title()
    plt.close(fig)
