"""Checkers for the exercises of ``05_depth_and_width`` (stacked conditioning circuits).

Each ``check_*`` takes the learner's function, compares it with the package on several cases and
prints one friendly verdict; they never raise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from pavlovlab.stacking import hop_error_theory, stack_error_theory
from ._core import Case, check_function, check_value, verdict

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
    cases: list[Case] = [((L, H, p), {}) for L, H, p in zip([1] + Ls, [1] + Hs, [0.3] + ps)]
    return check_function(fn, predicted_error_reference, cases, name="Exercise 1 (predicted error of a stack)",
                          hint="a hop fails only if all H heads fail: p**H. The chain is right only if all "
                               "L hops are right: (1 - p**H)**L. The error is one minus that. (L * p**H is "
                               "only its small-error approximation.)", rtol=1e-6, atol=1e-9)


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


def check_which_wins(fn: Callable[[], str]) -> bool:
    """Check the learner's ``fn() -> "A" or "B"``: the architecture with fewer end-to-end errors."""
    name = "Exercise 2 (which architecture wins)"
    try:
        answer = fn() if callable(fn) else fn
    except NotImplementedError:
        return check_value(fn, winner(), name=name)   # prints the kind "not yet implemented" message
    except Exception as e:  # the learner's code: report it, never a traceback
        return verdict(False, name, f"computing your answer raised {type(e).__name__}: {e}")
    answer = str(answer).strip().upper()
    if answer not in ARCHITECTURES:
        return verdict(False, name, f'expected "A" or "B", got {answer!r}')
    errs = predicted_errors()
    detail = ", ".join(f"{k}: {v:.3f}" for k, v in errs.items())
    p = {k: hop_error_theory(N_PAIRS, a["d_k"], H=a["H"]) for k, a in ARCHITECTURES.items()}
    return verdict(answer == winner(), name,
                   f"predicted end-to-end errors {detail} (per hop A: {p['A']:.3f}, B: {p['B']:.3f}).",
                   "compare L times the per-hop error of each: wider heads (larger d_k) shrink the crosstalk "
                   "variance (n-1)/d_k, which can outweigh extra depth.")


__all__ = ["ARCHITECTURES", "N_PAIRS", "check_predicted_error", "check_which_wins", "predicted_error_reference",
           "predicted_errors", "winner"]
