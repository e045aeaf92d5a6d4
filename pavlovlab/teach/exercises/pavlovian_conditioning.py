"""The exercises of ``01_pavlovian_conditioning``.

1. (implement) one Rescorla–Wagner update;
2. (implement) simulate blocking: the light's strength after pretraining and a compound phase;
3. (design the measurement) how blocking grows with the pretraining length, against its closed form, and again
   at a setting where that closed form is off (a light fainter than the bell).

In the notebook ``from pavlovlab.teach.exercises import pavlovian_conditioning as ex`` (then ``ex.start()``);
``ex.hint(n)`` gives the next hint tier, ``ex.solution(n)`` the reference solution.
Each checker prints one verdict and never raises.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.conditioning.learning import blocking_theory, hebbian_conditioning, rescorla_wagner
from pavlovlab.conditioning.trials import blocking
from pavlovlab.teach.language import N_, _

from .book import Book
from .checking import Turn, Unreadable, Verdict, check_function, check_measurement, finite_number, pending

BOOK = Book("01_pavlovian_conditioning", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


# ------------------------------------------------------------------------- Exercise 1: one update
def reference_rw_update(V: torch.Tensor, x: torch.Tensor, lam: float, alpha: float = 0.3,
                        beta: float = 1.0) -> torch.Tensor:
    """One Rescorla–Wagner trial from the package: ``V + α β (λ − x·V) x``. V, x: (n_cs,) -> (n_cs,)."""
    return rescorla_wagner(x[None], torch.tensor([lam], dtype=x.dtype), alpha=alpha, beta=beta, V0=V)[1]


@BOOK.exercise(1, N_("one Rescorla–Wagner update"), kind="implement", hints=[
        N_("Three quantities, in this order: what the CSs present predict together; how far the food "
           "actually given is from that prediction (the surprise); then a change of each strength in "
           "proportion to the surprise, its salience and the learning rate, only for the CSs present."),
        N_("The prediction adds up the strengths of the CSs present (weighted by x). The surprise is the "
           "food lam minus that prediction: one number shared by all CSs. Each V_i then moves by "
           "alpha·beta·surprise·x_i."),
        N_("prediction = (x * V).sum(); surprise = lam - prediction; return V + alpha * beta * surprise * x."),
    ])
def check_rw_update(fn: Callable[..., torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """Exercise 1: ``fn(V, x, lam, alpha=..., beta=...)`` must return the strengths after one trial.

    Random cases: 1 to 4 CSs, present (0/1) or with intensities, US present or absent, random α, β; the
    first case has a CS that already predicts part of the food, so a rule without surprise fails at once; the
    second an absent CS with a strength of its own, so a prediction that counts it (or a change that ignores
    ``x_i``) fails there.
    """
    g = torch.Generator().manual_seed(seed)
    cases = [((torch.tensor([0.8, 0.0]), torch.tensor([1.0, 1.0]), 1.0), {"alpha": 0.3, "beta": 1.0}),
             ((torch.tensor([0.8, 0.5]), torch.tensor([1.0, 0.0]), 1.0), {"alpha": 0.3, "beta": 1.0})]
    notes = [_("the bell already predicts most of the food"),
             _("the light has a strength but is absent on this trial")]
    for i in range(8):
        n = 1 + i % 4
        V = torch.randn(n, generator=g) * 0.5
        x = (torch.rand(n, generator=g) < 0.6).float() if i % 2 == 0 else torch.rand(n, generator=g)
        x[0] = 1.0  # at least one CS present, so the update is never trivially zero
        lam = [1.0, 0.0, 0.5, 2.0][i % 4]
        alpha, beta = round(0.05 + 0.9 * torch.rand((), generator=g).item(), 3), [1.0, 0.5][i % 2]
        cases.append(((V, x, lam), {"alpha": alpha, "beta": beta}))
        notes.append(_("no food on this trial") if lam == 0.0 else "")
    mistakes = [
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * lam * x,
         _("your update grows with the food alone, whatever the CSs already predict: where is the surprise "
           "(the food minus what the CSs present predict together)?")),
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * (lam - (x * V).sum()),
         _("a CS that is absent on this trial (x_i = 0) changed too, and CSs of different intensity changed "
           "alike: does each V_i's change carry its own x_i?")),
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * (lam - V.sum()) * x,
         _("your prediction counts every CS the dog knows, also one that is absent on this trial: which CSs "
           "can the dog use to predict the food on this trial?")),
        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * ((x * V).sum() - lam) * x,
         _("your strengths move away from the food: when the food is bigger than predicted, should the "
           "strengths go up or down?")),
        (lambda V, x, lam, alpha=0.3, beta=1.0: alpha * beta * (lam - (x * V).sum()) * x,
         _("you returned the change of each strength on this trial: the task asks for the strengths after it.")),
    ]
    return check_function(
        fn, reference_rw_update, cases, turn=turn, case_hints=notes, rtol=1e-6, atol=1e-9, mistakes=mistakes,
        hint=_("work the failing case out by hand, step by step: what do the CSs present predict together, how "
               "far is the food from that, and how much does each strength change?"))


# ---------------------------------------------------------------------- Exercise 2: simulate blocking
def reference_blocked_strength(n_pretrain: int, n_compound: int, alpha: float) -> float:
    """The package's answer: the light's V after ``n_pretrain`` A+ then ``n_compound`` AB+ trials (λ = 1)."""
    cs, us, _labels = blocking(n_pretrain, n_compound=n_compound, dtype=torch.float64)
    return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()


def _strengths_after(n_pretrain: int, n_compound: int, alpha: float | torch.Tensor, *,
                     rule: Callable[..., torch.Tensor] = rescorla_wagner) -> torch.Tensor:
    """The strengths ``(trials + 1, 2)`` of bell and light in the blocking design under ``rule`` (float64);
    ``alpha`` one salience or one per CS (bell, light)."""
    cs, us, _labels = blocking(n_pretrain, n_compound=n_compound, dtype=torch.float64)
    return rule(cs, us, alpha=alpha)


BLOCKING_MISTAKES = [
    (lambda n, m, a: _strengths_after(0, m, a)[-1, 1].item(),   # also phase 1 without food, or phases swapped
     N_("your light learns as much as with no pretraining at all: does your table start with the bell → food "
        "trials (food on them too), and only then come the compound trials?")),
    (lambda n, m, a: _strengths_after(n, m, a)[-1, 0].item(),
     N_("that is the bell's strength: which column of the result belongs to the light?")),
    (lambda n, m, a: _strengths_after(n, m, a)[-2, 1].item(),
     N_("that is the light's strength one trial before the end: the result has one more row than there are "
        "trials (the strengths before the first trial come first).")),
    (lambda n, m, a: _strengths_after(n, m, a, rule=hebbian_conditioning)[-1, 1].item(),
     N_("your light learns the same whatever the bell already predicts: does your simulation learn from the "
        "surprise, the way Rescorla–Wagner does?")),
]
"""Exercise 2's recognised mistakes: (the wrong answer from a case's inputs, the question it gets, in English: the
checker says it in the language in use)."""


@BOOK.exercise(2, N_("simulate blocking"), kind="implement", hints=[
        N_("An experiment is a table: one row per trial, one column per CS (bell, light), and the food given "
           "on each trial. Which rows does phase 1 have, which rows phase 2, and on which trials is there food?"),
        N_("Phase 1 is n_pretrain rows with the bell only, phase 2 is n_compound rows with bell and light; "
           "stack them one under the other (torch.cat). There is food on every trial. Run rescorla_wagner and "
           "read the light's column after the last trial (its output has one more row than there are trials)."),
        N_("cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat("
           "n_compound, 1)]); us = torch.ones(len(cs)); return rescorla_wagner(cs, us, alpha=alpha)[-1, 1].item()"),
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
    notes = [_("no pretraining: the control group"), _("long pretraining"), _("short pretraining: partial blocking")]
    for _case in range(3):
        n_pre = int(torch.randint(0, 25, (), generator=g))
        n_comp = int(torch.randint(1, 25, (), generator=g))
        cases.append(((n_pre, n_comp, round(0.05 + 0.5 * torch.rand((), generator=g).item(), 3)), {}))
        notes.append("")

    def as_number(*args):  # accept a float, a 0-d tensor or a 1-element tensor from the learner
        got = fn(*args)
        return got.item() if isinstance(got, torch.Tensor) and got.numel() == 1 else got

    return check_function(
        as_number if callable(fn) else fn, reference_blocked_strength, cases,
        rtol=1e-4, atol=1e-5, turn=turn, case_hints=notes, mistakes=[(m, _(said)) for m, said in BLOCKING_MISTAKES],
        hint=_("does your experiment contain both phases, in order, with food on every trial? And do you read "
               "the light (not the bell) after the last trial?"))


# ------------------------------------------------------------ Exercise 3: measure blocking's growth
BLOCKING_ALPHA = 0.2
"""Exercise 3's salience, the same for bell and light."""

BLOCKING_COMPOUND = 30
"""Exercise 3's compound phase: bell + light → food trials after the pretraining."""

STRESS_SALIENCES = (0.2, 0.05)
"""A second setting the checker runs the learner's measurement at: a faint light (salience 0.05) next to the bell
(0.2). The closed form with one α, ``(1 − α)^n (1 − (1 − 2α)^m) / 2``, is off there by a factor of about 2.5 at
every length; a simulation follows the model (:func:`pavlovlab.conditioning.learning.rescorla_wagner` takes one
salience per CS)."""


SPAN_HINT = N_("what does the light learn with no pretraining, and with very long pretraining? Your lengths should "
               "show both ends and the way between.")
"""Exercise 3's question when the lengths do not span the curve (also its generic hint)."""


def _lengths(n_pre: Any) -> torch.Tensor:
    """The learner's pretraining lengths as a 1-D float64 tensor of whole numbers ≥ 0, or :class:`Unreadable`."""
    try:
        n = torch.as_tensor(n_pre).detach().double().cpu()
    except (TypeError, ValueError, RuntimeError):
        raise Unreadable(_("n_pre should be a 1-D tensor (or list) of pretraining lengths, got {kind}")
                         .format(kind=type(n_pre).__name__)) from None
    if n.dim() != 1:
        raise Unreadable(_("n_pre should be one row of pretraining lengths (1-D), got shape {shape}")
                         .format(shape=tuple(n.shape)))
    if not bool(torch.isfinite(n).all()) or bool((n < 0).any()) or bool((n != n.round()).any()):
        raise Unreadable(_("n_pre should hold whole numbers of trials, 0 or more"))
    return n


def _strengths(got: Any, n: torch.Tensor) -> torch.Tensor:
    """The learner's strengths, one per length, as float64, or :class:`Unreadable` saying what is wrong."""
    if isinstance(got, (list, tuple)):
        # Translators: what the checker could not read, said before "should be one number, got ...".
        got = [finite_number(x, _("each strength blocking_curve returned")) for x in got]
    try:
        v = torch.as_tensor(got).detach().double().cpu()
    except (TypeError, ValueError, RuntimeError):
        raise Unreadable(_("blocking_curve should return one strength per length (a 1-D tensor), got {kind}")
                         .format(kind=type(got).__name__)) from None
    if v.shape != n.shape:
        raise Unreadable(_("blocking_curve returned shape {shape} for {count} lengths: one strength per length, "
                           "the same shape as n_pre").format(shape=tuple(v.shape), count=n.numel()))
    if not bool(torch.isfinite(v).all()):
        raise Unreadable(_("blocking_curve returned NaN or inf"))
    return v


def _fresh(n_pre: Any) -> Any:
    """A copy of the learner's lengths for each run (a measurement that changes its input in place changes no other
    run)."""
    if isinstance(n_pre, torch.Tensor):
        return n_pre.detach().clone()
    return list(n_pre) if isinstance(n_pre, list) else n_pre


def _within(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Where ``got`` is off ``want`` by more than 0.1 % + 1e-4 (a float32 simulation is well inside)."""
    return (got - want).abs() > 1e-4 + 1e-3 * want.abs()


def judge_blocking_curve(result: tuple[Any, Any, Any]) -> Verdict:
    """Judge ``(n_pre, curve at the exercise's setting, curve at STRESS_SALIENCES or the error it raised)``.

    The first curve must span blocking (≥ 5 lengths, from 0 to ≥ 15 trials) and sit within 0.1 % (+1e-4) of the
    closed form :func:`pavlovlab.conditioning.learning.blocking_theory` (derived by hand, exact for one α); the
    second within the same band of the package's simulation at unequal saliences, where that closed form is off.
    """
    n_pre, main, stress = result
    n = _lengths(n_pre)
    v = _strengths(main, n)
    distinct = torch.unique(n).numel()
    if distinct < 5:
        return Verdict(False, _("{distinct} distinct pretraining length(s): a curve needs at least 5 points, from "
                                "none to long").format(distinct=distinct),
                       hint=_("blocking is a curve: how does the light's strength change as the pretraining grows, "
                              "step by step?"))
    if n.min() > 0 or n.max() < 15:
        return Verdict(False, _("your lengths do not span the curve: include 0 (the control group, no blocking) "
                                "and long pretraining (15 trials or more, where the bell predicts the food well)"),
                       hint=_(SPAN_HINT))
    theory = blocking_theory(n, n_compound=BLOCKING_COMPOUND, alpha=BLOCKING_ALPHA)
    off = _within(v, theory)
    if bool(off.any()):
        i = int(off.nonzero()[0])
        detail = _("expected {expected:.4g}, got {got:.4g}").format(expected=theory[i].item(), got=v[i].item())
        if bool(((v - v[0]).abs() <= 1e-9).all()):
            return Verdict(False, _("your light ends with the same strength whatever the pretraining length"),
                           detail, hint=_("does each point run its own experiment, with a pretraining of that "
                                          "length before the compound phase?"))
        return Verdict(False, _("at {trials} pretraining trials your light's strength is not where the model puts "
                                "it").format(trials=int(n[i])), detail,
                       hint=_("does each point run both phases ({n_compound} compound trials after the "
                              "pretraining), with α = {alpha} for both CSs, and read the light after the last "
                              "trial?").format(n_compound=BLOCKING_COMPOUND, alpha=BLOCKING_ALPHA))
    # Translators: said at the start of a sentence about the learner's curve at this second setting.
    setting = _("at another setting (a faint light, salience {faint} next to the bell's {bell}, where the closed "
                "form with one α is off)").format(faint=STRESS_SALIENCES[1], bell=STRESS_SALIENCES[0])
    formula = _("does blocking_curve run the experiment with the saliences it is given (alpha passed on to the "
                "simulation as it is), rather than compute a formula?")
    if isinstance(stress, Exception):
        return Verdict(False, _("{setting} your blocking_curve raised {error}: {message}").format(
            setting=setting, error=type(stress).__name__, message=str(stress).strip() or _("(no message)")),
            hint=formula)
    try:
        s = _strengths(stress, n)
    except Unreadable as e:
        # Translators: {setting} is the sentence's opening above, {problem} what could not be read there.
        raise Unreadable(_("{setting} {problem}").format(setting=setting, problem=e)) from None
    saliences = torch.tensor(STRESS_SALIENCES, dtype=torch.float64)
    truth = torch.tensor([_strengths_after(int(k), BLOCKING_COMPOUND, saliences)[-1, 1].item() for k in n],
                         dtype=torch.float64)
    off = _within(s, truth)
    if bool(off.any()):
        i = int(off.nonzero()[0])
        return Verdict(False, _("{setting} your curve at {trials} pretraining trials is not what a simulation of "
                                "the experiment finds").format(setting=setting, trials=int(n[i])),
                       _("yours {got:.4g}, simulated {simulated:.4g}").format(got=s[i].item(),
                                                                               simulated=truth[i].item()),
                       hint=formula)
    order = torch.argsort(n)
    n, v = n[order], v[order]
    keep = v > 1e-12
    slope = float(torch.linalg.lstsq(torch.stack([n[keep], torch.ones(int(keep.sum()), dtype=torch.float64)], 1),
                                     v[keep].log()[:, None]).solution[0, 0])
    return Verdict(True, _("{count} lengths from {first} to {last}: V_light falls from {start:.3f} to {end:.2g}; "
                           "log V_light falls by {rate:.3f} per pretraining trial (the closed form says −log(1 − α) "
                           "= {closed_form:.3f}); and with a fainter light ({faint}) your simulation follows the "
                           "model, where the closed form with one α does not.").format(
        count=n.numel(), first=int(n[0]), last=int(n[-1]), start=v[0].item(), end=v[-1].item(), rate=-slope,
        closed_form=-math.log(1 - BLOCKING_ALPHA), faint=STRESS_SALIENCES[1]))


@BOOK.exercise(3, N_("measure how blocking grows with pretraining"), kind="design", hints=[
        N_("Blocking is a curve, not a number: the light's final strength as a function of how long the bell was "
           "trained alone. Which pretraining lengths show that whole curve, from no blocking at all to nearly "
           "complete blocking? Each point is one run of the whole experiment; keep the compound phase and α as "
           "blocking_curve is given them."),
        N_("Take a dozen lengths from 0 (the control: no blocking) to about 30 trials (where the bell predicts "
           "the food almost perfectly). In blocking_curve, call your blocked_strength from Exercise 2 once per "
           "length, passing n_compound and alpha on unchanged, and collect the results in one tensor."),
        N_("return torch.tensor([blocked_strength(int(n), n_compound, alpha) for n in n_pre]); "
           "n_pre = torch.arange(0, 31, 3)"),
    ])
def check_blocking_sweep(fn: Any, n_pre: Any, *, turn: Turn) -> bool:
    """Exercise 3: the learner's measurement of blocking against the pretraining length.

    ``fn(n_pre, n_compound=30, alpha=0.2)`` returns the light's final strength (P,) for each of the learner's
    pretraining lengths ``n_pre`` (P,). The checker runs it at the exercise's setting and, with the same
    lengths, at :data:`STRESS_SALIENCES` (``alpha`` a tensor of one salience per CS), and judges the results
    with :func:`judge_blocking_curve`, never the code.
    """
    def run() -> tuple[Any, Any, Any]:
        lengths = pending(n_pre)[0]
        if not callable(fn):
            raise Unreadable(_("expected your function blocking_curve, got {kind}").format(kind=type(fn).__name__))
        try:
            inspect.signature(fn).bind(lengths, n_compound=BLOCKING_COMPOUND, alpha=BLOCKING_ALPHA)
        except (TypeError, ValueError):
            raise Unreadable(_("blocking_curve should take the lengths n_pre, then n_compound and alpha, as in "
                               "the stub (the check runs it with its own settings)")) from None
        main = fn(_fresh(lengths), n_compound=BLOCKING_COMPOUND, alpha=BLOCKING_ALPHA)
        try:
            stress = fn(_fresh(lengths), n_compound=BLOCKING_COMPOUND,
                        alpha=torch.tensor(STRESS_SALIENCES, dtype=torch.float64))
        except NotImplementedError:
            raise
        except Exception as e:  # judged as a failure at the second setting, in a sentence
            stress = e
        return lengths, main, stress

    return check_measurement(run, judge_blocking_curve, answer=(fn, n_pre), turn=turn,
                             expects=_("one strength per pretraining length"), hint=_(SPAN_HINT))


__all__ = ["BLOCKING_ALPHA", "BLOCKING_COMPOUND", "BOOK", "STRESS_SALIENCES", "check_blocked_strength",
           "check_blocking_sweep", "check_rw_update", "judge_blocking_curve", "reference_blocked_strength",
           "reference_rw_update", "session"]
