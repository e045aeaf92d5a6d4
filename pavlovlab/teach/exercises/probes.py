"""Exercises of ``08_conditioning_in_trained_models``: (1) design the measurement that checks the blocking
probe on a hand-built delta memory against Rescorla–Wagner before it is trusted on trained models;
(2) implement the crosstalk of a set of keys.

Learners type ``ex.hint(n)`` for the next hint tier and ``ex.solution(n)`` for the reference solution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ... import designs, probes
from ._core import Case, Exercise, Exercises, check_function, check_measurement, finite_number

BOOK = Exercises("08_conditioning_in_trained_models")

# --------------------------------------------------------------------------- Exercise 2: crosstalk

_SOLUTION_1 = '''
def my_crosstalk(keys):
    """keys (..., n, d_k) unit rows -> (...): per key, the summed squared overlaps with the other keys, \
averaged over keys."""
    G = keys @ keys.mT
    n = keys.shape[-2]
    return (G.pow(2).sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)) / n
'''

_WRONG_1 = '''
def my_crosstalk(keys):
    """keys (..., n, d_k) unit rows -> (...): per key, the summed squared overlaps with the other keys, \
averaged over keys."""
    G = keys @ keys.mT
    n = keys.shape[-2]
    return G.pow(2).sum((-2, -1)) / n
'''

BOOK.add(Exercise(
    number=2, title="the crosstalk of a set of keys", kind="implement",
    hints=["A key's crosstalk is what the other keys add when you read with it: each other key contributes "
           "its squared overlap (dot product) with the key you read with. The key's overlap with itself is "
           "the signal, not crosstalk. Add up per key, then average over the n keys.",
           "All overlaps at once are the Gram matrix G = keys @ keys.mT, shape (..., n, n). Its diagonal "
           "holds the self-overlaps; everything off the diagonal is crosstalk.",
           "Sum G.pow(2) over the last two dims, subtract the squared diagonal "
           "(G.diagonal(dim1=-2, dim2=-1)), divide by n = keys.shape[-2]."],
    solution=_SOLUTION_1, check="ex.check_crosstalk(my_crosstalk);", wrong=_WRONG_1))


def check_crosstalk(fn: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Check ``fn(keys) -> (1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` on random and hand-made key sets."""
    g = torch.Generator().manual_seed(0)
    cases: list[Case] = []
    eye = torch.eye(4, dtype=torch.float64)
    cases.append(((eye,), {}))                                    # orthonormal keys: no crosstalk at all
    cases.append(((torch.stack([eye[0], eye[0], eye[1]]),), {}))  # a repeated key
    for shape in [(5, 8), (3, 6, 4), (2, 2, 7, 16)]:
        k = torch.randn(*shape, generator=g, dtype=torch.float64)
        cases.append(((k / k.norm(dim=-1, keepdim=True),), {}))
    return check_function(fn, probes.mean_squared_overlap, cases, name="Exercise 2 (crosstalk)", number=2, book=BOOK,
                          case_hints=["orthonormal keys: nothing interferes",
                                      "a key stored twice: does a key interfere with itself?", "", "", ""],
                          hint="Look at orthonormal keys: nothing should interfere there. Which overlaps did "
                               "you count that are not other keys?", rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- Exercise 1: the blocking probe vs RW

_SOLUTION_2 = '''
def blocking_sweep():
    """Return [(learning rate, mean blocking effect, half-width of its 95 % interval), ...] for the delta memory."""
    results = []
    for lr in [0.1, 0.2, 0.4, 0.6, 0.8]:
        e = statistics.summarize(probes.circuit_effects("blocking", rule="delta", lr=lr, n=200)[None])
        results.append((lr, e.mean, e.hi - e.mean))
    return results
'''

_WRONG_2 = '''
def blocking_sweep():
    """Return [(learning rate, mean blocking effect, half-width of its 95 % interval), ...] for the delta memory."""
    results = []
    for lr in [0.1, 0.2, 0.4, 0.6, 0.8]:
        e = statistics.summarize(probes.circuit_effects("blocking", rule="hebbian", lr=lr, n=200)[None])
        results.append((lr, e.mean, e.hi - e.mean))
    return results
'''


def _judge_blocking(results: Any) -> tuple[bool, str]:
    rows = [(finite_number(r[0], "a learning rate"), finite_number(r[1], "a mean effect"),
             finite_number(r[2], "a half-width")) for r in results]
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
    return True, (f"{len(rows)} rates, every point within its interval (+0.02) of Rescorla–Wagner's "
                  "prediction: the probe gives the known answer on the hand-built delta memory.")


BOOK.add(Exercise(
    number=1, title="check the blocking probe against Rescorla–Wagner", kind="design",
    hints=["Before trusting a probe on a trained model, run it where you know the answer. The delta memory "
           "is Rescorla–Wagner's learner, so its blocking effect should follow the RW prediction at every "
           "learning rate. Choose the rates, and enough sequences per rate that the intervals are narrow.",
           "probes.circuit_effects('blocking', rule=..., lr=..., n=...) returns one effect per sequence; "
           "statistics.summarize(x[None]) turns them into a mean with a 95 % interval (lo, hi).",
           "Loop over lr in [0.1, 0.2, 0.4, 0.6, 0.8] with rule='delta' and n=200, append "
           "(lr, e.mean, e.hi - e.mean) to a list and return it."],
    solution=_SOLUTION_2, check="ex.check_blocking_sweep(blocking_sweep);", wrong=_WRONG_2,
    setup="from pavlovlab import designs, probes, statistics"))


def check_blocking_sweep(results: Any) -> bool:
    """Judge a sweep ``[(lr, mean effect, half-width), ...]`` (or a function returning it) of the blocking
    probe on a hand-built memory:
    ≥ 4 rates in (0, 1] spanning a factor ≥ 4, half-widths ≤ 0.04, and every mean within 2 half-widths
    + 0.02 of Rescorla–Wagner's prediction (:func:`pavlovlab.designs.rw_effect`)."""
    return check_measurement(results, _judge_blocking, name="Exercise 1 (blocking probe vs Rescorla–Wagner)",
                             hint="Think of the two memories of notebook 06: which one writes a prediction "
                                  "error? Probe that one, with narrow intervals.", number=1, book=BOOK)


hint, solution = BOOK.hint, BOOK.solution

__all__ = ["BOOK", "check_blocking_sweep", "check_crosstalk", "hint", "solution"]
