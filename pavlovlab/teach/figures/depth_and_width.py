"""The figures of ``05_depth_and_width`` (the tower of cards): each function draws one figure of the notebook from
results the notebook has measured (or, for the widget, from the theory) and returns it.

The notebook computes; these functions only draw, so that a figure cell reads as "measure, then look":

- :func:`crosstalk_figure`: one hop, the length of the crosstalk and the tail of its square (section 1);
- :func:`load_figure`: the one-hop error against the load n/d_k, with the theory and the bounds (section 1);
- :func:`bounds_figure`: the bounds of the paper's form against the number of heads (section 1b);
- :func:`heads_figure`: the error of one hop against the number of heads, averaged or voted (section 2);
- :func:`depth_figure`: the error against depth with a clean-up between layers (section 3);
- :func:`raw_chain_figure`: the noise and error of a stack without clean-up (section 4);
- :func:`contest_figure`: the cached learning curves of the trained shapes (section 6);
- :func:`depth_and_width`: the widget's panels, depth against width at a fixed budget (section 7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ...depth import theory
from ...depth.chain import HopSample, RawChainResult, StackResult
from .. import plotting
from ..plotting import COLORS

FLOOR = 1e-12
"""The widget draws predicted errors below this value at this value (a log axis has no zero)."""

WIDGET_YMIN = 1e-9
"""The lower edge of the widget's depth panel: curves entirely below it are named in a note, not the legend."""

SHAPE_COLORS = {"wide-shallow": COLORS["measured"], "2×2": COLORS["delta"], "4×1": COLORS["oja"],
                "one-big-head": COLORS["hebbian"]}
"""One colour per trained shape of section 6, the same in every panel."""


def _array(x: Any) -> np.ndarray:
    """A tensor (any device or dtype), array or sequence of numbers as a float64 NumPy array."""
    return x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive whole number, got {value!r}")
    return int(value)


def crosstalk_figure(hop: HopSample) -> Figure:
    """Section 1: left, the histogram of the crosstalk norm ‖c‖ of every chain and of the chains that failed, with
    the loss threshold √(1/2) and the signal's norm 1; right, the measured tail P(‖c‖² ≥ a) against Markov's bound
    E‖c‖²/a (log scale). ``hop`` is :func:`pavlovlab.depth.chain.one_hop`'s sample."""
    if not isinstance(hop, HopSample):
        raise TypeError(f"hop: expected the HopSample of depth.chain.one_hop, got {type(hop).__name__}")
    norm = _array(hop.crosstalk_norm).ravel()
    norm2 = norm ** 2
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.4))
    bins = np.linspace(0, 2, 41)
    ax0.hist(norm, bins, density=True, color=COLORS["measured"], alpha=0.5, label="all chains")
    ax0.hist(norm[_array(hop.failed).ravel() > 0], bins, density=True, color=COLORS["delta"], alpha=0.6,
             label="chains that failed")
    ax0.axvline(float(theory.loss_threshold(0.0)), ls="--", color=COLORS["theory"],
                label="$\\sqrt{1/2}$: threshold for $t = 0$")
    ax0.axvline(1, ls=":", color="#999999", label="1: the signal's norm")
    plotting.labels(ax0, "How long is the crosstalk?", "crosstalk norm ‖c‖", "density")
    a = np.linspace(0.05, 2, 80)
    ax1.semilogy(a, [(norm2 >= x).mean() for x in a], color=COLORS["measured"],
                 label="measured P(‖c‖² ≥ a)")
    plotting.theory(ax1, a, np.minimum(1, norm2.mean() / a), label="Markov: E‖c‖² / a")
    ax1.axvline(0.5, ls="--", color=COLORS["theory"])
    ax1.set_ylim(1e-4, 1.5)
    plotting.labels(ax1, "The tail of ‖c‖², and the one inequality we use", "a", "probability (log scale)")
    fig.tight_layout()
    return fig


def load_figure(ns: Sequence[int] | np.ndarray, errors: Mapping[int, Sequence[float]],
                chains: int | Sequence[int] | np.ndarray) -> Figure:
    """Section 1: the measured one-hop error against the load n/d_k for each head dimension d_k of ``errors``
    (``{d_k: error at each n of ns}``, measured over ``chains`` chains: one number, or one per n; ± 2 binomial
    standard errors, zeros left off the log axis), the Gaussian theory for each, and, for the largest d_k, the
    derived bound (dotted) and the paper's (n − 1)/d_k (grey)."""
    pairs = np.asarray(ns, dtype=float)
    counts = np.broadcast_to(np.asarray(chains), pairs.shape)
    if not (np.issubdtype(counts.dtype, np.integer) and (counts >= 1).all()):
        raise ValueError(f"chains: expected positive whole numbers (one, or one per n), got {chains!r}")
    if not errors:
        raise ValueError("errors: expected {d_k: errors at each n}, got an empty mapping")
    fig, ax = plt.subplots()
    colors = [COLORS["hebbian"], COLORS["measured"], COLORS["oja"], COLORS["delta"]]
    for (d_k, errs), color in zip(sorted(errors.items()), colors, strict=False):
        p = np.asarray(errs, dtype=float)
        if p.shape != pairs.shape:
            raise ValueError(f"errors[{d_k}]: expected {pairs.size} error rates (one per n), got shape {p.shape}")
        se = np.sqrt(np.maximum(p * (1 - p), 1e-4) / counts)
        seen = p > 0
        ax.errorbar(pairs[seen] / d_k, p[seen], yerr=2 * se[seen], fmt="o", ms=4, color=color,
                    label=f"measured, $d_k$ = {d_k} (±2 SE)")
        x = np.linspace(2, pairs.max(), 60)
        plotting.theory(ax, x / d_k, np.asarray(theory.hop_error_theory(x, d_k)),
                        label=f"theory, $d_k$ = {d_k}", color=color)
    big = max(errors)
    ax.plot(pairs / big, np.asarray(theory.hop_failure_bound(pairs, big)), ":", color=COLORS["theory"],
            label=f"derived bound, $d_k$ = {big}")
    plotting.theory(ax, pairs / big, np.asarray(theory.paper_bound(1, 1, pairs, big, cap=False)),
                    label=f"paper's (n−1)/$d_k$, $d_k$ = {big}")
    ax.axhspan(1, 3, color="#dddddd", label="≥ 1: vacuous")
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 3)
    ax.set_xlim(0, 2.1)
    plotting.labels(ax, "One hop: error of a single head (log scale)",
                    "load n / $d_k$ (associations per key dimension)", "error rate of one hop")
    return fig


def bounds_figure(rows: Sequence[Mapping[str, Any]], n: int, d_k: int) -> Figure:
    """Section 1b: the three bounds of :func:`pavlovlab.depth.chain.bounds_against_heads` (``rows``, one per H, for n
    pairs in heads of d_k = d_v) against the number of heads, the measured error of averaged heads (a zero drawn at
    1e-5) and the resolution (one error in all chains)."""
    if not rows:
        raise ValueError("rows: expected the rows of bounds_against_heads, got none")
    Hs = [r["H"] for r in rows]
    fig, ax = plt.subplots()
    for key, label, style in [("averaged", "bound, averaged heads: $M_H(2(n-1)/(d_k(1-\\bar t)))^H$", "o-"),
                              ("all_fail", "bound, one right head suffices: $\\prod_h C_h (n-1)/d_k$", "s-"),
                              ("second", "second moment only (no fall with H)", "^:")]:
        ax.semilogy(Hs, [r[key] for r in rows], style, label=label)
    ax.semilogy(Hs, [max(r["err_avg"], 1e-5) for r in rows], "kx", label="measured error, averaged (0 drawn at 1e-5)")
    ax.axhline(1 / rows[0]["chains"], ls=":", color="#999999", label="one error in all chains")
    ax.set_ylim(5e-6, 1.5)
    ax.set_xticks(Hs)
    plotting.labels(ax, f"Bounds of the paper's form, n = {n}, $d_k$ = $d_v$ = {d_k}", "heads H",
                    "error of one hop (log)")
    return fig


def heads_figure(Hs: Sequence[int] | np.ndarray, average: Sequence[StackResult], vote: Sequence[StackResult], n: int,
                 d_k: int) -> Figure:
    """Section 2: the measured one-hop error against the number of heads H (``average`` and ``vote``, one
    :class:`~pavlovlab.depth.chain.StackResult` per H), the theory of averaged heads, and p^H (all heads fail, each on
    its own), at n pairs per head of dimension d_k."""
    if not (len(Hs) == len(average) == len(vote)) or len(Hs) == 0:
        raise ValueError(f"Hs, average, vote: expected one result per H, got {len(Hs)}, {len(average)}, {len(vote)}")
    heads = np.asarray(Hs)
    p1 = float(theory.hop_error_theory(n, d_k))
    fig, ax = plt.subplots()
    ax.semilogy(heads, [r.error for r in average], "o", color=COLORS["measured"], label="measured: average")
    ax.semilogy(heads, [r.error for r in vote], "s", color=COLORS["oja"], label="measured: majority vote")
    plotting.theory(ax, heads, np.asarray(theory.hop_error_theory(n, d_k, H=heads)), label="theory: average",
                    color=COLORS["measured"])
    plotting.theory(ax, heads, p1 ** heads, label="$p^H$: all heads fail, each on its own", color=COLORS["oja"])
    ax.axhline(1 / average[0].chains, ls=":", color="#999999", label="one error in all chains (average)")
    ax.set_ylim(1e-5, 1)
    plotting.labels(ax, f"Error against the number of heads (n = {n}, $d_k$ = {d_k}, one layer)",
                    "heads per layer H", "error rate of one hop (log scale)")
    return fig


def _depth_axis(ax: plt.Axes, depths: np.ndarray) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(depths, [str(int(L)) for L in depths], minor=False)
    ax.xaxis.set_minor_formatter(plt.NullFormatter())


def depth_figure(deep: StackResult, n: int, d_k: int) -> Figure:
    """Section 3: the measured error after each layer of ``deep`` (± 2 binomial standard errors) on log–log axes,
    with the theory 1 − (1 − p)^L and its small-error form L·p, for one head of d_k with n pairs per layer."""
    err = _array(deep.error_by_depth)
    depths = np.arange(1, err.size + 1)
    se = np.sqrt(err * (1 - err) / deep.chains)
    fig, ax = plt.subplots()
    ax.errorbar(depths, err, yerr=2 * se, fmt="o", color=COLORS["measured"],
                label=f"measured ({deep.chains} chains, ±2 SE)")
    plotting.theory(ax, depths, np.asarray(theory.stack_error_theory(depths, 1, n, d_k)),
                    label="theory 1 − (1 − p)$^L$")
    plotting.theory(ax, depths, depths * float(theory.hop_error_theory(n, d_k)), label="L · p",
                    color=COLORS["hebbian"])
    _depth_axis(ax, depths)
    plotting.labels(ax, f"With clean-up (n = {n}, $d_k$ = {d_k}, one head)",
                    "depth L (number of stacked hops, log scale)", "end-to-end error rate (log scale)")
    return fig


def raw_chain_figure(raw: RawChainResult, clean: StackResult, n: int, d: int) -> Figure:
    """Section 4: left, the noise-to-signal power ρ of the raw read-out after each layer of ``raw`` against
    (1 + λ)^L − 1 and L·λ, λ = (n − 1)/d; right, the decoding error of ``raw`` and of ``clean`` (a clean-up at every
    layer; zeros drawn at 1e-4) against depth on log–log axes, with a line of slope 1 for reference."""
    depths = np.arange(1, len(raw.error_by_depth) + 1)
    lam = (n - 1) / d
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax0.semilogy(depths, _array(raw.noise_by_depth), "o", color=COLORS["measured"], label="measured ρ (no clean-up)")
    plotting.theory(ax0, depths, np.asarray(theory.raw_noise_theory(depths, n, d)), label="(1 + λ)$^L$ − 1")
    plotting.theory(ax0, depths, depths * lam, label="L λ (linear)", color=COLORS["hebbian"])
    plotting.labels(ax0, f"Noise of the raw read-out (n = {n}, d = {d})", "depth L", "noise / signal power ρ (log)")
    ax1.plot(depths, _array(raw.error_by_depth), "o-", color=COLORS["measured"], label="no clean-up (raw read-outs)")
    ax1.plot(depths, np.maximum(_array(clean.error_by_depth), 1e-4), "s-", color=COLORS["delta"],
             label="clean-up every layer")
    plotting.theory(ax1, depths, 1e-3 * depths, label="slope 1 (linear), for reference")
    _depth_axis(ax1, depths)
    plotting.labels(ax1, "Decoding error against depth", "depth L (log scale)", "error rate (log scale)")
    fig.tight_layout()
    return fig


def contest_figure(cached: Mapping[int, Mapping[str, Any]]) -> Figure:
    """Section 6: one panel per number of hops K of ``cached`` (``{K: contest.cached_shape_runs(K)}``), the
    held-out accuracy of each shape against the training step: the mean over seeds, shaded from the lowest seed to
    the highest."""
    if not cached:
        raise ValueError("cached: expected {hops: cached runs}, got an empty mapping")
    fig, axes = plt.subplots(1, len(cached), figsize=(4 * len(cached), 3.4), sharey=True, squeeze=False)
    for ax, (K, record) in zip(axes[0], sorted(cached.items()), strict=True):
        for run in record["runs"]:
            acc = np.array(run["accuracy"])
            color = SHAPE_COLORS.get(run["shape"], COLORS["theory"])
            ax.plot(run["step"], acc.mean(0), "-", color=color, label=run["shape"])
            ax.fill_between(run["step"], acc.min(0), acc.max(0), color=color, alpha=0.2)
        s = record["setup"]
        plotting.labels(ax, f"K = {K}: {s['seeds']} seeds × {s['steps']} steps (cached)", "training step",
                        "held-out accuracy")
    fig.tight_layout()
    return fig


def budget_cuts(budget: int, min_head: int = 4) -> list[int]:
    """The numbers of heads H' that cut ``budget`` head dimensions into equal heads of at least ``min_head``."""
    budget, min_head = _check_positive_int("budget", budget), _check_positive_int("min_head", min_head)
    return [h for h in range(1, budget + 1) if budget % h == 0 and budget // h >= min_head]


def depth_and_width(L: int, H: int, load: float, d_k: int = 32, max_heads: int = 6) -> Figure:
    """Section 7's widget, from the theory (averaged heads, a clean-up at every layer).

    Left: the end-to-end error 1 − (1 − p_H)^L against depth for 1 to ``max_heads`` heads of ``d_k`` at n =
    round(load·d_k) pairs per head (your H in bold, your L starred), with the paper's L((n − 1)/d_k)^H dotted; heads
    whose curve lies below :data:`WIDGET_YMIN` at every depth are named in one legend entry instead of one each.
    Right: the same L-hop task with the budget H·d_k per layer cut into H' heads of H·d_k/H' dimensions
    (:func:`budget_cuts`), the fewest errors highlighted, errors below :data:`FLOOR` drawn at it.
    """
    L, H, d_k = _check_positive_int("L", L), _check_positive_int("H", H), _check_positive_int("d_k", d_k)
    if not (isinstance(load, (int, float)) and np.isfinite(load) and load > 0):
        raise ValueError(f"load: expected a positive finite number of pairs per key dimension, got {load!r}")
    depths, heads = np.arange(1, 17), np.arange(1, max_heads + 1)
    n, budget = max(2, round(load * d_k)), H * d_k
    cuts = budget_cuts(budget)
    p_cut = np.asarray(theory.hop_error_theory(n, np.array([budget // h for h in cuts]), H=np.array(cuts)))
    p_heads = np.asarray(theory.hop_error_theory(n, np.full(heads.size, d_k), H=heads))
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.6))
    hidden = []
    for h, p in zip(heads, p_heads, strict=True):
        curve = 1 - (1 - p) ** depths
        visible = bool((curve >= WIDGET_YMIN).any())
        if not visible:
            hidden.append(int(h))
        ax0.semilogy(depths, curve, lw=3 if h == H else 1, color=plt.cm.viridis((h - 1) / max_heads),
                     label=f"H = {h}" if visible else None)
    ax0.semilogy(depths, theory.paper_bound(depths, H, n, d_k), ":", color=COLORS["theory"],
                 label="paper's expression, your H")
    if hidden:
        span = f"{hidden[0]}–{hidden[-1]}" if len(hidden) > 1 else f"{hidden[0]}"
        ax0.plot([], [], " ", label=f"H = {span}: below $10^{{{round(np.log10(WIDGET_YMIN))}}}$")
    mine = 1 - (1 - p_heads[H - 1]) ** L
    ax0.plot([L], [max(mine, WIDGET_YMIN)], "k*", ms=12)
    ax0.set_ylim(WIDGET_YMIN, 2)
    ax0.legend(fontsize=7, ncol=2)
    plotting.labels(ax0, f"n = {n}, d_k = {d_k}: error of L={L}, H={H}: {mine:.1e}", "depth L", "end-to-end error")
    errs = np.maximum(FLOOR, 1 - (1 - p_cut) ** L)
    ax1.bar([f"{h}×{budget // h}" for h in cuts], errs,
            color=[COLORS["delta"] if e == errs.min() else COLORS["measured"] for e in errs])
    ax1.set_yscale("log")
    ax1.tick_params(axis="x", labelsize=7)
    plotting.labels(ax1, f"The same {L}-hop task, H·d_k = {budget} per layer, cut into heads",
                    "heads × d_k per layer", f"end-to-end error (theory, floor {FLOOR:.0e})")
    fig.tight_layout()
    return fig


__all__ = [
    "FLOOR",
    "SHAPE_COLORS",
    "WIDGET_YMIN",
    "bounds_figure",
    "budget_cuts",
    "contest_figure",
    "crosstalk_figure",
    "depth_and_width",
    "depth_figure",
    "heads_figure",
    "load_figure",
    "raw_chain_figure",
]
