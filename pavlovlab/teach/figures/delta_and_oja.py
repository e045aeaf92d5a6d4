"""The figures of ``06_delta_and_oja``: the drift explorer widget, the rules' fixed points on two kinds of foods,
the error on one key written again and again, DeltaNet's cost, and Oja's unit finding the main axis.

Each ``draw_*`` makes one figure from results the notebook computed (or computes the few numbers it shows),
so that a figure cell is one readable call. :func:`fixed_points_by_foods` is the measurement behind section
2b's figure (the forgetting package has the pieces; this puts them together for the notebook).
"""

from __future__ import annotations

import functools
import timeit
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import torch

from pavlovlab.attention import delta_rule_attention
from pavlovlab.forgetting import drift, oja
from pavlovlab.memory.associative import AssociativeMemory
from pavlovlab.teach import plotting
from pavlovlab.teach.plotting import COLORS

RULE_COLORS = {**COLORS, "oja_subspace": "#7570b3", "oja_clamped": "#e7298a"}
"""One colour per rule of this notebook (the two Oja-type memory rules apart from Oja's unit)."""

STREAMS = {"redraw": drift.redraw_stream, "rotation": drift.rotation_stream, "arrival": drift.arrival_stream}
"""The kinds of drift the explorer offers: foods redrawn every P steps, turning a full circle every P steps,
or new bells arriving every P steps."""

EXPLORER_RULES = ("all three", "hebbian", "delta", "oja_subspace", "oja_clamped")
"""The rule choices of :func:`drift_explorer` ("all three": Hebbian, delta and the Oja subspace rule)."""


def drift_explorer(kind: str = "redraw", rule: str = "all three", lr: float = 0.5, period: int = 300,
                   steps: int = 1000, seed: int = 1) -> plt.Figure:
    """Track one stream of 8 bells (d_k = d_v = 16, one seed) with the chosen rule(s) and draw the tracking
    cosine (left) and the memory norm ‖S‖_F on a log axis (right), the drift times marked.

    ``kind`` is a key of :data:`STREAMS`, ``rule`` one of :data:`EXPLORER_RULES`, ``lr`` the learning rate η,
    ``period`` P in steps. Long lines are drawn without markers (1,000 points each)."""
    if kind not in STREAMS:
        raise ValueError(f"kind: expected one of {sorted(STREAMS)}, got {kind!r}")
    if rule not in EXPLORER_RULES:
        raise ValueError(f"rule: expected one of {list(EXPLORER_RULES)}, got {rule!r}")
    stream = STREAMS[kind](8, 16, 16, steps, period, generator=torch.Generator().manual_seed(seed))
    rules = ("hebbian", "delta", "oja_subspace") if rule == "all three" else (rule,)
    out = drift.track(stream, rules, lr=lr)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.2))
    for r in rules:
        ax0.plot(out[r]["cosine"], color=RULE_COLORS[r], lw=1.2, marker="", label=r)
        ax1.semilogy(out[r]["norm"].clamp(max=1e6), color=RULE_COLORS[r], lw=1.2, marker="", label=r)
    for ax in (ax0, ax1):
        plotting.mark_times(ax, stream.drift_times.tolist())
    ax0.set_ylim(-0.2, 1.05)
    plotting.labels(ax0, f"{kind} stream, P = {period}, η = {lr}", "step", "tracking cosine")
    plotting.labels(ax1, "Memory size", "step", "‖S‖_F (log)")
    fig.subplots_adjust(wspace=0.3, bottom=0.17)
    return fig


def fixed_points_by_foods(stream: drift.DriftStream, kinds: Mapping[str, torch.Tensor],
                          rules: Sequence[str] = ("hebbian", "delta", "oja_subspace", "oja_clamped"),
                          lr: float = 0.5, *, progress: bool = False) -> tuple[dict, dict, dict]:
    """Section 2b's measurement: the stream with its foods scaled by each profile of ``kinds`` (name ->
    (d_v,) scales), tracked by ``rules``; at the last step the tracking cosine, gain and norm of each rule,
    and the predicted fixed points from the last food table (V, rows) and the keys K.

    Returns ``(late, fixed, memories)``: ``late[kind][rule]`` holds (batch,) tensors ``cosine``, ``gain``,
    ``norm`` at the last step; ``fixed[kind, name]`` the mean ``cosine`` and ``norm`` of the fixed point
    of ``"oja_subspace"`` (``P⊥ S_drift +`` the dual basis, from the memory at the last drift), of the dual
    basis alone (``"dual basis"``, from S = 0) and of ``"oja_clamped"`` (``S_a = k / v_a`` per unit);
    ``memories[kind]`` = (S at the last drift, S at the end, V, K) of the subspace rule."""
    last_drift = int(stream.drift_times[-1])
    late: dict = {}
    fixed: dict = {}
    memories: dict = {}
    for kind, scales in kinds.items():
        s = drift.scale_values(stream, scales.to(stream.values.device))
        out = drift.track(s, tuple(rules), lr=lr, progress=progress)
        at_drift = drift.track(s.first(last_drift), ("oja_subspace",), lr=lr).S[0]
        late[kind] = {r: {m: out[r][m][:, -1].cpu() for m in ("cosine", "gain", "norm")} for r in rules}
        V, K = s.targets[:, -1], s.probes
        memories[kind] = (at_drift, out["oja_subspace"]["S"], V, K)
        candidates = (("oja_subspace", oja.memory_fixed_point(at_drift, K, V)),
                      ("dual basis", oja.memory_fixed_point(0 * at_drift, K, V)),
                      ("oja_clamped", (V.mT / V.square().sum(-2)[..., None]) @ K))
        for name, S in candidates:
            fixed[kind, name] = dict(cosine=torch.nn.functional.cosine_similarity(K @ S.mT, V, dim=-1).mean().item(),
                                     norm=torch.linalg.matrix_norm(S).mean().item())
    return late, fixed, memories


def draw_fixed_points(late: Mapping, fixed: Mapping) -> plt.Figure:
    """One panel per kind of foods: each rule's seeds at the last step (‖S‖_F on a log axis against the
    tracking cosine), the predicted fixed points (×) and the dual basis (+), from :func:`fixed_points_by_foods`."""
    kinds = list(late)
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 3.6), sharey=True, squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        for r, m in late[kind].items():
            ax.scatter(m["norm"], m["cosine"], color=RULE_COLORS[r], s=18, label=r)
        for r, marker in (("oja_subspace", "x"), ("oja_clamped", "x"), ("dual basis", "+")):
            if (kind, r) in fixed:
                color = RULE_COLORS["oja_subspace" if r == "dual basis" else r]
                ax.scatter(fixed[kind, r]["norm"], fixed[kind, r]["cosine"], color=color, marker=marker, s=80)
        ax.set_xscale("log")
        plotting.labels(ax, kind, "‖S‖_F at the last step (log)", "tracking cosine", legend=False)
    first = axes[0][0]
    first.scatter([], [], color="k", marker="x", label="fixed point (may not be reached)")
    first.scatter([], [], color="k", marker="+", label="dual basis (from S = 0)")
    first.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def error_on_one_key(beta: float, writes: int = 30) -> torch.Tensor:
    """|v − S k| after each of ``writes`` delta writes of one unit key with one food (d_k = 4, d_v = 1, float64),
    starting from S = 0: (writes,). ``pl.AssociativeMemory`` refuses β > 2, so beyond it the rule
    ``S ← S + β (v − S k) kᵀ`` is written out here."""
    key = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    food = torch.ones(1, dtype=torch.float64)
    if beta <= 2:
        memory = AssociativeMemory(4, 1, rule="delta", lr=beta, dtype=torch.float64)
        ran = memory.run(key.expand(writes, 4), food.expand(writes, 1), key.expand(writes, 4))
        assert ran is not None                                  # run returns the reads when given queries
        reads = ran[:, 0]
    else:
        S, out = torch.zeros(1, 4, dtype=torch.float64), []
        for _ in range(writes):
            S = S + beta * (food - S @ key)[:, None] * key[None, :]
            out.append((S @ key)[0])
        reads = torch.stack(out)
    return (food - reads).abs()


def draw_error_on_one_key(betas: Sequence[float] = (0.5, 1.8, 2.0, 2.2), writes: int = 30) -> plt.Figure:
    """The error on one key written again and again (:func:`error_on_one_key`) for each β, on a log axis, with
    the theory |1 − β|ⁿ dashed."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    n = torch.arange(1, writes + 1)
    for beta, color in zip(betas, ("#1b9e77", "#7570b3", "#e6ab02", "#d95f02", "#666666"), strict=False):
        ax.semilogy(n, error_on_one_key(beta, writes), marker="o", ms=3, color=color, label=f"β = {beta}")
        plotting.theory(ax, n, abs(1 - beta) ** n, label=None)
    plotting.labels(ax, "Error on a key written again and again (dashed: |1 − β|ⁿ)", "write n", "|v − S k|")
    return fig


def delta_net_cost(lengths: Sequence[int] = (128, 256, 512, 1024), *, heads: int = 4, d: int = 32,
                   generator: torch.Generator | None = None, device: torch.device | str = "cpu") -> plt.Figure:
    """Time DeltaNet's recurrent and chunkwise forms (``pl.delta_rule_attention``, β = 0.5, unit keys) on
    ``heads`` random sequences of each length and draw seconds against length on log axes (this machine's
    timings: not a checked result). Each point is the fastest of three runs, so that a pause of the machine
    (another program, the garbage collector) does not show as a cost of the form."""
    timings: dict[str, list[float]] = {"recurrent": [], "chunk": []}
    for T in lengths:
        q, k = (torch.nn.functional.normalize(torch.randn(heads, T, d, generator=generator), dim=-1).to(device)
                for _ in range(2))
        v = torch.randn(heads, T, d, generator=generator).to(device)
        for mode, seconds in timings.items():
            run = functools.partial(delta_rule_attention, q, k, v, 0.5, mode=mode)
            seconds.append(min(timeit.repeat(run, number=1, repeat=3)))
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for (mode, seconds), ls in zip(timings.items(), ("-", "--"), strict=True):
        ax.loglog(list(lengths), seconds, marker="o", ls=ls, color=COLORS["delta"], label=f"{mode} form")
    plotting.labels(ax, f"DeltaNet cost ({heads} heads, d = {d})", "sequence length T", "seconds (this machine)")
    return fig


def draw_oja_unit(x: torch.Tensor, w: torch.Tensor, top: torch.Tensor, w_path: torch.Tensor,
                  hebb_path: torch.Tensor) -> plt.Figure:
    """Left: the first cloud ``x[0]`` (n, 2), its top eigenvector ``top[0]`` (2,) dashed and Oja's weight
    ``w[0]`` (2,) as an arrow (both × 3). Right: ‖w‖ along training for Oja's unit (``w_path``, (clouds, steps,
    2)) and plain Hebb (``hebb_path``, same shape), on a log axis."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.8))
    pts, u, wl = x[0].cpu(), top[0].cpu() * 3, w[0].cpu() * 3
    ax0.scatter(pts[:, 0], pts[:, 1], s=3, alpha=0.3, color="#999999", label="data")
    ax0.plot([-u[0], u[0]], [-u[1], u[1]], ls="--", marker="", color=COLORS["theory"], label="top eigenvector (eigh)")
    ax0.annotate("", xy=wl.tolist(), xytext=(0, 0), arrowprops=dict(color=COLORS["oja"], width=2))
    ax0.plot([], [], color=COLORS["oja"], label="Oja's w (× 3)")
    ax0.set_aspect("equal")
    plotting.labels(ax0, "Oja's unit finds the main axis", "x₁", "x₂")
    ax1.semilogy(w_path.norm(dim=-1).T.cpu(), color=COLORS["oja"], lw=1, marker="")
    ax1.semilogy(hebb_path.norm(dim=-1).T.cpu(), color=COLORS["hebbian"], lw=1, marker="")
    ax1.plot([], [], color=COLORS["oja"], label="Oja (each cloud)")
    ax1.plot([], [], color=COLORS["hebbian"], label="plain Hebb")
    plotting.labels(ax1, "Weight norm: homeostasis vs runaway", "sample", "‖w‖ (log scale)")
    fig.tight_layout()
    return fig


__all__ = ["EXPLORER_RULES", "RULE_COLORS", "STREAMS", "delta_net_cost", "draw_error_on_one_key",
           "draw_fixed_points", "draw_oja_unit", "drift_explorer", "error_on_one_key", "fixed_points_by_foods"]
