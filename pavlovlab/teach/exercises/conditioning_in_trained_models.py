"""Exercises of ``08_conditioning_in_trained_models``: (1) design the measurement that checks the blocking
probe on a hand-built delta memory against Rescorla–Wagner before it is trusted on trained models;
(2) implement the crosstalk of a set of keys.

Learners type ``ex.hint(n)`` for the next hint tier and ``ex.solution(n)`` for the reference solution.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import torch

from ... import statistics
from ...models import head_memory
from ...phenomena import probes, sequences
from ..language import N_, _
from .book import Book
from .checking import Case, Turn, Unreadable, Verdict, check_function, check_measurement, finite_number

BOOK = Book("08_conditioning_in_trained_models", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)

# --------------------------------------------------------------------------- Exercise 2: crosstalk


def _gram(keys: torch.Tensor) -> torch.Tensor:
    return keys @ keys.mT


def _per_pair(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: the mean over ordered pairs (i ≠ j), not the mean over keys of each key's sum."""
    n = keys.shape[-2]
    return head_memory.mean_squared_overlap(keys) / (n - 1)


def _self_counted(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: each key's overlap with itself counted as crosstalk."""
    return _gram(keys).pow(2).sum((-2, -1)) / keys.shape[-2]


def _not_averaged(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: the total over all keys, not the average per key."""
    return head_memory.mean_squared_overlap(keys) * keys.shape[-2]


def _not_squared(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: the signed overlaps added up, not their squares."""
    g = _gram(keys)
    return (g.sum((-2, -1)) - g.diagonal(dim1=-2, dim2=-1).sum(-1)) / keys.shape[-2]


def _absolute(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: the sizes of the overlaps added up, not their squares."""
    g = _gram(keys).abs()
    return (g.sum((-2, -1)) - g.diagonal(dim1=-2, dim2=-1).sum(-1)) / keys.shape[-2]


def _coordinates(keys: torch.Tensor) -> torch.Tensor:
    """A recognised mistake: the Gram matrix of the coordinates, kᵀk (d_k × d_k), not of the keys."""
    g = keys.mT @ keys
    return (g.pow(2).sum((-2, -1)) - g.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)) / keys.shape[-2]


CROSSTALK_MISTAKES = [
    (_per_pair, N_("your number is the average over pairs of keys. The task adds up, for each key, what all the "
                   "other keys bring along when you read with it, and then averages over the keys: how many "
                   "other keys does each key meet?")),
    (_self_counted, N_("every key of length 1 adds exactly 1 too much: is a key's overlap with itself crosstalk, "
                       "or the signal you want to read?")),
    (_not_averaged, N_("your number grows with the number of keys even when each key meets the same crosstalk: "
                       "the task asks for the average per key.")),
    (_not_squared, N_("overlaps can be negative and cancel when you add them up: the interference a key suffers "
                      "grows with the size of each overlap, whatever its sign.")),
    (_absolute, N_("your overlaps enter by their size, but not the way interference does: reading with k_j, key i "
                   "brings its value along with weight k_i·k_j, so what measures the energy of that stray term?")),
    (_coordinates, N_("your Gram matrix compares coordinates (d_k × d_k), not keys: which product of keys with "
                      "keys gives an n × n table of overlaps?")),
]
"""The mistakes exercise 2's checker recognises, each with the hint it gives when the learner's result is it
(marked for translation; the checker says it in the learner's language)."""


@BOOK.exercise(2, N_("the crosstalk of a set of keys"), kind="implement", hints=[
    N_("A key's crosstalk is what the other keys add when you read with it: each other key contributes "
       "its squared overlap (dot product) with the key you read with. The key's overlap with itself is "
       "the signal, not crosstalk. Add up per key, then average over the n keys."),
    N_("All overlaps at once are the Gram matrix G = keys @ keys.mT, shape (..., n, n). Its diagonal "
       "holds the self-overlaps; everything off the diagonal is crosstalk."),
    N_("Sum G.pow(2) over the last two dims, subtract the squared diagonal "
       "(G.diagonal(dim1=-2, dim2=-1)), divide by n = keys.shape[-2].")])
def check_crosstalk(fn: Callable[[torch.Tensor], torch.Tensor], *, turn: Turn) -> bool:
    """Check ``fn(keys) -> (1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` on random and hand-made key sets; a result equal to one
    of :data:`CROSSTALK_MISTAKES` on the failing case gets that mistake's hint."""
    g = torch.Generator().manual_seed(0)
    cases: list[Case] = []
    eye = torch.eye(4, dtype=torch.float64)
    cases.append(((eye,), {}))                                    # orthonormal keys: no crosstalk at all
    cases.append(((torch.stack([eye[0], eye[0], eye[1]]),), {}))  # a repeated key
    for shape in [(5, 8), (3, 6, 4), (2, 2, 7, 16)]:
        k = torch.randn(*shape, generator=g, dtype=torch.float64)
        cases.append(((k / k.norm(dim=-1, keepdim=True),), {}))
    return check_function(fn, head_memory.mean_squared_overlap, cases, turn=turn,
                          case_hints=[_("orthonormal keys: nothing interferes"),
                                      _("one key stored twice: each copy is another key to the other, with "
                                        "overlap 1"),
                                      _("random unit keys"), _("random unit keys, a batch"),
                                      _("random unit keys, two batch dims")],
                          mistakes=[(mistake, _(says)) for mistake, says in CROSSTALK_MISTAKES],
                          hint=_("the line above says which case failed and how. Take a small set of keys like it, "
                                 "work out each key's crosstalk by hand with a loop over the other keys, and "
                                 "compare with what your function returns."), rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- Exercise 1: the blocking probe vs RW


def _rows(results: Any) -> list[tuple[float, float, float]]:
    if isinstance(results, (str, bytes, dict)) or not isinstance(results, (list, tuple)):
        raise Unreadable(_("blocking_sweep should return a list of (rate, mean effect, half-width) rows, got "
                           "{type}").format(type=type(results).__name__))
    if any(not isinstance(r, (list, tuple)) or len(r) != 3 for r in results):
        raise Unreadable(_("each row of blocking_sweep's list should be (rate, mean effect, half-width): three "
                           "numbers"))
    # Translators: the next three are the subjects of the framework's sentences about a number of the wrong form
    # ("... should be one number", "... is nan: NaN or inf").
    return [(finite_number(r[0], _("a learning rate")), finite_number(r[1], _("a mean effect")),
             finite_number(r[2], _("a half-width"))) for r in results]


CONTROL_SEQUENCES = 800
"""Sequences per rate of the checker's own measurement of the Hebbian memory (the second system)."""

LARGEST_RATE = 0.5
"""The sweep must reach this learning rate: below it blocking is small in both memories, so a sweep of small
rates cannot tell the delta memory from the Hebbian one, nor a measurement from the prediction."""

WIDEST = 0.04
"""The largest half-width of a 95 % interval the comparison with the theory accepts."""


@functools.lru_cache(maxsize=64)
def hebbian_blocking(lr: float) -> tuple[float, float]:
    """The package's measured blocking effect of the Hebbian memory at rate ``lr``: (mean, half-width of its
    95 % interval) over :data:`CONTROL_SEQUENCES` sequences. Rescorla–Wagner's prediction does not hold there
    (the Hebbian memory shows no blocking), so a sweep that returns the prediction instead of measuring fails."""
    e = statistics.summarize(probes.circuit_effects("blocking", rule="hebbian", lr=lr, n=CONTROL_SEQUENCES,
                                                seed=11)[None])
    return float(e.mean), float(e.hi - e.mean)


def _near(rows: list[tuple[float, float, float]], target: Callable[[float], float], slack: float) -> bool:
    """Whether every row's mean lies within two of its half-widths (+ ``slack``) of ``target(rate)``."""
    return all(abs(m - target(lr)) <= 2 * hw + slack for lr, m, hw in rows)


def _judge_hebbian(rows: list[tuple[float, float, float]]) -> Verdict | None:
    for lr, m, hw in rows:
        truth, truth_hw = hebbian_blocking(lr)
        if abs(m - truth) > 2 * hw + 2 * truth_hw + 0.01:
            return Verdict(False, _("the check also ran your blocking_sweep(rule='hebbian'), on a memory without a "
                                    "prediction error, where Rescorla–Wagner's prediction is off. There your sweep "
                                    "reports a blocking effect that this memory does not show (at rate {rate:g}). "
                                    "Does it measure the memory it is given (the rule argument), or return a "
                                    "prediction?").format(rate=lr),
                           detail=_("yours {mean:.3f} ± {half_width:.3f}, the package's measurement {truth:.3f} ± "
                                    "{truth_half_width:.3f}").format(mean=m, half_width=hw, truth=truth,
                                                                     truth_half_width=truth_hw),
                           hint=_("A check of a probe has to measure: with rule='hebbian' the sweep must run "
                                  "probes.circuit_effects on the Hebbian memory, which writes every pairing "
                                  "whatever it already predicts."))
    return None


def _rw_blocking(lr: float, m: int) -> float:
    return sequences.rw_effect("blocking", m=m, lr=lr)


def _off_theory(rows: list[tuple[float, float, float]]) -> Verdict:
    """The ❌ for a delta sweep that misses Rescorla–Wagner's prediction, diagnosed where the numbers allow."""
    lr, m, hw = max(rows, key=lambda r: abs(r[1] - sequences.rw_effect("blocking", m=2, lr=r[0])) - 2 * r[2])
    rw = sequences.rw_effect("blocking", m=2, lr=lr)
    detail = _("at rate {rate:g}: yours {mean:.3f} ± {half_width:.3f}, Rescorla–Wagner {prediction:.3f}").format(
        rate=lr, mean=m, half_width=hw, prediction=rw)
    if _near(rows, lambda b: hebbian_blocking(b)[0], 0.02):
        return Verdict(False, _("your blocking effects stay near zero at every rate, as a memory that cannot block "
                                "does. Which memory rule is Rescorla–Wagner's learner, and is it the one you "
                                "probed?"),
                       detail, _("Think of the two memories of notebook 06: which one writes a prediction error? "
                                 "Probe that one."))
    if _near(rows, lambda b: sequences.rw_effect("blocking", m=2, lr=b, compound="sum"), 0.02):
        return Verdict(False, _("your effects follow Rescorla–Wagner for the textbook's additive compound, not for "
                                "the unit-norm compound keys the models use and the prediction is made for."), detail,
                       _("How does the probe encode a compound (its compound argument), and which encoding does "
                         "the task's prediction assume?"))
    if any(_near(rows, functools.partial(_rw_blocking, m=k), 0.02) for k in (1, 3, 4, 5)):
        return Verdict(False, _("your effects follow Rescorla–Wagner for another number of trials per block than "
                                "the prediction's two."), detail,
                       _("Keep the probe's default design (m, the trials per block): the prediction is made for it."))
    message = (_("at rate {rate:g} your measured blocking effect lies above Rescorla–Wagner's prediction by more "
                 "than its interval allows. Is every point a measurement of the same design the prediction is for "
                 "(rule, compound, trials), at the rate you report?") if m > rw else
               _("at rate {rate:g} your measured blocking effect lies below Rescorla–Wagner's prediction by more "
                 "than its interval allows. Is every point a measurement of the same design the prediction is for "
                 "(rule, compound, trials), at the rate you report?"))
    return Verdict(False, message.format(rate=lr), detail,
                   _("Print your rows next to probes.rw_effect('blocking', lr=rate) for each rate: which rows "
                     "disagree, and what is different about how you measured them?"))


def _judge_blocking(results: Any) -> Verdict:
    delta, hebbian = results
    rows = _rows(delta)
    rates = sorted({lr for lr, _mean, _half_width in rows})
    if len(rates) < 4 or any(not 0 < lr <= 1 for lr in rates):
        return Verdict(False, _("measure at least four different learning rates between 0 and 1 (more points show "
                                "the shape of the curve)."),
                       hint=_("How many distinct rates does your list hold, and are they all in (0, 1]?"))
    if max(rates) < 4 * min(rates) or max(rates) < LARGEST_RATE:
        return Verdict(False, _("spread the learning rates more widely: from small rates up to large ones (at least "
                                "{largest:g}), the largest at least four times the smallest.").format(
                                    largest=LARGEST_RATE),
                       hint=_("At small rates both memories block almost nothing, so those points cannot tell a "
                              "right probe from a wrong one: where is blocking large?"))
    wide = [lr for lr, _mean, hw in rows if not 0 < hw <= WIDEST]
    if wide and all(hw > m > 0 for _rate, m, hw in rows):
        return Verdict(False, _("every third number is larger than its mean: is it the half-width of the interval "
                                "(hi − mean), or its upper end?"),
                       hint=_("statistics.summarize gives the interval's ends lo and hi; the half-width is how far "
                              "hi lies from the mean."))
    if wide:
        if any(hw <= 0 for _rate, _mean, hw in rows):
            message = _("some intervals are empty (half-width 0 or less): is the third number the half-width of a "
                        "95 % interval, hi − mean?")
        elif len(wide) > 1:
            # Translators: {rates} lists the learning rates, as in "0.1, 0.2".
            message = _("the intervals at rates {rates} are too wide to compare with the theory (half-width above "
                        "{widest:g}).")
        else:
            message = _("the intervals at rate {rates} are too wide to compare with the theory (half-width above "
                        "{widest:g}).")
        return Verdict(False, message.format(rates=", ".join(f"{b:g}" for b in wide), widest=WIDEST),
                       hint=_("An interval narrows as 1/√N with the number N of sequences that each point averages: "
                              "how many did you use?"))
    if any(abs(m - sequences.rw_effect("blocking", m=2, lr=lr)) > 2 * hw + 0.02 for lr, m, hw in rows):
        return _off_theory(rows)
    checked = _judge_hebbian(_rows(hebbian))
    if checked is not None:
        return checked
    return Verdict(True, _("{n} rates, every point within its interval (+0.02) of Rescorla–Wagner's prediction: the "
                           "probe gives the known answer on the hand-built delta memory (and, run on the Hebbian "
                           "memory, what that memory does instead).").format(n=len(rows)))


@BOOK.exercise(1, N_("check the blocking probe against Rescorla–Wagner"), kind="design", hints=[
    N_("Before trusting a probe on a trained model, run it where you know the answer. The delta memory "
       "is Rescorla–Wagner's learner, so its blocking effect should follow the RW prediction at every "
       "learning rate. Choose the rates, and enough sequences per rate that the intervals are narrow."),
    N_("probes.circuit_effects('blocking', rule=..., lr=..., n=...) returns one effect per sequence; "
       "statistics.summarize(x[None]) turns them into a mean with a 95 % interval (lo, hi)."),
    N_("Loop over lr in [0.1, 0.2, 0.4, 0.6, 0.8] with rule=rule and n=200, append "
       "(lr, e.mean, e.hi - e.mean) to a list and return it.")])
def check_blocking_sweep(fn: Callable[..., Any], *, turn: Turn) -> bool:
    """Judge the learner's ``blocking_sweep(rule="delta") -> [(lr, mean effect, half-width), ...]``, a sweep of
    the blocking probe on a hand-built memory: with the delta rule, ≥ 4 rates in (0, 1] spanning a factor ≥ 4 and
    reaching :data:`LARGEST_RATE`, half-widths in (0, :data:`WIDEST`], and every mean within 2 half-widths + 0.02
    of Rescorla–Wagner's prediction (:func:`pavlovlab.phenomena.sequences.rw_effect`); run with
    ``rule="hebbian"`` (where that prediction is off), every mean within 2 half-widths (its own and the package's)
    + 0.01 of the package's measurement (:func:`hebbian_blocking`). A miss is diagnosed where the numbers allow
    (the Hebbian memory probed, the additive compound, another number of trials per block)."""
    def run() -> tuple[Any, Any]:
        if not callable(fn):
            raise Unreadable(_("expected your function blocking_sweep, got {type}").format(type=type(fn).__name__))
        try:
            inspect.signature(fn).bind(rule="hebbian")
        except (TypeError, ValueError):
            raise Unreadable(_("blocking_sweep should take the memory's rule as an argument (rule='delta'), as "
                               "in the stub")) from None
        return fn(), fn(rule="hebbian")
    return check_measurement(run, _judge_blocking, answer=fn,
                             hint=_("Which memory writes a prediction error, and does your sweep measure the "
                                    "memory its rule argument names?"), turn=turn)

__all__ = ["BOOK", "CROSSTALK_MISTAKES", "check_blocking_sweep", "check_crosstalk", "hebbian_blocking", "session"]
