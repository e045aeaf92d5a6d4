"""The exercise machinery that every notebook shares: exercises declared once next to their checkers, a
learner's session (attempts, hints, progress), and checkers that print one friendly verdict and never raise.

A notebook's module (``pavlovlab.teach.exercises.capacity_limits``, ...) holds one :class:`Book`; each checker is
declared with ``@BOOK.exercise(number, title, kind=..., hints=[...])``. The notebook opens a session,
``ex = exercises.session("04")`` (or ``capacity.session()``), and calls ``ex.check_...(answer)``,
``ex.hint(n)``, ``ex.solution(n)`` and ``ex.progress()``. The reference solutions are the notebooks' cells
tagged ``solution``, extracted into ``solutions.json`` by ``tools/student_copies.py --write`` (``make student``).
The rules the checkers follow:

- the reference is computed on the checker's own copy of each case *before* the learner's function runs, and
  the learner gets fresh copies: an in-place update that is right passes, an input changed to fool the
  comparison changes nothing;
- floats are compared with an explicit relative tolerance at the precision of the dtype the task asks for
  (the inputs'); an answer in a lower precision than that is a named mistake, never a wider tolerance;
  NaN or inf is always wrong;
- the first ❌ says what is wrong in terms of the idea (the failing case, a recognised mistake), never the
  expected numbers; those appear only after a second, different attempt or once ``ex.solution(n)`` was read;
  running a check again on an unchanged answer is not a new attempt;
- a stub (``NotImplementedError``) gets ⏳, a crash in the learner's code a ❌ with its message (also a
  ``sys.exit`` or a ``KeyboardInterrupt`` the code raises itself), a learner function that runs longer than
  its time limit a ❌ saying so; a measurement still running after :data:`PROGRESS_AFTER` seconds says so
  in one line, and the learner may interrupt the kernel: the verdict is then "stopped", not an attempt.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import math
import os
import pkgutil
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

Case = tuple[Sequence[Any], Mapping[str, Any]]
Mistake = tuple[Callable[..., Any], str]
"""A recognised mistake: a function computing the wrong answer from a case's inputs, and the hint to give
when the learner's result equals it on the failing case."""

PROGRESS_FILE = ".pavlovlab_progress.json"
"""The learner's own record of their checks, kept beside their notebooks (nothing is sent anywhere)."""

SOLUTIONS = Path(__file__).with_name("solutions.json")
"""The reference solutions, extracted from the course notebooks' ``solution`` cells by ``make student``."""

IMPLEMENT_TIME_LIMIT = 20.0
"""Seconds a learner's function may take on one test case of an implement exercise (the cases are tiny)."""

DESIGN_TIME_LIMIT = 120.0
"""Seconds a learner's measurement may take (a sweep: the reference solutions take a few seconds on one core,
so two minutes leave room for a busy machine without keeping a learner waiting on a loop that never ends)."""

PROGRESS_AFTER = 5.0
"""Seconds after which a check still waiting on the learner's measurement prints one progress line (with its
time limit and how to stop it)."""


# ------------------------------------------------------------------------------------------- the book
@dataclass(frozen=True)
class Exercise:
    """One exercise, declared once next to its checker.

    notebook: the notebook's file stem; number: its number there; title: a few words (the verdicts say
    ``Exercise {number} ({title})``); kind: ``"implement"`` or ``"design"`` (design the measurement); hints:
    tiers, from the idea (tier 1) to nearly the code (last tier); checker: the name of its check function.
    """

    notebook: str
    number: int
    title: str
    kind: str
    hints: tuple[str, ...]
    checker: str

    @property
    def name(self) -> str:
        return f"Exercise {self.number} ({self.title})"


class Book:
    """The exercises of one notebook. ``module`` is the checker module's ``__name__`` (a session reaches its
    checkers and helpers through it).

    >>> BOOK = Book("00_start_here", __name__)                        # doctest: +SKIP
    >>> @BOOK.exercise(1, "how well a test stimulus matches the bell", kind="implement", hints=[...])
    ... def check_match(fn, *, turn): ...                              # doctest: +SKIP
    """

    def __init__(self, notebook: str, module: str) -> None:
        self.notebook = notebook
        self.module = module
        self._items: dict[int, Exercise] = {}

    def exercise(self, number: int, title: str, *, kind: str, hints: Sequence[str]
                 ) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
        """Declare exercise ``number`` and its checker: the decorated ``check(..., turn)`` receives a
        :class:`Turn` (this exercise in the caller's session); callers pass ``session=`` (a notebook's
        ``ex.check_...`` does) or get a fresh one-off session."""
        if kind not in ("implement", "design"):
            raise ValueError(f"kind: expected 'implement' or 'design', got {kind!r}")
        if len(hints) < 2:
            raise ValueError(f"hints: exercise {number} needs at least two hint tiers, got {len(hints)}")
        if number in self._items:
            raise ValueError(f"number: exercise {number} of {self.notebook} is declared twice")

        def declare(check: Callable[..., bool]) -> Callable[..., bool]:
            e = Exercise(self.notebook, number, title, kind, tuple(hints), check.__name__)
            self._items[number] = e

            @functools.wraps(check)
            def checker(*args: Any, session: Session | None = None, **kwargs: Any) -> bool:
                s = session if session is not None else Session(self)
                return check(*args, turn=Turn(s, e), **kwargs)
            checker.exercise = e  # type: ignore[attr-defined]
            return checker
        return declare

    def __iter__(self):
        return iter(sorted(self._items.values(), key=lambda e: e.number))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, number: object) -> Exercise:
        if isinstance(number, bool) or not isinstance(number, int) or number not in self._items:
            raise ValueError(f"number: expected one of the exercises {sorted(self._items)} of "
                             f"{self.notebook}, got {number!r}")
        return self._items[number]

    def session(self, folder: str | Path | None = None) -> Session:
        """A learner's session: attempts, hints shown and solutions read, per exercise (see :class:`Session`)."""
        return Session(self, folder)


def solution_source(notebook: str, number: int) -> str | None:
    """The reference solution of an exercise, as extracted from the notebook (None if it is not there)."""
    try:
        data = json.loads(SOLUTIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get(notebook, {}).get(str(number))


def books() -> list[Book]:
    """Every notebook's book, in course order."""
    from pavlovlab.teach import exercises as package
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            if isinstance(getattr(module, "BOOK", None), Book):
                found.append(module.BOOK)
    return sorted(found, key=lambda b: b.notebook)


# ---------------------------------------------------------------------------------------- the session
def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Session:
    """One learner working through one notebook.

    ``ex = exercises.session("04")`` in the notebook (the same as ``capacity.session()``); ``ex.check_...`` are
    the module's checkers bound to this
    session (any other name of the module is reached as ``ex.NAME``). ``folder`` is where the progress
    record lives (:data:`PROGRESS_FILE`); by default the current folder when running in a Jupyter kernel
    (the notebook's folder), except the course folder itself (its notebooks hold their solutions), else
    nowhere. Writing it never fails loudly: progress is a convenience. A record that cannot be read (cut off,
    edited by hand) is never overwritten: it is kept aside under a name that says so, the learner is told
    once, and recording carries on in a new file.
    """

    def __init__(self, book: Book, folder: str | Path | None = None) -> None:
        self.book = book
        self.folder = Path(folder) if folder is not None else _default_folder()
        self.attempts: dict[int, int] = {}
        self._last: dict[int, str] = {}
        self._hints: dict[int, int] = {}
        self._read: set[int] = set()
        _install_kind_name_errors()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        module = importlib.import_module(self.book.module)
        try:
            value = getattr(module, name)
        except AttributeError:
            raise AttributeError(f"{self.book.notebook}'s exercises have no {name!r}") from None
        if isinstance(getattr(value, "exercise", None), Exercise):
            return functools.update_wrapper(functools.partial(value, session=self), value)
        return value

    def __dir__(self) -> list[str]:
        module = importlib.import_module(self.book.module)
        return sorted(set(super().__dir__()) | {n for n in dir(module) if not n.startswith("_")})

    # -- attempts
    def record(self, number: int, answer: str, ok: bool) -> int:
        """Note one check of exercise ``number`` whose answer has fingerprint ``answer``; return how many
        different answers were checked so far (the same answer run again is not a new attempt)."""
        if self._last.get(number) != answer:
            self._last[number] = answer
            self.attempts[number] = self.attempts.get(number, 0) + 1
        self._save(number, ok)
        return self.attempts[number]

    def reveal(self, number: int) -> bool:
        """Whether the expected numbers may be shown: after a second, different attempt, or once the
        solution was read."""
        return self.attempts.get(number, 0) > 1 or number in self._read

    # -- hints and solutions
    def hint(self, number: int, tier: int | None = None) -> None:
        """Print the next hint tier of exercise ``number`` (or tier ``tier``, counting from 1)."""
        try:
            e = self.book.get(number)
        except ValueError as err:
            print(f"💡 {err}")
            return
        if tier is None:
            tier = min(self._hints.get(number, 0) + 1, len(e.hints))
        if isinstance(tier, bool) or not isinstance(tier, int) or not 1 <= tier <= len(e.hints):
            print(f"💡 Exercise {number} has hint tiers 1 to {len(e.hints)}; got tier={tier!r}.")
            return
        self._hints[number] = max(self._hints.get(number, 0), tier)
        self._save(number, False)
        more = (f"  (ex.hint({number}) again for tier {tier + 1} of {len(e.hints)})" if tier < len(e.hints)
                else f"  (that was the last tier; ex.solution({number}) shows the reference solution)")
        print(f"💡 Exercise {number}, hint {tier} of {len(e.hints)}: {e.hints[tier - 1]}\n{more}")

    def solution(self, number: int) -> None:
        """Print the reference solution of exercise ``number``: read it, then write your own. From then on
        the checker shows the expected numbers."""
        try:
            e = self.book.get(number)
        except ValueError as err:
            print(f"📖 {err}")
            return
        source = solution_source(self.book.notebook, number)
        if source is None:
            print(f"📖 The reference solution of exercise {number} is missing from this installation of "
                  "pavlovlab (solutions.json): ask your instructor.")
            return
        self._read.add(number)
        self._save(number, False)
        print(f"📖 {e.name}, the reference solution:\n")
        print(textwrap.indent(source, "    "))

    # -- progress
    def _save(self, number: int, ok: bool) -> None:
        if self.folder is None:
            return
        try:
            target = self.folder / PROGRESS_FILE
            data = _load_progress(self.folder)
            entry = data.setdefault(self.book.notebook, {}).setdefault(str(number), {"attempts": 0, "done": False})
            entry["attempts"] = max(int(entry.get("attempts", 0)), self.attempts.get(number, 0))
            entry["done"] = bool(entry.get("done")) or ok
            if self._hints.get(number):  # the deepest hint tier read; the solution, once read
                entry["hints"] = max(int(entry.get("hints", 0)), self._hints[number])
            if number in self._read:
                entry["solution"] = True
            from pavlovlab.teach.student import atomic_write
            atomic_write(target, lambda t: t.write_text(json.dumps(data, indent=1, sort_keys=True),
                                                        encoding="utf-8"))
        except Exception:  # a read-only folder or a full disk must never interrupt the learner
            pass

    def progress(self, plot: bool = False) -> Any:
        """Print, for every exercise of the course, whether it is done (✅), tried (❌) or not started (·), and
        the hints and solutions read, from the checks run in notebooks of this folder (:data:`PROGRESS_FILE`);
        with ``plot=True`` also return the same map as a figure (see :mod:`pavlovlab.teach.progress`)."""
        from pavlovlab.teach.progress import show_learner_progress
        return show_learner_progress(self.folder, plot=plot)


def _default_folder() -> Path | None:
    """Where a notebook's session keeps progress: the kernel's folder (the notebook's), unless it holds the
    course's own notebooks with their solutions (an instructor's or a test run's, not a learner's copy)."""
    if not _in_kernel():
        return None
    here = Path.cwd()
    from pavlovlab.teach.student import SOLUTION_TAG
    for path in here.glob("[0-9]*.ipynb"):
        try:
            if f'"{SOLUTION_TAG}"' in path.read_text(encoding="utf-8"):
                return None
        except OSError:
            continue
    return here


UNREADABLE_PROGRESS = ".pavlovlab_progress.unreadable{n}.json"
"""Where an unreadable progress record is kept (``n``: empty, then ``-2``, ``-3``, ... never overwriting one)."""

_TOLD_UNREADABLE: set[Path] = set()


def _load_progress(folder: Path) -> dict[str, Any]:
    """The progress record of ``folder`` ({} when there is none). One that cannot be read as a JSON object is
    moved aside to :data:`UNREADABLE_PROGRESS` (never over an earlier one) and the learner told once; then {}."""
    path = folder / PROGRESS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:                        # none yet, or a folder we cannot read: nothing to keep
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        return data
    kept = _set_aside(path)
    if folder.resolve() not in _TOLD_UNREADABLE:
        _TOLD_UNREADABLE.add(folder.resolve())
        where = (f"it is kept as {kept.name} beside your notebooks" if kept is not None else
                 "it could not be moved aside, so it is left as it is")
        print(f"⚠ Your progress record {PROGRESS_FILE} could not be read (cut off or edited?): {where}, and your "
              "progress is recorded afresh from now on.")
    return {}


def _set_aside(path: Path) -> Path | None:
    """Rename ``path`` to the first free :data:`UNREADABLE_PROGRESS` name beside it; None if that fails."""
    for n in range(1, 1000):
        target = path.with_name(UNREADABLE_PROGRESS.format(n="" if n == 1 else f"-{n}"))
        try:
            os.link(path, target)          # fails if the name is taken: an earlier copy is never replaced
        except FileExistsError:
            continue
        except OSError:                    # no hard links here: check, then rename
            if target.exists():
                continue
            try:
                os.replace(path, target)
            except OSError:
                return None
            return target
        with contextlib.suppress(OSError):   # the copy is kept; the original goes at the next save at worst
            path.unlink()
        return target
    return None


_KIND_NAME_ERRORS = False


def _install_kind_name_errors() -> None:
    """In Jupyter, a check cell run before the exercise cell that defines its answer gets a kind ⏳ instead
    of a NameError traceback. Other NameErrors are shown as usual."""
    global _KIND_NAME_ERRORS
    if _KIND_NAME_ERRORS:
        return
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        return
    if shell is None:
        return

    def handler(self, etype, value, tb, tb_offset=None):
        import traceback
        frames = traceback.extract_tb(tb)
        if frames and "ex.check_" in (frames[-1].line or ""):
            name = getattr(value, "name", None) or str(value)
            print(f"⏳ `{name}` is not defined yet: run the exercise cell above (the one with your code, or its "
                  "stub) first, then this check cell again.")
            return None
        return self.showtraceback((etype, value, tb), tb_offset=tb_offset)

    shell.set_custom_exc((NameError,), handler)
    _KIND_NAME_ERRORS = True


# -------------------------------------------------------------------------------------- fingerprints
def fingerprint(x: Any) -> str:
    """A digest of an answer: the code and constants of a function (and of the functions its closure and
    defaults hold), or the contents of values (tensors by dtype, shape and bytes)."""
    h = hashlib.sha256()
    _feed(h, x, 0)
    return h.hexdigest()


def _feed(h: Any, x: Any, depth: int) -> None:
    if depth > 6:
        h.update(b"...")
        return
    if isinstance(x, torch.Tensor):
        h.update(f"T{x.dtype}{tuple(x.shape)}{x.device.type}".encode())
        if x.device.type != "meta":
            h.update(x.detach().cpu().contiguous().view(-1).to(torch.float64 if x.is_floating_point() else
                                                               x.dtype).numpy().tobytes())
        return
    code = getattr(x, "__code__", None)
    if code is not None:
        _feed_code(h, code, depth)
        for d in (getattr(x, "__defaults__", None) or ()):
            _feed(h, d, depth + 1)
        for cell in (getattr(x, "__closure__", None) or ()):
            try:
                _feed(h, cell.cell_contents, depth + 1)
            except ValueError:
                h.update(b"empty")
        return
    if isinstance(x, (list, tuple)):
        h.update(f"{type(x).__name__}{len(x)}".encode())
        for item in x:
            _feed(h, item, depth + 1)
        return
    if isinstance(x, dict):
        h.update(b"dict")
        for k in sorted(x, key=repr):
            h.update(repr(k).encode())
            _feed(h, x[k], depth + 1)
        return
    h.update(f"{type(x).__name__}:{x!r}"[:10_000].encode())


def _feed_code(h: Any, code: Any, depth: int) -> None:
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            _feed_code(h, c, depth + 1)
        else:
            h.update(repr(c).encode())


# -------------------------------------------------------------------------------------------- a verdict
@dataclass(frozen=True)
class Verdict:
    """What a judge of a designed measurement decides about the learner's result.

    ``message`` is what the learner reads after ✅/❌; ``detail`` holds the expected numbers, shown only once the
    learner has asked for them; ``hint`` replaces the exercise's generic hint when the judge diagnosed the mistake.
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
        """A check outside any notebook's book (a one-off comparison): the verdict is headed ``name``."""
        return cls(Session(Book("", "")), Exercise("", 0, name, "implement", (), ""))

    @property
    def name(self) -> str:
        return self.exercise.name if self.exercise.number else self.exercise.title

    @property
    def number(self) -> int:
        return self.exercise.number

    def finish(self, ok: bool, message: str, *, answer: Any = None, detail: str = "", hint: str = "") -> bool:
        """Record the attempt (``answer`` fingerprinted together with the message) and print the verdict;
        ``detail`` (the expected numbers) is added only when :meth:`Session.reveal` allows it."""
        self.session.record(self.number, fingerprint(answer) + message, ok)
        if not ok and detail and self.session.reveal(self.number):
            message = f"{message} ({detail})"
        return verdict(ok, self.name, message, hint, number=self.number or None)

    def stopped(self, seconds: float) -> bool:
        """The learner interrupted the kernel while the check waited: "stopped", and no attempt is counted."""
        print(f"⏹ {self.name}: stopped. You interrupted the check after {seconds:.0f} s, so there is no verdict "
              "this time and no attempt is counted (your code may still be running in the background: restart the "
              "kernel if the notebook stays busy).")
        return False

    def pending(self) -> bool:
        """The learner has not written the answer yet: ⏳, and no attempt is counted."""
        print(f"⏳ {self.name}: not yet implemented. Replace the `raise NotImplementedError(...)` line in the "
              "exercise cell with your code, run that cell, then run this one again.")
        return False


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


# --------------------------------------------------------------------------- calling the learner's code
class TookTooLong(Exception):
    """The learner's function did not return within its time limit."""


class Stopped(Exception):
    """The learner interrupted the kernel (Ctrl-C, the ■ button) while the check waited for their code."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after {seconds:.1f} s")
        self.seconds = seconds


class Exited(Exception):
    """The learner's code raised ``SystemExit`` (``sys.exit``, ``exit()``) or a ``KeyboardInterrupt`` of its own
    (a key press reaches the kernel's main thread, never the thread that runs the learner's code): the message
    says what happened, in a sentence."""


def copy_case(x: Any) -> Any:
    """A fresh copy of a case's inputs: tensors cloned (lists, tuples and dicts of them copied too)."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, list):
        return [copy_case(v) for v in x]
    if isinstance(x, tuple):
        return tuple(copy_case(v) for v in x)
    if isinstance(x, dict):
        return {k: copy_case(v) for k, v in x.items()}
    return x


def call_with_limit(fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
                    limit: float, waiting: str = "") -> Any:
    """``fn(*args, **kwargs)``, or :class:`TookTooLong` after ``limit`` seconds.

    The call runs in a helper thread that the checker waits for. Python cannot stop a thread from outside,
    so a function that never returns keeps running in the background (the message says so: restarting the
    kernel stops it); the notebook itself gets its verdict and stays usable. Exceptions of ``fn`` propagate,
    except ``SystemExit`` and a ``KeyboardInterrupt`` raised by ``fn`` itself, which become :class:`Exited`.
    With ``waiting`` (what is running, e.g. the exercise's name), a call still running after
    :data:`PROGRESS_AFTER` seconds prints one line saying so, with the limit. An interrupt of the kernel while
    waiting raises :class:`Stopped`.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **(kwargs or {}))
        except SystemExit as e:
            box["error"] = Exited(f"it called sys.exit({'' if e.code is None else repr(e.code)}), which ends a "
                                  "whole program, not a function: return the result instead")
        except KeyboardInterrupt:
            box["error"] = Exited("it raised KeyboardInterrupt itself (nobody pressed stop): return the result "
                                  "instead")
        except BaseException as e:  # handed to the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=run, name="pavlovlab-learner-answer", daemon=True)
    start = time.monotonic()
    worker.start()
    told = not waiting
    try:
        while worker.is_alive() and (left := limit - (time.monotonic() - start)) > 0:
            worker.join(min(left, 0.25))        # short slices: an interrupt is seen at once on every platform
            if not told and worker.is_alive() and time.monotonic() - start >= PROGRESS_AFTER:
                print(f"⏳ {waiting}: still running after {PROGRESS_AFTER:.0f} s. The check waits up to {limit:.0f} s; "
                      "interrupt the kernel (the ■ button) to stop waiting.", flush=True)
                told = True
    except KeyboardInterrupt:
        raise Stopped(time.monotonic() - start) from None
    if worker.is_alive():
        raise TookTooLong()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _too_long(limit: float, where: str) -> str:
    return (f"your function took more than {limit:.0f} s {where}, so the check stopped waiting (it may still be "
            "running in the background: restart the kernel if the notebook stays busy). Does a loop never end, "
            "or does it wait for something?")


def raised(e: BaseException, doing: str) -> str:
    """A learner's exception in plain words (their own code: its type and message, never a traceback)."""
    if isinstance(e, Exited):
        return f"{doing} stopped early: {e}"
    text = str(e).strip() or "(no message)"
    return f"{doing} raised {type(e).__name__}: {text}"


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


META_MESSAGE = ("your result is a tensor on the 'meta' device: it has shapes but no numbers. Compute it on "
                "real tensors (drop device='meta').")


def compare(got: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, str, str]:
    """Compare a learner's result with the expected one.

    Returns ``(ok, why, detail)``: ``why`` says what is wrong without the expected numbers (shown on a
    first attempt), ``detail`` adds them. A tensor expected with one or more dimensions must come back as a
    tensor of the same shape; a floating answer must be at least as precise as the expected one (float32 at
    least when a Python float is expected), and is compared at the expected one's precision.
    """
    if on_meta(got):
        return False, META_MESSAGE, ""
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
        want = e.dtype if (isinstance(expected, torch.Tensor) and e.dtype.is_floating_point) else torch.float32
        if e.dim() > 0 and not isinstance(got, torch.Tensor):
            return False, (f"expected a tensor of shape {tuple(e.shape)}, got a {type(got).__name__}: build the "
                           "result with torch operations (or torch.stack / torch.tensor)"), ""
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
        if g.dtype.is_floating_point and torch.finfo(g.dtype).eps > torch.finfo(want).eps:
            return False, (f"your result is in {g.dtype}, less precise than the {want} the task works in: keep "
                           "the inputs' dtype (a lower precision loses digits the check needs)"), ""
        g64 = g.to(device="cpu", dtype=torch.float64)
        e64 = e.detach().to(device="cpu", dtype=torch.float64)
        if not bool(torch.isfinite(g64).all()):
            return False, "your result contains NaN or inf: look for a division by zero or a log of 0", ""
        tol = dtype_rtol(rtol, g.dtype if g.dtype.is_floating_point else torch.float64)
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


def _matches(mistake: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], got: Any) -> bool:
    try:
        wrong = mistake(*copy_case(args), **copy_case(kwargs))
        ok, _, _ = compare(got, wrong, 1e-6, 1e-9)
        return ok
    except Exception:
        return False


# ------------------------------------------------------------------------------------------ checkers
def check_function(fn: Callable[..., Any], reference: Callable[..., Any], cases: Iterable[Case], *,
                   turn: Turn | None = None, name: str = "Your answer", hint: str = "", rtol: float = 1e-6,
                   atol: float = 1e-9, case_hints: Sequence[str] | None = None,
                   mistakes: Sequence[Mistake] = (), limit: float | None = None) -> bool:
    """Call ``fn`` and ``reference`` on each ``(args, kwargs)`` case and compare the results.

    The reference runs first, on its own copy of the case; ``fn`` then gets a fresh copy (so in-place
    updates are fine and mutating the inputs changes nothing), within ``limit`` seconds. Prints ✅ with the
    number of cases matched, ⏳ for a stub, or ❌ naming the first failing case (its inputs, and
    ``case_hints[i]``: what is special about it), then the hint of the recognised mistake the result equals
    (``mistakes``), else the generic ``hint``. Returns True when all match.
    """
    turn = turn if turn is not None else Turn.loose(name)
    if not callable(fn):
        return turn.finish(False, f"expected a function, got {type(fn).__name__}", answer=fn, hint=hint)
    limit = IMPLEMENT_TIME_LIMIT if limit is None else limit
    cases = list(cases)
    for i, (args, kwargs) in enumerate(cases):
        expected = reference(*copy_case(args), **copy_case(kwargs))
        where = f"on test case {i + 1} {_describe_case(args, kwargs)}"
        try:
            got = call_with_limit(fn, copy_case(args), copy_case(kwargs), limit=limit)
        except NotImplementedError:
            return turn.pending()
        except Stopped as e:
            return turn.stopped(e.seconds)
        except TookTooLong:
            return turn.finish(False, _too_long(limit, where), answer=fn, hint=hint)
        except Exception as e:  # the learner's code: report it, never a traceback
            return turn.finish(False, raised(e, f"{where} your function"), answer=fn, hint=hint)
        ok, why, detail = compare(got, expected, rtol, atol)
        if not ok:
            special = f" [{case_hints[i]}]" if case_hints and i < len(case_hints) and case_hints[i] else ""
            known = next((h for m, h in mistakes if _matches(m, args, kwargs, got)), hint)
            return turn.finish(False, f"{where}{special}: {why}", answer=fn, detail=detail, hint=known)
    return turn.finish(True, f"it matches the package on {len(cases)} test cases.", answer=fn)


def check_value(get: Callable[[], Any] | Any, expected: Any, *, turn: Turn | None = None, name: str = "Your answer",
                hint: str = "", rtol: float = 1e-6,
                atol: float = 1e-9) -> bool:
    """Compare a learner's value (or a zero-argument function that returns it) with the expected one.
    (``name`` heads the verdict when no ``turn`` of a declared exercise is given.)"""
    turn = turn if turn is not None else Turn.loose(name)
    done, got = _learner_result(get, IMPLEMENT_TIME_LIMIT, turn, get, hint,
                                "to compute its answer", "computing your answer")
    if not done:
        return got
    try:
        ok, why, detail = compare(got, expected, rtol, atol)
    except Exception:  # an answer of a kind nobody expected: say so, never a traceback
        ok, why, detail = False, f"could not compare your answer ({type(got).__name__}) with a number", ""
    return turn.finish(ok, "your answer matches." if ok else why, answer=get, detail=detail, hint=hint)


class Unreadable(ValueError):
    """A result of the wrong form: the message says what was expected (the checker shows it as it is)."""


def _learner_result(get: Callable[[], Any] | Any, limit: float, turn: Turn, answer: Any, hint: str,
                    too_long: str, doing: str, *, progress: bool = False) -> tuple[bool, Any]:
    """``(True, result)`` of the learner's ``get`` (called within ``limit`` seconds), or ``(False, verdict)``
    where it is a stub, runs too long (``too_long``: "to run"), raises (``doing``: "running your
    measurement") or is interrupted by the learner ("stopped"): the verdict is already told, kindly. With
    ``progress``, a long call says that it is still running (:func:`call_with_limit`)."""
    try:
        return True, (call_with_limit(get, limit=limit, waiting=turn.name if progress else "") if callable(get)
                      else get)
    except NotImplementedError:
        return False, turn.pending()
    except Stopped as e:
        return False, turn.stopped(e.seconds)
    except TookTooLong:
        return False, turn.finish(False, _too_long(limit, too_long), answer=answer, hint=hint)
    except Unreadable as e:
        return False, turn.finish(False, str(e), answer=answer, hint=hint)
    except Exception as e:
        return False, turn.finish(False, raised(e, doing), answer=answer, hint=hint)


def check_measurement(get: Callable[[], Any] | Any, judge: Callable[[Any], Verdict | tuple], *,
                      turn: Turn | None = None, name: str = "Your answer", hint: str = "",
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
    done, got = _learner_result(get, limit, turn, answer, hint, "to run", "running your measurement", progress=True)
    if not done:
        return got
    if on_meta(got):
        return turn.finish(False, META_MESSAGE, answer=answer, hint=hint)
    try:
        out = judge(got)
    except Unreadable as e:
        out = Verdict(False, str(e))
    except Exception:
        out = Verdict(False, f"could not read your result ({type(got).__name__})"
                             + (f": it should be {expects}" if expects else ""))
    if isinstance(out, tuple):  # the judges' older form, (ok, message[, detail[, hint]]), while they move over
        out = Verdict(*out)
    return turn.finish(out.ok, out.message, answer=(answer, got if not callable(got) else None), detail=out.detail,
                       hint=out.hint or hint)


def measure_each(fn: Callable[..., Any], params: Sequence[Any], what: str, **kwargs: Any) -> dict[Any, float]:
    """Call a learner's ``fn(p, **kwargs)`` for every parameter and collect one number per call: a finite
    float, or ±inf (a measurement may legitimately never reach its level). Raises :class:`Unreadable` with
    a plain message naming ``what(p)`` for anything else."""
    if not callable(fn):
        raise Unreadable(f"expected a function {what}(...), got {type(fn).__name__}")
    out = {}
    for p in params:
        value = fn(p, **kwargs)
        if on_meta(value):
            raise Unreadable(META_MESSAGE)
        t = _as_tensor(value)
        if t is None or t.numel() != 1:
            raise Unreadable(f"{what}({p}) should return one number, got "
                             + (type(value).__name__ if t is None else f"shape {tuple(t.shape)}"))
        v = float(t.double())
        out[p] = v if math.isinf(v) else finite_number(v, f"{what}({p})")
    return out


def finite_number(x: Any, what: str) -> float:
    """``x`` as a finite Python float, or :class:`Unreadable` saying what was wrong with ``what``."""
    if on_meta(x):
        raise Unreadable(META_MESSAGE)
    t = _as_tensor(x)
    if t is None or t.numel() != 1:
        raise Unreadable(f"{what} should be one number, got {type(x).__name__}")
    v = float(t.double().item())
    if not math.isfinite(v):
        raise Unreadable(f"{what} is {v}: NaN or inf")
    return v


def pending(*answers: Any) -> tuple[Any, ...]:
    """The learner's answers, or NotImplementedError (a ⏳, not a ❌) while a stub's ``...`` is still there."""
    if any(a is Ellipsis for a in answers):
        raise NotImplementedError("the stub's ... blanks are still there")
    return answers
