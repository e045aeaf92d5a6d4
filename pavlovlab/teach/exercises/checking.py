"""The comparison policy and the checkers built on it: a learner's function compared with the package on several
cases (:func:`check_function`), a value (:func:`check_value`), a designed measurement judged on its result
(:func:`check_measurement`), and the :class:`Turn` that prints one friendly verdict and records the attempt.

The rules the checkers follow:

- the reference is computed on the checker's own copy of each case *before* the learner's function runs, and
  the learner gets fresh copies: an in-place update that is right passes, an input changed to fool the
  comparison changes nothing;
- floats are compared with an explicit relative tolerance at the precision of the dtype the task asks for
  (the inputs'); an answer in a lower precision than that is a named mistake, never a wider tolerance;
  NaN or inf is always wrong;
- a ❌ says what is wrong in terms of the idea (the failing case, a recognised mistake), never the expected
  values: those appear only once the learner asked for them (``ex.reveal(n)``) or read the solution;
  running a check again on an unchanged answer is not a new attempt;
- a stub (``NotImplementedError``) gets ⏳, a crash in the learner's code a ❌ with its message (also a
  ``sys.exit`` or a ``KeyboardInterrupt`` the code raises itself), a learner function that runs longer than
  its time limit a ❌ saying so; a measurement still running after a few seconds says so in one line, and the
  learner may interrupt the kernel: the verdict is then "stopped", not an attempt.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from pavlovlab.teach.language import N_, _

from . import name_errors
from .fingerprint import fingerprint
from .registry import Declared, Exercise
from .runner import Stopped, TookTooLong, call_with_limit, copy_case, raised, too_long
from .session import Session

Case = tuple[Sequence[Any], Mapping[str, Any]]
Mistake = tuple[Callable[..., Any], str]
"""A recognised mistake: a function computing the wrong answer from a case's inputs, and the hint to give
when the learner's result equals it on the failing case."""

IMPLEMENT_TIME_LIMIT = 20.0
"""Seconds a learner's function may take on one test case of an implement exercise (the cases are tiny)."""

YOUR_ANSWER = N_("Your answer")
"""What heads the verdict of a check outside any notebook's book (no exercise declared)."""

DESIGN_TIME_LIMIT = 120.0
"""Seconds a learner's measurement may take (a sweep: the reference solutions take a few seconds on one core,
so two minutes leave room for a busy machine without keeping a learner waiting on a loop that never ends)."""


@dataclass(frozen=True)
class Verdict:
    """What a judge of a designed measurement decides about the learner's result.

    ``message`` is what the learner reads after ✅/❌; ``detail`` holds the expected numbers, shown only once the
    learner has asked for them; ``hint`` replaces the exercise's generic hint when the judge diagnosed the mistake.
    All three are in the language in use: the judge writes them with ``_(...)``, and they are shown as they are.
    """

    ok: bool
    message: str
    detail: str = ""
    hint: str = ""


# -------------------------------------------------------------------------------------------- a turn
@dataclass
class Turn:
    """One check of one exercise in one session: prints the verdict and records the attempt."""

    session: Session
    exercise: Exercise

    @classmethod
    def loose(cls, name: str) -> Turn:
        """A check outside any notebook's book (a one-off comparison): the verdict is headed ``name`` (English,
        marked ``N_``: it is translated when shown, as an exercise's title is)."""
        return cls(Session(Declared("", "")), Exercise("", 0, name, "implement", (), ""))

    @property
    def name(self) -> str:
        """What heads the verdict, in the language in use: "Exercise 2 (…)", or a loose check's own name."""
        return self.exercise.name if self.exercise.number else _(self.exercise.title)

    @property
    def number(self) -> int:
        return self.exercise.number

    def finish(self, ok: bool, message: str, *, answer: Any = None, detail: str = "", hint: str = "") -> bool:
        """Record the attempt (``answer`` fingerprinted together with the message) and print the verdict;
        ``detail`` (the expected values) is kept for ``ex.reveal(n)`` and added only when
        :meth:`Session.shows_values` allows it: once the learner asked for the values or read the solution."""
        self.session.record(self.number, fingerprint(answer) + message, ok, detail if not ok else "")
        shown = not ok and bool(detail) and self.session.shows_values(self.number)
        if shown:
            message = _("{message} ({detail})").format(message=message, detail=detail)
        return verdict(ok, self.name, message, hint, number=self.number or None,
                       revealable=not ok and bool(detail) and not shown)

    def stopped(self, seconds: float) -> bool:
        """The learner interrupted the kernel while the check waited: "stopped", and no attempt is counted."""
        print(_("⏹ {name}: stopped. You interrupted the check after {seconds:.0f} s, so there is no verdict "
                "this time and no attempt is counted (your code may still be running in the background: restart "
                "the kernel if the notebook stays busy).").format(name=self.name, seconds=seconds))
        return False

    def missing(self, error: NameError) -> bool:
        """The learner's code uses a name this kernel does not have (a cell above not run, after a restart or
        out of order): one sentence saying which cell to run, and no attempt is counted."""
        name = error.name or str(error)
        said = name_errors.advice(name, self.exercise.notebook) if self.exercise.notebook else None
        # Translators: {missing} is the name of a variable or function, shown as code; {advice} is one sentence
        # saying which cell makes it ("Run the cell that makes it first …").
        print(_("⏳ {name}: not checked yet, your code uses `{missing}`, which this kernel does not have. {advice}"
                ).format(name=self.name, missing=name,
                         advice=said[1] if said else _("Run the cell that makes it first (or check its spelling).")))
        return False

    def pending(self) -> bool:
        """The learner has not written the answer yet: ⏳, and no attempt is counted."""
        print(_("⏳ {name}: not yet implemented. Replace the `raise NotImplementedError(...)` line in the exercise "
                "cell with your code, run that cell, then run this one again.").format(name=self.name))
        return False


def verdict(ok: bool, name: str, message: str, hint: str = "", *, number: int | None = None,
            revealable: bool = False) -> bool:
    """Print one friendly verdict and return ``ok``.

    On failure the ``hint`` (a question about the idea, never the answer) follows, and, when the
    exercise ``number`` is given, where the tiered hints and the solution are (and, with ``revealable``, that
    ``ex.reveal(number)`` shows the values the check wanted).
    """
    if ok:
        print(_("✅ {name}: correct! {message}").format(name=name, message=message).rstrip())
    else:
        print(_("❌ {name}: not yet. {message}").format(name=name, message=message).rstrip())
        if hint:
            print(_("   Hint: {hint}").format(hint=hint))
        if number is not None and revealable:
            print(_("   Stuck? ex.hint({number}) gives a hint (run it again for the next one); ex.solution({number}) "
                    "shows the reference solution; ex.reveal({number}) the values this check wanted.").format(
                      number=number))
        elif number is not None:
            print(_("   Stuck? ex.hint({number}) gives a hint (run it again for the next one); ex.solution({number}) "
                    "shows the reference solution.").format(number=number))
    return ok


# -------------------------------------------------------------------------------------- comparisons
def dtype_rtol(rtol: float, dtype: torch.dtype) -> float:
    """``rtol``, at least 100 ulps of ``dtype``: a correct answer computed in that dtype is not rejected
    for round-off."""
    return max(rtol, 100 * torch.finfo(dtype).eps) if dtype.is_floating_point else rtol


def _as_tensor(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor):
        return x.detach()
    try:
        t = torch.as_tensor(x)
        if t.is_floating_point() and not hasattr(x, "dtype"):  # Python floats are float64, not the default dtype
            t = torch.as_tensor(x, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    return t if (t.dtype.is_floating_point or t.dtype in (torch.int64, torch.int32, torch.bool)) else None


def _short(t: torch.Tensor) -> str:
    flat = t.detach().flatten()[:4].cpu().tolist()
    return "[" + ", ".join(f"{x:.4g}" for x in flat) + (", ...]" if t.numel() > 4 else "]")


def on_meta(x: Any) -> bool:
    """Whether a result holds a tensor on PyTorch's ``meta`` device (shapes only, no numbers)."""
    if isinstance(x, torch.Tensor):
        return x.device.type == "meta"
    if isinstance(x, (list, tuple)):
        return any(on_meta(v) for v in x)
    if isinstance(x, dict):
        return any(on_meta(v) for v in x.values())
    return False


META_MESSAGE = N_("your result is a tensor on the 'meta' device: it has shapes but no numbers. Compute it on "
                  "real tensors (drop device='meta').")
"""Marked only: what shows it says ``_(META_MESSAGE)``."""


def compare(got: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, str, str]:
    """Compare a learner's result with the expected one.

    Returns ``(ok, why, detail)``: ``why`` says what is wrong without the expected numbers (what a ❌
    shows), ``detail`` adds them (shown only once the learner asked). A tensor expected with one or more
    dimensions must come back as a tensor of the same shape; a floating answer must be at least as precise as
    the expected one (float32 at least when a Python float is expected), and is compared at its precision.
    """
    if on_meta(got):
        return False, _(META_MESSAGE), ""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, _("expected a sequence of {n} results, got {kind}").format(
                n=len(expected), kind=type(got).__name__), ""
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            ok, why, detail = compare(g, e, rtol, atol)
            if not ok:
                # Translators: {i} counts the items of the learner's result from 0, as Python does.
                return False, _("item {i}: {why}").format(i=i, why=why), detail
        return True, "", ""
    if isinstance(expected, bool) or (isinstance(expected, int) and not isinstance(expected, float)):
        g = _as_tensor(got)
        if g is None or g.numel() != 1:
            return False, _("expected a whole number, got {kind}").format(kind=type(got).__name__), ""
        gv = g.item()
        if isinstance(gv, float) and (not math.isfinite(gv) or gv != round(gv)):
            return False, _("expected a whole number, got {got:.6g}").format(got=gv), ""
        if int(gv) != int(expected):
            why = (_("your answer {got} is too large") if int(gv) > int(expected) else
                   _("your answer {got} is too small")).format(got=int(gv))
            return False, why, _("expected {expected}").format(expected=int(expected))
        return True, "", ""
    if isinstance(expected, (float, torch.Tensor)):
        e = expected if isinstance(expected, torch.Tensor) else torch.tensor(expected, dtype=torch.float64)
        want = e.dtype if (isinstance(expected, torch.Tensor) and e.dtype.is_floating_point) else torch.float32
        if e.dim() > 0 and not isinstance(got, torch.Tensor):
            return False, _("expected a tensor of shape {shape}, got a {kind}: build the result with torch "
                            "operations (or torch.stack / torch.tensor)").format(shape=tuple(e.shape),
                                                                                   kind=type(got).__name__), ""
        g = _as_tensor(got)
        if g is None:
            return False, (_("expected a tensor of shape {shape}, got {kind}") if e.dim() else
                           _("expected a number, got {kind}")).format(shape=tuple(e.shape), kind=type(got).__name__), ""
        if g.dim() == 0 and e.dim() == 0:
            pass
        elif g.shape != e.shape:
            return False, _("expected shape {expected}, got shape {got}").format(expected=tuple(e.shape),
                                                                                  got=tuple(g.shape)), ""
        if g.dtype.is_complex:
            return False, _("expected real numbers, got dtype {dtype}").format(dtype=g.dtype), ""
        if g.dtype.is_floating_point and torch.finfo(g.dtype).eps > torch.finfo(want).eps:
            return False, _("your result is in {got}, less precise than the {want} the task works in: keep the "
                            "inputs' dtype (a lower precision loses digits the check needs)").format(got=g.dtype,
                                                                                                     want=want), ""
        g64 = g.to(device="cpu", dtype=torch.float64)
        e64 = e.detach().to(device="cpu", dtype=torch.float64)
        if not bool(torch.isfinite(g64).all()):
            return False, _("your result contains NaN or inf: look for a division by zero or a log of 0"), ""
        tol = dtype_rtol(rtol, g.dtype if g.dtype.is_floating_point else torch.float64)
        diff = (g64 - e64).abs()
        bad = diff > atol + tol * e64.abs()
        if bool(bad.any()):
            why = (_("the values are off") if e64.dim() == 0 else
                   _("the values are off ({n} of {total} entries differ)").format(n=int(bad.sum()), total=bad.numel()))
            detail = _("expected {expected}, got {got}; largest difference {difference:.3g}").format(
                expected=_short(e64) if e64.dim() else f"{e64.item():.6g}",
                got=_short(g64) if g64.dim() else f"{g64.item():.6g}", difference=diff.max().item())
            return False, why, detail
        return True, "", ""
    ok = bool(got == expected)
    return (ok, "" if ok else _("the answer differs from the expected one"),
            "" if ok else _("expected {expected}, got {got}").format(expected=repr(expected), got=repr(got)))


def _describe_case(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            # Translators: {dtype} is torch.float64 or the like, {shape} a tuple such as (2, 3).
            return _("a {dtype} tensor of shape {shape}").format(dtype=x.dtype, shape=tuple(x.shape))
        if isinstance(x, float):
            return f"{x:.4g}"
        return repr(x) if len(repr(x)) < 40 else type(x).__name__
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _matches(mistake: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], got: Any) -> bool:
    try:
        wrong = mistake(*copy_case(args), **copy_case(kwargs))
        return compare(got, wrong, 1e-6, 1e-9)[0]
    except Exception:
        return False


# ------------------------------------------------------------------------------------------ checkers
def check_function(fn: Callable[..., Any], reference: Callable[..., Any], cases: Iterable[Case], *,
                   turn: Turn | None = None, name: str = YOUR_ANSWER, hint: str = "", rtol: float = 1e-6,
                   atol: float = 1e-9, case_hints: Sequence[str] | None = None,
                   mistakes: Sequence[Mistake] = (), limit: float | None = None) -> bool:
    """Call ``fn`` and ``reference`` on each ``(args, kwargs)`` case and compare the results.

    The reference runs first, on its own copy of the case; ``fn`` then gets a fresh copy (so in-place
    updates are fine and mutating the inputs changes nothing), within ``limit`` seconds. Prints ✅ with the
    number of cases matched, ⏳ for a stub, or ❌ naming the first failing case (its inputs, and
    ``case_hints[i]``: what is special about it), then the hint of the recognised mistake the result equals
    (``mistakes``), else the generic ``hint``. Returns True when all match. ``hint``, ``case_hints`` and the
    mistakes' hints come in the language in use (the checker wraps them in ``_(...)``) and are shown as they are.
    """
    turn = turn if turn is not None else Turn.loose(name)
    if not callable(fn):
        return turn.finish(False, _("expected a function, got {kind}").format(kind=type(fn).__name__), answer=fn,
                           hint=hint)
    limit = IMPLEMENT_TIME_LIMIT if limit is None else limit
    cases = list(cases)
    for i, (args, kwargs) in enumerate(cases):
        expected = reference(*copy_case(args), **copy_case(kwargs))
        # Translators: {case} lists the case's inputs: "(a torch.float64 tensor of shape (1, 3), 0.5)".
        where = _("on test case {number} {case}").format(number=i + 1, case=_describe_case(args, kwargs))
        try:
            got = call_with_limit(fn, copy_case(args), copy_case(kwargs), limit=limit)
        except NotImplementedError:
            return turn.pending()
        except NameError as e:
            return turn.missing(e)
        except Stopped as e:
            return turn.stopped(e.seconds)
        except TookTooLong:
            return turn.finish(False, too_long(limit, where), answer=fn, hint=hint)
        except Exception as e:  # the learner's code: report it, never a traceback
            # Translators: {where} is "on test case 2 (…)"; what follows is "raised ValueError: …" or "stopped early".
            return turn.finish(False, raised(e, _("{where} your function").format(where=where)), answer=fn,
                               hint=hint)
        ok, why, detail = compare(got, expected, rtol, atol)
        if not ok:
            known = next((h for m, h in mistakes if _matches(m, args, kwargs, got)), hint)
            if case_hints and i < len(case_hints) and case_hints[i]:
                # Translators: {special} says what is special about the case ("d_v differs from d_k").
                said = _("{where} [{special}]: {why}").format(where=where, special=case_hints[i], why=why)
            else:
                said = _("{where}: {why}").format(where=where, why=why)
            return turn.finish(False, said, answer=fn, detail=detail, hint=known)
    return turn.finish(True, _("it matches the package on {n} test cases.").format(n=len(cases)), answer=fn)


def check_value(get: Callable[[], Any] | Any, expected: Any, *, turn: Turn | None = None, name: str = YOUR_ANSWER,
                hint: str = "", rtol: float = 1e-6,
                atol: float = 1e-9) -> bool:
    """Compare a learner's value (or a zero-argument function that returns it) with the expected one.
    (``name`` heads the verdict when no ``turn`` of a declared exercise is given.)"""
    turn = turn if turn is not None else Turn.loose(name)
    done, got = _learner_result(get, IMPLEMENT_TIME_LIMIT, turn, get, hint,
                                _("to compute its answer"), _("computing your answer"))
    if not done:
        return got
    try:
        ok, why, detail = compare(got, expected, rtol, atol)
    except Exception:  # an answer of a kind nobody expected: say so, never a traceback
        ok, why, detail = False, _("could not compare your answer ({kind}) with a number").format(
            kind=type(got).__name__), ""
    return turn.finish(ok, _("your answer matches.") if ok else why, answer=get, detail=detail, hint=hint)


class Unreadable(ValueError):
    """A result of the wrong form: the message says what was expected (the checker shows it as it is)."""


def _learner_result(get: Callable[[], Any] | Any, limit: float, turn: Turn, answer: Any, hint: str,
                    running: str, doing: str, *, progress: bool = False) -> tuple[bool, Any]:
    """``(True, result)`` of the learner's ``get`` (called within ``limit`` seconds), or ``(False, verdict)``
    where it is a stub, runs too long (``running``: "to run"), raises (``doing``: "running your
    measurement") or is interrupted by the learner ("stopped"): the verdict is already told, kindly. With
    ``progress``, a long call says that it is still running (:func:`call_with_limit`)."""
    try:
        return True, (call_with_limit(get, limit=limit, waiting=turn.name if progress else "") if callable(get)
                      else get)
    except NotImplementedError:
        return False, turn.pending()
    except NameError as e:
        return False, turn.missing(e)
    except Stopped as e:
        return False, turn.stopped(e.seconds)
    except TookTooLong:
        return False, turn.finish(False, too_long(limit, running), answer=answer, hint=hint)
    except Unreadable as e:
        return False, turn.finish(False, str(e), answer=answer, hint=hint)
    except Exception as e:
        return False, turn.finish(False, raised(e, doing), answer=answer, hint=hint)


def check_measurement(get: Callable[[], Any] | Any, judge: Callable[[Any], Verdict], *,
                      turn: Turn | None = None, name: str = YOUR_ANSWER, hint: str = "",
                      expects: str = "", answer: Any = None, limit: float | None = None) -> bool:
    """Judge a measurement the learner designed: ``judge(result)`` returns a :class:`Verdict` from the result,
    never the code.

    ``get`` (called within ``limit`` seconds) produces the result; ``expects`` says what form it should
    have, for results the judge cannot read; ``answer`` is what identifies the learner's attempt (default:
    ``get``). A verdict's own ``hint`` replaces the generic ``hint``.
    """
    turn = turn if turn is not None else Turn.loose(name)
    answer = get if answer is None else answer
    limit = DESIGN_TIME_LIMIT if limit is None else limit
    done, got = _learner_result(get, limit, turn, answer, hint, _("to run"), _("running your measurement"),
                                progress=True)
    if not done:
        return got
    if on_meta(got):
        return turn.finish(False, _(META_MESSAGE), answer=answer, hint=hint)
    try:
        out = judge(got)
    except Unreadable as e:
        out = Verdict(False, str(e))
    except Exception:
        kind = type(got).__name__
        out = Verdict(False, _("could not read your result ({kind}): it should be {expects}").format(
            kind=kind, expects=expects) if expects else _("could not read your result ({kind})").format(kind=kind))
    return turn.finish(out.ok, out.message, answer=(answer, got if not callable(got) else None), detail=out.detail,
                       hint=out.hint or hint)


def measure_each(fn: Callable[..., Any], params: Sequence[Any], what: str, **kwargs: Any) -> dict[Any, float]:
    """Call a learner's ``fn(p, **kwargs)`` for every parameter and collect one number per call: a finite
    float, or ±inf (a measurement may legitimately never reach its level). Raises :class:`Unreadable` with
    a plain message naming ``what(p)`` for anything else."""
    if not callable(fn):
        raise Unreadable(_("expected a function {what}(...), got {kind}").format(what=what, kind=type(fn).__name__))
    out = {}
    for p in params:
        value = fn(p, **kwargs)
        if on_meta(value):
            raise Unreadable(_(META_MESSAGE))
        t = _as_tensor(value)
        if t is None or t.numel() != 1:
            # Translators: {call} is code, "recovery_time(0.2)"; {kind} a Python type (list, NoneType).
            raise Unreadable(_("{call} should return one number, got {kind}").format(
                call=f"{what}({p})", kind=type(value).__name__) if t is None else
                _("{call} should return one number, got shape {shape}").format(call=f"{what}({p})",
                                                                               shape=tuple(t.shape)))
        v = float(t.double())
        out[p] = v if math.isinf(v) else finite_number(v, f"{what}({p})")
    return out


def finite_number(x: Any, what: str) -> float:
    """``x`` as a finite Python float, or :class:`Unreadable` saying what was wrong with ``what``."""
    if on_meta(x):
        raise Unreadable(_(META_MESSAGE))
    t = _as_tensor(x)
    if t is None or t.numel() != 1:
        # Translators: {what} is code (err_A) or a phrase already translated ("each error rate").
        raise Unreadable(_("{what} should be one number, got {kind}").format(what=what, kind=type(x).__name__))
    v = float(t.double().item())
    if not math.isfinite(v):
        raise Unreadable(_("{what} is {got}: NaN or inf").format(what=what, got=v))
    return v


def pending(*answers: Any) -> tuple[Any, ...]:
    """The learner's answers, or NotImplementedError (a ⏳, not a ❌) while a stub's ``...`` is still there."""
    if any(a is Ellipsis for a in answers):
        raise NotImplementedError("the stub's ... blanks are still there")
    return answers
