"""The figures of ``04_capacity_limits``: the recall-curve explorer of section 9."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from pavlovlab._checks import check_choice, check_int
from pavlovlab.capacity import average
from pavlovlab.teach import plotting
from pavlovlab.teach.plotting import COLORS

KINDS = ("gaussian", "orthogonal", "binary", "sphere")
"""The kinds of keys the explorer draws (``pavlovlab.sampling.random_keys``)."""


def draw_recall_curve(d_k: int, n: int, kind: str, threshold: float) -> plt.Figure:
    """The mean recall cosine against the number of stored pairs, measured on 20 trials with keys of ``kind``
    in ``d_k`` dimensions (band: 10–90 %), over a grid of about 32 points that includes ``n``, with the theory
    ``1/√(1 + (n − 1)/d_k)`` (dashed), ``n`` and ``threshold`` marked. The title gives the measured mean cosine at
    ``n`` and the capacity read off the measured curve at ``threshold``."""
    d_k, n = check_int("d_k", d_k, low=1), check_int("n", n, low=1)
    check_choice("kind", kind, KINDS)
    ns = average.n_grid(d_k, points=32, max_ratio=max(2.0, 1.25 * n / d_k))
    ns = torch.unique(torch.cat([ns, torch.tensor([n])]))
    m = average.recall_sweep(d_k, ns, trials=20, kind=kind, generator=torch.Generator().manual_seed(0))
    fid = m.cosine.nanmean(-1)
    at_n = fid[:, (ns == n).nonzero()[0, 0]].mean()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    plotting.band(ax, ns, fid, label=f"{kind} keys, measured", color=COLORS["measured"])
    plotting.theory(ax, ns, average.fidelity_theory(ns, d_k), label="theory (random keys)")
    ax.axvline(n, color="k", ls=":", lw=1)
    ax.axhline(threshold, color=COLORS["hebbian"], ls=":", lw=1, label=f"threshold θ = {threshold:.2f}")
    ax.set_xscale("log")
    plotting.labels(ax, f"d_k = {d_k}: cosine at n = {n} is {at_n:.2f}; capacity at θ: "
                    f"{average.capacity_from_fidelity(ns, fid, threshold)}", "pairs stored n", "mean cosine")
    return fig
