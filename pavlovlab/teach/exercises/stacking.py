"""Exercises of ``05_depth_and_width`` (stacked conditioning circuits), registered in :data:`BOOK`.

1. implement ``predicted_error(L, H, p)``: the paper's picture of a stack, exactly;
2. implement ``which_wins()``: predict which of two architectures makes fewer errors;
3. design the measurement ``depth_curve()``: simulate a 3-layer chain of Hebbian memories with clean-up
   and measure its error against the depth L.

Each ``check_*`` prints one friendly verdict and never raises. ``ex.hint(n)`` gives the next hint tier,
``ex.solution(n)`` the reference solution.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ...stacking import hop_error_theory, stack_error_theory
from ...statistics import fit_slope
from ._core import Case, Exercise, Exercises, check_function, check_measurement, check_value, finite_number, verdict

BOOK = Exercises("05_depth_and_width")
hint, solution = BOOK.hint, BOOK.solution

# --------------------------------------------------------------------------- Exercise 1: predicted error


def predicted_error_reference(L: int, H: int, p: float) -> float:
    """End-to-end error of L hops when a hop fails only if all H heads fail, each with probability p:
    ``1 − (1 − p^H)^L`` (≈ ``L·p^H`` when small)."""
    return 1.0 - (1.0 - p ** H) ** L


def check_predicted_error(fn: Callable[[int, int, float], float], *, seed: int = 0) -> bool:
    """Check ``fn(L, H, p) -> 1 − (1 − p^H)^L`` on random depths, widths and per-head errors."""
    g = torch.Generator().manual_seed(seed)
    Ls = torch.randint(1, 13, (6,), generator=g).tolist()
    Hs = torch.randint(1, 5, (6,), generator=g).tolist()
    ps = (0.05 + 0.6 * torch.rand(6, generator=g, dtype=torch.float64)).tolist()
    cases: list[Case] = [((L, H, p), {}) for L, H, p in zip([1, *Ls], [1, *Hs], [0.3, *ps], strict=True)]
    special = ["one hop, one head: the answer is p itself"] + [""] * 6
    return check_function(fn, predicted_error_reference, cases, name="Exercise 1 (predicted error of a stack)",
                          hint="what is the probability that ONE hop goes wrong when it needs every head to be "
                               "wrong? And a chain is right only when every hop is right: is your answer exact, or "
                               "only its small-error approximation (try L = 12, p = 0.6)?",
                          rtol=1e-6, atol=1e-9, number=1, book=BOOK, case_hints=special)


BOOK.add(Exercise(
    number=1, title="predicted error of a stack", kind="implement",
    hints=["Two events: a hop fails when all of its H heads fail (independent heads multiply), and the chain "
           "fails when at least one of its L hops fails. Which is easier to write: the chance that the chain "
           "fails, or the chance that it survives?",
           "Compute hop_fails from p and H first; the chain survives when each of the L hops survives, "
           "and the survival chances multiply.",
           "hop_fails = p ** H; then return one minus the survival chance (1 - hop_fails) raised to the power L."],
    solution='''
def predicted_error(L, H, p):
    hop_fails = p ** H                    # every one of the H heads is wrong
    return 1 - (1 - hop_fails) ** L       # at least one of the L hops fails
''',
    check="ex.check_predicted_error(predicted_error);",
    wrong='''
def predicted_error(L, H, p):
    return L * p ** H
'''))

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
    return min(errs, key=errs.get)


def check_which_wins(fn: Callable[[], str] | str) -> bool:
    """Check the learner's ``fn() -> "A" or "B"``: the architecture with fewer end-to-end errors.

    The first ❌ asks a question; the predicted errors are printed only with the ✅ or from the second
    attempt on."""
    name = "Exercise 2 (which architecture wins)"
    try:
        answer = fn() if callable(fn) else fn
    except NotImplementedError:
        return check_value(fn, winner(), name=name, number=2, book=BOOK)   # the "not yet implemented" message
    except Exception as e:  # the learner's code: report it, never a traceback
        BOOK.attempt(2)
        return verdict(False, name, f"computing your answer raised {type(e).__name__}: {e}", number=2)
    attempt = BOOK.attempt(2)
    answer = str(answer).strip().upper()
    if answer not in ARCHITECTURES:
        return verdict(False, name, f'expected "A" or "B", got {answer!r}', number=2)
    errs = predicted_errors()
    p = {k: hop_error_theory(N_PAIRS, a["d_k"], H=a["H"]) for k, a in ARCHITECTURES.items()}
    numbers = (f"predicted end-to-end errors {', '.join(f'{k}: {v:.3f}' for k, v in errs.items())} "
               f"(per hop A: {p['A']:.3f}, B: {p['B']:.3f}).")
    if answer == winner():
        return verdict(True, name, numbers)
    return verdict(False, name, f"{answer} makes more errors." + (f" {numbers}" if attempt > 1 else ""),
                   "what is the load n/d_k of each architecture's heads, and how steeply does one hop's error "
                   "fall with the load? Three hops through a lightly loaded memory can beat one hop through "
                   "an overloaded one.", number=2)


BOOK.add(Exercise(
    number=2, title="which architecture wins", kind="implement",
    hints=["Compare the architectures at the level of one hop first: which one's heads are more heavily "
           "loaded (n / d_k), and is a second head worth more than a halved load?",
           "The package predicts one architecture's end-to-end error from (L, H, n, d_k); call it once for A "
           "and once for B and compare.",
           "err_A = st.stack_error_theory(1, 2, 24, 16); err_B = st.stack_error_theory(3, 1, 24, 32); return the "
           "letter of the smaller."],
    solution='''
def which_wins():
    err_A = st.stack_error_theory(1, 2, 24, 16)
    err_B = st.stack_error_theory(3, 1, 24, 32)
    return "A" if err_A < err_B else "B"
''',
    check="ex.check_which_wins(which_wins);",
    wrong='''
def which_wins():
    return "A"   # wide and shallow always wins?
''',
    setup="from pavlovlab import stacking as st"))

# ------------------------------------------------------------- Exercise 3: design the depth measurement
DEPTH_N, DEPTH_D, DEPTH_L, MIN_CHAINS = 16, 16, 3, 3000
"""Exercise 3's setting: n = 16 associations per layer in d = 16 dimensions (load 1, one hop fails about
one time in ten), depths 1..3, at least 3000 chains."""


def depth_theory() -> np.ndarray:
    """The predicted error after 1..3 cleaned-up hops at Exercise 3's setting: ``1 − (1 − p)^L``."""
    return np.asarray(stack_error_theory(np.arange(1, DEPTH_L + 1), 1, DEPTH_N, DEPTH_D))


def judge_depth_curve(result: Any) -> tuple[bool, str]:
    """Judge a measured ``[error after 1 hop, after 2, after 3]`` of at least :data:`MIN_CHAINS` chains.

    Passes when the first error is within 4 binomial standard errors of the theory p (about ± 0.022 at
    3000 chains) and the log–log slope of error against L is within ± 0.25 of the theory's slope
    (≈ 0.9; its standard error at 3000 chains is about 0.07). A curve that does not grow (each layer
    queried with the true item) has slope ≈ 0 and fails; so does one whose error restarts at every
    layer or accumulates twice.
    """
    errs = [finite_number(e, "each error rate") for e in list(result)]
    if len(errs) != DEPTH_L:
        return False, f"expected {DEPTH_L} error rates (after 1, 2 and 3 layers), got {len(errs)}"
    if not all(0.0 <= e <= 1.0 for e in errs):
        return False, "error rates must lie between 0 and 1: did you return counts instead of fractions?"
    theory = depth_theory()
    p = float(theory[0])
    band = 4 * math.sqrt(p * (1 - p) / MIN_CHAINS)
    if abs(errs[0] - p) > band:
        return False, (f"after one layer your error is {errs[0]:.3f}: is one hop of your memory built and read "
                       "as in section 1 (unit keys and values, clean-up by the nearest stored value)?")
    if min(errs) <= 0:
        return False, "a zero error rate cannot be fitted on log axes: use more chains"
    depths = np.arange(1, DEPTH_L + 1)
    slope = fit_slope(depths, errs, drop_nonpositive=True)
    slope_th = fit_slope(depths, theory, drop_nonpositive=True)
    if abs(slope - slope_th) > 0.25:
        return False, (f"your error grows with depth like L^{slope:.2f}: does each layer's query come from the "
                       "previous layer's cleaned-up answer, and is the error counted against where the chain "
                       "should be after all the hops so far?")
    return True, (f"errors {', '.join(f'{e:.3f}' for e in errs)} after 1, 2, 3 layers; log–log slope {slope:.2f} "
                  f"(theory {slope_th:.2f} ± 0.25): about linear in depth while the errors are small.")


def check_depth_curve(fn: Callable[[], Any] | Any) -> bool:
    """Run the learner's ``depth_curve()`` (default arguments) and judge its result with :func:`judge_depth_curve`."""
    return check_measurement(fn, judge_depth_curve, name="Exercise 3 (error against depth, measured)",
                             hint="a chain is a relay: layer 2 is asked about the item layer 1 answered, right or "
                                  "wrong, and the truth moves on by one hop at every layer.", number=3, book=BOOK)


BOOK.add(Exercise(
    number=3, title="error against depth, measured", kind="design",
    hints=["Simulate many chains at once: in each of many independent stacks, start one chain from every item. "
           "At every layer build a fresh memory of n random associations, read it with the key of the item the "
           "chain is at, clean up, and compare with where the chain should be. Record the error after each layer.",
           "Keep two (trials, n) tensors: the item each chain decoded so far, and the true item. One layer: draw "
           "unit keys and values (random_keys(..., kind='sphere'), imported in the first cell) and a permutation, "
           "build S as a batched matrix product, read, take the argmax of the scores against every stored value, "
           "move the truth with the permutation.",
           "S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys; read r = key_of_item @ S.mT; the "
           "decoded item is (r @ vals.mT).argmax(-1); the truth becomes perm.gather(1, truth). Use trials = 200 "
           "(3200 chains)."],
    solution='''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    item = torch.arange(n).repeat(trials, 1)                  # where each chain is (decoded)
    truth, errors = item.clone(), []
    for _ in range(L):
        keys = random_keys(trials, n, d=d, kind="sphere", generator=g)
        vals = random_keys(trials, n, d=d, kind="sphere", generator=g)
        perm = torch.rand(trials, n, generator=g).argsort(-1)  # association i -> perm[i]
        S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys
        r = keys.gather(1, item[..., None].expand(-1, -1, d)) @ S.mT
        item = (r @ vals.mT).argmax(-1)                        # clean up: nearest stored value
        truth = perm.gather(1, truth)
        errors.append((item != truth).float().mean().item())
    return errors
''',
    check="ex.check_depth_curve(depth_curve);",
    wrong='''
def depth_curve(n=16, d=16, L=3, trials=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    errors = []
    for _ in range(L):                                         # every layer asked with the TRUE item
        keys = random_keys(trials, n, d=d, kind="sphere", generator=g)
        vals = random_keys(trials, n, d=d, kind="sphere", generator=g)
        perm = torch.rand(trials, n, generator=g).argsort(-1)
        S = vals.gather(1, perm[..., None].expand(-1, -1, d)).mT @ keys
        item = ((keys @ S.mT) @ vals.mT).argmax(-1)
        errors.append((item != perm).float().mean().item())
    return errors
''',
    setup="from pavlovlab.sampling import random_keys"))

__all__ = ["ARCHITECTURES", "BOOK", "DEPTH_D", "DEPTH_L", "DEPTH_N", "MIN_CHAINS", "N_PAIRS", "check_depth_curve",
           "check_predicted_error", "check_which_wins", "depth_theory", "hint", "judge_depth_curve",
           "predicted_error_reference", "predicted_errors", "solution", "winner"]
