"""The exercises of ``04_capacity_limits``.

1. (implement) the theory curve of the mean recall cosine;
2. (implement) invert it: the average-case capacity predicted for a threshold θ;
3. (implement) read a capacity off a measured, noisy curve (the first failure, not the last success);
4. (design the measurement) measure the capacity under retrieval criterion (a) (every stored item's
   cosine ≥ θ) for several key dimensions and fit the log–log slope.

Learners type ``ex.hint(n)`` for the next hint tier and ``ex.solution(n)`` for the reference solution.
Each checker prints one verdict and never raises. :func:`pavlovlab.capacity.capacity_scaling` is the
package's version of Exercise 4's measurement.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ...capacity.average import average_capacity_theory, capacity_from_fidelity, fidelity_theory, n_grid
from ...capacity.criteria import retrieval_capacity
from ...statistics import fit_slope
from ..language import N_, _
from .book import Book
from .checking import Case, Turn, Unreadable, Verdict, check_function, check_measurement, finite_number, pending

BOOK = Book("04_capacity_limits", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


# ------------------------------------------------------------------------ Exercise 1: the theory curve
def fidelity_reference(n: torch.Tensor, d_k: int) -> torch.Tensor:
    """Mean cosine after storing ``n`` pairs in dimension ``d_k``: ``1/√(1 + (n − 1)/d_k)``. n: (P,) float64."""
    return fidelity_theory(n, d_k)


@BOOK.exercise(1, N_("the theory curve"), kind="implement", hints=[
        N_("The read-out is the right food (length 1) plus a blur made of the other n − 1 notes, each scaled by "
           "an overlap whose square is 1/d_k on average, and nearly perpendicular to the food. How long is the "
           "blur, and what is the cosine of the angle between a unit vector and that vector plus a perpendicular "
           "blur?"),
        N_("Squared length of the blur: (n − 1)/d_k. For a right triangle with legs 1 and b, the cosine of the "
           "angle at the unit leg is 1 over the hypotenuse √(1 + b²). Use torch operations so that n can be a "
           "tensor; n = 1 must give exactly 1."),
        N_("return 1 / torch.sqrt(1 + (n - 1) / d_k)"),
    ])
def check_fidelity_theory(fn: Callable[[torch.Tensor, int], torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """Check ``fn(n, d_k)`` (the mean recall cosine) for tensors ``n`` (float64, starting at n = 1) and int ``d_k``."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d_k in (4, 16, 37, 128):
        n = torch.cat([torch.ones(1), torch.randint(2, 4 * d_k, (5,), generator=g).sort().values]).double()
        cases.append(((n, d_k), {}))
    mistakes = [(lambda n, d_k: 1 / torch.sqrt(1 + n / d_k),
                 _("a memory holding a single pair gives less than 1 with your curve: how many of the n stored "
                   "notes blur item j's read-out?")),
                (lambda n, d_k: 1 / (1 + (n - 1) / d_k),
                 _("your curve falls too fast: is (n − 1)/d_k the blur's length, or its squared length?"))]
    return check_function(fn, fidelity_reference, cases, mistakes=mistakes,
                          hint=_("your curve differs from the theory on the case named above: what should a memory "
                                 "holding a single pair (n = 1) give, and how does the blur's squared length grow "
                                 "with n?"),
                          rtol=1e-6, atol=1e-9, turn=turn)


# ------------------------------------------------------------- Exercise 2: invert the theory for n
def predicted_capacity_reference(d_k: int, threshold: float) -> int:
    """The largest whole n whose theoretical mean cosine is ≥ ``threshold``: ``⌊1 + d_k (1/θ² − 1)⌋``."""
    return math.floor(float(average_capacity_theory(d_k, threshold)))


def _far_from_whole(d_k: int, threshold: float) -> bool:
    """Cases whose bound ``1 + d_k(1/θ² − 1)`` is an exact whole number (e.g. d_k = 16, θ = 0.8 gives 10)
    can round to either side in floating point (1/0.8² = 1.5624999999999998); the checker avoids them."""
    x = 1 + d_k * (1 / threshold**2 - 1)
    return abs(x - round(x)) > 1e-6


def _capacity_cases(seed: int) -> list[Case]:
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [((64, 0.9), {}), ((100, 0.55), {}), ((10, 0.95), {})]
    while len(cases) < 7:
        d_k = int(torch.randint(8, 513, (1,), generator=g))
        threshold = round(0.5 + 0.45 * float(torch.rand(1, generator=g)), 2)
        if _far_from_whole(d_k, threshold):
            cases.append(((d_k, threshold), {}))
    return cases


@BOOK.exercise(2, N_("capacity from the theory"), kind="implement", hints=[
        N_("The cosine falls as n grows, so the usable n form a range 1, 2, …, n_max. Solve 'cosine = θ' for n "
           "(square both sides first), then ask: which whole numbers lie on the usable side?"),
        N_("Squaring gives 1 + (n − 1)/d_k ≤ 1/θ², i.e. n ≤ 1 + d_k (1/θ² − 1). The answer is the largest whole "
           "number that is not above that bound: round down, never to the nearest."),
        N_("return math.floor(1 + d_k * (1 / threshold**2 - 1))"),
    ])
def check_predicted_capacity(fn: Callable[[int, float], int], *, turn: Turn, seed: int = 0) -> bool:
    """Check ``fn(d_k, threshold)``: the largest whole n whose theoretical mean cosine is ≥ threshold."""
    mistakes = [(lambda d_k, threshold: math.floor(1 + d_k * (1 / threshold - 1)),
                 _("the cosine is 1 over a square root: what happens to θ when you solve 'cosine ≥ θ' for n?")),
                (lambda d_k, threshold: round(1 + d_k * (1 / threshold**2 - 1)),
                 _("you rounded to the nearest whole number: does the number you return still pass the test, or "
                   "can it lie just past the bound?")),
                (lambda d_k, threshold: math.ceil(1 + d_k * (1 / threshold**2 - 1)),
                 _("you rounded up: the whole number just past the bound no longer passes the test."))]
    return check_function(fn, predicted_capacity_reference, _capacity_cases(seed), mistakes=mistakes,
                          hint=_("your n differs from the largest whole number that passes the test on the case "
                                 "named above: plug your n and n + 1 into the curve of Exercise 1 and see which "
                                 "passes."),
                          rtol=0.0, atol=0.0, turn=turn)


# ------------------------------------------------------ Exercise 3: capacity from a measured curve
def capacity_reference(ns: torch.Tensor, mean_cosine: torch.Tensor, threshold: float) -> int:
    """The largest n of the grid before the measured mean cosine first drops below ``threshold`` (0 if at once)."""
    return capacity_from_fidelity(ns, mean_cosine, threshold)


def _curve_cases(g: torch.Generator) -> tuple[list[Case], list[str]]:
    cases: list[Case] = []
    notes: list[str] = []
    for d_k, threshold in ((16, 0.8), (64, 0.7), (128, 0.9)):
        ns = n_grid(d_k, points=16, max_ratio=2.0)
        noisy = fidelity_theory(ns, d_k) + 0.01 * torch.randn(len(ns), generator=g, dtype=torch.float64)
        cases.append(((ns, noisy.clamp(max=1.0), threshold), {}))
        notes.append(_("a noisy measured curve"))
    ns = torch.tensor([1, 2, 4, 8, 16, 32])
    cases.append(((ns, torch.tensor([1.0, 0.9, 0.75, 0.82, 0.6, 0.5], dtype=torch.float64), 0.8), {}))
    notes.append(_("the curve dips below the threshold at n = 4, then wiggles back above it at n = 8"))
    cases.append(((ns, torch.tensor([0.7, 0.6, 0.5, 0.4, 0.3, 0.2], dtype=torch.float64), 0.8), {}))
    notes.append(_("even the first point is below the threshold"))
    cases.append(((ns, torch.full((6,), 0.95, dtype=torch.float64), 0.8), {}))
    notes.append(_("every point passes"))
    return cases, notes


@BOOK.exercise(3, N_("capacity from a measured curve"), kind="implement", hints=[
        N_("Read the curve from the left, as the memory fills. The capacity is where the memory first stops "
           "being usable. What should a later point that wiggles back above the threshold change? (Noise is not "
           "recovery.) And what if the very first point is already below?"),
        N_("Walk along ns and mean_cosine together; remember the last n that passed; stop at the first point "
           "below the threshold. Return that remembered n (0 if nothing passed), as a number of pairs, not an "
           "index."),
        N_("best = 0; for n, c in zip(ns.tolist(), mean_cosine.tolist()): if c < threshold: break; best = n; "
           "return best"),
    ])
def check_capacity_estimate(fn: Callable[[torch.Tensor, torch.Tensor, float], int], *, turn: Turn,
                            seed: int = 0) -> bool:
    """Check ``fn(ns, mean_cosine, threshold) -> int``: the largest n before the curve first drops below threshold."""
    cases, notes = _curve_cases(torch.Generator().manual_seed(seed))
    mistakes = [(lambda ns, c, threshold: int(ns[c >= threshold].max()) if bool((c >= threshold).any()) else 0,
                 _("you kept the last point above the threshold: when the memory has failed once, does a later "
                   "lucky point make it usable again?")),
                (lambda ns, c, threshold: _first_index_below(c, threshold),
                 _("your answer is a position in the grid: the grid's points are numbers of pairs, ns[i], not i.")),
                (lambda ns, c, threshold: _first_failing_n(ns, c, threshold),
                 _("you returned the first n that fails: the capacity is the last n that still passed."))]
    return check_function(fn, capacity_reference, cases, mistakes=mistakes,
                          hint=_("your capacity differs from the last n before the first failure on the case named "
                                 "above: walk along that curve by hand."),
                          rtol=0.0, atol=0.0, turn=turn, case_hints=notes)


def _first_index_below(c: torch.Tensor, threshold: float) -> int:
    below = (c < threshold).nonzero()
    return int(below[0]) if len(below) else len(c)


def _first_failing_n(ns: torch.Tensor, c: torch.Tensor, threshold: float) -> int:
    below = (c < threshold).nonzero()
    return int(ns[int(below[0])]) if len(below) else int(ns[-1])


# ------------------------------------------------- Exercise 4: design the capacity measurement
_REFERENCE_TRIALS = 200


@functools.lru_cache(maxsize=64)
def reference_capacity(d_k: int, threshold: float = 0.8) -> float:
    """The package's mean capacity under criterion (a) (every item's cosine ≥ θ, d_v = d_k, unit keys and
    values), over :data:`_REFERENCE_TRIALS` trials: what a correct measurement should find on average."""
    r = retrieval_capacity(d_k, "cosine", trials=_REFERENCE_TRIALS, n_max=d_k // 2 + 16, threshold=threshold,
                           generator=torch.Generator().manual_seed(1000 + d_k), dtype=torch.float64)
    return float(r.capacity.double().mean())


@functools.lru_cache(maxsize=8)
def capacity_sample(d_k: int, threshold: float, trials: int, seed: int) -> tuple[float, float]:
    """The package's mean capacity under criterion (a) and the standard deviation of one trial's capacity,
    over ``trials`` trials (unit keys and values, d_v = d_k)."""
    r = retrieval_capacity(d_k, "cosine", trials=trials, n_max=d_k // 2 + 16, threshold=threshold,
                           generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    c = r.capacity.double()
    return float(c.mean()), float(c.std())


PROBE = dict(d_k=16, trials=400, theta=0.9)
"""The second setting at which the learner's ``measure_capacity`` is run: a stricter threshold than the
exercise's, where a count that is off by one write is off by about half a capacity."""

PROBE_Z = 5.0
"""The learner's mean at :data:`PROBE` must lie within this many standard errors of the package's (the two
samples' errors combined, from the package's spread of one trial's capacity): a correct measurement leaves it
with probability below 1e-6; counting the failing write too moves it by about 15 standard errors."""


def judge_probe(measured: Any) -> Verdict:
    """Judge the learner's ``measure_capacity(**PROBE)``: within :data:`PROBE_Z` standard errors of the package."""
    got = finite_number(measured, "measure_capacity(16, trials=400, theta=0.9)")
    mean, sd = capacity_sample(PROBE["d_k"], PROBE["theta"], 4000, 2024)
    se = sd * (1 / PROBE["trials"] + 1 / 4000) ** 0.5
    z = (got - mean) / se
    if abs(z) <= PROBE_Z:
        return Verdict(True, "")
    if abs(got - 1 - mean) <= PROBE_Z * se:
        hint = _("about one write too many: does the count stop at the last write that passed (not counting the "
                 "write that failed)?")
    elif abs(got + 1 - mean) <= PROBE_Z * se:
        hint = _("about one write too few: is the write that passed last counted too?")
    else:
        hint = _("a measurement follows its setting: does your function store and read back pairs at the d_k, θ "
                 "and number of trials it is given, and hold the worst stored item to θ after every write?")
    if z > 0:
        message = _("at another setting (d_k = 16, θ = 0.9, 400 trials) your measure_capacity gives a capacity "
                    "above what criterion (a) gives there, by {z:.0f} standard errors: does it measure at the "
                    "setting it is given?")
    else:
        message = _("at another setting (d_k = 16, θ = 0.9, 400 trials) your measure_capacity gives a capacity "
                    "below what criterion (a) gives there, by {z:.0f} standard errors: does it measure at the "
                    "setting it is given?")
    return Verdict(False, message.format(z=abs(z)),
                   _("yours {got:.2f}, the package's {mean:.2f} ± {se:.2f}").format(got=got, mean=mean, se=se), hint)


def judge_capacity_slope(d_ks: Sequence[Any], capacities: Sequence[Any]) -> Verdict:
    """Judge a designed measurement of the capacity under criterion (a).

    Accepted when (i) there are ≥ 4 key dimensions spanning a factor ≥ 8, each between 4 and 512; (ii) each
    measured capacity is within ×/÷ 1.3 of the package's 200-trial mean at that d_k (a 100-trial mean has a
    relative standard error of about 3–7 % over this range, so 1.3 is more than 4 standard errors, while
    judging the *average* item instead of the worst roughly doubles the capacity and the sufficient bound
    Σ|k_i·k_j| < 1 halves it at d_k = 64); (iii) the fitted log–log slope lies in [0.8, 1.25] (the package
    finds 1.03 ± 0.01 over d_k = 16…256; a √d_k law would give 0.5).
    """
    if isinstance(d_ks, (str, bytes)) or not isinstance(d_ks, Sequence):
        # Translators: {given} is the name of a Python type (str, int, dict, ...).
        return Verdict(False, _("d_ks should be a list of key dimensions, got {given}").format(
            given=type(d_ks).__name__))
    if isinstance(capacities, torch.Tensor):
        capacities = capacities.flatten().tolist()
    if isinstance(capacities, (str, bytes)) or not isinstance(capacities, Sequence) or len(capacities) != len(d_ks):
        return Verdict(False, _("capacities should be a list with one measured capacity per key dimension in d_ks"))
    # Translators: what is not a number, said in the sentence "… should be one number, got …".
    dims = [int(finite_number(d, _("a key dimension"))) for d in d_ks]
    # Translators: what is not a number, said in the sentence "… should be one number, got …".
    caps = [finite_number(c, _("a measured capacity")) for c in capacities]
    if len(set(dims)) < 4 or max(dims) < 8 * min(dims):
        return Verdict(False, _("a slope needs at least four different key dimensions spanning a factor of 8 or "
                                "more (e.g. 8 … 64), so that a straight line on log–log axes is well defined"))
    if min(dims) < 4 or max(dims) > 512:
        return Verdict(False, _("keep the key dimensions between 4 and 512 (the checker compares with the package "
                                "there)"))
    if min(caps) <= 0:
        return Verdict(False, _("a capacity of 0 or less means the very first write already failed: is the memory "
                                "read after the pair is written, and is the count the number of writes before the "
                                "first failure?"))
    ratios = [c / reference_capacity(d) for d, c in zip(dims, caps, strict=True)]
    slope = fit_slope(dims, caps)
    # Translators: {yours} and {package} are Python lists of capacities, one per key dimension.
    numbers = _("your capacities {yours}, the package's {package}; your slope {slope:.2f}").format(
        yours=[round(c, 1) for c in caps], package=[round(reference_capacity(d), 1) for d in dims], slope=slope)
    if max(ratios) > 1.3:
        average_case = all(c == predicted_capacity_reference(d, 0.8) for d, c in zip(dims, caps, strict=True))
        hint = (_("these are the average-case formula's numbers (Exercise 2), not a measurement of the worst item: "
                  "store, read back every item after each write, and count until the worst one fails.")
                if average_case else
                _("judging the average item instead of the worst roughly doubles the count; so does not stopping "
                  "at the first failure."))
        return Verdict(False, _("your capacities are well above what criterion (a) gives: is every stored item "
                                "held to the threshold, or only a typical one?"), numbers, hint)
    if min(ratios) < 1 / 1.3:
        return Verdict(False, _("your capacities are well below what criterion (a) gives: are you reading the "
                                "memory's actual read-outs?"), numbers,
                       _("a bound on the crosstalk (such as Σ|k_i·k_j| < 1) fails long before the read-outs do; "
                         "and are the keys and values unit vectors of dimension d_k?"))
    if not 0.8 <= slope <= 1.25:
        return Verdict(False, _("the capacities match point by point but the fitted slope does not: check the fit"),
                       numbers, _("fit_slope(my_d_ks, my_capacities) fits log capacity against log d_k."))
    return Verdict(True, _("slope {slope:.2f}: under criterion (a) the capacity grows about linearly in d_k, not "
                           "like √d_k (capacities within ×/÷ 1.3 of the package's at every d_k).").format(slope=slope))


@BOOK.exercise(4, N_("measure the capacity slope under criterion (a)"), kind="design", hints=[
        N_("Criterion (a) holds the *worst* stored item to the threshold, not the average one. For one key "
           "dimension: store pairs one by one, after each write read every stored item back, and count how many "
           "writes pass before the first failure. Average that count over many trials, repeat for key dimensions "
           "that span a factor of 8 or more, and fit a straight line on log–log axes."),
        N_("Draw keys and values on the unit sphere (random_keys, random_values with kind='sphere', "
           "d_v = d_k) for all trials at once, shape (trials, N, d_k). For n = 1, 2, …: the Hebbian memory of "
           "the first n pairs is a sum of outer products (one batched matrix product); read it with the first n "
           "keys; take the smallest cosine over items. Keep a boolean 'still alive' per trial and add it to the "
           "count; stop once no trial is alive. Then fit_slope(my_d_ks, my_capacities)."),
        N_("S = values[:, :n].mT @ keys[:, :n]; reads = keys[:, :n] @ S.mT; worst = "
           "torch.cosine_similarity(reads, values[:, :n], dim=-1).amin(-1); alive &= worst >= theta; "
           "capacity += alive"),
    ])
def check_capacity_slope(d_ks: Sequence[Any], capacities: Sequence[Any],
                         measure_capacity: Callable[..., float] | None = None, *, turn: Turn) -> bool:
    """Judge the learner's designed measurement of Exercise 4: their capacities at their key dimensions
    (:func:`judge_capacity_slope`), then, when ``measure_capacity`` is given, the same function run at
    :data:`PROBE` (:func:`judge_probe`), so that a count off by one or a formula in place of a measurement
    shows. The stub leaves the values as ``...``: "not yet implemented"."""
    def get() -> tuple[Any, ...]:
        pending(d_ks, capacities)
        probe = None
        if measure_capacity is not None:
            if not callable(measure_capacity):
                # Translators: {given} is the name of a Python type (str, int, dict, ...).
                raise Unreadable(_("measure_capacity should be your function, got {given}").format(
                    given=type(measure_capacity).__name__))
            probe = measure_capacity(PROBE["d_k"], trials=PROBE["trials"], theta=PROBE["theta"])
        return d_ks, capacities, probe

    def judge(result: tuple[Any, ...]) -> Verdict:
        d, c, probe = result
        out = judge_capacity_slope(d, c)
        if out.ok and probe is not None:
            checked = judge_probe(probe)
            if not checked.ok:
                return checked
        return out
    return check_measurement(get, judge, answer=(d_ks, capacities, measure_capacity),
                             hint=_("criterion (a) is about the worst stored item after each write, measured on "
                                    "the read-outs, counted until the first failure, averaged over many trials."),
                             turn=turn)


__all__ = [
    "BOOK",
    "capacity_sample",
    "check_capacity_estimate",
    "check_capacity_slope",
    "check_fidelity_theory",
    "check_predicted_capacity",
    "judge_capacity_slope",
    "judge_probe",
    "reference_capacity",
    "session",
]
