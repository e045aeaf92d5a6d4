"""Exercises of ``05_depth_and_width`` (stacked conditioning circuits), declared in :data:`BOOK`;
in the notebook ``from pavlovlab.teach.exercises import depth_and_width as ex`` (then ``ex.start()``).

1. implement ``predicted_error(L, H, p)``: the paper's picture of a stack, exactly;
2. implement ``predict_errors()``: the predicted end-to-end errors of two architectures (which one wins);
3. design the measurement ``depth_curve(n, d, L, trials, seed)``: simulate a 3-layer chain of Hebbian
   memories with clean-up and measure its error against the depth L.

Each ``check_*`` prints one friendly verdict and never raises. ``ex.hint(n)`` gives the next hint tier,
``ex.solution(n)`` the reference solution.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from pavlovlab.teach.language import N_, _

from ...depth.chain import chain_error
from ...depth.theory import hop_error_theory, stack_error_theory
from ...statistics import fit_slope
from .book import Book
from .checking import (
    Case,
    Mistake,
    Turn,
    Unreadable,
    Verdict,
    check_function,
    check_measurement,
    finite_number,
)

BOOK = Book("05_depth_and_width", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)

# --------------------------------------------------------------------------- Exercise 1: predicted error


def predicted_error_reference(L: int, H: int, p: float) -> float:
    """End-to-end error of L hops when a hop fails only if all H heads fail, each with probability p:
    ``1 − (1 − p^H)^L`` (≈ ``L·p^H`` when small)."""
    return 1.0 - (1.0 - p ** H) ** L


PREDICTION_MISTAKES: list[Mistake] = [
    (lambda L, H, p: L * p ** H,
     N_("your answer is the small-error approximation: at L = 12, p = 0.6 it is above 1, which no probability can "
        "be. Which chance is easier to write exactly: that the chain fails, or that it gets through every hop?")),
    (lambda L, H, p: (1 - p ** H) ** L,
     N_("your answer is the chance that the chain gets through every hop: the task asks for its error.")),
    (lambda L, H, p: 1 - (1 - p ** L) ** H,
     N_("L and H have swapped roles in your answer: which must ALL fail for a hop to fail, the heads or the "
        "hops?")),
    (lambda L, H, p: p ** H,
     N_("your answer is the error of one hop: how many hops does the chain make, and how many of them must go "
        "right?")),
    (lambda L, H, p: 1 - (1 - p) ** L,
     N_("your answer does not change with H: a hop fails only when every one of its H heads fails.")),
]
"""Exercise 1's recognised mistakes: each learner's result is compared with these, and the first that it equals
on the failing case gives the hint (else the generic hint)."""


@BOOK.exercise(1, N_("predicted error of a stack"), kind="implement", hints=[
    N_("Two events: a hop fails when all of its H heads fail (independent heads multiply), and the chain "
       "fails when at least one of its L hops fails. Which is easier to write: the chance that the chain "
       "fails, or the chance that it survives?"),
    N_("Compute hop_fails from p and H first; the chain survives when each of the L hops survives, "
       "and the survival chances multiply."),
    N_("hop_fails = p ** H; then return one minus the survival chance (1 - hop_fails) raised to the power L.")])
def check_predicted_error(fn: Callable[[int, int, float], float], *, turn: Turn, seed: int = 0) -> bool:
    """Check ``fn(L, H, p) -> 1 − (1 − p^H)^L`` on random depths, widths and per-head errors; a result that
    equals one of :data:`PREDICTION_MISTAKES` gets that mistake's hint."""
    g = torch.Generator().manual_seed(seed)
    Ls = torch.randint(1, 13, (6,), generator=g).tolist()
    Hs = torch.randint(1, 5, (6,), generator=g).tolist()
    ps = (0.05 + 0.6 * torch.rand(6, generator=g, dtype=torch.float64)).tolist()
    cases: list[Case] = [((L, H, p), {}) for L, H, p in zip([1, *Ls], [1, *Hs], [0.3, *ps], strict=True)]
    special = [_("one hop, one head: the chain fails exactly when its one head fails")] + [""] * 6
    return check_function(fn, predicted_error_reference, cases,
                          hint=_("is your answer the chance that at least one hop fails, where a hop fails only "
                                 "when every one of its heads fails?"),
                          rtol=1e-6, atol=1e-9, turn=turn, case_hints=special,
                          mistakes=[(mistake, _(said)) for mistake, said in PREDICTION_MISTAKES])


# --------------------------------------------------------------------------- Exercise 2: which one wins

ARCHITECTURES = {"A": dict(L=1, H=2, d_k=16), "B": dict(L=3, H=1, d_k=32)}
"""Exercise 2's contest, both storing ``N_PAIRS`` associations per head: A is wide and shallow with
small heads, B is deep and narrow with heads twice as wide."""
N_PAIRS = 24


def predicted_errors() -> dict[str, float]:
    """The theory's end-to-end error of each architecture of Exercise 2 (averaged heads)."""
    return {name: float(stack_error_theory(a["L"], a["H"], N_PAIRS, a["d_k"])) for name, a in ARCHITECTURES.items()}


def winner() -> str:
    """The architecture with the lower predicted error ("A" or "B")."""
    errs = predicted_errors()
    return min(errs, key=errs.__getitem__)


PREDICTION_FACTOR = 2.0
"""How close Exercise 2's predictions must be: each error within this factor of the theory's (either way), so that
a reasoned estimate, Exercise 1's picture of independent heads or a simulation passes, while an estimate that
forgets a hop or a head (a factor of 3 or more off) does not."""


def _within(x: float, target: float, factor: float = PREDICTION_FACTOR) -> bool:
    return target / factor <= x <= target * factor


def judge_predicted_errors(result: Any) -> Verdict:
    """Judge Exercise 2's ``(err_A, err_B)``: two probabilities, the lower one the theory's winner, each within
    :data:`PREDICTION_FACTOR` of :func:`predicted_errors`. The ❌ says which architecture is off and, where it
    can tell, why (one hop of B only, one head of A only, A and B swapped), then whether they rank A and B as
    the theory does; the expected numbers go in ``detail``."""
    if isinstance(result, (str, bytes)) or not hasattr(result, "__len__") or len(result) != 2:
        raise Unreadable(_("predict_errors() should return two numbers, (err_A, err_B): the predicted end-to-end "
                           "error of A, then of B"))
    got = {"A": finite_number(result[0], "err_A"), "B": finite_number(result[1], "err_B")}
    want = predicted_errors()
    detail = _("the theory predicts A {err_A:.3g}, B {err_B:.3g}; each must be within a factor of "
               "{factor:g}").format(err_A=want["A"], err_B=want["B"], factor=PREDICTION_FACTOR)
    if not all(0.0 <= e <= 1.0 for e in got.values()):
        return Verdict(False, _("an end-to-end error is a probability, between 0 and 1: is each of your two "
                                "numbers the chance that a chain ends on the wrong item?"), detail,
                       hint=_("write each error as a fraction of the chains (0.05, not 5 %).")
                       if max(got.values()) > 1 else "")
    if all(_within(got[k], want[other]) for k, other in (("A", "B"), ("B", "A"))):
        return Verdict(False, _("each of your numbers fits the other architecture: which one does "
                                "predict_errors() return first?"), detail,
                       hint=_("return them as (err_A, err_B): A first."))
    for name in ("A", "B"):
        if _within(got[name], want[name]):
            continue
        a = ARCHITECTURES[name]
        one_hop = float(stack_error_theory(1, a["H"], N_PAIRS, a["d_k"]))
        one_head = float(stack_error_theory(a["L"], 1, N_PAIRS, a["d_k"]))
        if a["L"] > 1 and _within(got[name], one_hop, 1.3):
            # Translators: {name} is an architecture's letter, A or B.
            hint = _("{name}'s chain makes {hops} hops, and it ends right only if every one of them is "
                     "right.").format(name=name, hops=a["L"])
        elif a["H"] > 1 and _within(got[name], one_head, 1.3):
            hint = _("{name}'s layer has {heads} heads whose scores are averaged before the clean-up: did your "
                     "estimate use both?").format(name=name, heads=a["H"])
        else:
            hint = _("for {name}: how many layers L, heads H, pairs per head n and head dimension d_k? Does your "
                     "call pass them in the order (L, H, n, d_k)?").format(name=name)
        message = (_("your error for {name} is too large by more than a factor of {factor:g}: what is the chance "
                     "that one hop of {name} fails, and how many hops does it make?") if got[name] > want[name] else
                   _("your error for {name} is too small by more than a factor of {factor:g}: what is the chance "
                     "that one hop of {name} fails, and how many hops does it make?"))
        return Verdict(False, message.format(name=name, factor=PREDICTION_FACTOR), detail, hint=hint)
    if min(got, key=got.__getitem__) != winner() or got["A"] == got["B"]:
        return Verdict(False, _("both of your numbers are in the right range, but they do not rank the two "
                                "architectures as the theory does: which of the two makes fewer errors, and by how "
                                "much?"), detail)
    p = {k: float(hop_error_theory(N_PAIRS, a["d_k"], H=a["H"])) for k, a in ARCHITECTURES.items()}
    # Translators: {winner} is an architecture's letter, A or B; keep the line break and the three spaces after it.
    return Verdict(True, _("each within a factor of {factor:g} of the theory's (A {err_A:.3f}, B {err_B:.3f}), and "
                           "the right winner.\n   {winner} makes fewer errors: one hop of A fails with probability "
                           "{hop_A:.3f}, of B {hop_B:.3f}; three lightly loaded hops beat one overloaded "
                           "one.").format(factor=PREDICTION_FACTOR, err_A=want["A"], err_B=want["B"], winner=winner(),
                                          hop_A=p["A"], hop_B=p["B"]))


@BOOK.exercise(2, N_("predict the errors of two architectures"), kind="implement", hints=[
    N_("Compare the architectures at the level of one hop first: which one's heads are more heavily loaded "
       "(n / d_k), and is a second head worth more than a halved load? Then a chain of L hops multiplies the "
       "chances of getting through."),
    N_("The package predicts one architecture's end-to-end error from (L, H, n, d_k): call it once with A's "
       "numbers and once with B's, each in the order the function asks for them. (Section 2's table gives one hop "
       "of one head at n = 24 too.)"),
    N_("err_A = theory.stack_error_theory(1, 2, 24, 16); "
       "err_B = theory.stack_error_theory(3, 1, 24, 32); "
       "return err_A, err_B."),
])
def check_predicted_errors(fn: Callable[[], Any] | Any, *, turn: Turn) -> bool:
    """Check the learner's ``fn() -> (err_A, err_B)``, the predicted end-to-end errors of the two architectures
    of :data:`ARCHITECTURES`, with :func:`judge_predicted_errors`: each within a factor of
    :data:`PREDICTION_FACTOR` of the theory, and the right winner. The ✅ says which one wins and why (one message,
    printed at once)."""
    return check_measurement(fn, judge_predicted_errors, turn=turn, expects=_("two numbers, (err_A, err_B)"),
                             hint=_("for each architecture: what is the chance that one hop fails, and how many "
                                    "hops does a chain make?"))


# ------------------------------------------------------------- Exercise 3: design the depth measurement
DEPTH_N, DEPTH_D, DEPTH_L, MIN_CHAINS = 16, 16, 3, 3000
"""Exercise 3's setting: n = 16 associations per layer in d = 16 dimensions (load 1, one hop fails about
one time in ten), depths 1..3, at least 3000 chains."""


def depth_theory() -> np.ndarray:
    """The predicted error after 1..3 cleaned-up hops at Exercise 3's setting: ``1 − (1 − p)^L``."""
    return stack_error_theory(np.arange(1, DEPTH_L + 1), 1, DEPTH_N, DEPTH_D).numpy()


def _depth_band(p: float, chains: int) -> float:
    """Half-width of the band for an error rate p measured over ``chains`` chains: 5 binomial standard
    errors, doubled because the chains of one stack share its memories (they are not independent)."""
    return 5 * 2 * math.sqrt(p * (1 - p) / chains)


def _first_layer_hint(error: float, p: float) -> str:
    """What most likely went wrong when the error after one layer is ``error`` instead of the theory's ``p``."""
    if error > 0.5:
        return _("most chains go wrong at the first layer: is the read-out compared with this layer's stored "
                 "values (not its keys), and scored against the partner of the item asked?")
    if error > p:
        return _("are the keys and values unit vectors (kind='sphere'), as in section 1?")
    return _("is every chain scored against where it should be, and does each layer draw a fresh memory of n "
             "random associations in d dimensions?")


def judge_depth_curve(result: Any, chains: int = MIN_CHAINS) -> Verdict:
    """Judge a measured ``[error after 1 hop, after 2, after 3]`` at Exercise 3's setting over ``chains``
    chains.

    Passes when the first error is within :func:`_depth_band` of the theory p and the log–log slope of error
    against L is within ± 0.25 of the theory's slope (≈ 0.9; its standard error at 3000 chains is about
    0.07). A curve that does not grow (each layer queried with the true item) has slope ≈ 0 and fails; so
    does one whose error restarts at every layer or accumulates twice. The ❌ holds the learner's own numbers
    only; the theory's go in ``detail``.
    """
    # Translators: the subject of a sentence said when a number cannot be read ("… should be one number").
    errs = [finite_number(e, _("each error rate")) for e in list(result)]
    if len(errs) != DEPTH_L:
        return Verdict(False, _("expected {expected} error rates (after 1, 2 and 3 layers), got "
                                "{got}").format(expected=DEPTH_L, got=len(errs)),
                       hint=_("append one error rate after each layer, and return the list after the loop."))
    if not all(0.0 <= e <= 1.0 for e in errs):
        return Verdict(False, _("error rates must lie between 0 and 1: did you return counts instead of "
                                "fractions?"),
                       hint=_("divide the number of wrong chains by the number of chains (or take the mean of a "
                              "boolean tensor)."))
    theory = depth_theory()
    p, band = float(theory[0]), _depth_band(float(theory[0]), chains)
    if abs(errs[0] - p) > band:
        message = (_("after one layer your error is {error:.3f}, more than one hop of this memory makes: is one "
                     "hop built and read as in section 1?") if errs[0] > p else
                   _("after one layer your error is {error:.3f}, less than one hop of this memory makes: is one "
                     "hop built and read as in section 1?"))
        return Verdict(False, message.format(error=errs[0]),
                       _("theory {p:.3f} ± {band:.3f} over {chains} chains").format(p=p, band=band, chains=chains),
                       hint=_first_layer_hint(errs[0], p))
    if min(errs) <= 0:
        return Verdict(False, _("a zero error rate cannot be fitted on log axes: use more chains"),
                       hint=_("the check runs depth_curve with its own trials: does your function use the trials "
                              "it is given?"))
    slope, slope_th = (fit_slope(np.arange(1, DEPTH_L + 1), errs, drop_nonpositive=True),
                       fit_slope(np.arange(1, DEPTH_L + 1), theory, drop_nonpositive=True))
    if abs(slope - slope_th) > 0.25:
        flat = slope < slope_th
        message = (_("your error grows with depth like L^{slope:.2f}: does a wrong answer at one layer stay wrong "
                     "at the next?") if flat else
                   _("your error grows with depth like L^{slope:.2f}: is each layer's error counted once?"))
        return Verdict(False, message.format(slope=slope),
                       _("theory's slope {slope:.2f} ± 0.25").format(slope=slope_th),
                       hint=_("a chain is a relay: layer 2 is asked about the item layer 1 answered, right or "
                              "wrong, and the truth moves on by one hop at every layer.") if flat else
                            _("the error after L layers is the share of chains whose current item is wrong after "
                              "that layer: not a running total over the layers."))
    # Translators: {errors} is the three measured error rates, as the code prints them: 0.101, 0.190, 0.270.
    return Verdict(True, _("errors {errors} after 1, 2, 3 layers; log–log slope {slope:.2f} (theory {theory:.2f} "
                           "± 0.25): about linear in depth while the errors are small.").format(
                               errors=", ".join(f"{e:.3f}" for e in errs), slope=slope, theory=slope_th))


DEPTH_RUN = dict(n=DEPTH_N, d=DEPTH_D, L=DEPTH_L, trials=250)
"""How the checker runs the learner's ``depth_curve``: Exercise 3's setting with 4000 chains (whatever the
learner's own default), so that the band is sized from a known sample."""

STRESS_RUN = dict(n=8, d=4, L=DEPTH_L, trials=1000)
"""A second setting, outside what the theory describes well: 8 associations in d = 4 dimensions, where
``1 − (1 − p)^L`` overestimates the measured error by 0.04, 0.08 and 0.10 after 1, 2, 3 hops. A measurement
follows the truth; the closed form returned as a "measurement" does not."""


@functools.lru_cache(maxsize=8)
def stress_truth(seed: int = 7) -> tuple[float, ...]:
    """The package's measured errors at :data:`STRESS_RUN` (over 4000 stacks of 8 chains)."""
    r = chain_error(STRESS_RUN["L"], 1, STRESS_RUN["n"], STRESS_RUN["d"], trials=4000,
                    generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return tuple(float(e) for e in r.error_by_depth)


def judge_stress(result: Any) -> Verdict:
    """Judge the learner's errors at :data:`STRESS_RUN` against the package's measurement there."""
    errs = [finite_number(e, _("each error rate")) for e in list(result)]
    if len(errs) != DEPTH_L:
        return Verdict(False, _("at n = 8, d = 4 your depth_curve returned {got} error rates instead of "
                                "{expected}").format(got=len(errs), expected=DEPTH_L),
                       hint=_("does the number of layers come from the argument L?"))
    truth = stress_truth()
    chains = STRESS_RUN["n"] * STRESS_RUN["trials"]
    for depth, (e, t) in enumerate(zip(errs, truth, strict=True), start=1):
        band = _depth_band(t, chains) + _depth_band(t, 8 * 4000)
        if abs(e - t) > band:
            return Verdict(False, _("at another setting (n = 8 pairs in d = 4 dimensions, where the formula "
                                    "1 − (1 − p)^L is off) your curve after {depth} layer(s) is not what a "
                                    "simulation finds: does depth_curve simulate the chain with the n, d, L, trials "
                                    "and seed it is given, rather than compute the formula?").format(depth=depth),
                           _("yours {error:.3f}, simulated {truth:.3f} ± {band:.3f}").format(error=e, truth=t,
                                                                                             band=band),
                           hint=_("use the arguments n, d, L, trials and seed inside the function, not the values "
                                  "of the task: the check calls it at two settings."))
    return Verdict(True, _("your curve follows the simulation there too."))


@BOOK.exercise(3, N_("error against depth, measured"), kind="design", hints=[
    N_("Simulate many chains at once: in each of many independent stacks, start one chain from every item. "
       "At every layer build a fresh memory of n random associations, read it with the key of the item the "
       "chain is at, clean up, and compare with where the chain should be. Record the error after each layer."),
    N_("Keep two (trials, n) tensors: the item each chain decoded so far, and the true item. One layer: draw "
       "unit keys and values (random_keys(..., kind='sphere'), imported in the first cell) and a permutation, "
       "build S as a batched matrix product, read, take the argmax of the scores against every stored value, "
       "move the truth with the permutation."),
    N_("S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys; read r = key_of_item @ S.mT; the "
       "decoded item is (r @ vals.mT).argmax(-1); the truth becomes perm.gather(1, truth). Use trials = 200 "
       "(3200 chains).")])
def check_depth_curve(fn: Callable[..., Any], *, turn: Turn, seed: int = 0) -> bool:
    """Run the learner's ``depth_curve`` at :data:`DEPTH_RUN` (with ``seed``) and judge it with
    :func:`judge_depth_curve`, then at :data:`STRESS_RUN` (seed + 1) against the package's simulation
    (:func:`judge_stress`)."""
    def run() -> tuple[Any, Any]:
        if not callable(fn):
            raise Unreadable(_("expected your function depth_curve, got {type}").format(type=type(fn).__name__))
        try:
            inspect.signature(fn).bind(**DEPTH_RUN, seed=seed)
        except (TypeError, ValueError):
            raise Unreadable(_("depth_curve should take the arguments n, d, L, trials and seed, as in the stub "
                               "(the check runs it with its own settings)")) from None
        return fn(**DEPTH_RUN, seed=seed), fn(**STRESS_RUN, seed=seed + 1)

    def judge(result: tuple[Any, Any]) -> Verdict:
        main, stress = result
        out = judge_depth_curve(main, chains=DEPTH_RUN["n"] * DEPTH_RUN["trials"])
        if not out.ok:
            return out
        elsewhere = judge_stress(stress)
        return Verdict(True, _("{message} At n = 8 in d = 4 it follows the simulation too.").format(
            message=out.message)) if elsewhere.ok else elsewhere

    return check_measurement(run, judge, answer=fn, turn=turn,
                             expects=_("a list of 3 error rates, after 1, 2 and 3 layers"),
                             hint=_("what does your function return, and is it the share of chains that are wrong "
                                    "after each layer?"))


__all__ = [
    "ARCHITECTURES",
    "BOOK",
    "DEPTH_D",
    "DEPTH_L",
    "DEPTH_N",
    "DEPTH_RUN",
    "MIN_CHAINS",
    "N_PAIRS",
    "PREDICTION_FACTOR",
    "PREDICTION_MISTAKES",
    "STRESS_RUN",
    "check_depth_curve",
    "check_predicted_error",
    "check_predicted_errors",
    "depth_theory",
    "judge_depth_curve",
    "judge_predicted_errors",
    "judge_stress",
    "predicted_error_reference",
    "predicted_errors",
    "session",
    "stress_truth",
    "winner",
]
