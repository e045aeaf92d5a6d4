"""The exercise machinery that every notebook shares: registered exercises, tiered hints, reference
solutions, and checkers that print one friendly verdict and never raise.

Each notebook's module (``pavlovlab.teach.exercises.capacity``, ...) builds one :class:`Exercises` book and
exposes its ``hint`` and ``solution`` methods, so that a learner types ``ex.hint(2)`` or
``ex.solution(2)``. The rules the checkers follow (``COURSE_DESIGN.md`` §6):

- the first ❌ says what is wrong in terms of the idea (which case fails, a question to ask), never
  the expected numbers; those appear only from the second failed attempt on;
- floats are compared with an explicit relative tolerance, widened to the precision of the dtype the
  learner produced (a correct float32 answer passes); NaN or inf is always wrong;
- a stub (``NotImplementedError``) gets ⏳, a crash in the learner's code a ❌ with its message.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

Case = tuple[Sequence[Any], Mapping[str, Any]]


# ------------------------------------------------------------------------------------------- the book
@dataclass
class Exercise:
    """One exercise of a notebook.

    number: its number in the notebook; title: a few words; kind: ``"implement"`` or ``"design"``
    (design the measurement); hints: tiers, from the idea (tier 1) to nearly the code (last tier);
    solution: the reference code, exactly as in the notebook's solution cell; check: the check cell's
    code; wrong: a typical mistake (code that defines the same names), fed to the checker by the tests;
    setup: code the check needs from earlier cells of the notebook (run by the tests before the answer).
    """

    number: int
    title: str
    kind: str
    hints: Sequence[str]
    solution: str
    check: str
    wrong: str
    setup: str = ""
    attempts: int = field(default=0, repr=False)
    hints_shown: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in ("implement", "design"):
            raise ValueError(f"kind: expected 'implement' or 'design', got {self.kind!r}")
        if not self.hints:
            raise ValueError(f"hints: exercise {self.number} needs at least one hint tier")
        self.solution = textwrap.dedent(self.solution).strip("\n")
        self.check = textwrap.dedent(self.check).strip("\n")
        self.wrong = textwrap.dedent(self.wrong).strip("\n")
        self.setup = textwrap.dedent(self.setup).strip("\n")


class Exercises:
    """The exercises of one notebook, with tiered hints and reference solutions.

    >>> book = Exercises("04_capacity_limits")
    >>> book.add(Exercise(1, "the theory curve", "implement", ["..."], "...", "...", "..."))  # doctest: +SKIP
    """

    def __init__(self, notebook: str) -> None:
        self.notebook = notebook
        self._items: dict[int, Exercise] = {}

    def add(self, exercise: Exercise) -> Exercise:
        if exercise.number in self._items:
            raise ValueError(f"exercise {exercise.number} of {self.notebook} is registered twice")
        self._items[exercise.number] = exercise
        return exercise

    def __iter__(self):
        return iter(sorted(self._items.values(), key=lambda e: e.number))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, number: object) -> Exercise:
        if isinstance(number, bool) or not isinstance(number, int) or number not in self._items:
            raise ValueError(f"number: expected one of the exercises {sorted(self._items)} of "
                             f"{self.notebook}, got {number!r}")
        return self._items[number]

    def hint(self, number: int, tier: int | None = None) -> None:
        """Print the next hint tier of exercise ``number`` (or tier ``tier``, counting from 1)."""
        try:
            e = self.get(number)
        except ValueError as err:
            print(f"💡 {err}")
            return
        if tier is None:
            tier = min(e.hints_shown + 1, len(e.hints))
        if isinstance(tier, bool) or not isinstance(tier, int) or not 1 <= tier <= len(e.hints):
            print(f"💡 Exercise {number} has hint tiers 1 to {len(e.hints)}; got tier={tier!r}.")
            return
        e.hints_shown = max(e.hints_shown, tier)
        more = (f"  (ex.hint({number}) again for tier {tier + 1} of {len(e.hints)})" if tier < len(e.hints)
                else f"  (that was the last tier; ex.solution({number}) shows the reference solution)")
        print(f"💡 Exercise {number}, hint {tier} of {len(e.hints)}: {e.hints[tier - 1]}\n{more}")

    def solution(self, number: int) -> None:
        """Print the reference solution of exercise ``number``: read it, then write your own."""
        try:
            e = self.get(number)
        except ValueError as err:
            print(f"📖 {err}")
            return
        print(f"📖 Exercise {number} ({e.title}), the reference solution:\n")
        print(textwrap.indent(e.solution, "    "))

    def attempt(self, number: int) -> int:
        """Count one checked attempt of exercise ``number``; return how many there were (1 = first)."""
        e = self._items.get(number)
        if e is None:
            return 1
        e.attempts += 1
        return e.attempts


# ----------------------------------------------------------------------------------------- verdicts
def verdict(ok: bool, name: str, message: str, hint: str = "", *, number: int | None = None) -> bool:
    """Print one friendly verdict and return ``ok``.

    On failure the ``hint`` (a question about the idea, never the answer) follows, and, when the
    exercise ``number`` is given, where the tiered hints and the solution are.
    """
    if ok:
        print(f"✅ {name}: correct! {message}".rstrip())
    else:
        print(f"❌ {name}: not yet. {message}".rstrip())
        if hint:
            print(f"   Hint: {hint}")
        if number is not None:
            print(f"   Stuck? ex.hint({number}) gives a hint (run it again for the next one); "
                  f"ex.solution({number}) shows the reference solution.")
    return ok


def _not_implemented(name: str) -> bool:
    print(f"⏳ {name}: not yet implemented. Replace the `raise NotImplementedError(...)` line in the "
          "exercise cell with your code, run that cell, then run this one again.")
    return False


# -------------------------------------------------------------------------------------- comparisons
def dtype_rtol(rtol: float, *dtypes: torch.dtype) -> float:
    """``rtol`` widened to the coarsest floating dtype involved (100 ulps), so that a correct answer
    computed in float32 (or float16) is not rejected for round-off."""
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=0.0)
    return max(rtol, 100 * eps)


def _as_tensor(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor):
        return x.detach()
    try:
        t = torch.as_tensor(x)
    except (TypeError, ValueError, RuntimeError):
        return None
    return t if (t.dtype.is_floating_point or t.dtype in (torch.int64, torch.int32, torch.bool)) else None


def _short(t: torch.Tensor) -> str:
    flat = t.detach().flatten()[:4].cpu().tolist()
    return "[" + ", ".join(f"{x:.4g}" for x in flat) + (", ...]" if t.numel() > 4 else "]")


def compare(got: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, str, str]:
    """Compare a learner's result with the expected one.

    Returns ``(ok, why, detail)``: ``why`` says what is wrong without the expected numbers (shown on a
    first attempt), ``detail`` adds them (shown from the second attempt on).
    """
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, (f"expected a sequence of {len(expected)} results, got "
                           f"{type(got).__name__}"), ""
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            ok, why, detail = compare(g, e, rtol, atol)
            if not ok:
                return False, f"item {i}: {why}", detail
        return True, "", ""
    if isinstance(expected, bool) or (isinstance(expected, int) and not isinstance(expected, float)):
        g = _as_tensor(got)
        if g is None or g.numel() != 1:
            return False, f"expected a whole number, got {type(got).__name__}", ""
        gv = g.item()
        if isinstance(gv, float) and (not math.isfinite(gv) or gv != round(gv)):
            return False, f"expected a whole number, got {gv:.6g}", ""
        if int(gv) != int(expected):
            side = "too large" if int(gv) > int(expected) else "too small"
            return False, f"your answer {int(gv)} is {side}", f"expected {int(expected)}"
        return True, "", ""
    if isinstance(expected, (float, torch.Tensor)):
        e = expected if isinstance(expected, torch.Tensor) else torch.tensor(expected, dtype=torch.float64)
        g = _as_tensor(got)
        if g is None:
            return False, (f"expected a tensor of shape {tuple(e.shape)}" if e.dim() else
                           "expected a number") + f", got {type(got).__name__}", ""
        if g.dim() == 0 and e.dim() == 0:
            pass
        elif g.shape != e.shape:
            return False, f"expected shape {tuple(e.shape)}, got shape {tuple(g.shape)}", ""
        if g.dtype.is_complex:
            return False, f"expected real numbers, got dtype {g.dtype}", ""
        g64 = g.to(device="cpu", dtype=torch.float64)
        e64 = e.detach().to(device="cpu", dtype=torch.float64)
        if not bool(torch.isfinite(g64).all()):
            return False, "your result contains NaN or inf: look for a division by zero or a log of 0", ""
        tol = dtype_rtol(rtol, g.dtype if g.dtype.is_floating_point else torch.float64, e.dtype)
        diff = (g64 - e64).abs()
        bad = diff > atol + tol * e64.abs()
        if bool(bad.any()):
            where = "" if e64.dim() == 0 else f" ({int(bad.sum())} of {bad.numel()} entries differ)"
            detail = (f"expected {_short(e64) if e64.dim() else f'{e64.item():.6g}'}, got "
                      f"{_short(g64) if g64.dim() else f'{g64.item():.6g}'}; largest difference "
                      f"{diff.max().item():.3g}")
            return False, f"the values are off{where}", detail
        return True, "", ""
    ok = bool(got == expected)
    return (ok, "" if ok else "the answer differs from the expected one",
            "" if ok else f"expected {expected!r}, got {got!r}")


def _describe_case(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            return f"a {x.dtype} tensor of shape {tuple(x.shape)}"
        if isinstance(x, float):
            return f"{x:.4g}"
        return repr(x) if len(repr(x)) < 40 else type(x).__name__
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


# ------------------------------------------------------------------------------------------ checkers
def check_function(fn: Callable[..., Any], reference: Callable[..., Any], cases: Iterable[Case], *,
                   name: str, hint: str = "", rtol: float = 1e-6, atol: float = 1e-9,
                   number: int | None = None, book: Exercises | None = None,
                   case_hints: Sequence[str] | None = None) -> bool:
    """Call ``fn`` and ``reference`` on each ``(args, kwargs)`` case and compare the results.

    Prints ✅ with the number of cases matched, ⏳ for a stub, or ❌ naming the first failing case
    (its inputs, and ``case_hints[i]`` when given: what is special about it), then the ``hint``.
    Expected values are shown only from the second failed attempt on. Returns True when all match.
    """
    attempt = book.attempt(number) if (book is not None and number is not None) else 2
    if not callable(fn):
        return verdict(False, name, f"expected a function, got {type(fn).__name__}", hint, number=number)
    cases = list(cases)
    for i, (args, kwargs) in enumerate(cases):
        try:
            got = fn(*args, **kwargs)
        except NotImplementedError:
            if book is not None and number is not None:
                book.get(number).attempts -= 1
            return _not_implemented(name)
        except Exception as e:  # the learner's code: report it, never a traceback
            return verdict(False, name, f"on test case {i + 1} {_describe_case(args, kwargs)} your function "
                           f"raised {type(e).__name__}: {e}", hint, number=number)
        ok, why, detail = compare(got, reference(*args, **kwargs), rtol, atol)
        if not ok:
            special = f" [{case_hints[i]}]" if case_hints and i < len(case_hints) and case_hints[i] else ""
            msg = f"on test case {i + 1} {_describe_case(args, kwargs)}{special}: {why}"
            if attempt > 1 and detail:
                msg += f" ({detail})"
            return verdict(False, name, msg, hint, number=number)
    return verdict(True, name, f"it matches the package on {len(cases)} test cases.")


@dataclass
class _Verdict:
    """A verdict already printed while getting the learner's result (a stub, or their code raised)."""

    ok: bool


def _learner_result(get: Callable[[], Any] | Any, name: str, hint: str, number: int | None,
                    book: Exercises | None, doing: str) -> Any:
    """The learner's value (``get()`` when callable), or a printed :class:`_Verdict` for a stub (⏳, the attempt
    not counted) or an exception in their code (❌ with its message, never a traceback)."""
    try:
        return get() if callable(get) else get
    except NotImplementedError:
        if book is not None and number is not None:
            book.get(number).attempts -= 1
        return _Verdict(_not_implemented(name))
    except Exception as e:  # the learner's code: report it
        return _Verdict(verdict(False, name, f"{doing} raised {type(e).__name__}: {e}", hint, number=number))


def measure_each(fn: Callable[[Any], Any], params: Sequence[Any], what: str) -> dict[Any, float]:
    """Call a learner's ``fn(p)`` for every parameter and collect one number per call: a finite float, or
    ±inf (a measurement may legitimately never reach its level). Raises TypeError/ValueError with a plain
    message naming ``what(p)`` for anything else (the caller turns it into a ❌)."""
    if not callable(fn):
        raise TypeError(f"expected a function {what}(...), got {type(fn).__name__}")
    out = {}
    for p in params:
        t = torch.as_tensor(fn(p), dtype=torch.float64)
        if t.numel() != 1:
            raise ValueError(f"{what}({p}) should return one number, got shape {tuple(t.shape)}")
        v = float(t)
        out[p] = v if math.isinf(v) else finite_number(v, f"{what}({p})")
    return out


def check_value(get: Callable[[], Any] | Any, expected: Any, *, name: str, hint: str = "",
                rtol: float = 1e-6, atol: float = 1e-9, number: int | None = None,
                book: Exercises | None = None) -> bool:
    """Compare a learner's value (or a zero-argument function that returns it) with the expected one."""
    attempt = book.attempt(number) if (book is not None and number is not None) else 2
    got = _learner_result(get, name, hint, number, book, "computing your answer")
    if isinstance(got, _Verdict):
        return got.ok
    try:
        ok, why, detail = compare(got, expected, rtol, atol)
    except Exception as e:  # an answer of a kind nobody expected: say so, never a traceback
        ok, why, detail = False, f"could not compare your answer ({type(got).__name__}): {e}", ""
    if not ok and attempt > 1 and detail:
        why = f"{why} ({detail})"
    return verdict(ok, name, "your answer matches." if ok else why, hint, number=number)


def check_measurement(get: Callable[[], Any] | Any, judge: Callable[[Any], tuple[bool, str]], *,
                      name: str, hint: str = "", number: int | None = None,
                      book: Exercises | None = None) -> bool:
    """Judge a measurement the learner designed: ``judge(result) -> (ok, message)`` looks at the
    result (a fitted slope in a band, a monotone trend, a shape), never at the code."""
    if book is not None and number is not None:
        book.attempt(number)
    got = _learner_result(get, name, hint, number, book, "running your measurement")
    if isinstance(got, _Verdict):
        return got.ok
    try:
        ok, message = judge(got)
    except Exception as e:
        ok, message = False, f"could not read your result ({type(got).__name__}): {e}"
    return verdict(ok, name, message, hint, number=number)


def finite_number(x: Any, what: str) -> float:
    """``x`` as a finite Python float, or a ValueError saying what was wrong with ``what``."""
    t = _as_tensor(x)
    if t is None or t.numel() != 1:
        raise ValueError(f"{what} should be one number, got {type(x).__name__}")
    v = float(t.item())
    if not math.isfinite(v):
        raise ValueError(f"{what} is {v}: NaN or inf")
    return v
