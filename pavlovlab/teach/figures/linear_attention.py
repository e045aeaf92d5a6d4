"""The figures of ``03_linear_attention``: the chunkwise picture of section 6 and the attention-and-cost
explorer of section 9."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from pavlovlab._checks import check_choice, check_int
from pavlovlab.attention.forms import linear_attention, softmax_attention
from pavlovlab.teach import plotting
from pavlovlab.teach.plotting import COLORS

KINDS = ("linear", "softmax", "linear, elu+1, normalised")
"""The kinds of attention the explorer shows."""


def multiply_adds_softmax(T: np.ndarray | int, d_k: int, d_v: int) -> np.ndarray | int:
    """Multiply-adds of softmax attention per head: ``T² (d_k + d_v)`` (scores, then the mix of values)."""
    return T**2 * (d_k + d_v)


def multiply_adds_chunkwise(T: np.ndarray | int, d_k: int, d_v: int, C: int = 64) -> np.ndarray | int:
    """Multiply-adds of chunkwise linear attention per head: ``T (C (d_k + d_v) + 2 d_k d_v)`` (the masked
    triangles, then the reads and writes of the carried state)."""
    return T * (C * (d_k + d_v) + 2 * d_k * d_v)


def draw_chunks(T: int = 24, C: int = 6) -> plt.Figure:
    """Which part of the causal ``T × T`` score matrix the chunkwise form computes as a masked block (the
    diagonal blocks of ``C`` tokens), which it replaces by one read of the carried memory (left of the
    blocks), and which is masked out (the future)."""
    T, C = check_int("T", T, low=1), check_int("C", C, low=1)
    t = torch.arange(T)
    same, before = (t[:, None] // C == t // C), (t[:, None] // C > t // C)
    part = torch.where(same & (t[:, None] >= t), 2, torch.where(before, 1, 0))
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.imshow(part, cmap=ListedColormap(["white", "#b2df8a", COLORS["linear"]]), vmin=0, vmax=2)
    for b in range(0, T + 1, C):
        ax.axhline(b - 0.5, color="k", lw=0.6)
        ax.axvline(b - 0.5, color="k", lw=0.6)
    for c in range(-(-T // C)):
        ax.text(T - 0.2, c * C + C / 2, f"  reads $S_{{[{c}]}}$", va="center", fontsize=9)
    ax.grid(False)
    ax.legend(handles=[Patch(color=COLORS["linear"], label="intra-chunk: masked block, computed"),
                       Patch(color="#b2df8a", label="inter-chunk: one read of the carried S"),
                       Patch(facecolor="white", edgecolor="k", label="future: masked out")],
              loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)
    plotting.labels(ax, f"Chunkwise linear attention (T = {T}, C = {C})", "key s", "query t", legend=False)
    return fig


def draw_attention_and_cost(T: int, d_k: int, kind: str) -> plt.Figure:
    """Left: the weights that ``T`` random queries give to ``T`` random keys of dimension ``d_k`` under
    ``kind`` (one of :data:`KINDS`; the masked ``QKᵀ`` for plain linear attention). Right: the multiply-adds of
    softmax and chunkwise linear attention per head against T (``d_v = d_k``, chunks of 64), with ``T`` marked."""
    T, d_k = check_int("T", T, low=1), check_int("d_k", d_k, low=1)
    check_choice("kind", kind, KINDS)
    gw = torch.Generator().manual_seed(0)
    qw, kw = (torch.randn(T, d_k, generator=gw) for _ in range(2))
    if kind == "softmax":
        W = softmax_attention(qw, kw, torch.eye(T))
    else:
        fmap, norm = ("elu1", True) if "elu" in kind else ("identity", False)
        W = linear_attention(qw, kw, torch.eye(T), feature_map=fmap, normalize=norm, mode="parallel")
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.6))
    plotting.heatmap(ax0, W, title=f"{kind}: weights (T = {T})", xlabel="key s", ylabel="query t",
                     symmetric=(kind == "linear"))
    Tx = np.unique(np.geomspace(8, 8192, 60).astype(int))
    ax1.loglog(Tx, multiply_adds_softmax(Tx, d_k, d_k), color=COLORS["softmax"], label="softmax  ∝ T²")
    ax1.loglog(Tx, multiply_adds_chunkwise(Tx, d_k, d_k), color=COLORS["linear"], label="linear (chunk)  ∝ T")
    ax1.axvline(T, color="k", ls=":", lw=1, label=f"T = {T}")
    plotting.labels(ax1, f"Multiply-adds per head (d_k = d_v = {d_k})", "sequence length T", "multiply-adds")
    fig.subplots_adjust(wspace=0.45, bottom=0.15)   # (cheaper than tight_layout: the widget stays responsive)
    return fig
