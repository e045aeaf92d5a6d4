"""Checkers for notebook 01 (Pavlovian conditioning). Each compares the learner's function with the
package on several random cases and prints a friendly verdict; none of them raises."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..conditioning import blocking, rescorla_wagner
from ._core import check_function


def reference_rw_update(V: torch.Tensor, x: torch.Tensor, lam: float, alpha: float = 0.3,
                        beta: float = 1.0) -> torch.Tensor:
    """One Rescorla–Wagner trial from the package: ``V + α β (λ − x·V) x``. V, x: (n_cs,) -> (n_cs,)."""
    return rescorla_wagner(x[None], torch.tensor([lam], dtype=x.dtype), alpha=alpha, beta=beta, V0=V)[1]


def check_rw_update(fn: Callable[..., torch.Tensor], *, seed: int = 0) -> bool:
    """Exercise 1: ``fn(V, x, lam, alpha=..., beta=...)`` must return the strengths after one trial.

    Random cases: 1 to 4 CSs, present (0/1) or with intensities, US present or absent, random α, β.
    """
    g = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(8):
        n = 1 + i % 4
        V = torch.randn(n, generator=g) * 0.5
        x = (torch.rand(n, generator=g) < 0.6).float() if i % 2 == 0 else torch.rand(n, generator=g)
        x[0] = 1.0  # at least one CS present, so the update is never trivially zero
        lam = [1.0, 0.0, 0.5, 2.0][i % 4]
        alpha, beta = round(0.05 + 0.9 * torch.rand((), generator=g).item(), 3), [1.0, 0.5][i % 2]
        cases.append(((V, x, lam), {"alpha": alpha, "beta": beta}))
    if callable(fn):
        learner = fn

        def fn(V, x, lam, **kw):  # the learner gets copies: an in-place update must not change the case
            return learner(V.clone(), x.clone(), lam, **kw)

    return check_function(
        fn, reference_rw_update, cases, name="Exercise 1 (one Rescorla–Wagner update)",
        hint="the prediction is (x * V).sum(); the surprise is lam minus it; return V + alpha * beta * surprise * x "
             "(a new tensor of the same shape as V).")


def reference_blocked_strength(n_pretrain: int, n_compound: int, alpha: float) -> float:
    """The package's answer: the light's V after ``n_pretrain`` A+ then ``n_compound`` AB+ trials (λ = 1)."""
    cs, us, _ = blocking(n_pretrain, n_compound=n_compound)
    return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()


def check_blocked_strength(fn: Callable[[int, int, float], float], *, seed: int = 0) -> bool:
    """Exercise 2: ``fn(n_pretrain, n_compound, alpha)`` must return the light's strength ``V_B`` after
    ``n_pretrain`` bell → food trials and ``n_compound`` bell + light → food trials (λ = 1, β = 1).

    The cases include no pretraining at all (no blocking: the light learns) and a short pretraining
    (partial blocking), so a constant answer cannot pass.
    """
    g = torch.Generator().manual_seed(seed)
    cases = [((0, 20, 0.3), {}), ((30, 20, 0.3), {}), ((3, 10, 0.2), {})]
    for _ in range(3):
        n_pre = int(torch.randint(0, 25, (), generator=g))
        n_comp = int(torch.randint(1, 25, (), generator=g))
        cases.append(((n_pre, n_comp, round(0.05 + 0.5 * torch.rand((), generator=g).item(), 3)), {}))

    def as_number(*args):  # accept a float, a 0-d tensor or a 1-element tensor from the learner
        got = fn(*args)
        return got.item() if isinstance(got, torch.Tensor) and got.numel() == 1 else got

    return check_function(
        as_number if callable(fn) else fn, reference_blocked_strength, cases,
        name="Exercise 2 (simulate blocking)", rtol=1e-4, atol=1e-5,
        hint="build cs with n_pretrain rows [1, 0] then n_compound rows [1, 1] (torch.cat), us = ones, run "
             "rescorla_wagner(cs, us, alpha=alpha) and return V[-1, 1] (the light's column, after the last trial).")


__all__ = ["check_blocked_strength", "check_rw_update", "reference_blocked_strength", "reference_rw_update"]
