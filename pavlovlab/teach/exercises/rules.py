"""The exercises of ``06_delta_and_oja``: measure how fast the delta rule recovers after a drift
(design the measurement), write the delta update, find the learning rate at which the delta rule
becomes unstable, predict the fixed point of Oja's rule.

Each ``check_*`` takes the learner's function (or value), compares it with the package on several random
cases (float64, from a seeded CPU generator) or judges the learner's measurement, and prints one
friendly verdict. They never raise. ``hint(n)`` and ``solution(n)`` give the tiered hints and the
reference solution of exercise ``n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.memory import delta_update

from ._core import (
    Case,
    Exercise,
    Exercises,
    check_function,
    check_measurement,
    check_value,
    measure_each,
)

_DTYPE = torch.float64

BOOK = Exercises("06_delta_and_oja")


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=_DTYPE)


# --------------------------------------------------------------------- Exercise 1: recovery after a drift

RECOVERY_BETAS = (0.2, 0.5, 1.0)
"""The learning rates at which the learner's ``recovery_time(beta)`` is called."""

RECOVERY_RATIO_BAND = (3.0, 12.0)
"""The band for recovery(β = 0.2) / recovery(β = 1). Derivation: after a drift the answer for a key is
``v_new + (1 − β)^m (v_old − v_new)`` after m writes of that key; with nearly orthogonal old and new
unit values its cosine with v_new passes 0.95 once ``|c|/(1 − c) ≤ tan(arccos 0.95) = 0.329`` with
c = (1 − β)^m: m = 1 write at β = 1 and m = 7 at β = 0.2. The mean cosine over n keys passes 0.95
after about n·(m − 1) + 1 steps at β = 0.2, and at β = 1 once every key has been written once:
between n − 1 steps (a drift at the start of a round of keys) and 2n − 1 (a drift just after a round
began). The ratio is thus between (6n + 1)/(2n − 1) and (6n + 1)/(n − 1): 3.3 to 7.0 for n = 8, 5 to 9.5
for n = 3. The package measures 49.0 / 7.0 = 7.0 (8 keys, period 200, 3 seeds × 4 drifts) and the reference
solution 47.9 / 9.1 = 5.3 (period 100: drifts in mid-round). The band [3, 12] holds every n ≥ 3; a
Hebbian memory never recovers (inf), and a search that ignores "never" returns 0."""


def _judge_recovery(times: dict[float, float]) -> tuple[bool, str]:
    shown = ", ".join(f"β = {b}: {t:.3g}" for b, t in times.items())
    if any(math.isinf(t) for t in times.values()):
        return False, (f"your memory never recovered at some β ({shown}). Which rule did you use, and does "
                       "your memory ever take an old value down?")
    if any(t < 0 for t in times.values()):
        return False, f"a recovery time cannot be negative ({shown})."
    slow, mid, fast = (times[b] for b in RECOVERY_BETAS)
    if not slow > mid > fast:
        return False, (f"your recovery times ({shown}) do not shrink as β grows. Did you count the steps from "
                       "the drift, and what does your search return when the cosine never reaches 0.95 "
                       "within the window?")
    ratio = slow / max(fast, 1e-12)
    low, high = RECOVERY_RATIO_BAND
    if not low <= ratio <= high:
        return False, (f"your times ({shown}) give recovery(0.2) / recovery(1) = {ratio:.2g}. Count how many "
                       "writes of one key the delta rule needs at β = 1 and at β = 0.2, and check that you "
                       "average over several drifts and seeds.")
    return True, (f"recovery after a drift: {shown} steps; β = 0.2 takes {ratio:.1f}× longer than β = 1 "
                  f"(theory: between (6n + 1)/(2n − 1) and (6n + 1)/(n − 1) for n keys, 3.3 to 7.0 for 8 keys, "
                  "depending on where in a round of keys the drift falls).")


def check_recovery_time(fn: Callable[[float], float]) -> bool:
    """Judge the learner's ``recovery_time(beta) -> float``: the mean number of steps after a drift
    until the delta memory's tracking cosine is back above 0.95, at β = 0.2, 0.5 and 1."""
    def run() -> dict[float, float]:
        return measure_each(fn, RECOVERY_BETAS, "recovery_time")
    return check_measurement(run, _judge_recovery, name="Exercise 1 (recovery after a drift)",
                             hint="after a drift, how much of the old value is left on a key after m writes "
                                  "with learning rate β? How many writes of every key does that take?",
                             number=1, book=BOOK)


BOOK.add(Exercise(
    number=1, title="measure the recovery time after a drift", kind="design",
    hints=["Ring every bell after each write and compare the answers with the current foods (the mean "
           "cosine over the bells). After each drift, count the steps until that mean is back above 0.95; "
           "average over the drifts and over at least 3 seeds.",
           "drift.redraw_stream(..., batch_shape=(seeds,)) gives keys, values, probes (the bells), targets "
           "(the current foods at every step) and drift_times; pl.AssociativeMemory(..., rule='delta', "
           "lr=beta, batch_shape=(seeds,)) writes one step at a time with memory.write and reads all bells "
           "with memory.read(stream.probes).",
           "For each drift time, take the window of cosines until the next drift, compare with 0.95, and "
           "find the first True with .float().argmax(-1); where there is no True at all, the memory never "
           "recovered: use torch.where(back.any(-1), first, torch.inf)."],
    solution='''\
def recovery_time(beta, seeds=3, period=100):
    stream = drift.redraw_stream(8, 16, 16, steps=4 * period, period=period, batch_shape=(seeds,),
                                 generator=torch.Generator().manual_seed(0))
    memory = pl.AssociativeMemory(16, 16, rule="delta", lr=beta, batch_shape=(seeds,))
    cosine = []
    for t in range(stream.steps):                                   # write one pair, then ring every bell
        memory.write(stream.keys[:, t], stream.values[:, t])
        answers = memory.read(stream.probes)                        # (seeds, 8, 16)
        cosine.append(torch.cosine_similarity(answers, stream.targets[:, t], dim=-1).mean(-1))
    cosine = torch.stack(cosine, dim=-1)                            # (seeds, steps)
    waits = []
    for start in stream.drift_times.tolist():                       # steps until back above 0.95
        back = cosine[:, start:start + period] >= 0.95
        waits.append(torch.where(back.any(-1), back.float().argmax(-1), torch.inf))
    return torch.stack(waits).mean().item()                         # over drifts and seeds

# try it
{beta: recovery_time(beta) for beta in (0.2, 0.5, 1.0)}''',
    check="ex.check_recovery_time(recovery_time);",
    wrong='''\
def recovery_time(beta, seeds=3, period=100):
    stream = drift.redraw_stream(8, 16, 16, steps=4 * period, period=period, batch_shape=(seeds,),
                                 generator=torch.Generator().manual_seed(0))
    memory = pl.AssociativeMemory(16, 16, rule="hebbian", lr=beta, batch_shape=(seeds,))
    cosine = []
    for t in range(stream.steps):
        memory.write(stream.keys[:, t], stream.values[:, t])
        cosine.append(torch.cosine_similarity(memory.read(stream.probes), stream.targets[:, t], dim=-1).mean(-1))
    cosine = torch.stack(cosine, dim=-1)
    waits = [(cosine[:, s:s + period] >= 0.95).float().argmax(-1) for s in stream.drift_times.tolist()]
    return torch.stack(waits).float().mean().item()''',
    setup="from pavlovlab import drift"))


# --------------------------------------------------------------------------- Exercise 2: the delta write

def delta_write_reference(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: float) -> torch.Tensor:
    """One delta-rule write: ``S + β (v − S k) kᵀ``. S: (d_v, d_k), k: (d_k,), v: (d_v,) -> (d_v, d_k)."""
    return S + beta * delta_update(S, k, v)


def check_delta_write(fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor], *,
                      seed: int = 0) -> bool:
    """Check ``fn(S, k, v, beta) -> S + β (v − S k) kᵀ`` on random memories, keys and values."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d_v, d_k, beta in [(1, 1, 0.5), (2, 3, 1.0), (4, 4, 0.3), (3, 7, 1.7)]:
        k = _randn(g, d_k)
        cases.append(((_randn(g, d_v, d_k), k / k.norm(), _randn(g, d_v), beta), {}))
    return check_function(fn, delta_write_reference, cases, name="Exercise 2 (the delta write)",
                          hint="the memory here is not empty: what does it already predict for the key, and "
                               "does your write take that prediction into account?",
                          rtol=1e-8, atol=1e-10, number=2, book=BOOK)


BOOK.add(Exercise(
    number=2, title="the delta write", kind="implement",
    hints=["The delta rule writes only the surprise: what the key should have predicted minus what the "
           "memory predicts for it now. Then it adds that surprise, scaled by β, along the key.",
           "The prediction for the key is the read-out S @ k (shape (d_v,)); the surprise is v minus it.",
           "Add beta times the outer product of the surprise (a column) and the key (a row): torch.outer."],
    solution='''\
def delta_write(S, k, v, beta):
    error = v - S @ k                      # the surprise: what should have come minus what was expected
    return S + beta * torch.outer(error, k)

# the bell already predicts food unit 0 perfectly
S0 = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
# try it: row 0 must stay 1
delta_write(S0, torch.tensor([1.0, 0.0, 0.0]), torch.tensor([1.0, -1.0]), 0.5)''',
    check="ex.check_delta_write(delta_write);",
    wrong='''\
def delta_write(S, k, v, beta):
    return S + beta * torch.outer(v, k)'''))


# --------------------------------------------------------------------------- Exercise 3: the unstable β

UNSTABLE_BETA = 2.0
"""With unit keys one delta write multiplies the error on that key by (1 − β): |1 − β| > 1 once β > 2."""


def check_unstable_beta(answer: Callable[[], float] | float) -> bool:
    """Check the learner's learning rate above which the delta rule diverges with unit-norm keys (β = 2)."""
    return check_value(answer, UNSTABLE_BETA, name="Exercise 3 (the unstable learning rate)",
                       hint="write the same unit key again and again: by what factor does one write multiply "
                            "the error on it? When is that factor larger than 1 in size?",
                       rtol=0.0, atol=0.1, number=3, book=BOOK)


BOOK.add(Exercise(
    number=3, title="the unstable learning rate", kind="implement",
    hints=["Follow the error e = v − S k on one unit key through one write: the write changes S k by β e.",
           "So the new error is (1 − β) e. It shrinks while |1 − β| < 1: solve that for β.",
           "|1 − β| < 1 means 0 < β < 2: return the upper end."],
    solution='''\
def unstable_beta():
    return 2.0    # error ← (1 − β) · error: |1 − β| > 1 exactly when β > 2 (or β < 0)

# try it
unstable_beta()''',
    check="ex.check_unstable_beta(unstable_beta);",
    wrong='''\
def unstable_beta():
    return 1.0'''))


# --------------------------------------------------------------------------- Exercise 4: Oja's fixed point

def oja_fixed_point_reference(C: torch.Tensor) -> torch.Tensor:
    """Where Oja's rule settles for inputs with second moment C (d, d): the unit-norm top eigenvector,
    with its sign chosen so that its largest-magnitude entry is positive."""
    return _canonical(torch.linalg.eigh(C).eigenvectors[..., -1])


def _canonical(w: Any) -> torch.Tensor:
    """A direction with a fixed sign (±u are both fixed points): flip so the largest-|.| entry is positive."""
    w = torch.as_tensor(w, dtype=_DTYPE).flatten()
    return w * torch.sign(w[w.abs().argmax()]) if w.numel() else w


def check_oja_fixed_point(fn: Callable[[torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(C) -> w*``, the fixed point of Oja's rule for covariance C (either sign accepted)."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d in (2, 3, 5):
        Q = torch.linalg.qr(_randn(g, d, d)).Q
        lam = torch.linspace(3.0, 0.2, d, dtype=_DTYPE)            # distinct eigenvalues: one top direction
        cases.append((((Q * lam) @ Q.mT,), {}))

    def learner(C: torch.Tensor) -> torch.Tensor:
        return _canonical(fn(C))

    learner.__name__ = getattr(fn, "__name__", "learner")
    if not callable(fn):
        learner = fn  # let the core say "expected a function"
    return check_function(learner, oja_fixed_point_reference, cases, name="Exercise 4 (Oja's fixed point)",
                          hint="at the fixed point the expected update is zero: what kind of vector does "
                               "C w = (wᵀ C w) w make w, how long is it, and which of those is stable?",
                          rtol=1e-6, atol=1e-8, number=4, book=BOOK)


BOOK.add(Exercise(
    number=4, title="Oja's fixed point", kind="implement",
    hints=["Set the expected update C w − (wᵀ C w) w to zero: C w is a multiple of w.",
           "So w is an eigenvector of C, and wᵀ C w = λ forces its length to 1; only the direction of the "
           "largest eigenvalue is stable (a small push towards it grows).",
           "torch.linalg.eigh(C) returns the eigenvalues in ascending order and the eigenvectors as columns: "
           "take the last column."],
    solution='''\
def oja_fixed_point(C):
    # C w = (wᵀ C w) w: w is an eigenvector, and wᵀ C w = λ forces ‖w‖ = 1; only the top one is stable
    eigenvalues, eigenvectors = torch.linalg.eigh(C)       # ascending order
    return eigenvectors[:, -1]

# try it
oja_fixed_point(torch.tensor([[3.0, 1.0], [1.0, 2.0]]))''',
    check="ex.check_oja_fixed_point(oja_fixed_point);",
    wrong='''\
def oja_fixed_point(C):
    return torch.linalg.eigh(C).eigenvectors[:, 0]'''))


hint, solution = BOOK.hint, BOOK.solution

__all__ = ["BOOK", "RECOVERY_BETAS", "RECOVERY_RATIO_BAND", "UNSTABLE_BETA", "check_delta_write",
           "check_oja_fixed_point", "check_recovery_time", "check_unstable_beta", "delta_write_reference", "hint",
           "oja_fixed_point_reference", "solution"]
