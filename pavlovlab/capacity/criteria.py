"""Capacity of the associative memory: how many bell→food pairs fit in the bucket ``S`` before they blur.

The *average* case (the mean cosine of the read-outs stays above θ, ``O(d_k)``) is measured in
:mod:`pavlovlab.capacity.average`. What "error-free" capacity means depends on the criterion, so it is measured
on actual read-outs, per trial, at every ``n`` (:func:`retrieval_capacity`, :func:`capacity_scaling`):

- (a) ``"cosine"``: every stored item's cosine ≥ θ (random values): grows like ``d_k``;
- (b) ``"argmax"``: every item decoded correctly by argmax over a fixed codebook: close to ``d_k``;
- (c) ``"adversarial"``: every stored item must keep a read-out on its value's side (cosine > 0, so
  sign decoding works) whatever unit values were stored. The sign-flip adversary ``v_i = −sign(k_i·k_j) v_j``
  makes the read-out ``(1 − Σ_{i≠j}|k_i·k_j|) v_j`` (unit keys) and no choice of values does worse, so
  this criterion is *derived*: it fails at the first n with ``max_j Σ_{i≠j}|k_i·k_j| ≥ 1``, a function of
  the keys alone (:func:`pavlovlab.capacity.readouts.adversarial_error_curve` builds those values and measures the
  read-out). Its capacity grows like ``√d_k`` (each ``|k_i·k_j|`` has mean ``√(2/(π d_k))``: :func:`worst_case_bound`).

The memories compared (:data:`pavlovlab.capacity.readouts.MEMORIES`): the Hebbian sum, the delta rule (one pass)
and softmax attention; their read-outs after every write come from :mod:`pavlovlab.capacity.readouts`, random
keys from :mod:`pavlovlab.sampling`, the slope fits from :mod:`pavlovlab.statistics`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence, Sized
from typing import Any, NamedTuple

import torch
from tqdm.auto import tqdm

from .._checks import (
    check_choice,
    check_int,
    check_lengths,
    check_numbers,
    check_real,
    check_tensor,
    checked_by,
    unchecked,
)
from ..sampling import _check_draw, random_keys
from ..statistics import _check_distinct, _check_power_law, bootstrap_slope_se, fit_slope
from .readouts import (
    MEMORIES,
    _adversarial_error_curve,
    _decoding_curve,
    _first_failure,
    _min_cosine_curve,
    _readout_weights,
)

_random_keys = unchecked(random_keys)
_fit_slope = unchecked(fit_slope)
_bootstrap_slope_se = unchecked(bootstrap_slope_se)


def _check_dimensions(d_k: int | float | torch.Tensor) -> None:
    """Key dimensions d_k > 0 (a number or an array of them)."""
    check_numbers("d_k", d_k, low=0.0, low_open=True)


@checked_by(_check_dimensions)
def worst_case_bound(d_k: int | float | torch.Tensor) -> torch.Tensor:
    """Where a *typical* row's summed crosstalk reaches the signal: ``n − 1 ≈ √(π d_k / 2)``.

    Each of the ``n − 1`` overlaps has ``E|k_i·k_j| ≈ √(2/(π d_k))`` (the mean of a half-normal, i.e. of
    ``|x|`` for ``x ~ N(0, 1/d_k)``); their sum stays below the signal 1 while ``n − 1 ≲ √(π d_k / 2)``.
    The *worst* of n rows crosses earlier, so the capacities of criterion (c) (that worst row's crossing,
    see :func:`pavlovlab.capacity.readouts.adversarial_error_curve`) sit below this curve.
    """
    d_t = torch.as_tensor(d_k, dtype=torch.float64)
    return (math.pi * d_t / 2).sqrt()


# ===================================================================================================
# Capacity measured on actual read-outs: three retrieval criteria, per trial, at every n
# ===================================================================================================
CRITERIA = ("cosine", "argmax", "adversarial")
"""Retrieval criteria of :func:`retrieval_capacity`: (a) every stored item's cosine ≥ θ; (b) every item
decoded correctly by argmax over a fixed codebook; (c) adversarial values (Hebbian memory only)."""


class RetrievalCapacity(NamedTuple):
    """Per-trial capacities of :func:`retrieval_capacity`.

    capacity: (trials,) long, the largest n with the criterion met after every n' ≤ n writes;
    censored: (trials,) bool, never failed up to ``n_max`` (the capacity is then at least ``n_max``).
    """

    capacity: torch.Tensor
    censored: torch.Tensor
    n_max: int


def _check_capacity(d_k: int, criterion: str, trials: int, n_max: int | None, rule: str, beta: float,
                    threshold: float, d_v: int | None, codebook_size: int, kind: str,
                    generator: torch.Generator | None, device: torch.device | str | None, dtype: torch.dtype | None,
                    chunk: int) -> dict[str, Any]:
    """The arguments of :func:`retrieval_capacity`, as checked (numbers as ints and floats, the device and dtype as
    torch objects, n_max and d_v None where not given), with the first chunk's draws of keys (and of values under
    the cosine criterion) checked to fit in memory."""
    d_k = check_int("d_k", d_k, low=1)
    criterion = check_choice("criterion", criterion, CRITERIA)
    trials = check_int("trials", trials, low=1)
    n_max = None if n_max is None else check_int("n_max", n_max, low=1)
    rule = check_choice("rule", rule, MEMORIES)
    threshold = check_real("threshold", threshold, low=-1.0, high=1.0)
    d_v = None if d_v is None else check_int("d_v", d_v, low=1)
    codebook_size = check_int("codebook_size", codebook_size, low=2)
    chunk = check_int("chunk", chunk, low=1)
    if criterion == "adversarial" and rule != "hebbian":
        raise ValueError(f"rule: the adversarial criterion is derived for the Hebbian memory, got {rule!r}")
    beta = check_real("beta", beta, low=0.0, low_open=True)
    first = (min(chunk, trials), 4 * d_k if n_max is None else n_max)
    draw = _check_draw(first, d_k, kind, generator, device, dtype)
    if criterion == "cosine":
        _check_draw(first, d_k if d_v is None else d_v, "sphere", generator, device, dtype)
    return {"d_k": d_k, "criterion": criterion, "trials": trials, "n_max": n_max, "rule": rule, "beta": beta,
            "threshold": threshold, "d_v": d_v, "codebook_size": codebook_size, "kind": kind, "generator": generator,
            "device": draw["device"], "dtype": draw["dtype"], "chunk": chunk}


@checked_by(_check_capacity)
def retrieval_capacity(d_k: int, criterion: str, *, trials: int = 100, n_max: int | None = None,
                       rule: str = "hebbian", beta: float = 1.0, threshold: float = 0.8, d_v: int | None = None,
                       codebook_size: int = 32, kind: str = "sphere", generator: torch.Generator | None = None,
                       device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                       chunk: int = 25) -> RetrievalCapacity:
    """Store random pairs one by one and record, per trial, how many fit before the first retrieval failure.

    criterion:
      - ``"cosine"`` (a): every stored item's read-out has cosine ≥ ``threshold`` with its value; values
        are random unit vectors of dimension ``d_v`` (default ``d_k``);
      - ``"argmax"`` (b): every stored item is decoded correctly by argmax over a fixed codebook of
        ``codebook_size`` orthonormal codewords (one-hot labels, so ``d_v = codebook_size``, whatever n);
      - ``"adversarial"`` (c): the values are chosen, given the keys, by the sign-flip adversary of
        :func:`pavlovlab.capacity.readouts.adversarial_error_curve`; fails once the worst item's read-out has
        cosine ≤ 0 with its value (error along the value ≥ 1: sign decoding fails), i.e. at the first n with
        ``max_j Σ_{i≠j}|G_ij| ≥ G_jj`` (Hebbian memory only).
    rule / beta: the memory, see :func:`pavlovlab.capacity.readouts.readout_weights`. Keys: ``kind`` (unit sphere by
    default).
    n_max: the longest context tried (default ``4 d_k``): a trial that never fails is censored.
    Trials run ``chunk`` at a time (vectorised inside a chunk; chunks bound the memory).
    """
    n_max = 4 * d_k if n_max is None else n_max
    d_v = d_k if d_v is None else d_v
    caps = []
    for s in range(0, trials, chunk):
        c = min(chunk, trials - s)
        keys = _random_keys(c, n_max, d=d_k, kind=kind, generator=generator, device=device, dtype=dtype)
        if criterion == "adversarial":
            ok = _adversarial_error_curve(keys)[0] < 1
        elif criterion == "cosine":
            values = _random_keys(c, n_max, d=d_v, kind="sphere", generator=generator, device=device, dtype=keys.dtype)
            ok = _min_cosine_curve(*_readout_weights(keys, values, rule, beta), values) >= threshold
        else:
            labels = torch.randint(0, codebook_size, (c, n_max), generator=generator).to(keys.device)
            codebook = torch.eye(codebook_size, dtype=keys.dtype, device=keys.device)
            A, W = _readout_weights(keys, codebook[labels], rule, beta)
            ok = _decoding_curve(A, W, labels, codebook)
        caps.append(_first_failure(ok).cpu())
    capacity = torch.cat(caps)
    return RetrievalCapacity(capacity, capacity >= n_max, n_max)


_retrieval_capacity = unchecked(retrieval_capacity)


class CapacityScaling(NamedTuple):
    """Capacity against key dimension (:func:`capacity_scaling`).

    d_ks: the key dimensions; mean, sem: (len(d_ks),) mean capacity over trials and its standard error;
    censored: (len(d_ks),) fraction of censored trials; slope: log–log slope of mean capacity against
    d_k; slope_se: its bootstrap standard error (trials resampled); capacities: per-trial results.
    """

    d_ks: list[int]
    mean: torch.Tensor
    sem: torch.Tensor
    censored: torch.Tensor
    slope: float
    slope_se: float
    capacities: list[torch.Tensor]


def _check_scaling_run(d_ks: Sequence[int], criterion: str, n_max: Callable[[int], int] | None, resamples: int,
                       generator: torch.Generator | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of :func:`capacity_scaling`: at least two key dimensions (two distinct), each one's run of
    :func:`retrieval_capacity` checked in the order the scaling runs them (``n_max`` evaluated once per d_k: it
    comes back as the lookup of its checked lengths), and the bootstrap's resamples."""
    d_ks = _check_d_ks(d_ks)
    lengths: dict[int, int] = {}
    for d in d_ks:
        try:
            bound = inspect.signature(retrieval_capacity).bind(d, criterion, n_max=None if n_max is None else n_max(d),
                                                               generator=generator, **kwargs)
        except TypeError as e:  # the message Python gives for a call of retrieval_capacity with these arguments
            raise TypeError(f"retrieval_capacity() got {str(e).removeprefix('got ')}") from None
        bound.apply_defaults()
        run = _check_capacity(**bound.arguments)
        lengths[d] = run["n_max"]
    _check_distinct("d_ks", torch.tensor(d_ks, dtype=torch.float64))
    checked = {"d_ks": d_ks, "resamples": check_int("resamples", resamples, low=2),
               "kwargs": {name: run[name] for name in kwargs}}
    return checked if n_max is None else {**checked, "n_max": lengths.__getitem__}


@checked_by(_check_scaling_run)
def capacity_scaling(d_ks: Sequence[int], criterion: str, *, n_max: Callable[[int], int] | None = None,
                     resamples: int = 1000, progress: bool = False, generator: torch.Generator | None = None,
                     **kwargs: Any) -> CapacityScaling:
    """:func:`retrieval_capacity` for every key dimension, with the log–log slope and its bootstrap error.

    n_max: a function ``d_k -> longest context`` (default ``4 d_k``). Other keywords go to
    :func:`retrieval_capacity`. The loop over the few ``d_ks`` stays in Python (sizes differ).
    """
    caps = []
    cens = []
    for d in tqdm(d_ks, desc="d_k", disable=not progress):
        r = _retrieval_capacity(d, criterion, n_max=None if n_max is None else n_max(d), generator=generator,
                                **kwargs)
        caps.append(r.capacity)
        cens.append(r.censored.double().mean())
    mean = torch.stack([c.double().mean() for c in caps])
    sem = torch.stack([c.double().std() / math.sqrt(len(c)) if len(c) > 1 else torch.tensor(0.0) for c in caps])
    if bool((mean <= 0).any()):
        slope, slope_se = math.nan, math.nan
    else:
        slope = _fit_slope(d_ks, mean)
        slope_se = _bootstrap_slope_se(d_ks, caps, resamples=resamples, seed=0)
    return CapacityScaling(list(d_ks), mean, sem, torch.stack(cens), slope, slope_se, caps)


def _check_d_ks(d_ks: Sequence[int]) -> list[int]:
    """At least two key dimensions >= 1, returned as ints."""
    if isinstance(d_ks, int) or len(d_ks) < 2:
        raise ValueError(f"d_ks: expected a sequence of at least two key dimensions, got {d_ks!r}")
    return [check_int(f"d_ks[{i}]", d, low=1) for i, d in enumerate(d_ks)]


def _check_scaling(scaling: CapacityScaling) -> None:
    """A :class:`CapacityScaling` with one mean > 0 and one standard error >= 0 per distinct key dimension."""
    if not isinstance(scaling, CapacityScaling):
        raise TypeError(f"scaling: expected a CapacityScaling, got {type(scaling).__name__}")
    sizes: dict[str, Sized] = {"scaling.d_ks": scaling.d_ks, "scaling.mean": scaling.mean, "scaling.sem": scaling.sem}
    check_lengths(**sizes)
    check_tensor("scaling.mean", scaling.mean)
    check_tensor("scaling.sem", scaling.sem)
    if bool((scaling.sem < 0).any()):
        raise ValueError(f"scaling.sem: expected standard errors >= 0, got {scaling.sem.tolist()}")
    d_ks = [check_int(f"scaling.d_ks[{i}]", d, low=1) for i, d in enumerate(scaling.d_ks)]
    if len(set(d_ks)) < len(d_ks):
        raise ValueError(f"scaling.d_ks: expected distinct key dimensions (a slope needs two), got {d_ks}")
    if bool((scaling.mean.double() <= 0).any()):
        raise ValueError(f"scaling: expected positive mean capacities for a log-log slope, got "
                         f"{scaling.mean.double().tolist()}")


@checked_by(_check_scaling)
def local_slopes(scaling: CapacityScaling) -> tuple[torch.Tensor, torch.Tensor]:
    """Log–log slopes between neighbouring key dimensions, and their standard errors from the trials.

    ``b_i = ln(m_{i+1}/m_i) / ln(d_{i+1}/d_i)`` for the mean capacities ``m`` of ``scaling``; with
    independent trials at each ``d_k`` the delta method gives
    ``se(b_i) = √((s_i/m_i)² + (s_{i+1}/m_{i+1})²) / ln(d_{i+1}/d_i)`` (``s`` the standard errors of the
    means). The error is sampling error only: a single fitted slope hides how ``b_i`` drifts with ``d_k``
    (curvature), which these show. Returns ``(slopes, se)``, each (len(d_ks) − 1,) float64.
    """
    m, s = scaling.mean.double(), scaling.sem.double()
    gap = torch.tensor(scaling.d_ks, dtype=torch.float64).log().diff()
    rel = s / m
    return m.log().diff() / gap, (rel[1:].square() + rel[:-1].square()).sqrt() / gap


def _check_fitted(scaling: CapacityScaling) -> None:
    """A :class:`CapacityScaling` whose slope and positive standard error are finite."""
    if not isinstance(scaling, CapacityScaling):
        raise TypeError(f"scaling: expected a CapacityScaling, got {type(scaling).__name__}")
    if not (math.isfinite(scaling.slope) and math.isfinite(scaling.slope_se) and scaling.slope_se > 0):
        raise ValueError(f"scaling: expected a finite slope with a positive standard error, got slope "
                         f"{scaling.slope!r} ± {scaling.slope_se!r}")


@checked_by(_check_fitted)
def nearer_law(scaling: CapacityScaling) -> tuple[str, float]:
    """Which of the two candidate laws, ``√d_k`` or ``d_k``, the fitted log–log slope is nearer to, and by how much.

    The decision line is the midpoint ``b = 3/4`` between the exponents ½ and 1: the verdict is ``"√d_k"``
    for ``b < 3/4`` and ``"d_k"`` otherwise, and the margin is ``|b − 3/4| / se(b)`` in bootstrap standard
    errors (sampling error only). It answers what the data support over the measured range; it does not test
    that the exponent is exactly ½ or 1 (at finite ``d_k`` a worst-of-n criterion bends the slope a little
    below its asymptotic value). Returns ``(law, margin)``; a NaN slope or standard error raises ValueError.
    """
    return ("√d_k" if scaling.slope < 0.75 else "d_k"), abs(scaling.slope - 0.75) / scaling.slope_se


SCALINGS = {
    "d_k": lambda d: d,
    "d_k / log d_k": lambda d: d / math.log(d),
    "√d_k": lambda d: math.sqrt(d),
}
"""Candidate laws for the capacity: divide the capacity by each and see which ratio stays flat."""


def _ratios(d_ks: Sequence[int], capacities: Sequence[float] | torch.Tensor,
            law: Callable[[float], float]) -> list[float]:
    """``capacity / law(d_k)`` at each key dimension."""
    caps = torch.as_tensor(capacities, dtype=torch.float64).flatten().tolist()
    return [c / law(d) for c, d in zip(caps, d_ks, strict=True)]


def _check_residuals(d_ks: Sequence[int], capacities: Sequence[float] | torch.Tensor) -> None:
    """As many positive capacities as key dimensions, and, for each law, points a log–log slope can be fitted to
    (:func:`pavlovlab.statistics.fit_slope`: at least two, positive, at two distinct d_k)."""
    check_lengths(d_ks=d_ks, capacities=capacities)
    check_numbers("capacities", capacities, low=0.0, low_open=True)
    check_numbers("d_ks", d_ks, low=1.0, low_open=True)  # the law d_k / log d_k is undefined at d_k = 1
    for law in SCALINGS.values():
        _check_power_law(d_ks, _ratios(d_ks, capacities, law), False)


@checked_by(_check_residuals)
def scaling_residuals(d_ks: Sequence[int], capacities: Sequence[float] | torch.Tensor) -> dict[str, float]:
    """For each law f of :data:`SCALINGS`, the log–log slope of ``capacity / f(d_k)`` against ``d_k``.

    0 means the law fits the trend; the law with the residual slope nearest 0 describes the data best.
    """
    return {name: _fit_slope(d_ks, _ratios(d_ks, capacities, law)) for name, law in SCALINGS.items()}


__all__ = [
    "CRITERIA",
    "SCALINGS",
    "CapacityScaling",
    "RetrievalCapacity",
    "capacity_scaling",
    "local_slopes",
    "nearer_law",
    "retrieval_capacity",
    "scaling_residuals",
    "worst_case_bound",
]
