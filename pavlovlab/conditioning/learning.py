"""Classical (Pavlovian) conditioning: the Rescorla–Wagner model and a Hebbian contrast, run on the classic designs.

A dog hears a bell (the conditioned stimulus, CS) and then gets food (the unconditioned stimulus,
US). Each CS ``i`` carries an associative strength ``V_i``: how much it predicts the US. On each
trial the CSs present (``x_i`` = 1, or an intensity) predict ``Σ_j x_j V_j``, the US delivers
``λ`` (0 when absent), and

- Rescorla–Wagner (1972) learns from the surprise: ``ΔV_i = α_i β (λ − Σ_j x_j V_j) x_i``;
- a plain Hebbian rule learns from co-occurrence: ``ΔV_i = α_i β λ x_i``.

Rescorla–Wagner is the delta rule of ``pavlovlab.memory`` with the CS vector as key and the US as a
one-dimensional value; the Hebbian rule is linear attention's write (arXiv:2508.08289).

The designs it runs on (``acquisition``, ``blocking``, ...) are trial tables from :mod:`pavlovlab.conditioning.trials`;
``simulate(name, ...)`` runs one by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import torch

from .._checks import (
    broadcast_lead,
    check_choice,
    check_dim,
    check_float_dtype,
    check_int,
    check_numbers,
    check_real,
    check_real_tensor,
    check_same_kind,
    check_tensor,
    checked_by,
)
from .trials import TABLES, Design, Device

# --------------------------------------------------------------------------------------------------
# The learning rules
# --------------------------------------------------------------------------------------------------


def _check_alpha(alpha: float | Sequence[float] | torch.Tensor, n_cs: int, like: torch.Tensor) -> torch.Tensor:
    """Saliences as a tensor (..., n_cs) (or (..., 1)) on ``like``'s dtype and device."""
    if isinstance(alpha, torch.Tensor):
        check_float_dtype("alpha", alpha)
        a = alpha.to(dtype=like.dtype, device=like.device)  # not detached: gradients flow to α
        if a.dim() == 0:
            a = a[None]
    elif isinstance(alpha, (list, tuple)):
        a = torch.tensor([check_real(f"alpha[{i}]", v, low=0.0) for i, v in enumerate(alpha)],
                         dtype=like.dtype, device=like.device)
    else:
        a = torch.tensor([check_real("alpha", alpha, low=0.0)], dtype=like.dtype, device=like.device)
    if a.shape[-1] not in (1, n_cs):
        raise ValueError(f"alpha: expected one salience per CS, shape (n_cs,) = ({n_cs},) or a float, "
                         f"got shape {tuple(a.shape)}")
    check_real_tensor("alpha", a, low=0.0)
    return a


def _check_conditioning(cs: torch.Tensor, us: torch.Tensor, alpha: float | Sequence[float] | torch.Tensor,
                        beta: float, V0: torch.Tensor | None, error: bool) -> dict[str, object]:
    """The arguments of a conditioning simulator (with Rescorla–Wagner's bound when ``error``): the saliences α as a
    tensor (..., n_cs) or (..., 1), β as a float and the strengths before trial 1, ``V0``, expanded to the
    broadcast leading dims (zeros when None)."""
    check_tensor("cs", cs, min_rank=2)
    check_tensor("us", us, min_rank=1)
    check_same_kind(cs=cs, us=us)
    T, n_cs = cs.shape[-2], cs.shape[-1]
    if n_cs < 1:
        raise ValueError(f"cs: expected at least one CS (last dim n_cs >= 1), got shape {tuple(cs.shape)}")
    check_dim("us", us.shape[-1], T, "one US per trial, i.e. trials (dim -2 of cs)")
    check_real_tensor("cs", cs)
    check_real_tensor("us", us)
    a = _check_alpha(alpha, n_cs, cs)
    beta = check_real("beta", beta, low=0.0)
    if error and T:
        # The surprise of trial t, e = λ − xᵀV, becomes (1 − β Σ_i α_i x_i²) e after the update: the CSs present
        # together share it, so each trial overshoots once β Σ_i α_i x_i² > 2 (αβ·(number of CSs present) for
        # 0/1 presence). In the metric ‖V‖² = Σ_i V_i²/α_i every trial's map is symmetric with eigenvalues 1 and
        # 1 − β Σ_i α_i x_i², so the bound on every trial keeps V bounded, whatever the order of the trials.
        with torch.no_grad():
            load = beta * (a.detach()[..., None, :] * cs * cs).sum(-1)          # (..., trials)
            worst = float(load.max())
        if worst > 2:
            t = int(load.reshape(-1, T).max(0).values.argmax())
            raise ValueError(f"alpha: expected α·β <= 2 summed over the CSs present together (β·Σ_i α_i x_i² <= 2 "
                             f"on every trial; beyond it the shared surprise overshoots and V diverges), got "
                             f"{worst:.4g} on trial {t} (cs[..., {t}, :] = {cs.reshape(-1, T, n_cs)[0, t].tolist()})")
    shapes = {"cs": cs.shape[:-2], "us": us.shape[:-1], "alpha": a.shape[:-1]}
    if V0 is not None:
        check_tensor("V0", V0, min_rank=1)
        check_same_kind(cs=cs, V0=V0)
        check_dim("V0", V0.shape[-1], n_cs, "one strength per CS, n_cs (last dim of cs)")
        check_real_tensor("V0", V0)
        shapes["V0"] = V0.shape[:-1]
    lead = broadcast_lead(**shapes)
    V = (torch.zeros(*lead, n_cs, dtype=cs.dtype, device=cs.device) if V0 is None
         else V0.expand(*lead, n_cs).clone())
    return {"alpha": a, "beta": beta, "V0": V}


def _check_rescorla_wagner(cs: torch.Tensor, us: torch.Tensor, alpha: float | Sequence[float] | torch.Tensor,
                           beta: float, V0: torch.Tensor | None) -> dict[str, object]:
    """The arguments of :func:`rescorla_wagner` (:func:`_check_conditioning`, with the bound on β Σ_i α_i x_i²)."""
    return _check_conditioning(cs, us, alpha, beta, V0, error=True)


def _check_hebbian_conditioning(cs: torch.Tensor, us: torch.Tensor, alpha: float | Sequence[float] | torch.Tensor,
                                beta: float, V0: torch.Tensor | None) -> dict[str, object]:
    """The arguments of :func:`hebbian_conditioning` (:func:`_check_conditioning`)."""
    return _check_conditioning(cs, us, alpha, beta, V0, error=False)


def _conditioning(cs: torch.Tensor, us: torch.Tensor, rate: torch.Tensor, V: torch.Tensor,
                  error: bool) -> torch.Tensor:
    """The trial-by-trial recurrence on checked arguments: V (..., trials + 1, n_cs)."""
    T = cs.shape[-2]
    history = [V]
    for t in range(T):  # the recurrence: each trial starts from the strengths the last one left
        x, lam = cs[..., t, :], us[..., t]
        teach = lam - (x * V).sum(-1) if error else lam  # prediction error, or the US alone
        V = V + rate * teach[..., None] * x
        history.append(V)
    return torch.stack(history, dim=-2)


@checked_by(_check_rescorla_wagner)
def rescorla_wagner(cs: torch.Tensor, us: torch.Tensor, *, alpha: float | Sequence[float] | torch.Tensor = 0.3,
                    beta: float = 1.0, V0: torch.Tensor | None = None) -> torch.Tensor:
    """The Rescorla–Wagner model: ``ΔV_i = α_i β (λ − Σ_j x_j V_j) x_i`` on every trial.

    Learning is driven by the prediction error (the surprise) ``λ − Σ_j x_j V_j``, which all the CSs
    present share: this is what makes them compete (blocking, overshadowing).

    Args:
        cs: (..., trials, n_cs) presence (0/1) or intensity ``x`` of each CS on each trial.
        us: (..., trials) the US magnitude ``λ`` on each trial (0 when the US is absent).
        alpha: the CS saliences: a float, or one per CS (n_cs,) (a list or a tensor; a tensor may carry
            leading dims (..., n_cs) or (..., 1) that broadcast, e.g. to sweep α).
        beta: the learning rate set by the US (a number).
        V0: (..., n_cs) the strengths before trial 1 (default 0).

    Stability: a trial shrinks the surprise by ``1 − β Σ_i α_i x_i²``, so ValueError unless
    ``β Σ_i α_i x_i² <= 2`` on every trial (αβ·(number of CSs present together) <= 2 for 0/1 presence).

    Returns:
        V: (..., trials + 1, n_cs), ``V[..., 0, :]`` before trial 1 and ``V[..., t, :]`` after trial t.

    Example::

        cs, us, labels = trials.acquisition(20)
        V = rescorla_wagner(cs, us, alpha=0.3)      # V[-1] ≈ [1.0]
    """
    return _conditioning(cs, us, cast(torch.Tensor, alpha) * beta, cast(torch.Tensor, V0), error=True)


@checked_by(_check_hebbian_conditioning,
            nonfinite="very large cues or outcomes make the strengths grow past the dtype")
def hebbian_conditioning(cs: torch.Tensor, us: torch.Tensor, *,
                         alpha: float | Sequence[float] | torch.Tensor = 0.3, beta: float = 1.0,
                         V0: torch.Tensor | None = None) -> torch.Tensor:
    """A pure "fire together, wire together" rule: ``ΔV_i = α_i β λ x_i`` (no prediction error).

    Each CS grows with its own pairings with the US, whatever the other CSs already predict, so this
    rule cannot block, does not extinguish (λ = 0 leaves V unchanged) and grows without bound.
    Same arguments and return as :func:`rescorla_wagner`: cs (..., trials, n_cs), us (..., trials),
    returns V (..., trials + 1, n_cs).
    """
    return _conditioning(cs, us, cast(torch.Tensor, alpha) * beta, cast(torch.Tensor, V0), error=False)


SIMULATORS: dict[str, Callable[..., torch.Tensor]] = {
    "rescorla-wagner": rescorla_wagner, "hebbian": hebbian_conditioning,
}
"""The conditioning simulators by name, for :func:`simulate`: each runs a whole experiment (cs, us) -> V on CS
strengths (distinct from ``memory.RULES``, the one-step memory updates ΔS)."""


def _check_prediction(V: torch.Tensor, cs: torch.Tensor) -> None:
    """Strengths V (..., trials + 1, n_cs) and the trials cs (..., trials, n_cs) they were learned on."""
    check_tensor("V", V, min_rank=2)
    check_tensor("cs", cs, min_rank=2)
    check_dim("V", V.shape[-2], cs.shape[-2] + 1, "trials + 1 (one more than dim -2 of cs)")
    check_dim("V", V.shape[-1], cs.shape[-1], "n_cs (last dim of cs)")


@checked_by(_check_prediction, nonfinite="very large V or cs overflow the dtype")
def prediction(V: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
    """The US each trial predicts before it happens (the conditioned response): ``Σ_j x_j V_j``.

    V: (..., trials + 1, n_cs) from :func:`rescorla_wagner`; cs: (..., trials, n_cs).
    Returns (..., trials): on trial t, the CSs present times the strengths left by trial t − 1.
    """
    return (V[..., :-1, :] * cs.to(V)).sum(-1)


def _check_simulation(design: str, rule: str, alpha: float) -> dict[str, float]:
    """A design of :data:`TABLES`, a rule of :data:`SIMULATORS` and α >= 0 (returned as a float)."""
    check_choice("design", design, TABLES)
    check_choice("rule", rule, SIMULATORS)
    return {"alpha": check_real("alpha", alpha, low=0.0)}


@checked_by(_check_simulation)
def simulate(design: str, *, n_trials: int = 30, alpha: float = 0.3, beta: float = 1.0, lam: float = 1.0,
             rule: str = "rescorla-wagner", dtype: torch.dtype = torch.float32, device: Device = None,
             **design_kwargs: Any) -> tuple[torch.Tensor, Design]:
    """Build the named design and run a rule on it, with α scaled by the design's relative saliences.

    Returns ``(V, design)``: V (trials + 1, n_cs) (with the design's leading dims, if any).
    Example: ``V, (cs, us, labels) = simulate("blocking", alpha=0.3)``.
    """
    d = TABLES[design](n_trials, lam=lam, dtype=dtype, device=device, **design_kwargs)
    saliences = torch.tensor(d.labels.salience, dtype=dtype, device=d.cs.device)
    return SIMULATORS[rule](d.cs, d.us, alpha=alpha * saliences, beta=beta), d


# --------------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------------


def _check_pretraining(n_pretrain: Sequence[int] | torch.Tensor, n_compound: int,
                       lam: float) -> dict[str, object]:
    """Pretraining lengths (P,) (whole numbers >= 0, returned as a long CPU tensor), compound trials (an int) and
    λ."""
    n = torch.as_tensor(n_pretrain).detach().cpu()
    if n.dim() != 1 or n.numel() == 0:
        raise ValueError(f"n_pretrain: expected a non-empty 1-D sequence of lengths, got shape {tuple(n.shape)}")
    if n.is_floating_point() and not bool((n == n.round()).all()):
        raise ValueError("n_pretrain: expected whole numbers of trials")
    n = n.long()
    if bool((n < 0).any()):
        raise ValueError(f"n_pretrain: expected lengths >= 0, got {n.min().item()}")
    m = check_int("n_compound", n_compound, low=1)
    check_real("lam", lam)
    return {"n_pretrain": n, "n_compound": m}


@checked_by(_check_pretraining)
def blocking_curve(n_pretrain: Sequence[int] | torch.Tensor, *, n_compound: int = 30,
                   alpha: float = 0.3, beta: float = 1.0, lam: float = 1.0,
                   dtype: torch.dtype = torch.float64, device: Device = None) -> torch.Tensor:
    """How much pretraining blocks: the light's strength after each pretraining length.

    For each length ``n`` of ``n_pretrain``: ``n`` bell → food trials (A+), then ``n_compound``
    bell + light → food trials (AB+), simulated by :func:`rescorla_wagner` (one α for both CSs).
    All lengths run at once, as one batch: a shorter pretraining is padded at the start with empty
    trials (no CS present), which change nothing.

    Args:
        n_pretrain: (P,) pretraining lengths (whole numbers ≥ 0).
    Returns:
        V_light: (P,) the light's strength after the last compound trial (``dtype``, on ``device``).
    Compare :func:`blocking_theory`, the closed form.
    """
    n = cast(torch.Tensor, n_pretrain)                           # (P,) long: made a tensor by the check
    top = int(n.max())
    t = torch.arange(top + n_compound)                           # trial index in the padded design
    start = (top - n)[:, None]                                   # (P, 1): first pretraining trial
    bell = (t >= start).to(dtype)                                # (P, top + m)
    light = (t >= top).to(dtype).expand_as(bell)
    cs = torch.stack([bell, light], dim=-1).to(device)           # (P, trials, 2)
    us = (lam * bell).to(device)                                 # food whenever the bell sounds
    return rescorla_wagner(cs, us, alpha=alpha, beta=beta)[:, -1, 1]


def _check_blocking(n_pretrain: torch.Tensor | Sequence[int] | int, n_compound: int, alpha: float, beta: float,
                    lam: float) -> dict[str, object]:
    """The arguments of :func:`blocking_theory`, α, β and λ as floats and the compound trials as an int, with
    ``αβ`` at most 1 (the compound trials present two CSs, and Rescorla–Wagner's bound is 2αβ <= 2)."""
    alpha = check_real("alpha", alpha, low=0.0)
    beta = check_real("beta", beta, low=0.0)
    lam = check_real("lam", lam, low=0.0)
    m = check_int("n_compound", n_compound, low=1)
    check_numbers("n_pretrain", n_pretrain, low=0.0)
    a = alpha * beta
    if 2 * a > 2:
        raise ValueError(f"alpha: expected α·β <= 1 (the compound trials present two CSs, and Rescorla–Wagner needs "
                         f"α·β·(number of CSs present) <= 2), got α·β = {a:.4g}")
    return {"alpha": alpha, "beta": beta, "lam": lam, "n_compound": m}


@checked_by(_check_blocking)
def blocking_theory(n_pretrain: torch.Tensor | Sequence[int] | int, *, n_compound: int = 30,
                    alpha: float = 0.3, beta: float = 1.0, lam: float = 1.0) -> torch.Tensor:
    """The closed form of :func:`blocking_curve` (one α for both CSs, ``a = αβ``):

    after ``n`` A+ trials the bell predicts ``λ(1 − (1 − a)^n)``, so the first compound trial's surprise
    is ``δ₀ = λ(1 − a)^n``; bell and light then share every surprise, which shrinks by ``(1 − 2a)`` per
    trial, and the light ends with half of what was left: ``V_light = λ (1 − a)^n (1 − (1 − 2a)^m) / 2``.
    Blocking therefore grows *exponentially* with the pretraining length, at the rate ``−log(1 − a)``.

    n_pretrain: (P,) or a number (lengths >= 0) → (P,) or () float64. Needs ``αβ <= 1`` (two CSs on the compound
    trials, see :func:`rescorla_wagner`).
    """
    a, n = alpha * beta, torch.as_tensor(n_pretrain, dtype=torch.float64)
    return lam * (1 - a) ** n * (1 - (1 - 2 * a) ** n_compound) / 2


__all__ = [
    "SIMULATORS",
    "blocking_curve",
    "blocking_theory",
    "hebbian_conditioning",
    "prediction",
    "rescorla_wagner",
    "simulate",
]
