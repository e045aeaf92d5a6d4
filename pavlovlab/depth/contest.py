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
from typing import NamedTuple

import numpy as np
import torch

from .._checks import check_int, check_numbers
from ..statistics import t_quantile
from .chain import _check_positive, chain_error
from .theory import Numbers, _as_array, paper_bound, stack_error_theory


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
    hops, n, shapes = _check_budget(hops, width, n, min_head)
    rows = []
    for H, d_k in shapes:
        r = chain_error(hops, H, n, d_k, trials=trials, generator=generator, device=device)
        rows.append({"L": hops, "H": H, "d_k": d_k, "entries": H * d_k * d_k, "measured": r.error,
                     "se": math.sqrt(max(r.error * (1 - r.error), 1.0 / r.chains) / r.chains),
                     "theory": float(stack_error_theory(hops, H, n, d_k)),
                     "paper_bound": float(paper_bound(hops, H, n, d_k, cap=False))})
    return rows


def _check_budget(hops: int, width: int, n: int, min_head: int) -> tuple[int, int, list[tuple[int, int]]]:
    """The arguments of :func:`same_task_budget`; returns hops, n and the shapes (H, d_k) of the width with
    heads of d_k >= max(4, min_head), fewest heads first (at least one)."""
    hops, width, n = _check_positive("hops", hops), _check_positive("width", width), _check_positive("n", n)
    min_head = check_int("min_head", min_head, low=1)
    shapes = [(H, d_k) for H, d_k in _budget_shapes(width) if d_k >= max(4, min_head)]
    if not shapes:
        raise ValueError(f"width: expected a width with at least one way to cut it into heads of d_k >= "
                         f"{max(4, min_head)} (max(4, min_head)), got width = {width}")
    return hops, n, shapes


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
    answers = _check_seeds(a, b, answers)
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
    half = t_quantile(max(1, math.floor(df + 1e-9))) * se   # 2.0 may come out as 1.999…
    return ShapeDifference(diff, diff - half, diff + half, float(df), se)


def _check_seeds(a: Numbers, b: Numbers, answers: int | None) -> int | None:
    """Two shapes' per-seed accuracies (at least 2 seeds each) and the answers per accuracy (returned)."""
    check_numbers("a", a)
    check_numbers("b", b)
    if answers is not None:
        answers = check_int("answers", answers, low=1)
    size_a, size_b = _as_array(a).size, _as_array(b).size
    if size_a < 2 or size_b < 2:
        raise ValueError(f"a, b: expected at least 2 seeds each, got {size_a} and {size_b}")
    return answers


def shape_contests(record: dict) -> list[dict]:
    """Every "wider − deeper" contest of one cached record (:func:`cached_shape_runs`), by the rule of notebook 05.

    Shapes are ordered by depth (fewer layers first; the one-big-head width control, one layer, first among
    equals); for every pair, :func:`shape_difference` of their final accuracies over seeds, each seed floored
    at the sampling variance of its ``eval_size · n_pairs`` held-out answers. Returns one row per pair:
    ``{"wide", "deep", "diff", "lo", "hi", "margin", "verdict"}`` ("holds": the wider shape is better).
    """
    if not isinstance(record, dict) or not {"setup", "runs"} <= set(record):
        raise TypeError(f"record: expected a cached record with 'setup' and 'runs', got {type(record).__name__}")
    answers = int(record["setup"]["eval_size"]) * int(record["setup"]["n_pairs"])
    runs = sorted(record["runs"], key=lambda r: (r["n_layers"], r["n_heads"]))
    rows = []
    for i, wide in enumerate(runs):
        for deep in runs[i + 1:]:
            if deep["n_layers"] == wide["n_layers"]:
                continue
            d = shape_difference(wide["final_accuracy"], deep["final_accuracy"], answers=answers)
            rows.append({"wide": wide["shape"], "deep": deep["shape"], "diff": d.diff, "lo": d.lo, "hi": d.hi,
                         "margin": d.margin, "verdict": d.verdict})
    return rows


def _budget_shapes(budget: int) -> list[tuple[int, int]]:
    """All (a, budget / a) for the divisors a of ``budget``, in increasing a: the (L, H) with ``L · H = budget``
    (the same number of heads, hence of parameters), shallow first."""
    return [(L, budget // L) for L in range(1, budget + 1) if budget % L == 0]


def cached_shape_runs(hops: int, *, steps: int | None = None) -> dict:
    """The fuller depth-vs-width training runs that notebook 05 shows, shipped with the package.

    ``benchmarks/depth_width.py --save pavlovlab/data/depth_width_{hops}hop.json`` made them (the command and
    its arguments are in the file's ``"setup"``); ``"runs"`` holds one record per shape: ``"shape"``,
    ``"step"`` (the evaluation steps) and ``"accuracy"`` (seeds × steps, held-out accuracy). A cache, clearly
    labelled as such where it is shown: re-run the command to check it. ``hops``: 1, 2 or 3. ``steps``: a
    longer run of some shapes, stored as ``depth_width_{hops}hop_{steps}steps.json`` (None: the main run).
    """
    return json.loads(_check_cached(hops, steps).read_text(encoding="utf-8"))


def _check_cached(hops: int, steps: int | None) -> Traversable:
    """The file of a cached run shipped in ``pavlovlab/data``, for ``hops`` (and ``steps``)."""
    hops = check_int("hops", hops, low=1)
    name = f"depth_width_{hops}hop.json"
    if steps is not None:
        name = f"depth_width_{hops}hop_{check_int('steps', steps, low=1)}steps.json"
    source = resources.files("pavlovlab") / "data" / name
    if not source.is_file():
        raise ValueError(f"hops, steps: expected a cached run shipped in pavlovlab/data (hops 1, 2 or 3), got "
                         f"hops = {hops}, steps = {steps}")
    return source


__all__ = [
    "ShapeDifference",
    "cached_shape_runs",
    "same_task_budget",
    "shape_contests",
    "shape_difference",
]
