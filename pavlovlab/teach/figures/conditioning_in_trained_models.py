"""The figures of ``08_conditioning_in_trained_models``: each figure cell of the notebook is one call here.

Every ``draw_*`` function takes what the notebook measured (its shapes are given per function), draws one
figure in the course's style and returns it (``;`` after the call in a notebook keeps it from showing twice).
:func:`circuit_effects` and :func:`trained_effects` run the package's probes under a progress bar (the probes
have none, and on a busy machine the runs take a while). The last functions turn the trained models'
measurements into the sentences the notebook prints, so that no number of a training run is written into its
prose (:func:`head_orthogonality`, :func:`best_head_fidelity`, :func:`observed_by_attention`,
:func:`claim_evidence`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import torch
from tqdm.auto import tqdm

from ... import statistics
from ...phenomena import probes, sequences
from ..plotting import COLORS, labels

RULES = ("hebbian", "delta")
"""The two hand-built memories of the notebook: the Hebbian (linear attention) and the delta (DeltaNet) write."""

RANDOM_GREY = "#999999"
"""The colour of random unit keys, the chance level a trained head is compared with."""


def circuit_effects(n: int = 300, lr: float = 0.5, *, progress: bool = True) -> dict[str, dict[str, torch.Tensor]]:
    """Every design's effects on both hand-built memories: ``{rule: {design: (1, n)}}``, one effect per sequence
    (:func:`pavlovlab.phenomena.probes.circuit_effects` at learning rate ``lr``), with a progress bar over the
    rule × design runs."""
    runs = [(rule, d) for rule in RULES for d in sequences.DESIGNS]
    out: dict[str, dict[str, torch.Tensor]] = {rule: {} for rule in RULES}
    for rule, d in tqdm(runs, disable=not progress, desc="probing the hand-built memories", leave=False):
        out[rule][d] = probes.circuit_effects(d, rule=rule, n=n, lr=lr)[None]
    return out


def trained_effects(runs: Mapping[str, Sequence[Mapping[str, Any]]], *, n: int = 300, measure: str = "response",
                    progress: bool = True) -> dict[str, dict[str, torch.Tensor]]:
    """:func:`pavlovlab.phenomena.probes.model_effects` of every design on every trained model, one attention and
    design at a time under a progress bar: ``{attention: {design: (seeds, n)}}``, the same numbers as one call
    (every model sees the same sequences per design, drawn from the probe's own seed)."""
    out: dict[str, dict[str, torch.Tensor]] = {a: {} for a in runs}
    todo = [(a, d) for a in runs for d in sequences.DESIGNS]
    for a, d in tqdm(todo, disable=not progress, desc=f"probing the trained models ({measure})", leave=False):
        out[a][d] = probes.model_effects({a: runs[a]}, (d,), n=n, measure=measure)[a][d]
    return out


def _errorbars(ax: plt.Axes, xs: Sequence[float], effects: Sequence[statistics.Effect], color: str,
               label: str) -> None:
    below, above = [e.mean - e.lo for e in effects], [e.hi - e.mean for e in effects]
    ax.errorbar(xs, [e.mean for e in effects], yerr=[below, above], fmt="o", color=color, capsize=3, label=label)


def _design_ticks(ax: plt.Axes, shown: Sequence[str]) -> None:
    ax.set_xticks(range(len(shown)), [d.replace(" ", "\n") for d in shown])


def draw_circuit_effects(circuits: Mapping[str, Mapping[str, torch.Tensor]]) -> plt.Figure:
    """The effect of every design on each hand-built memory (mean and 95 % interval over sequences; ``circuits``
    as :func:`circuit_effects` returns it), next to the effect derived for orthonormal keys
    (:func:`pavlovlab.phenomena.sequences.predicted_effect`)."""
    fig, ax = plt.subplots(figsize=(10, 3.4))
    for i, rule in enumerate(circuits):
        es = [statistics.summarize(x) for x in circuits[rule].values()]
        xs = [j + (i - 0.5) * 0.25 for j in range(len(es))]
        _errorbars(ax, xs, es, COLORS[rule], f"{rule} memory (measured)")
        ax.plot(xs, [sequences.predicted_effect(d, rule=rule) for d in circuits[rule]], "_", ms=16, mew=2,
                color=COLORS[rule], label=f"{rule}, orthonormal keys (derived)")
    ax.axhline(0, color=RANDOM_GREY, lw=0.8)
    _design_ticks(ax, list(next(iter(circuits.values()))))
    labels(ax, "The probes on hand-built memories (unit compound keys)", "design", "effect (strength of o)")
    return fig


def draw_blocking_sweep(sweep: Mapping[float, statistics.Effect]) -> plt.Figure:
    """The blocking effect of the hand-built delta memory against its learning rate (``sweep``: rate → effect),
    over Rescorla–Wagner's prediction for unit compound keys (dashed)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    grid = torch.linspace(0.02, 1.0, 50).tolist()
    ax.plot(grid, [sequences.rw_effect("blocking", lr=b) for b in grid], "--", color=COLORS["theory"],
            label="Rescorla–Wagner")
    ax.errorbar(list(sweep), [e.mean for e in sweep.values()], yerr=[e.hi - e.mean for e in sweep.values()],
                fmt="o", color=COLORS["delta"], capsize=3, label="delta memory (measured)")
    labels(ax, "Blocking in the hand-built delta memory", "learning rate β", "blocking effect")
    return fig


def draw_model_effects(results: Mapping[str, Mapping[str, torch.Tensor]]) -> plt.Figure:
    """Design against control in trained models (``results``: attention → design → effects (seeds, sequences),
    as :func:`pavlovlab.phenomena.probes.model_effects` returns them): left acquisition, right the other designs,
    each the mean over seeds with its 95 % interval and the seeds as small dots; a band per attention marks
    effects within 10 % of its acquisition."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1, 4]})
    kinds = len(results)
    for i, (attention, per) in enumerate(results.items()):
        for ax, shown in ((ax0, sequences.DESIGNS[:1]), (ax1, sequences.DESIGNS[1:])):
            es = [statistics.summarize(per[d]) for d in shown]
            xs = [j + (i - (kinds - 1) / 2) * 0.22 for j in range(len(es))]
            _errorbars(ax, xs, es, COLORS[attention], attention)
            for x, e in zip(xs, es, strict=True):
                ax.plot([x] * len(e.seed_means), e.seed_means, ".", color=COLORS[attention], alpha=0.5, ms=4)
            _design_ticks(ax, shown)
        margin = 0.1 * statistics.summarize(per["acquisition"]).mean
        ax1.axhspan(-margin, margin, color=COLORS[attention], alpha=0.07)
    ax1.axhline(0, color=RANDOM_GREY, lw=0.8)
    labels(ax0, "Acquisition", "", "effect (centred logit of o)", legend=False)
    labels(ax1, "The other designs (positive = the Rescorla–Wagner phenomenon)", "design", "effect")
    return fig


def draw_key_crosstalk(heads: Sequence[Mapping[str, Any]]) -> plt.Figure:
    """The keys that trained heads write (``heads``: one dict per model, as
    :func:`pavlovlab.models.head_memory.trained_head_overlaps` returns it: ``overlap`` and ``random`` (N, H),
    ``eigvals`` and ``eigvals_random`` (N, H, P), ``theory``). Left: each head's mean crosstalk with its 95 %
    interval over the N sequences, random unit keys in grey and (n − 1)/d_k dashed. Right: the eigenvalues of
    the keys' Gram matrix, largest first, averaged over sequences."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.6))
    n_heads = heads[0]["overlap"].shape[1]
    ranks = range(1, heads[0]["eigvals"].shape[-1] + 1)
    for s, h in enumerate(heads):
        for j in range(n_heads):
            c = h["overlap"][:, j]
            ax0.bar(n_heads * s + j, c.mean(), yerr=1.96 * c.std() / len(c) ** 0.5, color=COLORS["linear"],
                    capsize=3, label="trained keys" if s + j == 0 else None)
            ax0.bar(n_heads * s + j, h["random"][:, j].mean(), color=RANDOM_GREY, alpha=0.35,
                    label="random unit keys" if s + j == 0 else None)
            ax1.plot(ranks, h["eigvals"][:, j].flip(-1).mean(0), "o-", color=COLORS["linear"], alpha=0.7, ms=3,
                     label="trained heads" if s + j == 0 else None)
    ax0.axhline(float(heads[0]["theory"]), ls="--", color=COLORS["theory"], label="(n − 1)/d_k")
    ax1.plot(ranks, heads[0]["eigvals_random"][:, 0].flip(-1).mean(0), "s--", color=RANDOM_GREY,
             label="random unit keys")
    ax0.set_xticks(range(n_heads * len(heads)), [f"seed {s}\nhead {j}" for s in range(len(heads))
                                                 for j in range(n_heads)])
    labels(ax0, "Crosstalk of the keys a head writes", "", "mean crosstalk per item")
    labels(ax1, "Overlap spectrum of the written keys", "eigenvalue rank", "eigenvalue of K Kᵀ")
    return fig


def draw_recall_against_load(loads: Sequence[Mapping[str, torch.Tensor]]) -> plt.Figure:
    """Trained linear models as the load grows (``loads``: one dict per model, as
    :func:`pavlovlab.models.head_memory.recall_against_load` returns it: ``n`` (L,), ``accuracy`` (L,),
    ``fidelity`` and ``fidelity_theory`` (L, H)). Left: recall accuracy against the number of pairs. Right: each
    head's read-out fidelity |cos(Sq, v_j)| against notebook 04's 1/√(1 + c) at its measured crosstalk c."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.4))
    for s, L in enumerate(loads):
        ax0.plot(L["n"], L["accuracy"], "o-", color=COLORS["linear"], alpha=0.7,
                 label="trained linear models" if s == 0 else None)
        for j in range(L["fidelity"].shape[1]):
            ax1.plot(L["fidelity_theory"][:, j], L["fidelity"][:, j].abs(), "o", color=COLORS["linear"], alpha=0.7,
                     label="trained heads, each load" if s + j == 0 else None)
    ax1.plot([0, 1], [0, 1], "--", color=COLORS["theory"], label="read-out as notebook 04 predicts")
    labels(ax0, "Recall against load", "pairs in the context n", "held-out recall accuracy")
    labels(ax1, "A head's read-out against notebook 04's curve", "1/√(1 + c) at the measured crosstalk c",
           "measured read-out fidelity |cos(Sq, v_j)|")
    return fig


# ------------------------------------------------------------------ sentences generated from the run
def head_orthogonality(heads: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each trained head's key crosstalk against random unit keys drawn for the same sequences (``heads`` as for
    :func:`draw_key_crosstalk`): per head ``seed``, ``head``, ``crosstalk`` and ``random`` (means over sequences),
    ``theory`` ((n − 1)/d_k), ``largest`` and ``largest_random`` (the largest eigenvalue of the keys' Gram matrix,
    mean over sequences, of the trained and of the random keys) and ``verdict``: "more orthogonal than chance" when
    the 95 % interval of the paired difference (trained − random, over sequences) lies below 0, "less orthogonal
    than chance" above 0, else "as random keys"."""
    out = []
    for s, h in enumerate(heads):
        for j in range(h["overlap"].shape[1]):
            c, r = h["overlap"][:, j], h["random"][:, j]
            diff, hw = float((c - r).mean()), float(1.96 * (c - r).std() / len(c) ** 0.5)
            verdict = ("more orthogonal than chance" if diff + hw < 0 else "less orthogonal than chance"
                       if diff - hw > 0 else "as random keys")
            out.append(dict(seed=s, head=j, crosstalk=float(c.mean()), random=float(r.mean()),
                            theory=float(h["theory"]), verdict=verdict, largest=float(h["eigvals"][:, j, -1].mean()),
                            largest_random=float(h["eigvals_random"][:, j, -1].mean())))
    return out


def best_head_fidelity(loads: Sequence[Mapping[str, torch.Tensor]]) -> list[dict[str, Any]]:
    """Per load n (``loads`` as for :func:`draw_recall_against_load`): the models' recall accuracy (``recall``:
    mean, ``lowest``, ``highest`` over models) and, for each model's best head (the one with the largest mean
    |fidelity| over loads), the mean over models of its |fidelity| (``fidelity``) and of notebook 04's curve at
    its crosstalk (``curve``)."""
    acc = torch.stack([L["accuracy"] for L in loads]).double()                             # (models, loads)
    fid = torch.stack([L["fidelity"] for L in loads]).double().abs()                       # (models, loads, heads)
    curve = torch.stack([L["fidelity_theory"] for L in loads]).double()
    best = fid.mean(1).argmax(-1)
    rows = torch.arange(len(loads))
    f, t = fid[rows, :, best], curve[rows, :, best]                                        # (models, loads)
    return [dict(n=int(n), recall=float(acc[:, i].mean()), lowest=float(acc[:, i].min()),
                 highest=float(acc[:, i].max()), fidelity=float(f[:, i].mean()), curve=float(t[:, i].mean()))
            for i, n in enumerate(loads[0]["n"].tolist())]


def observed_by_attention(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per attention: its designs grouped by what was observed ("effect", "small", "none", ...), from
    the rows of :func:`pavlovlab.phenomena.probes.verdicts`."""
    lines = []
    for attention in dict.fromkeys(r["attention"] for r in rows):
        groups: dict[str, list[str]] = {}
        for r in rows:
            if r["attention"] == attention:
                groups.setdefault(r["observed"], []).append(r["design"])
        lines.append(f"{attention:>7}: " + " | ".join(f"{word}: {', '.join(ds)}" for word, ds in groups.items()))
    return lines


def _iv(e: statistics.Effect, scale: float = 1.0, digits: int = 2, unit: str = "") -> str:
    return (f"{scale * e.mean:+.{digits}f}{unit} [{scale * e.lo:+.{digits}f}, {scale * e.hi:+.{digits}f}]")


WORD = {True: "holds", False: "FAILS", None: "inconclusive"}
"""The verdict words of :func:`pavlovlab.phenomena.probes.separation_verdicts`' ``holds``."""


def claim_evidence(separation: Sequence[Mapping[str, Any]], model_rows: Sequence[Mapping[str, Any]],
                   heads: Sequence[Mapping[str, Any]], loads: Sequence[Mapping[str, torch.Tensor]]) -> list[str]:
    """The evidence of the notebook's summary, per claim of the paper, as lines to print: ``separation`` from
    :func:`pavlovlab.phenomena.probes.separation_verdicts`, ``model_rows`` from
    :func:`pavlovlab.phenomena.probes.verdicts` on the trained models, ``heads`` and ``loads`` as for
    :func:`head_orthogonality` and :func:`best_head_fidelity`. The closest call is the interval end nearest
    its decision line (DeltaNet's lower end against the threshold, linear attention's ends against ±threshold)."""
    holds = [r["holds"] for r in separation]
    lines = [f"1. Conditioning phenomena as predictions: {holds.count(True)} of {len(holds)} separating predictions "
             f"hold, {holds.count(False)} fail, {holds.count(None)} are inconclusive."]
    calls = []
    for r in separation:
        where = "in the answer" if r["readout"] == "response" else "read-out size lost"
        lines.append(f"   {r['design']} ({where}): DeltaNet {_iv(r['delta'])} against linear {_iv(r['linear'])}: "
                     f"{WORD[r['holds']]}")
        tau, dl, li = r["threshold"], r["delta"], r["linear"]
        calls += [(abs(dl.lo - tau), f"DeltaNet's lower end in {r['design']}, {dl.lo:+.2f}, against {tau:g}"),
                  (abs(tau - li.hi), f"linear attention's upper end in {r['design']}, {li.hi:+.2f}, against {tau:g}"),
                  (abs(li.lo + tau), f"linear attention's lower end in {r['design']}, {li.lo:+.2f}, against {-tau:g}")]
    lines.append(f"   the closest call: {min(calls)[1]}")
    row = {(r["attention"], r["design"]): r for r in model_rows}
    for d in ("blocking", "overexpectation"):
        r = row[("delta", d)]
        lines.append(f"   in DeltaNet's answer, {d}: {_iv(r['relative'], 100, 0, ' %')} of acquisition "
                     f"(observed {r['observed']})")
    ext = {a: row[(a, "extinction")] for a in ("delta", "linear")}
    ext_holds = next(r["holds"] for r in separation if r["design"] == "extinction")
    lines.append(f"2. Unlearning in context (extinction): DeltaNet {_iv(ext['delta']['effect'], digits=1)} nats = "
                 f"{_iv(ext['delta']['relative'], 100, 0, ' %')} of acquisition, linear "
                 f"{_iv(ext['linear']['effect'], digits=1)} nats: {WORD[ext_holds]}")
    o = head_orthogonality(heads)
    below = sum(h["verdict"] == "more orthogonal than chance" for h in o)
    above = sum(h["verdict"] == "less orthogonal than chance" for h in o)
    f = best_head_fidelity(loads)
    gap = max(abs(x["fidelity"] - x["curve"]) for x in f)
    at = {x["n"]: x["recall"] for x in f}
    lines += [f"3. Interference in trained heads: crosstalk below random keys in {below} of {len(o)} heads, above "
              f"in {above}, lowest {min(h['crosstalk'] for h in o):.2f} (orthonormal keys: 0);",
              f"   the best head's fidelity within {gap:.2f} of notebook 04's curve from n = {f[0]['n']} to "
              f"{f[-1]['n']}; recall {at.get(8, f[0]['recall']):.2f} at 8 pairs, {f[-1]['recall']:.2f} at "
              f"{f[-1]['n']}."]
    return lines


__all__ = ["RULES", "WORD", "best_head_fidelity", "circuit_effects", "claim_evidence", "draw_blocking_sweep",
           "draw_circuit_effects", "draw_key_crosstalk", "draw_model_effects", "draw_recall_against_load",
           "head_orthogonality", "observed_by_attention", "trained_effects"]
