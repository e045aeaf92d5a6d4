"""The exercises of ``01_pavlovian_conditioning``.

1. (implement) one Rescorla–Wagner update;
2. (implement) simulate blocking: the light's strength after pretraining and a compound phase;
3. (design the measurement) how blocking grows with the pretraining length, against its closed form.

Learners type ``ex.hint(n)`` for the next hint tier and ``ex.solution(n)`` for the reference solution.
Each checker prints one verdict and never raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.conditioning import blocking, blocking_theory, rescorla_wagner

from ._core import Exercise, Exercises, check_function, check_measurement


def _pending(*answers: Any) -> tuple[Any, ...]:
    """The learner's answers, or NotImplementedError (a ⏳, not a ❌) while a stub's ``...`` is still there."""
    if any(a is Ellipsis for a in answers):
        raise NotImplementedError("the stub's ... blanks are still there")
    return answers


BOOK = Exercises("01_pavlovian_conditioning")

BOOK.add(Exercise(
    number=1, title="one Rescorla–Wagner update", kind="implement",
    hints=[
        "Three quantities, in this order: what the CSs present predict together; how far the food "
        "actually given is from that prediction (the surprise); then a change of each strength in "
        "proportion to the surprise, its salience and the learning rate, only for the CSs present.",
        "The prediction adds up the strengths of the CSs present (weighted by x). The surprise is the "
        "food lam minus that prediction: one number shared by all CSs. Each V_i then moves by "
        "alpha·beta·surprise·x_i.",
        "prediction = (x * V).sum(); surprise = lam - prediction; return V + alpha * beta * surprise * x.",
    ],
    solution='''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    """One trial: V (n_cs,) strengths, x (n_cs,) CSs present, lam the food. Returns the new V."""
    prediction = (x * V).sum()              # what the CSs present predict together
    surprise = lam - prediction             # the prediction error δ
    return V + alpha * beta * surprise * x  # only the CSs present change

# try it: a bell that already predicts 0.8 of the food, with a new light
rw_update(torch.tensor([0.8, 0.0]), torch.tensor([1.0, 1.0]), 1.0)
''',
    check="ex.check_rw_update(rw_update);",
    wrong='''
def rw_update(V, x, lam, alpha=0.3, beta=1.0):
    return V + alpha * beta * lam * x       # Hebbian: learns from co-occurrence, not from surprise
''',
))

BOOK.add(Exercise(
    number=2, title="simulate blocking", kind="implement",
    hints=[
        "An experiment is a table: one row per trial, one column per CS (bell, light), and the food given "
        "on each trial. Which rows does phase 1 have, which rows phase 2, and on which trials is there food?",
        "Phase 1 is n_pretrain rows with the bell only, phase 2 is n_compound rows with bell and light; "
        "stack them one under the other (torch.cat). There is food on every trial. Run rescorla_wagner and "
        "read the light's column after the last trial (its output has one more row than there are trials).",
        "cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat("
        "n_compound, 1)]); us = torch.ones(len(cs)); return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()",
    ],
    solution='''
def blocked_strength(n_pretrain, n_compound, alpha):
    """V_light after n_pretrain bell → food trials, then n_compound bell + light → food trials."""
    bell_only = torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1)
    bell_and_light = torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)
    cs = torch.cat([bell_only, bell_and_light])           # (trials, 2): columns bell, light
    us = torch.ones(n_pretrain + n_compound)              # food on every trial
    return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()

print(f"V_light: {blocked_strength(30, 30, 0.3):.3f} after pretraining, {blocked_strength(0, 30, 0.3):.3f} without")
''',
    check="ex.check_blocked_strength(blocked_strength);",
    wrong='''
def blocked_strength(n_pretrain, n_compound, alpha):
    cs = torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)     # forgot the pretraining phase
    return rescorla_wagner(cs, torch.ones(n_compound), alpha=alpha)[-1, 1].item()
''',
    setup="from pavlovlab.conditioning import rescorla_wagner",
))

BOOK.add(Exercise(
    number=3, title="measure how blocking grows with pretraining", kind="design",
    hints=[
        "Blocking is a curve, not a number: the light's final strength as a function of how long the bell was "
        "trained alone. Which pretraining lengths show that whole curve, from no blocking at all to nearly "
        "complete blocking? Keep the compound phase and α fixed while you vary the length.",
        "Take a dozen lengths from 0 (the control: no blocking) to about 30 trials (where the bell predicts "
        "the food almost perfectly), and call your blocked_strength from Exercise 2 once per length, with "
        "n_compound and alpha as given.",
        "n_pre = torch.arange(0, 31, 3); v_light = torch.tensor([blocked_strength(int(n), n_compound, alpha) "
        "for n in n_pre])",
    ],
    solution='''
# fixed: only the pretraining length varies
alpha, n_compound = 0.2, 30
n_pre = torch.arange(0, 31, 3)                            # from no pretraining to long pretraining
v_light = torch.tensor([blocked_strength(int(n), n_compound, alpha) for n in n_pre])
''',
    check="ex.check_blocking_sweep(n_pre, v_light, alpha, n_compound);",
    wrong='''
alpha, n_compound = 0.2, 30
n_pre = torch.tensor([30])                                # one length: no curve, no trend
v_light = torch.tensor([blocked_strength(30, n_compound, alpha)])
''',
    setup='''
from pavlovlab.conditioning import rescorla_wagner

def blocked_strength(n_pretrain, n_compound, alpha):
    cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)])
    return rescorla_wagner(cs, torch.ones(n_pretrain + n_compound), alpha=alpha)[-1, 1].item()
''',
))

hint, solution = BOOK.hint, BOOK.solution


# ------------------------------------------------------------------------- Exercise 1: one update
def reference_rw_update(V: torch.Tensor, x: torch.Tensor, lam: float, alpha: float = 0.3,
                        beta: float = 1.0) -> torch.Tensor:
    """One Rescorla–Wagner trial from the package: ``V + α β (λ − x·V) x``. V, x: (n_cs,) -> (n_cs,)."""
    return rescorla_wagner(x[None], torch.tensor([lam], dtype=x.dtype), alpha=alpha, beta=beta, V0=V)[1]


def check_rw_update(fn: Callable[..., torch.Tensor], *, seed: int = 0) -> bool:
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
    learner = fn

    def copied(V, x, lam, **kw):  # the learner gets copies: an in-place update must not change the case
        return learner(V.clone(), x.clone(), lam, **kw)

    return check_function(
        copied if callable(fn) else fn, reference_rw_update, cases, name="Exercise 1 (one Rescorla–Wagner update)",
        number=1, book=BOOK, case_hints=notes, rtol=1e-6, atol=1e-9,
        hint="when the CSs present already predict the food, is the dog still surprised? How much should "
             "their strengths change then, and does your update look at what they predict?")


# ---------------------------------------------------------------------- Exercise 2: simulate blocking
def reference_blocked_strength(n_pretrain: int, n_compound: int, alpha: float) -> float:
    """The package's answer: the light's V after ``n_pretrain`` A+ then ``n_compound`` AB+ trials (λ = 1)."""
    cs, us, _ = blocking(n_pretrain, n_compound=n_compound, dtype=torch.float64)
    return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()


def check_blocked_strength(fn: Callable[[int, int, float], float], *, seed: int = 0) -> bool:
    """Exercise 2: ``fn(n_pretrain, n_compound, alpha)`` must return the light's strength ``V_B`` after
    ``n_pretrain`` bell → food trials and ``n_compound`` bell + light → food trials (λ = 1, β = 1).

    The cases include no pretraining at all (no blocking: the light learns) and a short pretraining
    (partial blocking), so a constant answer cannot pass.
    """
    g = torch.Generator().manual_seed(seed)
    cases = [((0, 20, 0.3), {}), ((30, 20, 0.3), {}), ((3, 10, 0.2), {})]
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
        name="Exercise 2 (simulate blocking)", rtol=1e-4, atol=1e-5, number=2, book=BOOK, case_hints=notes,
        hint="does your experiment contain both phases, in order, with food on every trial? And do you read "
             "the light (not the bell) after the last trial?")


# ------------------------------------------------------------ Exercise 3: measure blocking's growth
def _judge_blocking_sweep(alpha: float, n_compound: int) -> Callable[[Any], tuple[bool, str]]:
    def judge(result: Any) -> tuple[bool, str]:
        n_pre, v_light = result
        n = torch.as_tensor(n_pre).detach().double().cpu().flatten()
        v = torch.as_tensor(v_light).detach().double().cpu().flatten()
        first = BOOK.get(3).attempts <= 1
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
            msg = (f"at {int(n[order][i])} pretraining trials your V_light does not follow the model: does each "
                   "point run both phases, with alpha and n_compound as given, and read the light?")
            if not first:
                msg += f" (expected {theory[i].item():.4g}, got {got[i].item():.4g})"
            return False, msg
        keep = got > 1e-12
        slope = float(torch.linalg.lstsq(torch.stack([n[order][keep], torch.ones(int(keep.sum()),
                      dtype=torch.float64)], 1), got[keep].log()[:, None]).solution[0, 0])
        return True, (f"{n.numel()} lengths from {int(n.min())} to {int(n.max())}: V_light falls from "
                      f"{got[0].item():.3f} to {got[-1].item():.2g}; log V_light falls by {-slope:.3f} per "
                      f"pretraining trial (the closed form says −log(1 − α) = {-math.log(1 - alpha):.3f}).")
    return judge


def check_blocking_sweep(n_pre: Any, v_light: Any, alpha: float = 0.2, n_compound: int = 30) -> bool:
    """Exercise 3: the learner's measurement of blocking against the pretraining length.

    ``n_pre`` (P,) pretraining lengths of the learner's choice, ``v_light`` (P,) the light's final
    strengths. Judged on the result: at least 5 lengths, from 0 to ≥ 15 trials, each point within 0.1 %
    (+1e-4) of the closed form ``λ (1 − α)^n (1 − (1 − 2α)^m) / 2`` (:func:`pavlovlab.conditioning.blocking_theory`,
    derived independently of any simulation).
    """
    return check_measurement(lambda: _pending(n_pre, v_light), _judge_blocking_sweep(alpha, n_compound),
                             name="Exercise 3 (how blocking grows with pretraining)", number=3, book=BOOK,
                             hint="what does the light learn with no pretraining, and with very long pretraining? "
                                  "Your lengths should show both ends and the way between.")


__all__ = ["BOOK", "check_blocked_strength", "check_blocking_sweep", "check_rw_update", "hint",
           "reference_blocked_strength", "reference_rw_update", "solution"]
