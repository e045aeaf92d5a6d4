"""The figures of notebook 03: the chunk picture colours each part of the score matrix as the chunkwise form
treats it, and the explorer draws the weights of the chosen attention and the two cost lines."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from pavlovlab.teach.figures import linear_attention as figures


def test_chunk_picture_parts():
    fig = figures.draw_chunks(T=12, C=4)
    part = np.asarray(fig.axes[0].get_images()[0].get_array())
    assert part[5, 4] == 2 and part[5, 5] == 2 and part[5, 6] == 0     # own chunk: the masked block
    assert part[5, 3] == 1 and part[11, 0] == 1                        # earlier chunks: one read of S
    assert (part[np.triu_indices(12, 1)] == 0).all()                  # the future
    plt.close(fig)


@pytest.mark.parametrize("kind", figures.KINDS)
def test_explorer_draws_the_weights_and_the_costs(kind):
    fig = figures.draw_attention_and_cost(16, 8, kind)
    weights = torch.as_tensor(np.asarray(fig.axes[0].get_images()[0].get_array()))
    assert weights.shape == (16, 16) and bool((weights.triu(1) == 0).all())
    cost = next(ax for ax in fig.axes if ax.get_title().startswith("Multiply-adds"))
    soft, lin = (line.get_ydata() for line in cost.get_lines()[:2])
    assert soft[0] == 8**2 * 16 and lin[0] == 8 * (64 * 16 + 2 * 64)
    plt.close(fig)


def test_explorer_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        figures.draw_attention_and_cost(16, 8, "cosine")
