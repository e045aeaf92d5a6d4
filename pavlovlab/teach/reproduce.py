"""Re-run the course's figure experiments from the package (not from the notebooks).

``run_all(out_dir, quick=True)`` calls one small function per experiment; each draws its figure(s)
into PNG files in ``out_dir`` and returns a few headline numbers, collected in ``summary.json``.
An experiment whose module is not available is reported as ``missing``; one that raises is reported
as ``failed`` with the error, and the others still run. Every file is written under a temporary name and
renamed (an interrupted run leaves no half-written PNG or JSON, and the hidden temporary files of a killed
run are removed by the next one); an existing ``summary.json`` is merged: every key this run does not
write (the entries of experiments not run this time, keys of the user's own) is kept.
"""

from __future__ import annotations

import json
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn, not when the command starts
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SUMMARY_NAME = "summary.json"


@dataclass(frozen=True)
class Experiment:
    """One figure experiment: its name, the notebook it belongs to, its title, the function."""

    name: str
    notebook: str
    title: str
    run: Callable[..., dict[str, Any]]


EXPERIMENTS: list[Experiment] = []


def experiment(name: str, notebook: str,
               title: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register ``fn(out: Path, *, quick: bool, progress: bool) -> dict`` as an experiment."""
    def register(fn):
        EXPERIMENTS.append(Experiment(name, notebook, title, fn))
        return fn
    return register


def _figure(ncols: int = 1, width: float = 6.4) -> tuple[Figure, list[Axes]]:
    """A new figure with ``ncols`` axes side by side, made without pyplot (no backend or global state touched)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, 3.6))
    axes = fig.subplots(1, ncols, squeeze=False)
    return fig, list(axes[0])


def _save(fig: Figure, out: Path, name: str) -> str:
    from .student import atomic_write

    fig.tight_layout()
    path = out / f"{name}.png"
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png"))
    return path.name


def _r(x: float | torch.Tensor, nd: int = 4) -> float:
    """``x`` (a number or a one-element tensor) rounded to ``nd`` decimals, as the summary stores it."""
    return round(float(x), nd)


def _earlier_summary(path: Path) -> dict[str, Any]:
    """The summary already in ``path``, to merge into: every key is kept except those this run writes.

    Refuses (ValueError, nothing written) a file that is not a JSON object with an ``experiments`` object
    (or none): it is not a summary this command wrote, and replacing it would lose the user's file."""
    if not path.is_file():
        return {}
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"out: {str(path)!r} exists and is not JSON ({e}); move it away or choose another "
                         "folder (it is never overwritten)") from None
    if not isinstance(earlier, dict) or not isinstance(earlier.get("experiments", {}), dict):
        raise ValueError(f"out: {str(path)!r} is not a summary written by pavlovlab reproduce (a JSON object whose "
                         "'experiments' is an object); move it away or choose another folder (it is never "
                         "overwritten)")
    return earlier


def run_all(out: str | Path, *, quick: bool = False, only: Sequence[str] | None = None,
            progress: bool = True) -> dict[str, Any]:
    """Run the experiments (all, or those named in ``only``), save PNGs and ``summary.json`` in ``out``.

    Returns the summary: ``{"quick": bool, "experiments": {name: {"status", "notebook", "figures",
    "numbers", "seconds"} or {"status": "failed", "reason"}}}``. When ``out`` already holds a
    ``summary.json``, the entries of the experiments not run this time are kept in it (and returned).
    Raises ValueError for an ``out`` that is empty, names an unknown experiment in ``only`` or holds course
    notebooks; filesystem faults raise OSError.
    """
    import matplotlib as mpl
    from tqdm.auto import tqdm

    from .plotting import use_style
    from .student import atomic_write, refuse_unsafe_outdir, remove_stale_temporaries

    out = refuse_unsafe_outdir(out, name="out")
    names = [e.name for e in EXPERIMENTS]
    if only is not None:
        if isinstance(only, str):
            raise TypeError("only: expected a list of experiment names, got a str (wrap it in a list)")
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ValueError(f"only: unknown experiment(s) {unknown}; choose from {names}")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: expected a folder, got the file {str(out)!r}")
    out.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in EXPERIMENTS if not only or e.name in only]
    summary = _earlier_summary(out / SUMMARY_NAME)
    summary.update(quick=quick, python=platform.python_version())
    summary.setdefault("experiments", {})
    remove_stale_temporaries(out)
    bar = tqdm(chosen, desc="experiments", unit="exp", disable=not progress)
    for exp in bar:
        bar.set_postfix_str(exp.name)
        res: dict[str, Any] = {"notebook": exp.notebook, "title": exp.title}
        t0 = time.perf_counter()
        try:
            with mpl.rc_context():  # the course style, for this experiment only
                use_style()
                got = exp.run(out, quick=quick, progress=progress)
            res.update(status="ok", figures=got.pop("figures", []), numbers=got)
        except Exception as e:
            if isinstance(e, OSError) and e.filename is not None:
                raise  # a file could not be written (read-only folder, disk full): the caller says so
            res.update(status="failed", reason=f"{type(e).__name__}: {e}",
                       traceback=traceback.format_exc(limit=4))
        res["seconds"] = round(time.perf_counter() - t0, 2)
        summary["experiments"][exp.name] = res
    text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    atomic_write(out / SUMMARY_NAME, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return summary


# ------------------------------------------------------------------------------ the experiments
# One function per figure experiment, in course order; each returns {"figures": [...], <numbers>}.


@experiment("conditioning", "01_pavlovian_conditioning", "acquisition, extinction and blocking (Rescorla-Wagner)")
def conditioning_designs(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..conditioning.learning import simulate
    from .plotting import plot_strengths

    n = 20 if quick else 40
    fig, axes = _figure(ncols=3, width=4.2)
    numbers, strengths = {}, {}
    for ax, design in zip(axes, ("acquisition", "extinction", "blocking"), strict=True):
        V, (_, _, labels) = simulate(design, n_trials=n, alpha=0.3)
        plot_strengths(ax, V, labels, title=design)
        strengths[design] = V
        for j, name in enumerate(labels.cs):
            numbers[f"{design}_final_V_{name}"] = _r(V[-1, j])
    # blocking vs its control: the added CS gains little strength when the first one already predicts the food
    Vb = strengths["blocking"]
    Vc, _ = simulate("blocking control", n_trials=n, alpha=0.3)
    numbers["blocked_cs_strength"] = _r(Vb[-1, -1])
    numbers["control_cs_strength"] = _r(Vc[-1, -1])
    return {"figures": [_save(fig, out, "01_conditioning_designs")], **numbers}


@experiment("hebbian_recall", "02_hebbian_memory", "recall quality of an outer-product memory vs stored pairs")
def hebbian_recall(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..capacity.average import fidelity_theory
    from ..memory.hebbian import recall_cosine
    from ..sampling import random_keys
    from .plotting import COLORS, band, labels, theory

    g = torch.Generator().manual_seed(0)
    d_k, trials = 64, (32 if quick else 128)
    ns = [1, 4, 8, 16, 32, 64, 128, 256]
    per_n = []
    for n in ns:  # one batched draw per n (trials at once)
        keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g)  # unit keys
        values = torch.randn(trials, n, d_k, generator=g)
        per_n.append(recall_cosine(keys, values).mean(-1))
    samples = torch.stack(per_n, -1)  # (trials, len(ns))
    fig, (ax,) = _figure()
    band(ax, ns, samples, label=f"measured (d_k = {d_k})", color=COLORS["hebbian"])
    theory(ax, ns, fidelity_theory(torch.tensor(ns, dtype=torch.float64), d_k), label="1/sqrt(1 + (n-1)/d_k)")
    ax.set_xscale("log", base=2)
    labels(ax, "Hebbian memory: recall fades as notes pile up", "stored pairs n", "cosine(S k, v)")
    i = ns.index(d_k)
    return {"figures": [_save(fig, out, "02_hebbian_recall")], "d_k": d_k,
            "cosine_at_n_eq_dk": _r(samples[:, i].mean()), "theory_at_n_eq_dk": _r(fidelity_theory(d_k, d_k))}


@experiment("linear_equivalence", "03_linear_attention", "parallel, recurrent and chunked forms agree")
def linear_equivalence(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..attention.forms import linear_attention

    g = torch.Generator().manual_seed(0)
    lengths = [16, 64, 256] if quick else [16, 64, 256, 1024]
    errs: dict[str, list[float]] = {m: [] for m in ("recurrent", "chunk")}
    for T in lengths:
        q, k, v = (torch.randn(2, 4, T, 16, generator=g, dtype=torch.float64) for _ in range(3))
        ref = linear_attention(q, k, v, mode="parallel")
        for m in errs:
            o = linear_attention(q, k, v, mode=m, chunk_size=32)
            errs[m].append(((o - ref).norm() / ref.norm()).item())
    fig, (ax,) = _figure()
    for m, e in errs.items():
        ax.semilogy(lengths, [max(x, 1e-18) for x in e], "o-", label=f"{m} vs parallel")
    ax.set_xscale("log", base=2)
    ax.set_title("Linear attention: three forms, one answer")
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("relative error (float64)")
    ax.legend()
    return {"figures": [_save(fig, out, "03_linear_equivalence")],
            "max_rel_error": float(f"{max(max(e) for e in errs.values()):.1e}")}


@experiment("capacity", "04_capacity_limits", "retrieval capacity against d_k under three criteria")
def capacity_scaling(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..capacity import criteria
    from .plotting import labels

    d_ks = [16, 32, 64, 128] if quick else [16, 32, 64, 128, 256]
    n_max = {"cosine": lambda d: d // 2 + 32, "argmax": lambda d: 3 * d // 2 + 48, "adversarial": lambda d: d // 4 + 16}
    names = {"cosine": "(a) every cosine ≥ 0.8", "argmax": "(b) argmax over 32 codewords",
             "adversarial": "(c) adversarial values"}
    fig, (ax,) = _figure()
    numbers: dict[str, Any] = {"d_ks": d_ks}
    for criterion, marker in zip(criteria.CRITERIA, "os^", strict=True):
        r = criteria.capacity_scaling(d_ks, criterion, trials=20 if quick else 100, n_max=n_max[criterion],
                                      threshold=0.8, codebook_size=32, generator=torch.Generator().manual_seed(10),
                                      progress=progress)
        ax.errorbar(d_ks, r.mean.tolist(), yerr=(2 * r.sem).tolist(), fmt=marker + "-", capsize=2,
                    label=f"{names[criterion]}: slope {r.slope:.2f}")
        numbers[f"capacity_{criterion}"] = [_r(m, 1) for m in r.mean.tolist()]
        numbers[f"slope_{criterion}"] = _r(r.slope, 2)
        numbers[f"slope_se_{criterion}"] = _r(r.slope_se, 2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    labels(ax, "Capacity grows like d_k for random values, like √d_k only for adversarial ones",
           "key dimension d_k", "pairs stored before the first failure")
    return {"figures": [_save(fig, out, "04_capacity_scaling")], **numbers}


@experiment("stacking", "05_depth_and_width", "error vs depth L for 1, 2 and 3 heads")
def stacking_depth(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..depth.chain import chain_error
    from ..depth.theory import stack_error_theory
    from .plotting import labels

    g = torch.Generator().manual_seed(0)
    L, n, d_k = 8, 32, 32
    trials = 16 if quick else 100
    fig, (ax,) = _figure()
    depths = list(range(1, L + 1))
    numbers: dict[str, float] = {"n": n, "d_k": d_k, "L": L}
    for H in (1, 2, 3):
        res = chain_error(L, H, n, d_k, trials=trials, generator=g)
        line, = ax.plot(depths, res.error_by_depth.tolist(), "o-", ms=3.5, label=f"H = {H} (measured)")
        ax.plot(depths, stack_error_theory(np.asarray(depths), H, n, d_k), "--", color=line.get_color(),
                label=f"H = {H} (theory)")
        numbers[f"error_L{L}_H{H}"] = _r(res.error)
    labels(ax, "Errors add up with depth, heads cut them", "depth L (hops)", "end-to-end error rate")
    return {"figures": [_save(fig, out, "05_stacking_depth")], **numbers}


@experiment("drift", "06_delta_and_oja", "tracking drifting associations: Hebbian vs delta vs Oja")
def drift_tracking(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..forgetting.drift import recovery_steps, redraw_stream, track
    from .plotting import COLORS, labels, mark_times

    g = torch.Generator().manual_seed(0)
    steps, period = (1500, 500) if quick else (5000, 1000)
    stream = redraw_stream(n_keys=8, d_k=16, d_v=16, steps=steps, period=period, generator=g)
    tr = track(stream, ("hebbian", "delta", "oja_subspace"), lr=0.5, progress=progress)
    fig, (ax,) = _figure()
    numbers: dict[str, Any] = {}
    for i, rule in enumerate(tr.rules):
        ax.plot(tr.cosine[i].tolist(), color=COLORS.get(rule), label=rule, lw=1.2)
        numbers[f"final_cosine_{rule}"] = _r(tr.cosine[i, -period // 2:].mean(), 3)
        rec = recovery_steps(tr.cosine[i], stream.drift_times)
        numbers[f"recovery_steps_{rule}"] = [None if r == float("inf") else int(r) for r in rec.tolist()]
    mark_times(ax, stream.drift_times.tolist(), label="values redrawn")
    labels(ax, "After a drift the delta rule relearns at once; Hebb lags behind", "step", "recall cosine")
    return {"figures": [_save(fig, out, "06_drift_tracking")], **numbers}


@experiment("oja", "06_delta_and_oja", "Oja's rule finds the first principal component; Hebb's norm explodes")
def oja_pca_run(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..forgetting.oja import alignment, data_cloud, oja_pca, principal_components
    from .plotting import COLORS, labels

    g = torch.Generator().manual_seed(0)
    x = data_cloud(1000, 2, generator=g)  # plain Hebb overflows float32 on much longer runs
    _, u = principal_components(x, 1)
    w0 = torch.tensor([0.1, 0.0])
    w_oja, traj_oja = oja_pca(x, lr=0.01, w0=w0, return_trajectory=True)
    w_hebb, traj_hebb = oja_pca(x, lr=0.01, w0=w0, rule="hebbian", return_trajectory=True)
    fig, (ax1, ax2) = _figure(ncols=2, width=4.4)
    ax1.scatter(x[:, 0], x[:, 1], s=2, alpha=0.3, color="#999999")
    ax1.plot(traj_oja[:, 0], traj_oja[:, 1], color=COLORS["oja"], label="Oja's w over time")
    ax1.axline((0, 0), tuple(u[:, 0].tolist()), ls="--", color=COLORS["theory"], label="1st principal axis")
    ax1.set_aspect("equal", "datalim")
    labels(ax1, "Oja's rule turns w to the principal axis", "x₁", "x₂")
    ax2.semilogy(traj_oja.norm(dim=-1), color=COLORS["oja"], label="Oja")
    ax2.semilogy(traj_hebb.norm(dim=-1), color=COLORS["hebbian"], label="Hebb")
    labels(ax2, "Weight norm ‖w‖", "sample", "‖w‖")
    return {"figures": [_save(fig, out, "06_oja_pca")], "alignment_oja": _r(alignment(w_oja, u[:, 0]), 3),
            "norm_oja": _r(w_oja.norm(), 3), "norm_hebb": float(f"{w_hebb.norm().item():.3g}")}


@experiment("decay", "07_decay_and_unlearning", "recall vs age under decay γ (RetNet): measured vs γ^lag")
def decay_retention(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..forgetting.decay import half_life, measured_half_life, recall_vs_lag, retention
    from .plotting import labels, theory

    g = torch.Generator().manual_seed(0)
    gammas = torch.tensor([0.8, 0.9, 0.95, 0.99])
    max_lag = 100 if quick else 200
    r = recall_vs_lag(gammas, max_lag, d_k=64, d_v=64, n_trials=16 if quick else 64, generator=g)
    mean = r.mean(-2)  # (heads, lags)
    lags = torch.arange(max_lag + 1)
    fig, (ax,) = _figure()
    for i, gm in enumerate(gammas.tolist()):
        ax.plot(lags, mean[i], lw=1.2, label=f"γ = {gm:.2f}")
    theory(ax, lags, retention(gammas, lags).T, label=None)
    ax.plot([], [], ls="--", color="#444444", label="theory γ^lag")
    labels(ax, "Decay: old notes fade at a rate set by γ", "age of the association (writes since)",
           "read-out strength")
    measured = measured_half_life(mean)
    return {"figures": [_save(fig, out, "07_decay_retention")], "gammas": [_r(x, 3) for x in gammas.tolist()],
            "half_life_theory": [_r(h, 2) for h in torch.as_tensor(half_life(gammas)).tolist()],
            "half_life_measured": [_r(h, 2) for h in measured.tolist()]}


@experiment("unlearning", "07_decay_and_unlearning", "forget one association: Hebbian subtraction vs delta rule")
def unlearning_methods(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..forgetting.unlearning import unlearning_experiment

    g = torch.Generator().manual_seed(0)
    reports = unlearning_experiment(n=16, d_k=64, d_v=64, overlap=0.5, repeats=2.0,
                                    n_trials=64 if quick else 256, generator=g)
    fig, (ax1, ax2) = _figure(ncols=2, width=4.0)
    names = list(reports)
    ax1.bar(names, [reports[m].residual.mean().item() for m in names], color="#1b9e77")
    ax1.set_title("What is left of the forgotten pair")
    ax1.set_ylabel("residual read-out")
    ax2.bar(names, [reports[m].collateral.mean().item() for m in names], color="#d95f02")
    ax2.set_title("Damage to the other pairs")
    ax2.set_ylabel("mean collateral change")
    for ax in (ax1, ax2):
        ax.tick_params(axis="x", labelrotation=15)
    numbers = {}
    for m in names:
        numbers[f"{m}_residual"] = _r(reports[m].residual.mean())
        numbers[f"{m}_collateral"] = _r(reports[m].collateral.mean())
    return {"figures": [_save(fig, out, "07_unlearning")], **numbers}


@experiment("conditioning_probes", "08_conditioning_in_trained_models",
            "in-context conditioning designs on hand-built memories (unit compound keys): delta (RW) vs Hebbian")
def conditioning_probes(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    from ..phenomena.probes import circuit_effects
    from ..phenomena.sequences import DESIGNS, rw_effect
    from ..statistics import summarize
    from .plotting import COLORS, labels

    n = 100 if quick else 400
    fig, (ax,) = _figure(width=7.2)
    x = torch.arange(len(DESIGNS), dtype=torch.float64)
    numbers: dict[str, Any] = {"designs": list(DESIGNS), "sequences": n}
    for shift, rule in ((-0.2, "delta"), (0.2, "hebbian")):
        eff = [summarize(circuit_effects(d, rule=rule, n=n)[None]) for d in DESIGNS]
        mean = torch.tensor([e.mean for e in eff])
        half = torch.tensor([e.hi - e.mean for e in eff])
        ax.bar((x + shift).tolist(), mean.tolist(), width=0.38, yerr=half.tolist(), capsize=2,
               color=COLORS[rule], label=f"{rule} memory (95 % interval)")
        numbers[f"effect_{rule}"] = [_r(m, 3) for m in mean.tolist()]
    ax.plot(x.tolist(), [rw_effect(d) for d in DESIGNS], "k_", ms=18, mew=2,
            label="Rescorla–Wagner, orthonormal keys, unit compounds")
    ax.set_xticks(x.tolist(), [d.replace(" ", "\n") for d in DESIGNS])
    ax.axhline(0, color="#999999", lw=0.8)
    labels(ax, "In context, the delta memory shows every design; the Hebbian one acquisition and overshadowing",
           "design (against its control)", "effect on the outcome's strength")
    return {"figures": [_save(fig, out, "08_conditioning_probes")], **numbers}


__all__ = ["EXPERIMENTS", "SUMMARY_NAME", "Experiment", "experiment", "run_all"]
