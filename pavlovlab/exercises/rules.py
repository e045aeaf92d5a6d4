"""Checkers for the exercises of ``06_delta_and_oja``: write the delta update, find the learning rate at
which the delta rule becomes unstable, predict the fixed point of Oja's rule.

Each ``check_*`` takes the learner's function (or value), compares it with the package on several random
cases (float64, from a seeded CPU generator) and prints one friendly verdict. They never raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..memory import delta_update
from ._core import Case, check_function, check_value

_DTYPE = torch.float64


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=_DTYPE)


# --------------------------------------------------------------------------- Exercise 1: the delta write

def delta_write_reference(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: float) -> torch.Tensor:
    """One delta-rule write: ``S + β (v − S k) kᵀ``. S: (d_v, d_k), k: (d_k,), v: (d_v,) -> (d_v, d_k)."""
    return S + beta * delta_update(S, k, v)


def check_delta_write(fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor], *,
                      seed: int = 0) -> bool:
    """Check ``fn(S, k, v, beta) -> S + β (v − S k) kᵀ`` on random memories, keys and values."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d_v, d_k, beta in [(1, 1, 0.5), (2, 3, 1.0), (4, 4, 0.3), (3, 7, 1.7)]:
        k = _randn(g, d_k)
        cases.append(((_randn(g, d_v, d_k), k / k.norm(), _randn(g, d_v), beta), {}))
    return check_function(fn, delta_write_reference, cases, name="Exercise 1 (the delta write)",
                          hint="first the prediction error, error = v - S @ k; then "
                               "S + beta * torch.outer(error, k).", rtol=1e-8, atol=1e-10)


# --------------------------------------------------------------------------- Exercise 3: Oja's fixed point

def oja_fixed_point_reference(C: torch.Tensor) -> torch.Tensor:
    """Where Oja's rule settles for inputs with second moment C (d, d): the unit-norm top eigenvector,
    with its sign chosen so that its largest-magnitude entry is positive."""
    return _canonical(torch.linalg.eigh(C).eigenvectors[..., -1])


def _canonical(w: Any) -> torch.Tensor:
    """A direction with a fixed sign (±u are both fixed points): flip so the largest-|.| entry is positive."""
    w = torch.as_tensor(w, dtype=_DTYPE).flatten()
    return w * torch.sign(w[w.abs().argmax()]) if w.numel() else w


def check_oja_fixed_point(fn: Callable[[torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(C) -> w*``, the fixed point of Oja's rule for covariance C (either sign accepted)."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d in (2, 3, 5):
        Q = torch.linalg.qr(_randn(g, d, d)).Q
        lam = torch.linspace(3.0, 0.2, d, dtype=_DTYPE)            # distinct eigenvalues: one top direction
        cases.append((((Q * lam) @ Q.mT,), {}))

    def learner(C: torch.Tensor) -> torch.Tensor:
        return _canonical(fn(C))

    learner.__name__ = getattr(fn, "__name__", "learner")
    if not callable(fn):
        learner = fn  # let the core say "expected a function"
    return check_function(learner, oja_fixed_point_reference, cases, name="Exercise 3 (Oja's fixed point)",
                          hint="at the fixed point E[Δw] = C w − (wᵀ C w) w = 0, so w is an eigenvector of C "
                               "with ‖w‖ = 1; only the top one is stable. torch.linalg.eigh(C) returns the "
                               "eigenvalues in ascending order, the eigenvectors as columns.",
                          rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------- Exercise 2: the unstable β

UNSTABLE_BETA = 2.0
"""With unit keys one delta write multiplies the error on that key by (1 − β): |1 − β| > 1 once β > 2."""


def check_unstable_beta(answer: Callable[[], float] | float) -> bool:
    """Check the learner's learning rate above which the delta rule diverges with unit-norm keys (β = 2)."""
    return check_value(answer, UNSTABLE_BETA, name="Exercise 2 (the unstable learning rate)",
                       hint="write the same unit key again and again: the error on it is multiplied by "
                            "(1 − β) at each write. For which β does |1 − β| exceed 1?", rtol=0.0, atol=0.1)


__all__ = ["UNSTABLE_BETA", "check_delta_write", "check_oja_fixed_point", "check_unstable_beta", "delta_write_reference",
           "oja_fixed_point_reference"]
