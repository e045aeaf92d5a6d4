"""The figures of ``02_hebbian_memory``: the recall explorer of section 5."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from pavlovlab._checks import check_int
from pavlovlab.memory.hebbian import recall_cosine
from pavlovlab.sampling import random_keys
from pavlovlab.teach import plotting


def draw_recall(n: int, d_k: int, d_v: int = 32, seed: int = 0) -> plt.Figure:
    """One memory of ``n`` random unit keys in ``d_k`` dimensions and Gaussian values of ``d_v`` components:
    the recall cosine ``cos(S k_j, v_j)`` of every stored pair (one vertical line each) against the theory
    ``1/√(1 + (n − 1)/d_k)`` (dashed). The same arguments always draw the same memory (``seed``)."""
    n, d_k, d_v = check_int("n", n, low=1), check_int("d_k", d_k, low=1), check_int("d_v", d_v, low=1)
    gw = torch.Generator().manual_seed(seed)
    keys, values = random_keys(n, d=d_k, kind="sphere", generator=gw), torch.randn(n, d_v, generator=gw)
    cos = recall_cosine(keys, values)                    # (n,): cos(S k_j, v_j) for each pair
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.vlines(range(1, n + 1), 0, cos.numpy(), lw=max(1.0, 200 / n), color=plotting.COLORS["hebbian"],
              label=r"measured: $\cos(S k_j, v_j)$")
    plotting.theory(ax, [0.5, n + 0.5], [(1 + (n - 1) / d_k) ** -0.5] * 2, label=r"theory $1/\sqrt{1+(n-1)/d_k}$")
    ax.set_ylim(-0.1, 1.3)
    plotting.labels(ax, f"{n} pairs with d_k = {d_k}: mean recall cosine {cos.mean():.2f}", "stored pair j",
                    "cosine of recalled to true value")
    ax.legend(loc="upper center", ncol=2)
    return fig
