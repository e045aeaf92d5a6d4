"""Depth against width: the shapes of a stack compared at an equal budget, simulated and trained.

A budget of head dimensions or of heads can be spent on depth (layers L) or width (heads H per layer).
:func:`same_task_budget` cuts one per-layer width into heads on the same K-hop task of
:mod:`pavlovlab.depth.chain` (measured, and predicted by :mod:`pavlovlab.depth.theory`);
:func:`shape_difference` compares two trained shapes across seeds; :func:`cached_shape_runs` holds the
fuller training runs shipped with the package.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, NamedTuple

import numpy as np
import torch

from .._checks import check_int, check_numbers, checked_by, unchecked
from ..statistics import t_quantile
from .chain import _check_chain, _check_positive, chain_error
from .theory import Numbers, _as_array, paper_bound, stack_error_theory

_chain_error = unchecked(chain_error)
_stack_error_theory = unchecked(stack_error_theory)
_paper_bound = unchecked(paper_bound)
_t_quantile = unchecked(t_quantile)


def _head_shapes(width: int, min_head: int) -> list[tuple[int, int]]:
    """The shapes (H, d_k) of a per-layer ``width`` with heads of d_k >= max(4, min_head), fewest heads first."""
    return [(H, d_k) for H, d_k in _budget_shapes(width) if d_k >= max(4, min_head)]


def _check_budget(hops: int, width: int, n: int, min_head: int, trials: int, generator: torch.Generator | None,
                  device: torch.device | str | None) -> dict[str, Any]:
    """The arguments of :func:`same_task_budget` as checked values: a width with at least one shape, and the stack
    of its first shape checked as :func:`pavlovlab.depth.chain.chain_error` checks it (the others draw as much:
    H · d_k = width). Heads of d_k >= 4 and n >= 2 are also what the theory and the paper's bound read."""
    hops, width, n = _check_positive("hops", hops), _check_positive("width", width), _check_positive("n", n)
    min_head = check_int("min_head", min_head, low=1)
    shapes = _head_shapes(width, min_head)
    if not shapes:
        raise ValueError(f"width: expected a width with at least one way to cut it into heads of d_k >= "
                         f"{max(4, min_head)} (max(4, min_head)), got width = {width}")
    (H, d_k), *_ = shapes
    chain = _check_chain(hops, H, n, d_k, None, "average", trials, generator, device, torch.float32)
    return {"hops": hops, "width": width, "n": n, "min_head": min_head, "trials": chain["trials"],
            "device": chain["device"]}


@checked_by(_check_budget)
def same_task_budget(hops: int, width: int, n: int, *, trials: int = 100, min_head: int = 4,
                     generator: torch.Generator | None = None,
                     device: torch.device | str | None = None) -> list[dict[str, float]]:
    """Every way to spend a per-layer budget of ``width = H · d_k`` head dimensions on the SAME K-hop task.

    The task is fixed: chains of ``hops`` = K hops through memories of n associations, so every shape
    has L = K layers (one retrieval per layer) and differs only in how its width is cut into heads:
    H heads of ``d_k = width / H`` (``d_v = d_k``, averaged), for every divisor H with ``d_k ≥ min_head``.
    Equal ``H · d_k`` means equal query/key/value projection parameters (``3 · d_model · H · d_k`` per
    layer in a Transformer); the memory entries ``H · d_k²`` are not equal (reported).

    Returns one row per shape, fewest heads first: ``{"L", "H", "d_k", "entries", "measured", "se",
    "theory", "paper_bound"}`` (``se``: binomial standard error of ``measured``; ``paper_bound``
    uncapped :func:`pavlovlab.depth.theory.paper_bound`).
    """
    rows = []
    for H, d_k in _head_shapes(width, min_head):
        r = _chain_error(hops, H, n, d_k, trials=trials, generator=generator, device=device)
        rows.append({"L": hops, "H": H, "d_k": d_k, "entries": H * d_k * d_k, "measured": r.error,
                     "se": math.sqrt(max(r.error * (1 - r.error), 1.0 / r.chains) / r.chains),
                     "theory": float(_stack_error_theory(hops, H, n, d_k)),
                     "paper_bound": float(_paper_bound(hops, H, n, d_k, cap=False))})
    return rows


class ShapeDifference(NamedTuple):
    """Difference of two shapes' mean final accuracies, with its 95 % Welch interval (seeds are the replicates),
    its standard error and its margin: how many standard errors the difference lies from 0."""

    diff: float
    lo: float
    hi: float
    df: float
    se: float

    @property
    def margin(self) -> float:
        """``diff / se``: the distance of the difference from the decision line 0, in standard errors
        (±inf when se is 0 and diff is not, 0 when both are)."""
        if self.se > 0:
            return self.diff / self.se
        return 0.0 if self.diff == 0 else math.copysign(math.inf, self.diff)

    @property
    def verdict(self) -> str:
        """``"holds"`` if the interval lies above 0 (a beats b), ``"reversed"`` if below, else ``"inconclusive"``."""
        return "holds" if self.lo > 0 else "reversed" if self.hi < 0 else "inconclusive"


def _check_seeds(a: Numbers, b: Numbers, answers: int | None) -> dict[str, int | None]:
    """Two shapes' per-seed accuracies (at least 2 seeds each) and the answers per accuracy (as an int)."""
    check_numbers("a", a)
    check_numbers("b", b)
    if answers is not None:
        answers = check_int("answers", answers, low=1)
    size_a, size_b = _as_array(a).size, _as_array(b).size
    if size_a < 2 or size_b < 2:
        raise ValueError(f"a, b: expected at least 2 seeds each, got {size_a} and {size_b}")
    return {"answers": answers}


@checked_by(_check_seeds)
def shape_difference(a: Numbers, b: Numbers, *, answers: int | None = None) -> ShapeDifference:
    """Mean of ``a`` minus mean of ``b`` (per-seed accuracies of two shapes), with a 95 % Welch interval.

    ``se = √(s_a²/n_a + s_b²/n_b)`` (sample variances, ddof 1); Welch–Satterthwaite degrees of freedom
    ``df = se⁴ / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))``, rounded down for the t quantile (conservative);
    interval ``diff ± t_{0.975}(⌊df⌋) · se``. Needs at least 2 seeds per shape.

    ``answers``: the number of held-out answers each accuracy was measured on. Each accuracy is then also a
    binomial estimate with variance ``p(1 − p)/answers``, whatever the seeds say, so each sample variance is
    floored at ``max(p̄(1 − p̄), 1/answers)/answers`` (p̄ the shape's mean accuracy): a few seeds that agree by
    chance can no longer give a near-zero interval whose sign follows the rounding of one run.
    """
    a, b = _as_array(a).ravel(), _as_array(b).ravel()

    def variance(x: np.ndarray) -> float:
        v = float(x.var(ddof=1))
        if answers is not None:
            p = float(x.mean())
            v = max(v, max(p * (1 - p), 1.0 / answers) / answers)
        return v / x.size

    va, vb = variance(a), variance(b)
    se = math.sqrt(va + vb)
    diff = float(a.mean() - b.mean())
    if se == 0:
        return ShapeDifference(diff, diff, diff, math.inf, 0.0)
    df = se ** 4 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    half = _t_quantile(max(1, math.floor(df + 1e-9))) * se   # 2.0 may come out as 1.999…
    return ShapeDifference(diff, diff - half, diff + half, float(df), se)


_shape_difference = unchecked(shape_difference)


def _contests(record: dict) -> tuple[int, list[tuple[dict, dict]]]:
    """The held-out answers per accuracy of a cached record, and its (wider, deeper) pairs of runs: runs ordered by
    depth (fewer layers first, fewer heads first among equals), every pair of different depths."""
    answers = int(record["setup"]["eval_size"]) * int(record["setup"]["n_pairs"])
    runs = sorted(record["runs"], key=lambda r: (r["n_layers"], r["n_heads"]))
    return answers, [(wide, deep) for i, wide in enumerate(runs) for deep in runs[i + 1:]
                     if deep["n_layers"] != wide["n_layers"]]


def _check_record(record: dict) -> None:
    """A cached record (:func:`cached_shape_runs`), with the seeds of every contest it holds checked as
    :func:`shape_difference` checks them, pair by pair."""
    if not isinstance(record, dict) or not {"setup", "runs"} <= set(record):
        raise TypeError(f"record: expected a cached record with 'setup' and 'runs', got {type(record).__name__}")
    answers, pairs = _contests(record)
    for wide, deep in pairs:
        _check_seeds(wide["final_accuracy"], deep["final_accuracy"], answers)


@checked_by(_check_record)
def shape_contests(record: dict) -> list[dict]:
    """Every "wider − deeper" contest of one cached record (:func:`cached_shape_runs`), by the rule of notebook 05.

    Shapes are ordered by depth (fewer layers first; the one-big-head width control, one layer, first among
    equals); for every pair, :func:`shape_difference` of their final accuracies over seeds, each seed floored
    at the sampling variance of its ``eval_size · n_pairs`` held-out answers. Returns one row per pair:
    ``{"wide", "deep", "diff", "lo", "hi", "margin", "verdict"}`` ("holds": the wider shape is better).
    """
    answers, pairs = _contests(record)
    rows = []
    for wide, deep in pairs:
        d = _shape_difference(wide["final_accuracy"], deep["final_accuracy"], answers=answers)
        rows.append({"wide": wide["shape"], "deep": deep["shape"], "diff": d.diff, "lo": d.lo, "hi": d.hi,
                     "margin": d.margin, "verdict": d.verdict})
    return rows


def _budget_shapes(budget: int) -> list[tuple[int, int]]:
    """All (a, budget / a) for the divisors a of ``budget``, in increasing a: the (L, H) with ``L · H = budget``
    (the same number of heads, hence of parameters), shallow first."""
    return [(L, budget // L) for L in range(1, budget + 1) if budget % L == 0]


def _cached_file(hops: int, steps: int | None) -> Traversable:
    """Where the cached run for ``hops`` (and ``steps``) is shipped, in ``pavlovlab/data``."""
    name = f"depth_width_{hops}hop.json" if steps is None else f"depth_width_{hops}hop_{steps}steps.json"
    return resources.files("pavlovlab") / "data" / name


def _check_cached(hops: int, steps: int | None) -> dict[str, int | None]:
    """``hops`` and ``steps`` (as ints) of a cached run shipped in ``pavlovlab/data``."""
    hops = check_int("hops", hops, low=1)
    if steps is not None:
        steps = check_int("steps", steps, low=1)
    if not _cached_file(hops, steps).is_file():
        raise ValueError(f"hops, steps: expected a cached run shipped in pavlovlab/data (hops 1, 2 or 3), got "
                         f"hops = {hops}, steps = {steps}")
    return {"hops": hops, "steps": steps}


@checked_by(_check_cached)
def cached_shape_runs(hops: int, *, steps: int | None = None) -> dict:
    """The fuller depth-vs-width training runs that notebook 05 shows, shipped with the package.

    ``benchmarks/depth_width.py --save pavlovlab/data/depth_width_{hops}hop.json`` made them (the command and
    its arguments are in the file's ``"setup"``); ``"runs"`` holds one record per shape: ``"shape"``,
    ``"step"`` (the evaluation steps) and ``"accuracy"`` (seeds × steps, held-out accuracy). A cache, clearly
    labelled as such where it is shown: re-run the command to check it. ``hops``: 1, 2 or 3. ``steps``: a
    longer run of some shapes, stored as ``depth_width_{hops}hop_{steps}steps.json`` (None: the main run).
    """
    return json.loads(_cached_file(hops, steps).read_text(encoding="utf-8"))


__all__ = [
    "ShapeDifference",
    "cached_shape_runs",
    "same_task_budget",
    "shape_contests",
    "shape_difference",
]
