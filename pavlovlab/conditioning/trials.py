"""The classic conditioning designs as trial tables: which CSs each trial presents, and the US it delivers.

Each design (``acquisition``, ``extinction``, ``blocking``, ...) returns a :class:`Design` ``(cs, us, labels)``:
``cs`` (trials, n_cs) the presence (0/1) of each CS on each trial, ``us`` (trials,) the US magnitude ``λ``
(0 when absent) and :class:`Labels` (CS names, phases, relative saliences). ``TABLES`` maps a readable name
to each design; :func:`pavlovlab.conditioning.simulate` runs a learning rule on one. Designs written as token
sequences, each with a control arm, for the trained models are in :mod:`pavlovlab.phenomena.sequences`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import torch

from .._checks import check_float_dtype, check_generator, check_int, check_real, checked_by

Device = torch.device | str | None


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
    """Assemble a design from phases, each a list of trials ``(cs row, US present 0/1)``, on checked arguments."""
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


def _check_table(n_trials: object, lam: float, dtype: torch.dtype) -> dict[str, object]:
    """The arguments every trial table shares: trials per phase (>= 1, an int), the US magnitude λ >= 0 (a float)
    and a dtype."""
    return {"n_trials": check_int("n_trials", n_trials, low=1), "lam": check_real("lam", lam, low=0.0),
            "dtype": check_float_dtype("dtype", dtype, allow_none=False)}


def _check_blocking(n_trials: object, n_compound: object, lam: float, dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`blocking`: as :func:`_check_table`, with no pretraining allowed (0 trials), and the
    compound trials (>= 1; None: as many as pretraining trials) as an int."""
    n = check_int("n_trials", n_trials, low=0)
    return {"n_trials": n, "n_compound": n if n_compound is None else check_int("n_compound", n_compound, low=1),
            "lam": check_real("lam", lam, low=0.0), "dtype": check_float_dtype("dtype", dtype, allow_none=False)}


def _check_overshadowing(n_trials: object, salience: Sequence[float], lam: float,
                         dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`overshadowing`: as :func:`_check_table`, and two positive saliences (bell, light), as
    floats."""
    if len(salience) != 2:
        raise ValueError(f"salience: expected two saliences (bell, light), got {len(salience)}")
    return {**_check_table(n_trials, lam, dtype),
            "salience": [check_real(f"salience[{i}]", s, low=0.0, low_open=True) for i, s in enumerate(salience)]}


def _check_partial(n_trials: int, p: float, lam: float, generator: torch.Generator | None,
                   batch_shape: Sequence[int], dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`partial_reinforcement`, returned as checked (the generator is checked only)."""
    n = check_int("n_trials", n_trials, low=1)
    p = check_real("p", p, low=0.0, high=1.0)
    lam = check_real("lam", lam, low=0.0)
    check_generator("generator", generator)
    batch = tuple(check_int(f"batch_shape[{i}]", b, low=1) for i, b in enumerate(batch_shape))
    return {"n_trials": n, "p": p, "lam": lam, "batch_shape": batch,
            "dtype": check_float_dtype("dtype", dtype, allow_none=False)}


@checked_by(_check_table)
def acquisition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                device: Device = None) -> Design:
    """Acquisition: ``n_trials`` bell → food trials (A+). One CS: ``cs`` (n_trials, 1)."""
    return _build([("acquisition A+", [((1,), 1)] * n_trials)], [BELL],
                  "the bell is always followed by food", lam=lam, dtype=dtype, device=device)


@checked_by(_check_table)
def extinction(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
               device: Device = None) -> Design:
    """Extinction after acquisition: ``n_trials`` A+ trials, then ``n_trials`` bell-alone trials (A−)."""
    return _build([("acquisition A+", [((1,), 1)] * n_trials), ("extinction A−", [((1,), 0)] * n_trials)], [BELL],
                  "bell → food, then the bell alone", lam=lam, dtype=dtype, device=device)


@checked_by(_check_table)
def reacquisition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                  device: Device = None) -> Design:
    """Acquisition (A+), extinction (A−), then reacquisition (A+): ``n_trials`` trials each."""
    return _build([("acquisition A+", [((1,), 1)] * n_trials), ("extinction A−", [((1,), 0)] * n_trials),
                   ("reacquisition A+", [((1,), 1)] * n_trials)], [BELL],
                  "bell → food, bell alone, bell → food again", lam=lam, dtype=dtype, device=device)


@checked_by(_check_partial)
def partial_reinforcement(n_trials: int = 60, *, p: float = 0.5, lam: float = 1.0,
                          batch_shape: Sequence[int] = (), generator: torch.Generator | None = None,
                          dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Partial reinforcement: the bell on every trial, food on a random fraction ``p`` of them.

    The food is drawn on the CPU ``generator`` (a fresh one seeded with 0 when None, so the design is
    reproducible), then moved to ``device``. ``batch_shape`` draws independent animals: ``us`` is
    (*batch_shape, n_trials) while ``cs`` stays (n_trials, 1) and broadcasts.
    """
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    fed = (torch.rand(*batch_shape, n_trials, generator=generator, dtype=torch.float64) < p).to(dtype)
    labels = Labels((BELL,), ((f"partial reinforcement A± (p = {p:g})", 0, n_trials),), (1.0,),
                    f"the bell is followed by food on a random {p:.0%} of trials")
    return Design(torch.ones(n_trials, 1, dtype=dtype, device=device), (lam * fed).to(device), labels)


@checked_by(_check_blocking)
def blocking(n_trials: int = 30, *, n_compound: int | None = None, control: bool = False, lam: float = 1.0,
             dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Blocking (Kamin, 1969): bell → food (A+) for ``n_trials``, then bell + light → food (AB+).

    ``n_compound`` compound trials (default ``n_trials``). With ``control=True`` the first phase
    shows the bell without food (A−), so the bell predicts nothing when the light arrives: the
    light then learns its share. Two CSs: columns (bell A, light B).
    """
    first = (("bell alone A− (control)", [((1, 0), 0)] * n_trials) if control
             else ("pretraining A+", [((1, 0), 1)] * n_trials))
    return _build([first, ("compound AB+", [((1, 1), 1)] * cast(int, n_compound))], [BELL, LIGHT],
                  ("control: the bell was not paired with food before the compound" if control else
                   "the bell already predicts the food when the light is added"), lam=lam, dtype=dtype,
                  device=device)


def blocking_control(n_trials: int = 30, **kwargs: Any) -> Design:
    """The control group of :func:`blocking` (the bell shown without food in phase 1)."""
    return blocking(n_trials, control=True, **kwargs)


@checked_by(_check_overshadowing)
def overshadowing(n_trials: int = 30, *, salience: Sequence[float] = (1.0, 0.25), lam: float = 1.0,
                  dtype: torch.dtype = torch.float32, device: Device = None) -> Design:
    """Overshadowing (Pavlov, 1927): a loud bell and a dim light always together with food (AB+).

    ``labels.salience`` holds the relative saliences (bell, light): multiply α by them. Rescorla–Wagner
    then shares λ in proportion to salience, ``V_i → λ α_i / Σ_j α_j``.
    """
    return _build([("compound AB+", [((1, 1), 1)] * n_trials)], [BELL, LIGHT],
                  "a salient bell and a faint light, always together", lam=lam, dtype=dtype, device=device,
                  salience=salience)


@checked_by(_check_table)
def conditioned_inhibition(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                           device: Device = None) -> Design:
    """Conditioned inhibition: A+ for ``n_trials``, then ``n_trials`` trials alternating A+ and AX−.

    The buzzer X comes only when the food expected from the bell fails: X becomes an inhibitor,
    ``V_X → −λ``. Two CSs: columns (bell A, buzzer X).
    """
    mixed = [((1, 0), 1) if t % 2 == 0 else ((1, 1), 0) for t in range(n_trials)]
    return _build([("acquisition A+", [((1, 0), 1)] * n_trials), ("A+ / AX− alternating", mixed)], [BELL, BUZZER],
                  "the buzzer announces that the bell's food will not come", lam=lam, dtype=dtype,
                  device=device)


@checked_by(_check_table)
def overexpectation(n_trials: int = 30, *, lam: float = 1.0, dtype: torch.dtype = torch.float32,
                    device: Device = None) -> Design:
    """Overexpectation: A+ and B+ alternating for ``n_trials``, then the compound AB+ for ``n_trials``.

    Together the two trained CSs predict 2λ but get λ: both lose strength although every compound
    trial is rewarded (``V_A, V_B → λ/2``). Two CSs: columns (bell A, light B).
    """
    alt = [((1, 0), 1) if t % 2 == 0 else ((0, 1), 1) for t in range(n_trials)]
    return _build([("A+ / B+ alternating", alt), ("compound AB+", [((1, 1), 1)] * n_trials)], [BELL, LIGHT],
                  "two separately trained signals are then presented together", lam=lam, dtype=dtype,
                  device=device)


TABLES: dict[str, Callable[..., Design]] = {
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
"""Every trial table's builder by its design's readable name (the widget's drop-down); each takes ``n_trials``
(per phase) and ``lam``. Not :data:`pavlovlab.phenomena.sequences.DESIGNS`, the names of the trained models' designs."""


__all__ = [
    "TABLES",
    "Design",
    "Labels",
    "acquisition",
    "blocking",
    "blocking_control",
    "conditioned_inhibition",
    "extinction",
    "overexpectation",
    "overshadowing",
    "partial_reinforcement",
    "reacquisition",
]
