"""The figures of notebook 02: the recall explorer draws one line per stored pair at its measured cosine, and
the theory line at 1/√(1 + (n − 1)/d_k)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from pavlovlab.memory.hebbian import recall_cosine
from pavlovlab.sampling import random_keys
from pavlovlab.teach.figures import hebbian_memory as figures


@pytest.mark.parametrize("n, d_k", [(1, 4), (40, 16), (256, 256)])
def test_recall_explorer_draws_each_pair_and_the_theory(n, d_k):
    fig = figures.draw_recall(n, d_k)
    ax = fig.axes[0]
    tops = torch.tensor([seg[1, 1] for seg in ax.collections[0].get_segments()])
    gw = torch.Generator().manual_seed(0)
    keys, values = random_keys(n, d=d_k, kind="sphere", generator=gw), torch.randn(n, 32, generator=gw)
    assert torch.allclose(tops, recall_cosine(keys, values).double(), atol=1e-6)
    theory = ax.get_lines()[0].get_ydata()
    assert theory[0] == pytest.approx(1 / (1 + (n - 1) / d_k) ** 0.5)
    plt.close(fig)


def test_recall_explorer_refuses_a_memory_without_pairs():
    with pytest.raises(ValueError, match="n"):
        figures.draw_recall(0, 16)
