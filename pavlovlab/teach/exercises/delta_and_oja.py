"""The exercises of ``06_delta_and_oja``: measure how fast the delta rule recovers after a drift
(design the measurement), write the delta update, find the learning rate at which the delta rule
becomes unstable, predict the fixed point of Oja's rule.

Each ``check_*`` takes the learner's function (or value), compares it with the package on several random
cases (float64, from a seeded CPU generator) or judges the learner's measurement, and prints one
friendly verdict. They never raise. ``hint(n)`` and ``solution(n)`` give the tiered hints and the
reference solution of exercise ``n``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import torch

from pavlovlab.memory.associative import delta_update
from pavlovlab.teach.language import N_, _

from .book import Book
from .checking import (
    Case,
    Turn,
    Unreadable,
    Verdict,
    check_function,
    check_measurement,
    finite_number,
    measure_each,
)

_DTYPE = torch.float64

BOOK = Book("06_delta_and_oja", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


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


RECOVERY_KEYS = (8, 3)
"""The numbers of keys with which the learner's ``recovery_time(beta, n_keys=...)`` is run: 8 at every β of
:data:`RECOVERY_BETAS`, then 3 at β = 0.2 (another system, where the times are shorter)."""


def writes_to_recover(beta: float, level: float = 0.95) -> int:
    """How many writes of one key bring its read-out's cosine with the new value to ``level`` after a drift
    (old and new values orthogonal), for 0 < β < 2: after m writes the read-out is ``v_new + c (v_old − v_new)``
    with c = (1 − β)^m, whose cosine with v_new is (1 − c)/((1 − c)² + c²)^½; the smallest m where that
    reaches ``level``."""
    if not 0 < beta < 2:
        raise ValueError(f"beta: expected a learning rate in (0, 2), where the delta rule converges; got {beta!r}")
    m = 1
    while (1 - (c := (1 - beta) ** m)) / ((1 - c) ** 2 + c ** 2) ** 0.5 < level:
        m += 1
    return m


def recovery_band(beta: float, n_keys: int) -> tuple[float, float]:
    """The steps after a drift until the mean cosine over ``n_keys`` keys is back above 0.95: every key needs
    m = :func:`writes_to_recover` writes and each round of keys takes n_keys steps, so between about
    (m − 1)·n_keys and (m + 1)·n_keys steps depending on where in a round the drift falls; the band widens
    that by 25 % each way (old and new values of dimension d are only nearly orthogonal). The reference
    solution measures 47.9 at β = 0.2 with 8 keys (band 36 to 80) and 18.6 with 3 keys (13.5 to 30); a search
    for 0.6 instead of 0.95 gives 19.3 and 7.8."""
    m = writes_to_recover(beta)
    return 0.75 * (m - 1) * n_keys, 1.25 * (m + 1) * n_keys


FAST_DRIFT = dict(beta=0.2, n_keys=8, period=20)
"""A setting where counting writes per key is off: the foods are redrawn every 20 steps, while 8 keys at
β = 0.2 need about 48 steps to recover. A simulation never sees the cosine back above 0.95 before the next
drift and returns ``inf`` (the reference solution does, at every period up to 30); the count of writes
returned as a measurement gives about 56."""


def _judge_recovery(runs: tuple[dict[float, float], dict[float, float], float | None]) -> Verdict:
    times, few, fast = runs
    shown = ", ".join(f"β = {b}: {t:.3g}" for b, t in times.items())
    if any(math.isinf(t) for t in times.values()):
        # Translators: {shown} lists the learner's times, as in "β = 0.2: 48.1, β = 0.5: 16.2, β = 1: 7".
        return Verdict(False, _("your memory never recovered at some β ({shown}).").format(shown=shown),
                       hint=_("which rule did you use, and does your memory ever take an old value down?"))
    if any(t < 0 for t in times.values()):
        return Verdict(False, _("a recovery time cannot be negative ({shown}).").format(shown=shown),
                       hint=_("count the steps from the drift forwards: the first step after it is step 0."))
    slow, mid, fast_beta = (times[b] for b in RECOVERY_BETAS)
    if not slow > mid > fast_beta:
        return Verdict(False, _("your recovery times ({shown}) do not shrink as β grows.").format(shown=shown),
                       hint=_("did you count the steps from the drift, and what does your search return when the "
                              "cosine never reaches 0.95 within the window?"))
    ratio = slow / max(fast_beta, 1e-12)
    low, high = RECOVERY_RATIO_BAND
    if not low <= ratio <= high:
        return Verdict(False, _("your times ({shown}) give recovery(0.2) / recovery(1) = {ratio:.2g}, not the factor "
                                "that counting writes per key predicts.").format(shown=shown, ratio=ratio),
                       detail=_("expected a ratio between {low:g} and {high:g}").format(low=low, high=high),
                       hint=_("count how many writes of one key the delta rule needs at β = 1 and at β = 0.2, and "
                              "check that you average over several drifts and seeds."))
    for n_keys, table in ((RECOVERY_KEYS[0], times), (RECOVERY_KEYS[1], few)):
        t = table[0.2]
        low, high = recovery_band(0.2, n_keys)
        if math.isfinite(t) and t >= 0 and not low <= t <= high:
            message = (_("with {n_keys} keys at β = 0.2 your memory counts as recovered too soon.") if t < low else
                       _("with {n_keys} keys at β = 0.2 your memory counts as recovered too late."))
            return Verdict(False, message.format(n_keys=n_keys),
                           detail=_("yours {time:.3g} steps, expected between {low:.0f} and {high:.0f}: one key "
                                    "needs {writes} writes at this β").format(time=t, low=low, high=high,
                                                                              writes=writes_to_recover(0.2)),
                           hint=_("is 0.95 the level your search looks for, and do you count steps from the drift "
                                  "itself? How many writes does one key need at β = 0.2, and how many steps does "
                                  "a round of all the keys take?"))
    if fast is None:
        return Verdict(False, _("recovery_time should also take period (the steps between drifts), as in the stub: "
                                "the check runs it once more at another setting."),
                       hint=_("add period=100 to its arguments and build the stream's drifts from it."))
    if not math.isinf(fast):
        return Verdict(False, _("at another setting, with the foods redrawn every {period} steps (faster than "
                                "β = {beta} can follow with {n_keys} keys, so counting writes per key is off "
                                "there), your recovery_time reports recovery after {steps:.3g} steps, though no "
                                "food table lasts that long.").format(steps=fast, **FAST_DRIFT),
                       detail=_("a simulation never gets back above 0.95 before the next drift: torch.inf"),
                       hint=_("does your function simulate the stream with the period it is given, rather than "
                              "count writes, and does it return torch.inf where the cosine never gets back above "
                              "0.95 before the next drift?"))
    return Verdict(True, _("recovery after a drift ({n_keys} keys): {shown} steps; β = 0.2 takes {ratio:.1f}× longer "
                           "than β = 1 (theory: between (6n + 1)/(2n − 1) and (6n + 1)/(n − 1) for n keys, 3.3 to "
                           "7.0 for 8 keys, depending on where in a round of keys the drift falls); and with drifts "
                           "every {period} steps your memory rightly never recovers at β = 0.2.").format(
                               n_keys=RECOVERY_KEYS[0], shown=shown, ratio=ratio, period=FAST_DRIFT["period"]))


@BOOK.exercise(1, N_("measure the recovery time after a drift"), kind="design", hints=[
    N_("Ring every bell after each write and compare the answers with the current foods (the mean "
       "cosine over the bells). After each drift, count the steps until that mean is back above 0.95; "
       "average over the drifts and over at least 3 seeds."),
    N_("drift.redraw_stream(..., batch_shape=(seeds,)) gives keys, values, probes (the bells), targets "
       "(the current foods at every step) and drift_times; pl.AssociativeMemory(..., rule='delta', "
       "lr=beta, batch_shape=(seeds,)) writes one step at a time with memory.write and reads all bells "
       "with memory.read(stream.probes)."),
    N_("For each drift time, take the window of cosines until the next drift, compare with 0.95, and "
       "find the first True with .float().argmax(-1); where there is no True at all, the memory never "
       "recovered: use torch.where(back.any(-1), first, torch.inf).")])
def check_recovery_time(fn: Callable[..., float], *, turn: Turn) -> bool:
    """Judge the learner's ``recovery_time(beta, n_keys, period) -> float``: the mean number of steps after a
    drift until the delta memory's tracking cosine is back above 0.95, at β = 0.2, 0.5 and 1 with 8 keys (the
    ratio band), at β = 0.2 with 8 and 3 keys against :func:`recovery_band`, and at :data:`FAST_DRIFT`, where
    it must never recover. A result of the wrong form, or a crash, is said plainly, with no hint about the idea."""
    def run() -> tuple[dict[float, float], dict[float, float], float | None]:
        if not callable(fn):
            raise Unreadable(_("expected your function recovery_time, got {type}").format(type=type(fn).__name__))
        try:
            inspect.signature(fn).bind(0.2, n_keys=RECOVERY_KEYS[0])
        except (TypeError, ValueError):
            raise Unreadable(_("recovery_time should take beta and n_keys (the number of keys), as in the "
                               "stub")) from None
        times = measure_each(fn, RECOVERY_BETAS, "recovery_time", n_keys=RECOVERY_KEYS[0])
        few = measure_each(fn, (0.2,), "recovery_time", n_keys=RECOVERY_KEYS[1])
        try:
            inspect.signature(fn).bind(FAST_DRIFT["beta"], n_keys=FAST_DRIFT["n_keys"], period=FAST_DRIFT["period"])
        except (TypeError, ValueError):
            return times, few, None
        fast = measure_each(fn, (FAST_DRIFT["beta"],), "recovery_time", n_keys=FAST_DRIFT["n_keys"],
                            period=FAST_DRIFT["period"])
        return times, few, fast[FAST_DRIFT["beta"]]
    return check_measurement(run, _judge_recovery, answer=fn, turn=turn)   # each verdict carries the hint that fits


# --------------------------------------------------------------------------- Exercise 2: the delta write

def delta_write_reference(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: float) -> torch.Tensor:
    """One delta-rule write: ``S + β (v − S k) kᵀ``. S: (d_v, d_k), k: (d_k,), v: (d_v,) -> (d_v, d_k)."""
    return S + beta * delta_update(S, k, v)


@BOOK.exercise(2, N_("the delta write"), kind="implement", hints=[
    N_("The delta rule writes only the surprise: what the key should have predicted minus what the "
       "memory predicts for it now. Then it adds that surprise, scaled by β, along the key."),
    N_("The prediction for the key is the read-out S @ k (shape (d_v,)); the surprise is v minus it."),
    N_("Add beta times the outer product of the surprise (a column) and the key (a row): torch.outer.")])
def check_delta_write(fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor], *, turn: Turn,
                      seed: int = 0) -> bool:
    """Check ``fn(S, k, v, beta) -> S + β (v − S k) kᵀ`` on random memories, keys and values."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    notes: list[str] = []
    for d_v, d_k, beta, length in [(1, 1, 0.5, 1.0), (2, 3, 1.0, 1.0), (4, 4, 0.3, 1.0), (3, 7, 1.7, 1.0),
                                   (3, 5, 0.4, 2.0), (2, 6, 0.6, 0.5)]:
        k = _randn(g, d_k)
        cases.append(((_randn(g, d_v, d_k), length * k / k.norm(), _randn(g, d_v), beta), {}))
        notes.append("" if length == 1.0 else _("a key of length {length:g}").format(length=length))
    mistakes = [(lambda S, k, v, beta: S + beta * torch.outer(v - S @ k, k) / (k @ k),
                 _("your write agrees with the task's for keys of length 1, not for this one: does the task's "
                   "write rescale anything by the key's length?")),
                (lambda S, k, v, beta: S + beta * torch.outer(v, k),
                 _("your write adds the food whatever the memory already predicts (a Hebbian write): where is "
                   "the memory's own prediction for the key?")),
                (lambda S, k, v, beta: S + torch.outer(v - S @ k, k),
                 _("your write removes all of the surprise whatever beta is: how much of it should one write "
                   "with learning rate beta remove?")),
                (lambda S, k, v, beta: S + beta * torch.outer(S @ k - v, k),
                 _("your write moves the prediction away from the food: which way round is the surprise?")),
                (lambda S, k, v, beta: beta * torch.outer(v - S @ k, k),
                 _("your result is the change alone: what happens to what the memory held before the write?")),
                (lambda S, k, v, beta: delta_write_reference(S, k, v, beta).mT,
                 _("your memory is laid out the other way round: S maps a key (d_k) to a value (d_v), so it has "
                   "d_v rows and d_k columns.")),
                (lambda S, k, v, beta: delta_write_reference(S, k, v, beta).tolist(),
                 _("your values are right, but as a Python list: return the memory as a tensor."))]
    return check_function(fn, delta_write_reference, cases, case_hints=notes, mistakes=mistakes,
                          hint=_("compare your write with the task's step by step on this case: the memory's "
                                 "prediction for the key, the surprise, its scale, and the direction it is "
                                 "written along. Which one did you change?"),
                          rtol=1e-8, atol=1e-10, turn=turn)


# --------------------------------------------------------------------------- Exercise 3: the unstable β

UNSTABLE_BETA = 2.0
"""With unit keys one delta write multiplies the error on that key by (1 − β): |1 − β| > 1 once β > 2."""


def _judge_unstable_beta(answer: Any) -> Verdict:
    # Translators: the subject of the framework's sentences about a result of the wrong form ("... should be one
    # number").
    beta = finite_number(answer, _("your answer"))
    if abs(beta - UNSTABLE_BETA) <= 0.1:
        return Verdict(True, _("your answer matches: from β = {beta:g} on, one write multiplies the error on a unit "
                               "key by a factor of size 1 or more.").format(beta=UNSTABLE_BETA))
    detail = _("expected {expected:g}, got {beta:.3g}").format(expected=UNSTABLE_BETA, beta=beta)
    if abs(beta - 1) <= 0.1:
        hint = _("β = 1 is where one write removes the whole error. Just above it the error changes sign: does it "
                 "also grow, or does it still shrink?")
    elif beta <= 0.1:
        hint = _("a learning rate that small only slows learning down. What does a very large β do to the error?")
    elif beta < UNSTABLE_BETA:
        hint = _("follow the error through one write at your β: by what factor is it multiplied? Is that factor "
                 "larger than 1 in size?")
    else:
        hint = _("just below your β, is the delta rule already unstable? Find the factor one write multiplies the "
                 "error by, and where its size reaches 1.")
    return Verdict(False, _("your learning rate {beta:.3g} is not where the delta rule starts to diverge.").format(
        beta=beta), detail=detail, hint=hint)


@BOOK.exercise(3, N_("the unstable learning rate"), kind="implement", hints=[
    N_("Follow the error e = v − S k on one unit key through one write: the write changes S k by β e."),
    N_("So the new error is (1 − β) e. It shrinks while |1 − β| < 1: solve that for β."),
    N_("|1 − β| < 1 means 0 < β < 2: return the upper end.")])
def check_unstable_beta(answer: Callable[[], float] | float, *, turn: Turn) -> bool:
    """Check the learner's learning rate above which the delta rule diverges with unit-norm keys (β = 2,
    within 0.1); a wrong value gets the question that fits where it lies."""
    return check_measurement(answer, _judge_unstable_beta, turn=turn,
                             expects=_("one number, a learning rate"))


# --------------------------------------------------------------------------- Exercise 4: Oja's fixed point

def oja_fixed_point_reference(C: torch.Tensor) -> torch.Tensor:
    """Where Oja's rule settles for inputs with second moment C (d, d): the unit-norm top eigenvector,
    with its sign chosen so that its largest-magnitude entry is positive."""
    return _canonical(torch.linalg.eigh(C).eigenvectors[..., -1], C.shape[-1])


def _canonical(w: Any, d: int) -> Any:
    """A direction with a fixed sign (±u are both fixed points): flip a (d,) tensor so that its largest-|.|
    entry is positive, in its own dtype. Anything else is returned as it is, for the comparison to judge its
    type, shape and dtype as for every other checker."""
    if not isinstance(w, torch.Tensor) or w.shape != (d,) or not w.is_floating_point() or not d:
        return w
    return w * torch.sign(w[w.detach().abs().argmax()])


@BOOK.exercise(4, N_("Oja's fixed point"), kind="implement", hints=[
    N_("Set the expected update C w − (wᵀ C w) w to zero: C w is a multiple of w."),
    N_("So w is an eigenvector of C, and wᵀ C w = λ forces its length to 1; only the direction of the "
       "largest eigenvalue is stable (a small push towards it grows)."),
    N_("torch.linalg.eigh(C) returns the eigenvalues in ascending order and the eigenvectors as columns: "
       "take the last column.")])
def check_oja_fixed_point(fn: Callable[[torch.Tensor], torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """Check ``fn(C) -> w*``, the fixed point of Oja's rule for covariance C (d, d) float64: a (d,) tensor in
    C's dtype, either sign accepted."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d in (2, 3, 5):
        Q = torch.linalg.qr(_randn(g, d, d)).Q
        lam = torch.linspace(3.0, 0.2, d, dtype=_DTYPE)            # distinct eigenvalues: one top direction
        cases.append((((Q * lam) @ Q.mT,), {}))

    def learner(C: torch.Tensor) -> Any:
        return _canonical(fn(C), C.shape[-1])

    learner.__name__ = getattr(fn, "__name__", "learner")
    if not callable(fn):
        learner = fn  # let the core say "expected a function"
    def eig(C: torch.Tensor) -> torch.Tensor:
        return torch.linalg.eigh(C).eigenvectors

    mistakes = [(lambda C: _canonical(eig(C)[:, 0], C.shape[-1]),
                 _("your vector is a fixed point, but of the smallest eigenvalue: a small push away from it grows. "
                   "Which of the fixed points is stable?")),
                (lambda C: _canonical(eig(C)[-1], C.shape[-1]),
                 _("your vector is a row of the eigenvector matrix: in which layout does torch.linalg.eigh return "
                   "the eigenvectors?")),
                (lambda C: _canonical(C @ eig(C)[:, -1], C.shape[-1]),
                 _("your vector points the right way but is longer than a fixed point can be: at the fixed point, "
                   "what does wᵀ C w = λ say about the length of w?")),
                (lambda C: _canonical(C[:, 0] / C[:, 0].norm(), C.shape[-1]),
                 _("your vector is a column of C, not a direction that C only stretches: what does C w = λ w "
                   "ask?"))]
    return check_function(learner, oja_fixed_point_reference, cases, mistakes=mistakes,
                          hint=_("your vector differs from the fixed point on this case. Does C only stretch "
                                 "it (C w a multiple of w), is it of length 1, and is it the stable one?"),
                          rtol=1e-6, atol=1e-8, turn=turn)

__all__ = ["BOOK", "FAST_DRIFT", "RECOVERY_BETAS", "RECOVERY_KEYS", "RECOVERY_RATIO_BAND", "UNSTABLE_BETA",
           "check_delta_write",
           "check_oja_fixed_point", "check_recovery_time", "check_unstable_beta", "delta_write_reference",
           "oja_fixed_point_reference", "recovery_band", "session", "writes_to_recover"]
