"""The exercises of ``02_hebbian_memory``.

1. (implement) the memory as a sum of outer products;
2. (implement) the crosstalk on one stored pair;
3. (design the measurement) the crosstalk variance against (n − 1)/d_k, and its fitted slope.

In the notebook ``from pavlovlab.teach.exercises import hebbian_memory as ex`` (then ``ex.start()``); ``ex.hint(n)``
gives the next hint tier, ``ex.solution(n)`` the reference solution.
Each checker prints one verdict and never raises. Cases are float64 from a seeded CPU generator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.memory.associative import AssociativeMemory
from pavlovlab.memory.hebbian import crosstalk
from pavlovlab.sampling import random_keys
from pavlovlab.statistics import slope_through_origin
from pavlovlab.teach.language import N_, _

from .book import Book
from .checking import Case, Turn, Verdict, check_function, check_measurement, pending

_DTYPE = torch.float64
_SHAPES = [(1, 3, 2), (3, 4, 4), (6, 5, 3), (9, 16, 7)]  # (n, d_k, d_v): one pair, d_v ≠ d_k, n > d_k



BOOK = Book("02_hebbian_memory", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


def _pairs(g: torch.Generator, n: int, d_k: int, d_v: int) -> tuple[torch.Tensor, torch.Tensor]:
    keys = random_keys(n, d=d_k, kind="sphere", generator=g, dtype=_DTYPE)
    return keys, torch.randn(n, d_v, generator=g, dtype=_DTYPE)


# --------------------------------------------------------------------------- Exercise 1: build S
def memory_reference(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``S = Σ_i v_i k_iᵀ``, computed by writing the pairs one by one into the package's memory.

    keys: (n, d_k), values: (n, d_v) -> S: (d_v, d_k).
    """
    mem = AssociativeMemory(keys.shape[-1], values.shape[-1], rule="hebbian", dtype=keys.dtype)
    mem.write(keys, values)
    return mem.S


@BOOK.exercise(1, N_("the memory from outer products"), kind="implement", hints=[
        N_("Each pair sticks one note on the wall: a d_v × d_k grid in which the entry (a, b) is how strongly "
           "response unit a and sensory unit b are active together. The wall shows the sum of all the notes. "
           "Which product of a value and a key gives such a grid, and in which order?"),
        N_("Start from an all-zero wall of shape (d_v, d_k), with the dtype and device of the keys, and add one "
           "outer product per pair: the value first (rows), then the key (columns). Or find the one matrix "
           "product of the stacked values and keys that gives the same sum."),
        N_("S = S + torch.outer(values[i], keys[i]) for every i; or all at once: values.T @ keys."),
    ])
def check_memory(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """Exercise 1: check ``fn(keys, values) -> S`` against ``AssociativeMemory(rule="hebbian")``."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [(_pairs(g, n, d_k, d_v), {}) for n, d_k, d_v in _SHAPES]
    mistakes = [(lambda keys, values: keys.T @ values,
                 _("your wall is turned on its side: which units index its rows, and which its columns? "
                   "Reading S @ q with a key q must give back a value.")),
                (lambda keys, values: values.T @ keys / keys.shape[0],
                 _("your wall is the average of the notes: does Hebb's rule divide each note by how many pairs "
                   "there are, or does every pairing add its full note?"))]
    return check_function(fn, memory_reference, cases, turn=turn, rtol=1e-6, atol=1e-9, mistakes=mistakes,
                          case_hints=[_("one pair: S is that pair's note"), "", _("d_v differs from d_k"),
                                      _("more pairs than d_k")],
                          hint=_("your wall differs from the sum of the notes on the case named above: build the "
                                 "one-pair case by hand and compare."))


# --------------------------------------------------------------------------- Exercise 2: the crosstalk
def crosstalk_reference(keys: torch.Tensor, values: torch.Tensor, j: int) -> torch.Tensor:
    """The crosstalk on pair j: ``c_j = Σ_{i≠j} v_i (k_i·k_j)``. keys: (n, d_k), values: (n, d_v) -> (d_v,)."""
    return crosstalk(keys, values)[j]


@BOOK.exercise(2, N_("the crosstalk on one pair"), kind="implement", hints=[
        N_("Reading note j with its own key brings back note j (the signal) plus a little of every other note. "
           "The crosstalk is only that second part: which pairs contribute, and how much does each one weigh?"),
        N_("Each other pair i contributes its value, weighted by how much its key overlaps with key j (their "
           "dot product). Leave pair j itself out. Or: read everything back from the whole memory and remove "
           "the signal."),
        N_("c_j = sum over i != j of values[i] * (keys[i] @ keys[j]); or (values.T @ keys) @ keys[j] minus "
           "values[j] * (keys[j] @ keys[j])."),
    ])
def check_crosstalk(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor], *, turn: Turn,
                    seed: int = 0) -> bool:
    """Exercise 2: check ``fn(keys, values, j) -> c_j`` against ``pavlovlab.memory.hebbian.crosstalk`` for several j."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    notes: list[str] = []
    for n, d_k, d_v in _SHAPES[1:]:  # at least two pairs, so there is some crosstalk
        keys, values = _pairs(g, n, d_k, d_v)
        cases += [((keys, values, j), {}) for j in (0, n // 2, n - 1)]
        notes += [_("unit keys")] * 3
    for n, d_k, d_v in _SHAPES[1:]:  # the task's formula holds for keys of any length
        keys, values = _pairs(g, n, d_k, d_v)
        keys = keys * (0.5 + 1.5 * torch.rand(n, 1, generator=g, dtype=_DTYPE))
        cases += [((keys, values, j), {}) for j in (0, n - 1)]
        notes += [_("keys not of length 1")] * 2
    mistakes = [(lambda keys, values, j: (values.T @ keys) @ keys[j] - values[j],
                 _("on keys of length 1 your answer is right, on longer or shorter keys it is not: what does "
                   "pair j itself contribute to the read-out S k_j when k_j·k_j is not 1?")),
                (lambda keys, values, j: (values.T @ keys) @ keys[j],
                 _("your answer is the whole read-out S k_j: is pair j itself part of its own crosstalk?"))]
    return check_function(fn, crosstalk_reference, cases, turn=turn, case_hints=notes, mistakes=mistakes,
                          rtol=1e-6, atol=1e-9,
                          hint=_("with a single stored pair, what should the crosstalk be? Does pair j itself "
                                 "belong to its own crosstalk?"))


# ------------------------------------------------------------- Exercise 3: measure the variance slope
Z_LIMIT = 5.0
"""Each n's mean square crosstalk must lie within this many standard errors (the learner's own sample spread
over √trials) of (n − 1)/d_k. With ≤ 20 points, a correct measurement leaves it with probability below 1e-4
even allowing for the skew of a mean of squares; rescaling by (n − 1)/n moves n = 2 by about 9 standard errors
at 200 memories of d_k = 32."""


def _judge_slope(d_k: int) -> Callable[[Any], Verdict]:
    def judge(result: Any) -> Verdict:
        ns, msq = result
        n = torch.as_tensor(ns).detach().double().cpu().flatten()
        y = torch.as_tensor(msq).detach().double().cpu()
        if y.dim() != 2 or y.shape[1] != n.numel():
            return Verdict(False, _("msq should have one row per memory and one column per n, shape (trials, "
                                    "{count}); got shape {shape}").format(count=n.numel(), shape=tuple(y.shape)),
                           hint=_("stack one column per n side by side: torch.stack(columns, dim=1)."))
        if not bool(torch.isfinite(y).all()):
            return Verdict(False, _("msq contains NaN or inf"), hint=_("look for a division by zero or a log of 0."))
        if torch.unique(n).numel() < 4 or n.min() < 2 or n.max() < 8 * n.min():
            return Verdict(False, _("a slope needs at least 4 numbers of pairs n (each ≥ 2), spanning at least a "
                                    "factor of 8 from the smallest to the largest"),
                           hint=_("a memory of one pair has no crosstalk at all; take n from a few pairs to a "
                                  "hundred."))
        if y.shape[0] < 30:
            return Verdict(False, _("{trials} memories per n: too few to average the noise away")
                           .format(trials=y.shape[0]), hint=_("take 100 or more independent memories for each n."))
        x = (n - 1) / d_k
        spread = y.std(0)
        if bool((spread == 0).any()):
            return Verdict(False, _("at some n every memory gives exactly the same number: random memories vary, "
                                    "so msq should hold one measured mean square per memory, not a formula"),
                           hint=_("for each n draw new random keys and values for every memory, compute their "
                                  "crosstalk, and keep its mean square."))
        z = (y.mean(0) - x) / (spread / y.shape[0] ** 0.5)
        worst = int(z.abs().argmax())
        numbers = _("measured {measured:.4g}, theory {theory:.4g}").format(measured=float(y.mean(0)[worst]),
                                                                            theory=float(x[worst]))
        if float(z[worst].abs()) > Z_LIMIT:
            if float(z[worst]) > 0:
                return Verdict(False, _("at n = {n} your mean square crosstalk lies above (n − 1)/d_k by more than "
                                        "{limit:g} standard errors of your own sample: is it the crosstalk alone?")
                               .format(n=int(n[worst]), limit=Z_LIMIT), numbers,
                               hint=_("too large: does your read-out still hold the signal of pair j itself, or "
                                      "are your keys longer than 1 (kind='sphere' draws unit keys)?"))
            return Verdict(False, _("at n = {n} your mean square crosstalk lies below (n − 1)/d_k by more than "
                                    "{limit:g} standard errors of your own sample: is it a plain mean square?")
                           .format(n=int(n[worst]), limit=Z_LIMIT), numbers,
                           hint=_("too small: did you rescale it, divide by more than the number of entries, or use "
                                  "keys shorter than 1? msq is the mean of the squared crosstalk over every pair and "
                                  "value component, nothing else."))
        slope, se = slope_through_origin(x, y)
        if se > 0.03:
            return Verdict(False, _("your slope is known only to ±{se:.2f} (one standard error): too coarse to "
                                    "tell slope 1 from 0.9").format(se=se),
                           hint=_("more memories per n, or larger n, sharpen it."))
        if abs(slope - 1) > 3 * se:
            return Verdict(False, _("the measured variance does not grow like (n − 1)/d_k: is msq the crosstalk "
                                    "alone, averaged over every pair and every value component?"),
                           _("fitted slope {slope:.3f} ± {se:.3f}, theory 1").format(slope=slope, se=se))
        return Verdict(True, _("fitted slope of the crosstalk variance against (n − 1)/d_k: {slope:.3f} ± {se:.3f} "
                               "(one standard error, {trials} memories per n), consistent with 1.")
                       .format(slope=slope, se=se, trials=y.shape[0]))
    return judge


@BOOK.exercise(3, N_("measure the crosstalk variance and fit its slope"), kind="design", hints=[
        N_("The claim is a straight line: the crosstalk variance against (n − 1)/d_k, through the origin, with "
           "slope 1. To test it you need several numbers of pairs n (a wide range), and for each n many "
           "independent memories, so that the average is sharp enough to tell slope 1 from 0.9."),
        N_("Keep d_k fixed. For each n in a range such as 2 … 128, draw many memories at once (random unit keys "
           "of shape (trials, n, d_k), Gaussian values (trials, n, d_v)), compute the crosstalk of every pair "
           "with the package's crosstalk, and keep one mean square per memory. Stack the columns into msq of "
           "shape (trials, len(ns))."),
        N_("For each n: c = crosstalk(random_keys(trials, n, d=d_k, kind='sphere', generator=g), "
           "torch.randn(trials, n, 16, generator=g)); msq column = c.pow(2).mean((-2, -1))."),
    ])
def check_crosstalk_slope(ns: Any, msq: Any, d_k: int, *, turn: Turn) -> bool:
    """Exercise 3: judge the learner's crosstalk-variance sweep.

    ``ns`` (P,) numbers of pairs, ``msq`` (trials, P) the mean square crosstalk of each memory, ``d_k`` the
    key dimension. Every n's mean must lie within :data:`Z_LIMIT` standard errors of (n − 1)/d_k, and the slope
    of ``msq`` against ``(n − 1)/d_k`` (a line through the origin, fitted per
    memory row, :func:`pavlovlab.memory.hebbian.slope_through_origin`) must be known to ±0.03 (one standard
    error) and lie within 3 standard errors of 1, the theory's value.
    """
    return check_measurement(lambda: pending(ns, msq), _judge_slope(int(d_k)), turn=turn,
                             hint=_("what does the read-out of pair j hold besides the crosstalk? And are your "
                                    "keys of length 1?"))


__all__ = ["BOOK", "check_crosstalk", "check_crosstalk_slope", "check_memory", "crosstalk_reference",
           "memory_reference", "session"]
