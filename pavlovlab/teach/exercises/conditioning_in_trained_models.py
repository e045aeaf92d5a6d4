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
from ...phenomena import probes
from ...phenomena import sequences as designs
from .book import Book
from .checking import Case, Turn, Unreadable, check_function, check_measurement, finite_number

BOOK = Book("08_conditioning_in_trained_models", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)

# --------------------------------------------------------------------------- Exercise 2: crosstalk


@BOOK.exercise(2, "the crosstalk of a set of keys", kind="implement", hints=[
    "A key's crosstalk is what the other keys add when you read with it: each other key contributes "
           "its squared overlap (dot product) with the key you read with. The key's overlap with itself is "
           "the signal, not crosstalk. Add up per key, then average over the n keys.",
           "All overlaps at once are the Gram matrix G = keys @ keys.mT, shape (..., n, n). Its diagonal "
           "holds the self-overlaps; everything off the diagonal is crosstalk.",
           "Sum G.pow(2) over the last two dims, subtract the squared diagonal "
           "(G.diagonal(dim1=-2, dim2=-1)), divide by n = keys.shape[-2]."])
def check_crosstalk(fn: Callable[[torch.Tensor], torch.Tensor], *, turn: Turn) -> bool:
    """Check ``fn(keys) -> (1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` on random and hand-made key sets."""
    g = torch.Generator().manual_seed(0)
    cases: list[Case] = []
    eye = torch.eye(4, dtype=torch.float64)
    cases.append(((eye,), {}))                                    # orthonormal keys: no crosstalk at all
    cases.append(((torch.stack([eye[0], eye[0], eye[1]]),), {}))  # a repeated key
    for shape in [(5, 8), (3, 6, 4), (2, 2, 7, 16)]:
        k = torch.randn(*shape, generator=g, dtype=torch.float64)
        cases.append(((k / k.norm(dim=-1, keepdim=True),), {}))
    return check_function(fn, head_memory.mean_squared_overlap, cases, turn=turn,
                          case_hints=["orthonormal keys: nothing interferes",
                                      "a key stored twice: does a key interfere with itself?", "", "", ""],
                          hint="Look at orthonormal keys: nothing should interfere there. Which overlaps did "
                               "you count that are not other keys?", rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- Exercise 1: the blocking probe vs RW


def _rows(results: Any) -> list[tuple[float, float, float]]:
    if isinstance(results, (str, bytes, dict)) or not isinstance(results, (list, tuple)):
        raise Unreadable(f"blocking_sweep should return a list of (rate, mean effect, half-width) rows, got "
                         f"{type(results).__name__}")
    if any(not isinstance(r, (list, tuple)) or len(r) != 3 for r in results):
        raise Unreadable("each row of blocking_sweep's list should be (rate, mean effect, half-width): three numbers")
    return [(finite_number(r[0], "a learning rate"), finite_number(r[1], "a mean effect"),
             finite_number(r[2], "a half-width")) for r in results]


CONTROL_SEQUENCES = 800
"""Sequences per rate of the checker's own measurement of the Hebbian memory (the second system)."""


@functools.lru_cache(maxsize=64)
def hebbian_blocking(lr: float) -> tuple[float, float]:
    """The package's measured blocking effect of the Hebbian memory at rate ``lr``: (mean, half-width of its
    95 % interval) over :data:`CONTROL_SEQUENCES` sequences. Rescorla–Wagner's prediction does not hold there
    (the Hebbian memory shows no blocking), so a sweep that returns the prediction instead of measuring fails."""
    e = statistics.summarize(probes.circuit_effects("blocking", rule="hebbian", lr=lr, n=CONTROL_SEQUENCES,
                                                seed=11)[None])
    return float(e.mean), float(e.hi - e.mean)


def _judge_hebbian(rows: list[tuple[float, float, float]]) -> tuple:
    for lr, m, hw in rows:
        truth, truth_hw = hebbian_blocking(lr)
        if abs(m - truth) > 2 * hw + 2 * truth_hw + 0.01:
            return (False, f"run with rule='hebbian', your blocking_sweep does not give what the probe measures on "
                    f"the Hebbian memory at rate {lr:g}: does it measure the memory it is given (the rule argument) "
                    "with probes.circuit_effects, or return a prediction?",
                    f"yours {m:.3f} ± {hw:.3f}, the package's measurement {truth:.3f} ± {truth_hw:.3f}")
    return True, ""


def _judge_blocking(results: Any) -> tuple:
    delta, hebbian = results
    rows = _rows(delta)
    rates = sorted({lr for lr, _, _ in rows})
    if len(rates) < 4 or any(not 0 < lr <= 1 for lr in rates):
        return False, ("measure at least four different learning rates between 0 and 1 (more points show the "
                       "shape of the curve).")
    if max(rates) < 4 * min(rates):
        return False, "spread the learning rates more widely: the largest at least four times the smallest."
    if any(hw <= 0 or hw > 0.04 for _, _, hw in rows):
        return False, ("some intervals are too wide (or empty) to compare with the theory: how many sequences "
                       "does each point average?")
    worst = max(abs(m - designs.rw_effect("blocking", m=2, lr=lr)) - 2 * hw for lr, m, hw in rows)
    if worst > 0.02:
        return False, ("your measured blocking effects do not follow Rescorla–Wagner's prediction at every "
                       "rate. Which memory rule is the Rescorla–Wagner learner, and is it the one you probed?")
    checked = _judge_hebbian(_rows(hebbian))
    if not checked[0]:
        return checked
    return True, (f"{len(rows)} rates, every point within its interval (+0.02) of Rescorla–Wagner's "
                  "prediction: the probe gives the known answer on the hand-built delta memory (and, run on the "
                  "Hebbian memory, what that memory does instead).")


@BOOK.exercise(1, "check the blocking probe against Rescorla–Wagner", kind="design", hints=[
    "Before trusting a probe on a trained model, run it where you know the answer. The delta memory "
           "is Rescorla–Wagner's learner, so its blocking effect should follow the RW prediction at every "
           "learning rate. Choose the rates, and enough sequences per rate that the intervals are narrow.",
           "probes.circuit_effects('blocking', rule=..., lr=..., n=...) returns one effect per sequence; "
           "statistics.summarize(x[None]) turns them into a mean with a 95 % interval (lo, hi).",
           "Loop over lr in [0.1, 0.2, 0.4, 0.6, 0.8] with rule='delta' and n=200, append "
           "(lr, e.mean, e.hi - e.mean) to a list and return it."])
def check_blocking_sweep(fn: Callable[..., Any], *, turn: Turn) -> bool:
    """Judge the learner's ``blocking_sweep(rule="delta") -> [(lr, mean effect, half-width), ...]``, a sweep of
    the blocking probe on a hand-built memory: with the delta rule, ≥ 4 rates in (0, 1] spanning a factor ≥ 4,
    half-widths ≤ 0.04, and every mean within 2 half-widths + 0.02 of Rescorla–Wagner's prediction
    (:func:`pavlovlab.phenomena.sequences.rw_effect`); run with ``rule="hebbian"``, every mean within 2 half-widths
    (its own and the package's) + 0.01 of the package's measurement (:func:`hebbian_blocking`)."""
    def run() -> tuple[Any, Any]:
        if not callable(fn):
            raise Unreadable(f"expected your function blocking_sweep, got {type(fn).__name__}")
        try:
            inspect.signature(fn).bind(rule="hebbian")
        except (TypeError, ValueError):
            raise Unreadable("blocking_sweep should take the memory's rule as an argument (rule='delta'), as in "
                             "the stub") from None
        return fn(), fn(rule="hebbian")
    return check_measurement(run, _judge_blocking, answer=fn,
                             hint="Think of the two memories of notebook 06: which one writes a prediction "
                                  "error? Probe that one, with narrow intervals.", turn=turn)

__all__ = ["BOOK", "check_blocking_sweep", "check_crosstalk", "hebbian_blocking", "session"]
