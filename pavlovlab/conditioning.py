"""Classical (Pavlovian) conditioning: the Rescorla–Wagner model, a Hebbian contrast, and the classic designs.

A dog hears a bell (the conditioned stimulus, CS) and then gets food (the unconditioned stimulus,
US). Each CS ``i`` carries an associative strength ``V_i``: how much it predicts the US. On each
trial the CSs present (``x_i`` = 1, or an intensity) predict ``Σ_j x_j V_j``, the US delivers
``λ`` (0 when absent), and

- Rescorla–Wagner (1972) learns from the surprise: ``ΔV_i = α_i β (λ − Σ_j x_j V_j) x_i``;
- a plain Hebbian rule learns from co-occurrence: ``ΔV_i = α_i β λ x_i``.

Rescorla–Wagner is the delta rule of ``pavlovlab.memory`` with the CS vector as key and the US as a
one-dimensional value; the Hebbian rule is linear attention's write (arXiv:2508.08289).

Designs (``acquisition``, ``blocking``, ...) return a :class:`Design` ``(cs, us, labels)``:
``cs`` (trials, n_cs), ``us`` (trials,) and :class:`Labels` (CS names, phases, relative saliences).
``DESIGNS`` maps a readable name to each design, and ``simulate(name, ...)`` runs one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from ._checks import (
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
)

Device = torch.device | str | None

# --------------------------------------------------------------------------------------------------
# The learning rules
# --------------------------------------------------------------------------------------------------


def _alpha(alpha: float | Sequence[float] | torch.Tensor, n_cs: int, like: torch.Tensor) -> torch.Tensor:
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


def _conditioning(cs: torch.Tensor, us: torch.Tensor, alpha: float | Sequence[float] | torch.Tensor, beta: float,
                  V0: torch.Tensor | None, error: bool) -> torch.Tensor:
    check_tensor("cs", cs, min_rank=2)
    check_tensor("us", us, min_rank=1)
    check_same_kind(cs=cs, us=us)
    T, n_cs = cs.shape[-2], cs.shape[-1]
    if n_cs < 1:
        raise ValueError(f"cs: expected at least one CS (last dim n_cs >= 1), got shape {tuple(cs.shape)}")
    check_dim("us", us.shape[-1], T, "one US per trial, i.e. trials (dim -2 of cs)")
    check_real_tensor("cs", cs)
    check_real_tensor("us", us)
    a = _alpha(alpha, n_cs, cs)
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
    rate = a * beta
    history = [V]
    for t in range(T):  # the recurrence: each trial starts from the strengths the last one left
        x, lam = cs[..., t, :], us[..., t]
        teach = lam - (x * V).sum(-1) if error else lam  # prediction error, or the US alone
        V = V + rate * teach[..., None] * x
        history.append(V)
    return torch.stack(history, dim=-2)


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

        cs, us, labels = acquisition(20)
        V = rescorla_wagner(cs, us, alpha=0.3)      # V[-1] ≈ [1.0]
    """
    return _conditioning(cs, us, alpha, beta, V0, error=True)


def hebbian_conditioning(cs: torch.Tensor, us: torch.Tensor, *,
                         alpha: float | Sequence[float] | torch.Tensor = 0.3, beta: float = 1.0,
                         V0: torch.Tensor | None = None) -> torch.Tensor:
    """A pure "fire together, wire together" rule: ``ΔV_i = α_i β λ x_i`` (no prediction error).

    Each CS grows with its own pairings with the US, whatever the other CSs already predict, so this
    rule cannot block, does not extinguish (λ = 0 leaves V unchanged) and grows without bound.
    Same arguments and return as :func:`rescorla_wagner`: cs (..., trials, n_cs), us (..., trials),
    returns V (..., trials + 1, n_cs).
    """
    return _conditioning(cs, us, alpha, beta, V0, error=False)


SIMULATORS: dict[str, Callable[..., torch.Tensor]] = {
    "rescorla-wagner": rescorla_wagner, "hebbian": hebbian_conditioning,
}
"""The conditioning simulators by name, for :func:`simulate`: each runs a whole experiment (cs, us) -> V on CS
strengths (distinct from ``memory.RULES``, the one-step memory updates ΔS)."""


def prediction(V: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
    """The US each trial predicts before it happens (the conditioned response): ``Σ_j x_j V_j``.

    V: (..., trials + 1, n_cs) from :func:`rescorla_wagner`; cs: (..., trials, n_cs).
    Returns (..., trials): on trial t, the CSs present times the strengths left by trial t − 1.
    """
    check_tensor("V", V, min_rank=2)
    check_tensor("cs", cs, min_rank=2)
    check_dim("V", V.shape[-2], cs.shape[-2] + 1, "trials + 1 (one more than dim -2 of cs)")
    check_dim("V", V.shape[-1], cs.shape[-1], "n_cs (last dim of cs)")
    return (V[..., :-1, :] * cs.to(V)).sum(-1)


# --------------------------------------------------------------------------------------------------
# Trial designs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Labels:
    """What a design's columns and trials mean.

    cs: the name of each CS column; phases: ``(name, first, stop)`` trial ranges (trial t is row t of
    ``cs``; ``stop`` is excluded); salience: relative saliences to multiply α by (all 1 unless the
    design says otherwise, as in overshadowing); description: one sentence.
    """

    cs: tuple[str, ...]
    phases: tuple[tuple[str, int, int], ...]
    salience: tuple[float, ...]
    description: str

    @property
    def boundaries(self) -> list[int]:
        """Trial counts at which a new phase begins (for vertical lines on a plot of V)."""
        return [first for _, first, _ in self.phases[1:]]


class Design(NamedTuple):
    """A trial design: ``cs`` (trials, n_cs), ``us`` (trials,), ``labels``. Unpacks as ``cs, us, labels``."""

    cs: torch.Tensor
    us: torch.Tensor
    labels: Labels


BELL, LIGHT, BUZZER = "bell (A)", "light (B)", "buzzer (X)"


def _build(phases: Sequence[tuple[str, Sequence[tuple[Sequence[float], float]]]], names: Sequence[str],
           description: str, *, lam: float, dtype: torch.dtype, device: Device, salience: Sequence[float] | None = None
           ) -> Design:
    """Assemble a design from phases, each a list of trials ``(cs row, US present 0/1)``."""
    lam = check_real("lam", lam, low=0.0)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    rows, us, spans, t = [], [], [], 0
    for name, trials in phases:
        for x, present in trials:
            rows.append(list(x))
            us.append(lam * present)
        spans.append((name, t, t + len(trials)))
        t += len(trials)
    n_cs = len(names)
    cs = torch.tensor(rows, dtype=dtype).reshape(len(rows), n_cs).to(device)
    labels = Labels(tuple(names), tuple(spans), tuple(salience or (1.0,) * n_cs), description)
    return Design(cs, torch.tensor(us, dtype=dtype).to(device), labels)


def _n(n_trials: object, name: str = "n_trials", low: int = 1) -> int:
    return check_int(name, n_trials, low=low)


def acquisition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                device: Device = None) -> Design:
    """Acquisition: ``n_trials`` bell → food trials (A+). One CS: ``cs`` (n_trials, 1)."""
    n = _n(n_trials)
    return _build([("acquisition A+", [((1,), 1)] * n)], [BELL],
                  "the bell is always followed by food", lam=lam, dtype=dtype, device=device)


def extinction(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
               device: Device = None) -> Design:
    """Extinction after acquisition: ``n_trials`` A+ trials, then ``n_trials`` bell-alone trials (A−)."""
    n = _n(n_trials)
    return _build([("acquisition A+", [((1,), 1)] * n), ("extinction A−", [((1,), 0)] * n)], [BELL],
                  "bell → food, then the bell alone", lam=lam, dtype=dtype, device=device)


def reacquisition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                  device: Device = None) -> Design:
    """Acquisition (A+), extinction (A−), then reacquisition (A+): ``n_trials`` trials each."""
    n = _n(n_trials)
    return _build([("acquisition A+", [((1,), 1)] * n), ("extinction A−", [((1,), 0)] * n),
                   ("reacquisition A+", [((1,), 1)] * n)], [BELL],
                  "bell → food, bell alone, bell → food again", lam=lam, dtype=dtype, device=device)


def partial_reinforcement(n_trials: int = 60, *, p: float = 0.5, lam: float = 1.0,
                          batch_shape: Sequence[int] = (), generator: torch.Generator | None = None,
                          dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Partial reinforcement: the bell on every trial, food on a random fraction ``p`` of them.

    The food is drawn on the CPU ``generator`` (a fresh one seeded with 0 when None, so the design is
    reproducible), then moved to ``device``. ``batch_shape`` draws independent animals: ``us`` is
    (*batch_shape, n_trials) while ``cs`` stays (n_trials, 1) and broadcasts.
    """
    n = _n(n_trials)
    p = check_real("p", p, low=0.0, high=1.0)
    lam = check_real("lam", lam, low=0.0)
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    elif not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")
    batch = tuple(check_int(f"batch_shape[{i}]", b, low=1) for i, b in enumerate(batch_shape))
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    fed = (torch.rand(*batch, n, generator=generator, dtype=torch.float64) < p).to(dtype)
    labels = Labels((BELL,), ((f"partial reinforcement A± (p = {p:g})", 0, n),), (1.0,),
                    f"the bell is followed by food on a random {p:.0%} of trials")
    return Design(torch.ones(n, 1, dtype=dtype, device=device), (lam * fed).to(device), labels)


def blocking(n_trials: int = 30, *, n_compound: int | None = None, control: bool = False, lam: float = 1.0,
             dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Blocking (Kamin, 1969): bell → food (A+) for ``n_trials``, then bell + light → food (AB+).

    ``n_compound`` compound trials (default ``n_trials``). With ``control=True`` the first phase
    shows the bell without food (A−), so the bell predicts nothing when the light arrives: the
    light then learns its share. Two CSs: columns (bell A, light B).
    """
    n = _n(n_trials, low=0)
    m = n if n_compound is None else _n(n_compound, "n_compound")
    first = ("bell alone A− (control)", [((1, 0), 0)] * n) if control else ("pretraining A+", [((1, 0), 1)] * n)
    return _build([first, ("compound AB+", [((1, 1), 1)] * m)], [BELL, LIGHT],
                  ("control: the bell was not paired with food before the compound" if control else
                   "the bell already predicts the food when the light is added"), lam=lam, dtype=dtype,
                  device=device)


def blocking_control(n_trials: int = 30, **kwargs: Any) -> Design:
    """The control group of :func:`blocking` (the bell shown without food in phase 1)."""
    return blocking(n_trials, control=True, **kwargs)


def overshadowing(n_trials: int = 30, *, salience: Sequence[float] = (1.0, 0.25), lam: float = 1.0,
                  dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Overshadowing (Pavlov, 1927): a loud bell and a dim light always together with food (AB+).

    ``labels.salience`` holds the relative saliences (bell, light): multiply α by them. Rescorla–Wagner
    then shares λ in proportion to salience, ``V_i → λ α_i / Σ_j α_j``.
    """
    n = _n(n_trials)
    if len(salience) != 2:
        raise ValueError(f"salience: expected two saliences (bell, light), got {len(salience)}")
    sal = [check_real(f"salience[{i}]", s, low=0.0, low_open=True) for i, s in enumerate(salience)]
    return _build([("compound AB+", [((1, 1), 1)] * n)], [BELL, LIGHT],
                  "a salient bell and a faint light, always together", lam=lam, dtype=dtype, device=device,
                  salience=sal)


def conditioned_inhibition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                           device: Device = None) -> Design:
    """Conditioned inhibition: A+ for ``n_trials``, then ``n_trials`` trials alternating A+ and AX−.

    The buzzer X comes only when the food expected from the bell fails: X becomes an inhibitor,
    ``V_X → −λ``. Two CSs: columns (bell A, buzzer X).
    """
    n = _n(n_trials)
    mixed = [((1, 0), 1) if t % 2 == 0 else ((1, 1), 0) for t in range(n)]
    return _build([("acquisition A+", [((1, 0), 1)] * n), ("A+ / AX− alternating", mixed)], [BELL, BUZZER],
                  "the buzzer announces that the bell's food will not come", lam=lam, dtype=dtype,
                  device=device)


def overexpectation(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                    device: Device = None) -> Design:
    """Overexpectation: A+ and B+ alternating for ``n_trials``, then the compound AB+ for ``n_trials``.

    Together the two trained CSs predict 2λ but get λ: both lose strength although every compound
    trial is rewarded (``V_A, V_B → λ/2``). Two CSs: columns (bell A, light B).
    """
    n = _n(n_trials)
    alt = [((1, 0), 1) if t % 2 == 0 else ((0, 1), 1) for t in range(n)]
    return _build([("A+ / B+ alternating", alt), ("compound AB+", [((1, 1), 1)] * n)], [BELL, LIGHT],
                  "two separately trained signals are then presented together", lam=lam, dtype=dtype,
                  device=device)


DESIGNS: dict[str, Callable[..., Design]] = {
    "acquisition": acquisition,
    "extinction": extinction,
    "reacquisition": reacquisition,
    "partial reinforcement": partial_reinforcement,
    "blocking": blocking,
    "blocking control": blocking_control,
    "overshadowing": overshadowing,
    "conditioned inhibition": conditioned_inhibition,
    "overexpectation": overexpectation,
}
"""Every design by a readable name (the widget's drop-down); each takes ``n_trials`` (per phase) and ``lam``."""


def simulate(design: str, *, n_trials: int = 30, alpha: float = 0.3, beta: float = 1.0, lam: float = 1.0,
             rule: str = "rescorla-wagner", dtype: torch.dtype = torch.float32, device: Device = None,
             **design_kwargs: Any) -> tuple[torch.Tensor, Design]:
    """Build the named design and run a rule on it, with α scaled by the design's relative saliences.

    Returns ``(V, design)``: V (trials + 1, n_cs) (with the design's leading dims, if any).
    Example: ``V, (cs, us, labels) = simulate("blocking", alpha=0.3)``.
    """
    check_choice("design", design, DESIGNS)
    check_choice("rule", rule, SIMULATORS)
    alpha = check_real("alpha", alpha, low=0.0)
    d = DESIGNS[design](n_trials, lam=lam, dtype=dtype, device=device, **design_kwargs)
    saliences = torch.tensor(d.labels.salience, dtype=dtype, device=d.cs.device)
    return SIMULATORS[rule](d.cs, d.us, alpha=alpha * saliences, beta=beta), d


# --------------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------------


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
    n = torch.as_tensor(n_pretrain).detach().cpu()
    if n.dim() != 1 or n.numel() == 0:
        raise ValueError(f"n_pretrain: expected a non-empty 1-D sequence of lengths, got shape {tuple(n.shape)}")
    if n.is_floating_point() and not bool((n == n.round()).all()):
        raise ValueError("n_pretrain: expected whole numbers of trials")
    n = n.long()
    if bool((n < 0).any()):
        raise ValueError(f"n_pretrain: expected lengths >= 0, got {n.min().item()}")
    m = _n(n_compound, "n_compound")
    check_real("lam", lam)
    top = int(n.max())
    t = torch.arange(top + m)                                    # trial index in the padded design
    start = (top - n)[:, None]                                   # (P, 1): first pretraining trial
    bell = (t >= start).to(dtype)                                # (P, top + m)
    light = (t >= top).to(dtype).expand_as(bell)
    cs = torch.stack([bell, light], dim=-1).to(device)           # (P, trials, 2)
    us = (lam * bell).to(device)                                 # food whenever the bell sounds
    return rescorla_wagner(cs, us, alpha=alpha, beta=beta)[:, -1, 1]


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
    alpha = check_real("alpha", alpha, low=0.0)
    beta = check_real("beta", beta, low=0.0)
    lam = check_real("lam", lam, low=0.0)
    m = _n(n_compound, "n_compound")
    check_numbers("n_pretrain", n_pretrain, low=0.0)
    a = alpha * beta
    if 2 * a > 2:  # the compound trials present two CSs: Rescorla–Wagner's bound is 2αβ <= 2
        raise ValueError(f"alpha: expected α·β <= 1 (the compound trials present two CSs, and Rescorla–Wagner needs "
                         f"α·β·(number of CSs present) <= 2), got α·β = {a:.4g}")
    n = torch.as_tensor(n_pretrain, dtype=torch.float64)
    return lam * (1 - a) ** n * (1 - (1 - 2 * a) ** m) / 2


__all__ = [
    "DESIGNS",
    "SIMULATORS",
    "Design",
    "Labels",
    "acquisition",
    "blocking",
    "blocking_control",
    "blocking_curve",
    "blocking_theory",
    "conditioned_inhibition",
    "extinction",
    "hebbian_conditioning",
    "overexpectation",
    "overshadowing",
    "partial_reinforcement",
    "prediction",
    "reacquisition",
    "rescorla_wagner",
    "simulate",
]
