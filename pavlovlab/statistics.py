"""Statistics of the course's measurements: slope fits, a bootstrap error and Student-t intervals.

The fits are least-squares lines, in the coordinates each law is straight in:

- :func:`fit_slope`: a power law ``y ∝ x^a`` is a line in ``(log x, log y)``; returns ``a``;
- :func:`fit_log_slope`: an exponential ``y ∝ e^{b x}`` is a line in ``(x, log y)``; returns ``b`` and r²;
- :func:`slope_through_origin`: a proportion ``y ≈ s x``, one fit per independent row, mean ± standard error.

:func:`bootstrap_slope_se` resamples trials to give :func:`fit_slope` an error bar; :func:`summarize`
turns per-seed effects into a mean with a 95 % interval (:class:`Effect`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ._checks import check_dim, check_int, check_numbers, check_tensor, checked_by, unchecked, warn_nonfinite

Numbers = float | np.ndarray | torch.Tensor | Sequence[float]


def _float64(x: Numbers) -> torch.Tensor:
    """Numbers (a tensor on any device, an array, a sequence) as a flat float64 CPU tensor."""
    x = x.detach().cpu() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=np.float64)
    return torch.as_tensor(x, dtype=torch.float64).flatten()


def _check_float64(x: Numbers, name: str = "x") -> torch.Tensor:
    """:func:`_float64`, with ValueError/TypeError naming ``name`` for entries that are not finite numbers."""
    check_numbers(name, x)
    return _float64(x)


def _check_distinct(name: str, lx: torch.Tensor) -> None:
    """At least two distinct abscissae (a slope needs two)."""
    if lx.numel() and bool((lx == lx[0]).all()):
        raise ValueError(f"{name}: expected at least two distinct values to fit a slope, got {lx.numel()} times "
                         f"{float(lx[0]):g}")


def _centred_slope(lx: torch.Tensor, ly: torch.Tensor) -> torch.Tensor:
    """Least-squares slope of ``ly`` (..., P) against the centred abscissa ``lx`` (P,): ``Σ lx (ly − ȳ) / Σ lx²``."""
    return ((ly - ly.mean(-1, keepdim=True)) * lx).sum(-1) / (lx * lx).sum()


def _check_power_law(x: Numbers, y: Numbers, drop_nonpositive: bool) -> None:
    """The points of :func:`fit_slope`: at least two positive pairs (the others dropped when ``drop_nonpositive``),
    at two distinct x at least."""
    lx, ly = _check_float64(x, "x"), _check_float64(y, "y")
    if lx.numel() != ly.numel():
        raise ValueError(f"x, y: expected two sequences of the same length >= 2, got {lx.numel()} and {ly.numel()}")
    if drop_nonpositive:
        keep = (lx > 0) & (ly > 0)
        if int(keep.sum()) < 2:
            raise ValueError(f"y: expected at least two positive values to fit, got {int(keep.sum())}")
        lx, ly = lx[keep], ly[keep]
    if lx.numel() < 2:
        raise ValueError(f"x, y: expected two sequences of the same length >= 2, got {lx.numel()} and {ly.numel()}")
    if bool((lx <= 0).any()) or bool((ly <= 0).any()):
        raise ValueError("x, y: expected positive numbers for a log-log fit")
    _check_distinct("x", lx)


@checked_by(_check_power_law)
def fit_slope(x: Numbers, y: Numbers, *, drop_nonpositive: bool = False) -> float:
    """Least-squares slope of ``log y`` against ``log x``: the exponent ``a`` in ``y ∝ x^a``.

    x, y: P ≥ 2 positive numbers each. With ``drop_nonpositive=True`` the points where x or y is not
    positive (a zero error rate, say) are left out first; otherwise they raise ValueError.

    >>> fit_slope([1, 2, 4], [3, 6, 12])   # 1.0
    """
    lx, ly = _float64(x), _float64(y)
    if drop_nonpositive:
        keep = (lx > 0) & (ly > 0)
        lx, ly = lx[keep], ly[keep]
    lx, ly = lx.log(), ly.log()
    return float(_centred_slope(lx - lx.mean(), ly))


def _check_exponential(x: Numbers, y: Numbers) -> None:
    """The points of :func:`fit_log_slope`: as many x as y, at least two with y > 0, at distinct x."""
    x64, y64 = _check_float64(x, "x"), _check_float64(y, "y")
    check_dim("y", y64.numel(), x64.numel(), "number of points (the length of x)")
    keep = y64 > 0
    if int(keep.sum()) < 2:
        raise ValueError(f"y: expected at least two positive values to fit, got {int(keep.sum())}")
    _check_distinct("x", x64[keep])


@checked_by(_check_exponential)
def fit_log_slope(x: Numbers, y: Numbers) -> tuple[float, float]:
    """Fit ``log y = a + b·x``; returns ``(b, r²)``. Points with y ≤ 0 are left out; exponential decay has b < 0."""
    lx, ly = _float64(x), _float64(y)
    keep = ly > 0
    lx, ly = lx[keep], ly[keep].log()
    cx = lx - lx.mean()
    b = _centred_slope(cx, ly)
    resid = (ly - ly.mean()) - b * cx
    total = ((ly - ly.mean()) ** 2).sum()
    return float(b), float(1 - (resid ** 2).sum() / total) if total > 0 else 1.0


def _check_rows(x: torch.Tensor, y: torch.Tensor) -> None:
    """x (P,) not all zero, and y (R >= 2, P)."""
    check_tensor("x", x, rank=1)
    check_tensor("y", y, rank=2)
    check_dim("y", y.shape[-1], x.shape[-1], "number of points P (the length of x)")
    if y.shape[0] < 2:
        raise ValueError(f"y: expected at least 2 rows (independent measurements), got {y.shape[0]}")
    if not bool((x != 0).any()):
        raise ValueError("x: expected at least one non-zero value (a line through the origin needs Σ x² > 0), "
                         f"got {x.numel()} zeros")


@checked_by(_check_rows)
def slope_through_origin(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Fit ``y ≈ s·x`` (a line through the origin) to each row of ``y`` and average over the rows.

    x: (P,), y: (R, P) with one independent measurement per row (R ≥ 2) → ``(mean slope, standard
    error)``, where each row's least-squares slope is ``Σ_p x_p y_p / Σ_p x_p²`` and the standard error is
    the rows' standard deviation over ``√R``.
    """
    x64, y64 = x.detach().double().cpu(), y.detach().double().cpu()
    slopes = warn_nonfinite("slope_through_origin", (y64 * x64).sum(-1) / (x64 * x64).sum(),
                            "very large x or y overflow float64")
    return slopes.mean().item(), (slopes.std() / slopes.numel() ** 0.5).item()


def _check_bootstrap(x: Sequence[float], samples: Sequence[torch.Tensor], resamples: int,
                     seed: int) -> dict[str, int]:
    """One sample per point, at least 2 resamples and a seed >= 0 (both as ints)."""
    resamples = check_int("resamples", resamples, low=2)
    check_dim("samples", len(samples), len(x), "number of points (the length of x)")
    return {"resamples": resamples, "seed": check_int("seed", seed, low=0)}


@checked_by(_check_bootstrap)
def bootstrap_slope_se(x: Sequence[float], samples: Sequence[torch.Tensor], *, resamples: int = 1000,
                       seed: int = 0) -> float:
    """Bootstrap standard error of :func:`fit_slope` of the sample means against ``x``.

    samples[p]: the trials (1-D) measured at ``x[p]``. Each resample redraws every point's trials with
    replacement (``resamples`` at once, from a CPU generator seeded with ``seed``), fits the log–log
    slope of the means, and the standard deviation of those slopes is returned.
    """
    g = torch.Generator().manual_seed(seed)
    means = torch.stack([c.double()[torch.randint(0, len(c), (resamples, len(c)), generator=g)].mean(-1)
                         for c in samples], dim=-1)                                 # (resamples, P)
    lx = torch.tensor(list(x), dtype=torch.float64).log()
    return float(_centred_slope(lx - lx.mean(), means.clamp_min(1e-12).log()).std())


# ------------------------------------------------------------------------------------ Student-t intervals
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def _check_df(df: int) -> dict[str, int]:
    return {"df": check_int("df", df, low=1)}


@checked_by(_check_df)
def t_quantile(df: int) -> float:
    """Student's t 97.5 % quantile for ``df`` degrees of freedom (table to 30, then the normal 1.96)."""
    return _T975[df - 1] if df <= 30 else 1.96


@dataclass(frozen=True)
class Effect:
    """An effect with its 95 % confidence interval: mean, lo, hi, and the per-seed means behind it."""

    mean: float
    lo: float
    hi: float
    seed_means: tuple[float, ...]
    n_sequences: int

    def observed(self, margin: float) -> str:
        """Classify the interval against 0 and a margin of negligible size.

        ``"effect"``: CI above 0 and mean above ``margin``; ``"reversed"``: the mirror image;
        ``"small"``: CI excludes 0 but |mean| ≤ margin (real, too small to matter); ``"none"``: CI
        inside ±margin and around 0; otherwise ``"inconclusive"`` (the interval is too wide to tell).
        """
        if self.lo > 0 and self.mean > margin:
            return "effect"
        if self.hi < 0 and self.mean < -margin:
            return "reversed"
        if (self.lo > 0 or self.hi < 0) and abs(self.mean) <= margin and -margin <= self.lo and self.hi <= margin:
            return "small"
        return "none" if -margin <= self.lo and self.hi <= margin else "inconclusive"


def _check_spread(x: torch.Tensor) -> None:
    """Effects (seeds, N) with a spread: 2 seeds, or one seed of 2 sequences."""
    check_tensor("x", x, rank=2)
    S, N = x.shape
    if N < 1 or (S < 2 and N < 2):
        raise ValueError(f"x: expected at least 2 seeds or 2 sequences (an interval needs a spread), got shape "
                         f"{tuple(x.shape)}")


@checked_by(_check_spread)
def summarize(x: torch.Tensor) -> Effect:
    """Effect and 95 % CI from effects x (seeds, N): the training seed is the unit of replication.

    With S ≥ 2 seeds: mean of the seed means ± t_{S−1} · sd(seed means)/√S. With one seed: the
    sequence-level interval, mean ± t_{N−1} · sd/√N.
    """
    x = x.double()
    S, N = x.shape
    means = x.mean(-1)
    if S >= 2:
        half = unchecked(t_quantile)(S - 1) * means.std() / math.sqrt(S)
    else:
        half = unchecked(t_quantile)(max(N - 1, 1)) * x[0].std() / math.sqrt(N)
    m = warn_nonfinite("summarize", torch.stack([means.mean(), half]), "very large effects overflow float64")[0].item()
    return Effect(m, m - half.item(), m + half.item(), tuple(means.tolist()), N)


__all__ = ["Effect", "bootstrap_slope_se", "fit_log_slope", "fit_slope", "slope_through_origin", "summarize",
           "t_quantile"]
