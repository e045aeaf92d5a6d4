"""Checkers for the exercises of ``07_decay_and_unlearning``.

Each ``check_*`` takes the learner's function, calls it and the package's reference on several random
cases (float64, drawn from a seeded CPU generator), and prints one friendly verdict. They never raise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..decay import half_life
from ..unlearning import unlearn_delta
from ._core import Case, check_function

_DTYPE = torch.float64


# --------------------------------------------------------------------------- Exercise 1: memory horizon

def half_life_reference(gamma: float) -> float:
    """The half-life ``ℓ½ = ln 2 / (−ln γ)`` of a head with decay γ in (0, 1) (a float)."""
    return float(half_life(gamma))


def check_half_life(fn: Callable[[float], float], *, seed: int = 0) -> bool:
    """Check ``fn(gamma) -> ln 2 / (−ln γ)`` on RetNet's decays and a few random ones."""
    g = torch.Generator().manual_seed(seed)
    gammas = [1 - 2 ** (-5 - h) for h in (0, 2, 5)]
    gammas += [0.5, 0.9] + [float(x) for x in 0.2 + 0.79 * torch.rand(3, generator=g, dtype=_DTYPE)]
    cases: list[Case] = [((gm,), {}) for gm in gammas]
    return check_function(fn, half_life_reference, cases, name="Exercise 1 (a head's memory horizon)",
                          hint="solve γ^ℓ = 1/2 for ℓ: take logarithms, ℓ · ln γ = ln(1/2), so "
                               "ℓ½ = math.log(2) / -math.log(gamma) (not 1/(1 − γ), which is the total weight).",
                          rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- Exercise 2: unlearn one bell

def unlearn_reference(S: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """One delta step towards a zero response: ``S − (S k) kᵀ / (k·k)``. S: (d_v, d_k), k: (d_k,)."""
    return unlearn_delta(S, k)


def check_unlearn(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Check the learner's targeted delta update ``fn(S, k) -> S_new`` (afterwards ``S_new k = 0``)."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d_v, d_k in [(1, 2), (3, 3), (4, 6), (7, 5)]:
        S = torch.randn(d_v, d_k, generator=g, dtype=_DTYPE)
        k = torch.randn(d_k, generator=g, dtype=_DTYPE) * (0.5 + 2 * torch.rand((), generator=g, dtype=_DTYPE))
        cases.append(((S, k), {}))
    return check_function(fn, unlearn_reference, cases, name="Exercise 2 (unlearn one association)",
                          hint="the error is what you want (zero) minus what the memory predicts: "
                               "e = -(S @ k); write it with step β = 1/(k·k): "
                               "S + torch.outer(e, k) / (k @ k). Keys here are not unit length.",
                          rtol=1e-6, atol=1e-9)


__all__ = ["check_half_life", "check_unlearn", "half_life_reference", "unlearn_reference"]
