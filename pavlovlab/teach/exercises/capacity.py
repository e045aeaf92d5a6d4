"""Checkers for the exercises of ``04_capacity_limits``.

Each ``check_*`` takes the learner's function, calls it and the package's reference on several random
cases (drawn from a seeded CPU generator), and prints one friendly verdict. They never raise.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from pavlovlab.capacity import average_capacity_theory, capacity_from_fidelity, fidelity_theory, n_grid
from ._core import Case, check_function


# ------------------------------------------------------------------------ Exercise 1: the theory curve
def fidelity_reference(n: torch.Tensor, d_k: int) -> torch.Tensor:
    """Mean cosine after storing ``n`` pairs in dimension ``d_k``: ``1/√(1 + (n − 1)/d_k)``. n: (P,) float64."""
    return fidelity_theory(n, d_k)


def check_fidelity_theory(fn: Callable[[torch.Tensor, int], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(n, d_k) -> 1/√(1 + (n − 1)/d_k)`` for tensors ``n`` (float64, starting at n = 1) and int ``d_k``."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d_k in (4, 16, 37, 128):
        n = torch.cat([torch.ones(1), torch.randint(2, 4 * d_k, (5,), generator=g).sort().values]).double()
        cases.append(((n, d_k), {}))
    return check_function(fn, fidelity_reference, cases, name="Exercise 1 (the theory curve)",
                          hint="the read-out is the signal (size 1) plus n − 1 crosstalk terms, each of "
                               "variance 1/d_k; the cosine is signal / √(signal² + noise²) = "
                               "1 / torch.sqrt(1 + (n - 1) / d_k). Check that n = 1 gives exactly 1.",
                          rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------- Exercise 2: invert the theory for n
def predicted_capacity_reference(d_k: int, threshold: float) -> int:
    """The largest whole n whose theoretical mean cosine is ≥ ``threshold``: ``⌊1 + d_k (1/θ² − 1)⌋``."""
    return int(math.floor(float(average_capacity_theory(d_k, threshold)) + 1e-9))


def check_predicted_capacity(fn: Callable[[int, float], int], *, seed: int = 0) -> bool:
    """Check ``fn(d_k, threshold) -> the largest whole n with 1/√(1 + (n − 1)/d_k) ≥ threshold``."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [((64, 0.9), {}), ((16, 0.8), {}), ((100, 0.5), {})]
    for _ in range(3):
        d_k = int(torch.randint(8, 513, (1,), generator=g))
        cases.append(((d_k, round(0.5 + 0.45 * float(torch.rand(1, generator=g)), 2)), {}))
    return check_function(fn, predicted_capacity_reference, cases, name="Exercise 2 (capacity from the theory)",
                          hint="solve 1/√(1 + (n − 1)/d_k) ≥ θ for n: n ≤ 1 + d_k (1/θ² − 1); the answer is the "
                               "largest whole number below that, math.floor(...).", rtol=0.0, atol=1e-9)


# ------------------------------------------------------ Exercise 3: capacity from a measured curve
def capacity_reference(ns: torch.Tensor, mean_cosine: torch.Tensor, threshold: float) -> int:
    """The largest n of the grid before the measured mean cosine first drops below ``threshold`` (0 if at once)."""
    return capacity_from_fidelity(ns, mean_cosine, threshold)


def _curve_cases(g: torch.Generator) -> list[Case]:
    cases: list[Case] = []
    for d_k, threshold in ((16, 0.8), (64, 0.7), (128, 0.9)):
        ns = n_grid(d_k, points=16, max_ratio=2.0)
        noisy = fidelity_theory(ns, d_k) + 0.01 * torch.randn(len(ns), generator=g, dtype=torch.float64)
        cases.append(((ns, noisy.clamp(max=1.0), threshold), {}))
    ns = torch.tensor([1, 2, 4, 8, 16, 32])
    cases.append(((ns, torch.tensor([1.0, 0.9, 0.75, 0.82, 0.6, 0.5], dtype=torch.float64), 0.8), {}))  # a bump
    cases.append(((ns, torch.tensor([0.7, 0.6, 0.5, 0.4, 0.3, 0.2], dtype=torch.float64), 0.8), {}))    # none
    cases.append(((ns, torch.full((6,), 0.95, dtype=torch.float64), 0.8), {}))                           # all
    return cases


def check_capacity_estimate(fn: Callable[[torch.Tensor, torch.Tensor, float], int], *, seed: int = 0) -> bool:
    """Check ``fn(ns, mean_cosine, threshold) -> int``: the largest n before the curve first drops below threshold."""
    g = torch.Generator().manual_seed(seed)
    return check_function(fn, capacity_reference, _curve_cases(g), name="Exercise 3 (capacity from a measured curve)",
                          hint="walk along the grid from the smallest n and stop at the first point below the "
                               "threshold; answer the n just before it (0 if even the first point is below). "
                               "A later point back above the threshold does not count: noise is not recovery.",
                          rtol=0.0, atol=1e-9)


__all__ = ["check_capacity_estimate", "check_fidelity_theory", "check_predicted_capacity"]
