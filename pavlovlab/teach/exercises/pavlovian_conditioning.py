"""The exercises of ``01_pavlovian_conditioning``.

1. (implement) one Rescorla–Wagner update;
2. (implement) simulate blocking: the light's strength after pretraining and a compound phase;
3. (design the measurement) how blocking grows with the pretraining length, against its closed form.

In the notebook ``ex = exercises.session("01")``; ``ex.hint(n)`` gives the next hint tier, ``ex.solution(n)`` the
reference solution.
Each checker prints one verdict and never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.conditioning.learning import blocking_theory, rescorla_wagner
from pavlovlab.conditioning.trials import blocking

from .book import Book
from .checking import Turn, check_function, check_measurement, pending

BOOK = Book("01_pavlovian_conditioning", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


# ------------------------------------------------------------------------- Exercise 1: one update
def reference_rw_update(V: torch.Tensor, x: torch.Tensor, lam: float, alpha: float = 0.3,
                        beta: float = 1.0) -> torch.Tensor:
    """One Rescorla–Wagner trial from the package: ``V + α β (λ − x·V) x``. V, x: (n_cs,) -> (n_cs,)."""
    return rescorla_wagner(x[None], torch.tensor([lam], dtype=x.dtype), alpha=alpha, beta=beta, V0=V)[1]


@BOOK.exercise(1, "one Rescorla–Wagner update", kind="implement", hints=[
        "Three quantities, in this order: what the CSs present predict together; how far the food "
        "actually given is from that prediction (the surprise); then a change of each strength in "
        "proportion to the surprise, its salience and the learning rate, only for the CSs present.",
        "The prediction adds up the strengths of the CSs present (weighted by x). The surprise is the "
        "food lam minus that prediction: one number shared by all CSs. Each V_i then moves by "
        "alpha·beta·surprise·x_i.",
        "prediction = (x * V).sum(); surprise = lam - prediction; return V + alpha * beta * surprise * x.",
    ])
def check_rw_update(fn: Callable[..., torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """Exercise 1: ``fn(V, x, lam, alpha=..., beta=...)`` must return the strengths after one trial.

    Random cases: 1 to 4 CSs, present (0/1) or with intensities, US present or absent, random α, β; the
    first case has a CS that already predicts part of the food, so a rule without surprise fails at once.
    """
    g = torch.Generator().manual_seed(seed)
    cases = [((torch.tensor([0.8, 0.0]), torch.tensor([1.0, 1.0]), 1.0), {"alpha": 0.3, "beta": 1.0})]
    notes = ["the bell already predicts most of the food"]
    for i in range(8):
        n = 1 + i % 4
        V = torch.randn(n, generator=g) * 0.5
        x = (torch.rand(n, generator=g) < 0.6).float() if i % 2 == 0 else torch.rand(n, generator=g)
        x[0] = 1.0  # at least one CS present, so the update is never trivially zero
        lam = [1.0, 0.0, 0.5, 2.0][i % 4]
        alpha, beta = round(0.05 + 0.9 * torch.rand((), generator=g).item(), 3), [1.0, 0.5][i % 2]
        cases.append(((V, x, lam), {"alpha": alpha, "beta": beta}))
        notes.append("no food on this trial" if lam == 0.0 else "")
    mistakes = [
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * lam * x,
         "your update grows with the food alone, whatever the CSs already predict: where is the surprise "
         "(the food minus what the CSs present predict together)?"),
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * (lam - (x * V).sum()),
         "a CS that is absent on this trial (x_i = 0) changed too, and CSs of different intensity changed "
         "alike: does each V_i's change carry its own x_i?"),
    ]
    return check_function(
        fn, reference_rw_update, cases, turn=turn, case_hints=notes, rtol=1e-6, atol=1e-9, mistakes=mistakes,
        hint="when the CSs present already predict the food, is the dog still surprised? How much should "
             "their strengths change then, and does your update look at what they predict?")


# ---------------------------------------------------------------------- Exercise 2: simulate blocking
def reference_blocked_strength(n_pretrain: int, n_compound: int, alpha: float) -> float:
    """The package's answer: the light's V after ``n_pretrain`` A+ then ``n_compound`` AB+ trials (λ = 1)."""
    cs, us, _ = blocking(n_pretrain, n_compound=n_compound, dtype=torch.float64)
    return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()


@BOOK.exercise(2, "simulate blocking", kind="implement", hints=[
        "An experiment is a table: one row per trial, one column per CS (bell, light), and the food given "
        "on each trial. Which rows does phase 1 have, which rows phase 2, and on which trials is there food?",
        "Phase 1 is n_pretrain rows with the bell only, phase 2 is n_compound rows with bell and light; "
        "stack them one under the other (torch.cat). There is food on every trial. Run rescorla_wagner and "
        "read the light's column after the last trial (its output has one more row than there are trials).",
        "cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat("
        "n_compound, 1)]); us = torch.ones(len(cs)); return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()",
    ])
def check_blocked_strength(fn: Callable[[int, int, float], float], *, turn: Turn, seed: int = 0) -> bool:
    """Exercise 2: ``fn(n_pretrain, n_compound, alpha)`` must return the light's strength ``V_B`` after
    ``n_pretrain`` bell → food trials and ``n_compound`` bell + light → food trials (λ = 1, β = 1).

    The cases include no pretraining at all (no blocking: the light learns) and a short pretraining
    (partial blocking), so a constant answer cannot pass.
    """
    g = torch.Generator().manual_seed(seed)
    cases: list[tuple[tuple[int, int, float], dict[str, Any]]] = [((0, 20, 0.3), {}), ((30, 20, 0.3), {}),
                                                                   ((3, 10, 0.2), {})]
    notes = ["no pretraining: the control group", "long pretraining", "short pretraining: partial blocking"]
    for _ in range(3):
        n_pre = int(torch.randint(0, 25, (), generator=g))
        n_comp = int(torch.randint(1, 25, (), generator=g))
        cases.append(((n_pre, n_comp, round(0.05 + 0.5 * torch.rand((), generator=g).item(), 3)), {}))
        notes.append("")

    def as_number(*args):  # accept a float, a 0-d tensor or a 1-element tensor from the learner
        got = fn(*args)
        return got.item() if isinstance(got, torch.Tensor) and got.numel() == 1 else got

    return check_function(
        as_number if callable(fn) else fn, reference_blocked_strength, cases,
        rtol=1e-4, atol=1e-5, turn=turn, case_hints=notes,
        hint="does your experiment contain both phases, in order, with food on every trial? And do you read "
             "the light (not the bell) after the last trial?")


# ------------------------------------------------------------ Exercise 3: measure blocking's growth
def _judge_blocking_sweep(alpha: float, n_compound: int) -> Callable[[Any], tuple]:
    def judge(result: Any) -> tuple:
        n_pre, v_light = result
        n = torch.as_tensor(n_pre).detach().double().cpu()
        v = torch.as_tensor(v_light).detach().double().cpu()
        if n.dim() != 1 or v.shape != n.shape:
            return False, (f"n_pre should be one row of lengths and v_light the same shape, one strength per "
                           f"length: got shapes {tuple(n.shape)} and {tuple(v.shape)}")
        if n.numel() != v.numel():
            return False, f"n_pre has {n.numel()} lengths but v_light {v.numel()} strengths: one per length"
        if not bool(torch.isfinite(v).all()):
            return False, "v_light contains NaN or inf"
        if torch.unique(n).numel() < 5:
            return False, (f"{torch.unique(n).numel()} distinct pretraining length(s): a curve needs at least 5 "
                           "points, from none to long")
        if n.min() > 0 or n.max() < 15:
            return False, ("your lengths do not span the curve: include 0 (the control group, no blocking) and "
                           "long pretraining (15 trials or more, where the bell predicts the food well)")
        order = torch.argsort(n)
        theory = blocking_theory(n[order], n_compound=n_compound, alpha=alpha)
        got = v[order]
        off = (got - theory).abs() > 1e-4 + 1e-3 * theory.abs()
        if bool(off.any()):
            i = int(off.nonzero()[0])
            return (False, f"at {int(n[order][i])} pretraining trials your V_light does not follow the model: does "
                    "each point run both phases, with alpha and n_compound as given, and read the light?",
                    f"expected {theory[i].item():.4g}, got {got[i].item():.4g}")
        keep = got > 1e-12
        slope = float(torch.linalg.lstsq(torch.stack([n[order][keep], torch.ones(int(keep.sum()),
                      dtype=torch.float64)], 1), got[keep].log()[:, None]).solution[0, 0])
        return True, (f"{n.numel()} lengths from {int(n.min())} to {int(n.max())}: V_light falls from "
                      f"{got[0].item():.3f} to {got[-1].item():.2g}; log V_light falls by {-slope:.3f} per "
                      f"pretraining trial (the closed form says −log(1 − α) = {-math.log(1 - alpha):.3f}).")
    return judge


@BOOK.exercise(3, "measure how blocking grows with pretraining", kind="design", hints=[
        "Blocking is a curve, not a number: the light's final strength as a function of how long the bell was "
        "trained alone. Which pretraining lengths show that whole curve, from no blocking at all to nearly "
        "complete blocking? Keep the compound phase and α fixed while you vary the length.",
        "Take a dozen lengths from 0 (the control: no blocking) to about 30 trials (where the bell predicts "
        "the food almost perfectly), and call your blocked_strength from Exercise 2 once per length, with "
        "n_compound and alpha as given.",
        "n_pre = torch.arange(0, 31, 3); v_light = torch.tensor([blocked_strength(int(n), n_compound, alpha) "
        "for n in n_pre])",
    ])
def check_blocking_sweep(n_pre: Any, v_light: Any, alpha: float = 0.2, n_compound: int = 30, *, turn: Turn) -> bool:
    """Exercise 3: the learner's measurement of blocking against the pretraining length.

    ``n_pre`` (P,) pretraining lengths of the learner's choice, ``v_light`` (P,) the light's final
    strengths. Judged on the result: at least 5 lengths, from 0 to ≥ 15 trials, each point within 0.1 %
    (+1e-4) of the closed form ``λ (1 − α)^n (1 − (1 − 2α)^m) / 2`` (:func:`pavlovlab.conditioning.blocking_theory`,
    derived independently of any simulation).
    """
    return check_measurement(lambda: pending(n_pre, v_light), _judge_blocking_sweep(alpha, n_compound), turn=turn,
                             hint="what does the light learn with no pretraining, and with very long pretraining? "
                                  "Your lengths should show both ends and the way between.")


__all__ = ["BOOK", "check_blocked_strength", "check_blocking_sweep", "check_rw_update",
           "reference_blocked_strength", "reference_rw_update", "session"]
