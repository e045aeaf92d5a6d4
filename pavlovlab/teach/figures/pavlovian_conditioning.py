"""The figures of ``01_pavlovian_conditioning``: blocking under both rules, blocking against the pretraining
length, and the playground of every design.

In the notebook: ``figures.blocking_both_rules(block, control)``, ``figures.blocking_growth(n_pre, v_light)`` and
``interactive_plot(figures.draw_design, alpha=..., lam=..., n_trials=..., design=..., hebbian=False)``.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import torch

from pavlovlab._checks import check_real
from pavlovlab.conditioning import learning, trials
from pavlovlab.conditioning.learning import hebbian_conditioning, rescorla_wagner
from pavlovlab.conditioning.trials import Design
from pavlovlab.teach import plotting

RULES = {"Rescorla–Wagner (prediction error)": rescorla_wagner,
         "Hebbian (fire together, wire together)": hebbian_conditioning}
"""The two learning rules of the blocking figure, by their titles."""


def blocking_both_rules(block: Design, control: Design, *, alpha: float = 0.3) -> plt.Figure:
    """One figure, one panel per rule (:data:`RULES`): the strengths of bell (thin) and light (thick) in the
    blocking group (solid) and the control group (dashed), trial by trial. Under Rescorla–Wagner the light of the
    blocking group learns nothing; under the Hebbian rule the light's line is the same in both groups."""
    alpha = check_real("alpha", alpha, low=0.0)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, (title, rule) in zip(axes, RULES.items(), strict=True):
        for design, ls, group in ((block, "-", "blocking"), (control, "--", "control")):
            V = rule(design.cs, design.us, alpha=alpha)
            ax.plot(V[:, 1], ls=ls, lw=2.2, color=plotting.CS_COLORS[1], label=f"light, {group} group")
            ax.plot(V[:, 0], ls=ls, lw=1, color=plotting.CS_COLORS[0], label=f"bell, {group} group")
        plotting.mark_times(ax, block.labels.boundaries)
        plotting.labels(ax, title, "trial", "associative strength V", legend=False)
    axes[0].legend(loc="center right", bbox_to_anchor=(1.0, 0.72))
    light = hebbian_conditioning(block.cs, block.us, alpha=alpha)[:, 1]
    end = len(light) - 1
    on = (3 * end) // 4                                          # a trial late in the compound phase
    axes[1].annotate("light: the same line in both groups", (on, light[on].item()), (2, 0.85 * light[end].item()),
                     arrowprops={"arrowstyle": "->"})
    fig.tight_layout()
    return fig


def blocking_growth(n_pre: Any = None, v_light: Any = None, *, alpha: float = 0.2, n_compound: int = 30) -> plt.Figure:
    """One figure on a log axis: the light's final strength against the pretraining length, the closed form
    :func:`pavlovlab.conditioning.learning.blocking_theory` over 0–30 trials (a straight line), and the learner's
    measured points ``(n_pre, v_light)`` (P,) when given (the notebook passes None while Exercise 3 is a stub)."""
    alpha = check_real("alpha", alpha, low=0.0)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    if n_pre is not None and v_light is not None:
        ax.semilogy(torch.as_tensor(n_pre), torch.as_tensor(v_light), "o", color=plotting.CS_COLORS[1],
                    label="your measurement (Rescorla–Wagner)")
    n_fine = torch.linspace(0, 30, 200)
    plotting.theory(ax, n_fine, learning.blocking_theory(n_fine, n_compound=n_compound, alpha=alpha),
                    label=rf"closed form $(1-\alpha)^n\,(1-(1-2\alpha)^{{{n_compound}}})/2$")
    ax.set_yscale("log")
    plotting.labels(ax, f"Blocking grows with pretraining (α = {alpha:g}, {n_compound} compound trials)",
                    "pretraining trials n (bell → food)", "light's final strength V_light (log)")
    return fig


def draw_design(alpha: float, lam: float, n_trials: int, design: str, hebbian: bool) -> plt.Figure:
    """One figure: the strengths of every CS of ``design`` (a name of
    :data:`pavlovlab.conditioning.trials.TABLES`) under Rescorla–Wagner, with ``n_trials`` trials per phase,
    salience ``alpha`` and food ``lam``; with ``hebbian``, the Hebbian rule's strengths dashed on top. The vertical
    axis stretches to every line drawn, so the Hebbian lines (which grow by αλ per reinforced trial) stay visible."""
    if design not in trials.TABLES:
        raise ValueError(f"design: expected one of {sorted(trials.TABLES)}, got {design!r}")
    V, (_, _, labels_d) = learning.simulate(design, n_trials=n_trials, alpha=alpha, lam=lam)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    shown = V.flatten()
    if hebbian:
        H, _ = learning.simulate(design, n_trials=n_trials, alpha=alpha, lam=lam, rule="hebbian")
        plotting.plot_strengths(ax, H, labels_d, ls="--", suffix=", Hebbian", phases=False, legend=False)
        shown = torch.cat([shown, H.flatten()])
    plotting.plot_strengths(ax, V, labels_d, title=f"{design}: {labels_d.description}")
    top = 1.15 * max(lam, 0.1, shown.max().item())
    ax.set_ylim(min(-0.1 * top, 1.15 * shown.min().item()), top)
    fig.tight_layout()
    return fig


__all__ = ["RULES", "blocking_both_rules", "blocking_growth", "draw_design"]
