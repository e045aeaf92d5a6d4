"""The figures of ``07_decay_and_unlearning``: the retention explorer widget (RetNet-style heads against lag) and
the course in one picture (each notebook's claim beside one number recomputed now).

A figure cell is one readable call; :func:`course_live_numbers` recomputes the small, fast versions of the
earlier notebooks' experiments that the picture quotes.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.util import find_spec

import matplotlib.pyplot as plt
import numpy as np
import torch

from pavlovlab.forgetting import decay
from pavlovlab.teach import plotting
from pavlovlab.teach.plotting import COLORS


def retention_explorer(n_heads: int = 4, first_exponent: int = 5, lag: int = 100) -> plt.Figure:
    """Heads with decays γ_h = 1 − 2^(−first_exponent − h), h = 0..n_heads − 1 (``decay.retnet_decays``).
    Left: each head's retention γ_h^ℓ against the lag ℓ (log axis, 1 to 10⁴), ``lag`` marked; right: what each
    head still holds at ``lag``."""
    gammas = decay.retnet_decays(n_heads, first=first_exponent, dtype=torch.float64)
    lags = torch.unique(torch.logspace(0, 4, 200).round()).to(torch.float64)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.4))
    for h, gm in enumerate(gammas.tolist()):
        ax0.semilogx(lags, gm ** lags, marker="", label=f"h={h}: ℓ½={decay.half_life(gm):.0f}")
    ax0.axvline(lag, color="k", ls=":", lw=1)
    plotting.labels(ax0, f"Retention γ_h^ℓ, γ_h = 1 − 2^(−{first_exponent}−h)", "lag ℓ", "retention", legend=False)
    ax0.legend(fontsize=7, ncol=2)
    ax1.bar(range(n_heads), (gammas ** lag).numpy(), color=COLORS["measured"])
    ax1.set_ylim(0, 1)
    ax1.set_xticks(range(n_heads))
    plotting.labels(ax1, f"What each head holds at lag {lag}", "head h", "retention γ_h^ℓ")
    fig.tight_layout()
    return fig


def _worst_case_capacity(d: int, n: int = 40, trials: int = 100) -> float:
    """Criterion (c) of notebook 04: the mean number of random unit keys stored before some key's summed
    |overlap| with the others reaches 1 (no read-out needed)."""
    from pavlovlab.sampling import random_keys

    kk = random_keys(trials, n, d=d, kind="sphere", generator=torch.Generator().manual_seed(5))
    A = (kk @ kk.mT).abs() * (1 - torch.eye(n))                       # |G_ij| off the diagonal
    load = (A.cumsum(-1) * torch.ones(n, n).triu()).amax(-2)          # worst row among the first n keys
    return (load >= 1).float().argmax(-1).float().mean().item()


def course_live_numbers() -> dict[str, str]:
    """One number per notebook 01–06, recomputed now from small, fast versions of its experiment (seeded):
    notebook -> a short sentence. A notebook whose module is missing from this install is left out."""
    import pavlovlab as pl

    live = {}
    if find_spec("pavlovlab.conditioning"):
        from pavlovlab.conditioning import learning
        V_block, _ = learning.simulate("blocking")
        V_ctrl, _ = learning.simulate("blocking control")
        live["01"] = f"light's strength: {V_block[-1, 1]:.2f} after blocking vs {V_ctrl[-1, 1]:.2f} in the control"
    if find_spec("pavlovlab.memory.hebbian"):
        from pavlovlab.memory import hebbian
        from pavlovlab.sampling import random_keys
        kk = random_keys(200, 33, d=64, kind="sphere", generator=torch.Generator().manual_seed(2))
        vv = torch.randn(200, 33, 64, generator=torch.Generator().manual_seed(3))
        live["02"] = (f"crosstalk variance {hebbian.crosstalk(kk, vv).var():.2f} vs (n−1)/d_k = {32 / 64:.2f} "
                      "(n=33, d_k=64)")
    gc = torch.Generator().manual_seed(4)
    qc, kc, vc = (torch.randn(2, 50, 8, generator=gc, dtype=torch.float64) for _ in range(3))
    mem = pl.AssociativeMemory(8, 8, batch_shape=(2,), dtype=torch.float64)
    reads = mem.run(kc, vc, qc)
    assert reads is not None                                     # run returns the reads when given queries
    gap = (reads - pl.linear_attention(qc, kc, vc)).abs().max().item()
    live["03"] = f"memory circuit vs linear attention: max difference {gap:.0e}"
    if find_spec("pavlovlab.capacity"):
        worst = [_worst_case_capacity(d) for d in (16, 64, 256)]
        slope = np.polyfit(np.log([16, 64, 256]), np.log(worst), 1)[0]
        live["04"] = ("worst-case capacity (c) " + ", ".join(f"{w:.1f}" for w in worst) +
                      f" for d_k = 16, 64, 256: slope {slope:.2f} (derived from the key overlaps)")
    if find_spec("pavlovlab.depth.chain"):
        from pavlovlab.depth import chain
        same_task = {(H, 32 // H): chain.chain_error(2, H, 16, 32 // H, trials=100,
                                                     generator=torch.Generator().manual_seed(6)).error
                     for H in (1, 2, 4)}                                   # the same 2-hop task, equal H·d_k = 32
        live["05"] = ("2-hop chains, n = 16, equal H·d_k = 32: error " +
                      ", ".join(f"{e:.3f} ({H} × {d})" for (H, d), e in same_task.items()) + " heads × d_k")
    if find_spec("pavlovlab.forgetting.drift"):
        from pavlovlab.forgetting import drift
        tr = drift.track(drift.redraw_stream(steps=2000, batch_shape=(5,), generator=torch.Generator().manual_seed(7)))
        norms = tr.norm[:, :, -1].mean(-1)
        live["06"] = "‖S‖ after 2,000 drifting steps: " + ", ".join(
            f"{r} {n:.1f}" for r, n in zip(tr.rules, norms.tolist(), strict=True))
    return live


def draw_course_picture(claims: Mapping[str, tuple[str, str]], live: Mapping[str, str]) -> plt.Figure:
    """One row per notebook: its number and title (bold), its claim (black) and the number measured now (blue),
    from ``claims`` (notebook -> (title, claim)) and ``live`` (notebook -> sentence)."""
    fig, ax = plt.subplots(figsize=(12, 4.8))
    ax.axis("off")
    for i, (nb, (title, claim)) in enumerate(claims.items()):
        y = 1 - (i + 0.5) / len(claims)
        ax.text(0.0, y, f"{nb} {title}", weight="bold", va="center", fontsize=8.5)
        ax.text(0.2, y + 0.035, claim, va="center", fontsize=8.5)
        ax.text(0.2, y - 0.035, "measured: " + live.get(nb, "— (its module is not available in this install)"),
                va="center", fontsize=8.5, color=COLORS["measured"])
    ax.set_title("The course in one picture: each notebook's claim (black) and what we measured (blue)")
    fig.tight_layout()
    return fig


__all__ = ["course_live_numbers", "draw_course_picture", "retention_explorer"]
