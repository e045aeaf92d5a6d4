"""The exercises of ``02_hebbian_memory``.

1. (implement) the memory as a sum of outer products;
2. (implement) the crosstalk on one stored pair;
3. (design the measurement) the crosstalk variance against (n − 1)/d_k, and its fitted slope.

Learners type ``ex.hint(n)`` for the next hint tier and ``ex.solution(n)`` for the reference solution.
Each checker prints one verdict and never raises. Cases are float64 from a seeded CPU generator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.hebbian import crosstalk
from pavlovlab.memory import AssociativeMemory
from pavlovlab.sampling import random_keys
from pavlovlab.statistics import slope_through_origin

from ._core import Case, Exercise, Exercises, check_function, check_measurement

_DTYPE = torch.float64
_SHAPES = [(1, 3, 2), (3, 4, 4), (6, 5, 3), (9, 16, 7)]  # (n, d_k, d_v): one pair, d_v ≠ d_k, n > d_k

def _pending(*answers: Any) -> tuple[Any, ...]:
    """The learner's answers, or NotImplementedError (a ⏳, not a ❌) while a stub's ``...`` is still there."""
    if any(a is Ellipsis for a in answers):
        raise NotImplementedError("the stub's ... blanks are still there")
    return answers


BOOK = Exercises("02_hebbian_memory")

BOOK.add(Exercise(
    number=1, title="the memory from outer products", kind="implement",
    hints=[
        "Each pair sticks one note on the wall: a d_v × d_k grid in which the entry (a, b) is how strongly "
        "response unit a and sensory unit b are active together. The wall shows the sum of all the notes. "
        "Which product of a value and a key gives such a grid, and in which order?",
        "Start from an all-zero wall of shape (d_v, d_k), with the dtype and device of the keys, and add one "
        "outer product per pair: the value first (rows), then the key (columns). Or find the one matrix "
        "product of the stacked values and keys that gives the same sum.",
        "S = S + torch.outer(values[i], keys[i]) for every i; or all at once: values.T @ keys.",
    ],
    solution='''
def my_memory(keys, values):
    S = torch.zeros(values.shape[1], keys.shape[1], dtype=keys.dtype, device=keys.device)
    for k, v in zip(keys, values):
        S = S + torch.outer(v, k)        # one post-it note per pair: value × key
    return S                             # the same as values.T @ keys
''',
    check="ex.check_memory(my_memory);",
    wrong='''
def my_memory(keys, values):
    return keys.T @ values               # key × value: the wall is transposed
''',
))

BOOK.add(Exercise(
    number=2, title="the crosstalk on one pair", kind="implement",
    hints=[
        "Reading note j with its own key brings back note j (the signal) plus a little of every other note. "
        "The crosstalk is only that second part: which pairs contribute, and how much does each one weigh?",
        "Each other pair i contributes its value, weighted by how much its key overlaps with key j (their "
        "dot product). Leave pair j itself out. Or: read everything back from the whole memory and remove "
        "the signal.",
        "c_j = sum over i != j of values[i] * (keys[i] @ keys[j]); or (values.T @ keys) @ keys[j] minus "
        "values[j] * (keys[j] @ keys[j]).",
    ],
    solution='''
def my_crosstalk(keys, values, j):
    S = values.T @ keys                              # the memory, (d_v, d_k)
    return S @ keys[j] - values[j] * (keys[j] @ keys[j])   # everything read back, minus the signal
''',
    check="ex.check_crosstalk(my_crosstalk);",
    wrong='''
def my_crosstalk(keys, values, j):
    return (values.T @ keys) @ keys[j]               # forgot to remove the signal of pair j itself
''',
))

BOOK.add(Exercise(
    number=3, title="measure the crosstalk variance and fit its slope", kind="design",
    hints=[
        "The claim is a straight line: the crosstalk variance against (n − 1)/d_k, through the origin, with "
        "slope 1. To test it you need several numbers of pairs n (a wide range), and for each n many "
        "independent memories, so that the average is sharp enough to tell slope 1 from 0.9.",
        "Keep d_k fixed. For each n in a range such as 2 … 128, draw many memories at once (random unit keys "
        "of shape (trials, n, d_k), Gaussian values (trials, n, d_v)), compute the crosstalk of every pair "
        "with the package's crosstalk, and keep one mean square per memory. Stack the columns into msq of "
        "shape (trials, len(ns)).",
        "For each n: c = crosstalk(random_keys(trials, n, d=d_k, kind='sphere', generator=g), "
        "torch.randn(trials, n, 16, generator=g)); msq column = c.pow(2).mean((-2, -1)).",
    ],
    solution='''
d_k, trials = 32, 200                                      # 200 independent memories per n
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])              # a wide range of loads n
columns = []
for n in ns.tolist():
    keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g)      # (trials, n, d_k)
    values = torch.randn(trials, n, 16, generator=g)                      # (trials, n, d_v)
    columns.append(crosstalk(keys, values).pow(2).mean((-2, -1)))         # one variance per memory
msq = torch.stack(columns, dim=1)                          # (trials, len(ns))
''',
    check="ex.check_crosstalk_slope(ns, msq, d_k);",
    wrong='''
d_k, trials = 32, 200
ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
columns = []
for n in ns.tolist():
    keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g)
    values = torch.randn(trials, n, 16, generator=g)
    S = values.mT @ keys                                   # measured the whole read-out S k_j, signal included
    columns.append((keys @ S.mT).pow(2).mean((-2, -1)))
msq = torch.stack(columns, dim=1)
''',
    setup='''
from pavlovlab.hebbian import crosstalk
from pavlovlab.sampling import random_keys
g = torch.Generator().manual_seed(0)
''',
))

hint, solution = BOOK.hint, BOOK.solution


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


def check_memory(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Exercise 1: check ``fn(keys, values) -> S`` against ``AssociativeMemory(rule="hebbian")``."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [(_pairs(g, n, d_k, d_v), {}) for n, d_k, d_v in _SHAPES]
    return check_function(fn, memory_reference, cases, name="Exercise 1 (memory from outer products)",
                          number=1, book=BOOK, rtol=1e-6, atol=1e-9,
                          case_hints=["one pair: S is that pair's note", "", "d_v differs from d_k",
                                      "more pairs than d_k"],
                          hint="which units index the rows of the wall, and which the columns? Reading S @ q with "
                               "a key q must give back a value.")


# --------------------------------------------------------------------------- Exercise 2: the crosstalk
def crosstalk_reference(keys: torch.Tensor, values: torch.Tensor, j: int) -> torch.Tensor:
    """The crosstalk on pair j: ``c_j = Σ_{i≠j} v_i (k_i·k_j)``. keys: (n, d_k), values: (n, d_v) -> (d_v,)."""
    return crosstalk(keys, values)[j]


def check_crosstalk(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor], *, seed: int = 0) -> bool:
    """Exercise 2: check ``fn(keys, values, j) -> c_j`` against ``pavlovlab.hebbian.crosstalk`` for several j."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for n, d_k, d_v in _SHAPES[1:]:  # at least two pairs, so there is some crosstalk
        keys, values = _pairs(g, n, d_k, d_v)
        cases += [((keys, values, j), {}) for j in (0, n // 2, n - 1)]
    return check_function(fn, crosstalk_reference, cases, name="Exercise 2 (crosstalk)", number=2, book=BOOK,
                          rtol=1e-6, atol=1e-9,
                          hint="with a single stored pair, what should the crosstalk be? Does pair j itself "
                               "belong to its own crosstalk?")


# ------------------------------------------------------------- Exercise 3: measure the variance slope
def _judge_slope(d_k: int) -> Callable[[Any], tuple[bool, str]]:
    def judge(result: Any) -> tuple[bool, str]:
        ns, msq = result
        n = torch.as_tensor(ns).detach().double().cpu().flatten()
        y = torch.as_tensor(msq).detach().double().cpu()
        first = BOOK.get(3).attempts <= 1
        if y.dim() != 2 or y.shape[1] != n.numel():
            return False, (f"msq should have one row per memory and one column per n, shape (trials, "
                           f"{n.numel()}); got shape {tuple(y.shape)}")
        if not bool(torch.isfinite(y).all()):
            return False, "msq contains NaN or inf"
        if torch.unique(n).numel() < 4 or n.min() < 2 or n.max() < 8 * n.min():
            return False, ("a slope needs at least 4 numbers of pairs n (each ≥ 2), spanning at least a factor "
                           "of 8 from the smallest to the largest")
        if y.shape[0] < 30:
            return False, f"{y.shape[0]} memories per n: too few to average the noise away (take 100 or more)"
        x = (n - 1) / d_k
        slope, se = slope_through_origin(x, y)
        if se > 0.03:
            return False, (f"your slope is known only to ±{se:.2f} (one standard error): too coarse to tell "
                           "slope 1 from 0.9. More memories per n, or larger n, sharpen it")
        if abs(slope - 1) > 3 * se:
            msg = ("the measured variance does not grow like (n − 1)/d_k: is msq the crosstalk alone (the "
                   "signal of pair j removed), averaged over every pair and every value component?")
            if not first:
                msg += f" (fitted slope {slope:.3f} ± {se:.3f}, theory 1)"
            return False, msg
        return True, (f"fitted slope of the crosstalk variance against (n − 1)/d_k: {slope:.3f} ± {se:.3f} "
                      f"(one standard error, {y.shape[0]} memories per n), consistent with 1.")
    return judge


def check_crosstalk_slope(ns: Any, msq: Any, d_k: int) -> bool:
    """Exercise 3: judge the learner's crosstalk-variance sweep.

    ``ns`` (P,) numbers of pairs, ``msq`` (trials, P) the mean square crosstalk of each memory, ``d_k`` the
    key dimension. The slope of ``msq`` against ``(n − 1)/d_k`` (a line through the origin, fitted per
    memory row, :func:`pavlovlab.statistics.slope_through_origin`) must be known to ±0.03 (one standard
    error) and lie within 3 standard errors of 1, the theory's value.
    """
    return check_measurement(lambda: _pending(ns, msq), _judge_slope(int(d_k)),
                             name="Exercise 3 (crosstalk variance against (n − 1)/d_k)", number=3, book=BOOK,
                             hint="what does the read-out of pair j hold besides the crosstalk? And are your "
                                  "keys of length 1?")


__all__ = ["BOOK", "check_crosstalk", "check_crosstalk_slope", "check_memory", "crosstalk_reference", "hint",
           "memory_reference", "solution"]
