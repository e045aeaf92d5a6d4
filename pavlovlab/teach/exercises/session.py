"""The learner's session: attempts, hint tiers, solutions read and expected values asked for, per exercise of
one notebook, and the small progress file the sessions keep beside the notebooks.

The file, :data:`PROGRESS_FILE`, is written atomically after every check, hint and solution; nothing is sent
anywhere; a folder that cannot be written is ignored (progress is a convenience); a record that cannot be read
is never overwritten but kept aside under :data:`UNREADABLE_PROGRESS`, the learner told once.
"""

from __future__ import annotations

import contextlib
import json
import os
import textwrap
from pathlib import Path
from typing import Any

from pavlovlab.teach.language import _
from pavlovlab.teach.student import SOLUTION_TAG, atomic_write

from .registry import Declared, solution_source

PROGRESS_FILE = ".pavlovlab_progress.json"
"""The learner's own record of their checks, kept beside their notebooks (nothing is sent anywhere)."""

UNREADABLE_PROGRESS = ".pavlovlab_progress.unreadable{n}.json"
"""Where an unreadable progress record is kept (``n``: empty, then ``-2``, ``-3``, ... never overwriting one)."""


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython shell with a kernel)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def default_folder() -> Path | None:
    """Where a notebook's session keeps progress: the kernel's folder (the notebook's), unless it holds the
    course's own notebooks with their solutions (an instructor's or a test run's, not a learner's copy)."""
    if not in_kernel():
        return None
    here = Path.cwd()
    for path in here.glob("[0-9]*.ipynb"):
        try:
            if f'"{SOLUTION_TAG}"' in path.read_text(encoding="utf-8"):
                return None
        except OSError:
            continue
    return here


class Session:
    """One learner working through one notebook's exercises (``book``).

    ``folder`` is where the progress record lives (:data:`PROGRESS_FILE`); by default the current folder when
    running in a Jupyter kernel (the notebook's folder), except the course folder itself (its notebooks hold
    their solutions), else nowhere. Writing it never fails loudly: progress is a convenience.
    """

    def __init__(self, book: Declared, folder: str | Path | None = None) -> None:
        self.book = book
        self.folder = Path(folder) if folder is not None else default_folder()
        self.attempts: dict[int, int] = {}
        self._last: dict[int, str] = {}
        self._hints: dict[int, int] = {}
        self._read: set[int] = set()
        self._asked: set[int] = set()
        self._details: dict[int, str] = {}

    # -- attempts
    def record(self, number: int, answer: str, ok: bool, detail: str = "") -> int:
        """Note one check of exercise ``number`` whose answer has fingerprint ``answer`` (``detail``: the
        expected values of a failed check, kept for :meth:`reveal`); return how many different answers were
        checked so far (the same answer run again is not a new attempt)."""
        if self._last.get(number) != answer:
            self._last[number] = answer
            self.attempts[number] = self.attempts.get(number, 0) + 1
        if detail:
            self._details[number] = detail
        else:
            self._details.pop(number, None)
        self._save(number, ok)
        return self.attempts[number]

    def shows_values(self, number: int) -> bool:
        """Whether a verdict may show the expected values: only once the learner asked for them
        (:meth:`reveal`) or read the solution (:meth:`solution`)."""
        return number in self._asked or number in self._read

    # -- hints, solutions, the expected values
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
            # Translators: {got} is what the learner passed as tier (code: 7, '2', None).
            print(_("💡 Exercise {number} has hint tiers 1 to {tiers}; got tier={got}.").format(
                number=number, tiers=len(e.hints), got=repr(tier)))
            return
        self._hints[number] = max(self._hints.get(number, 0), tier)
        self._save(number, False)
        more = (_("  (ex.hint({number}) again for tier {next} of {tiers})") if tier < len(e.hints)
                else _("  (that was the last tier; ex.solution({number}) shows the reference solution)"))
        print(_("💡 Exercise {number}, hint {tier} of {tiers}: {hint}").format(
            number=number, tier=tier, tiers=len(e.hints), hint=e.hint(tier)))
        print(more.format(number=number, next=tier + 1, tiers=len(e.hints)))

    def solution(self, number: int) -> None:
        """Print the reference solution of exercise ``number``: read it, then write your own. From then on
        the checker shows the expected values."""
        try:
            e = self.book.get(number)
        except ValueError as err:
            print(f"📖 {err}")
            return
        source = solution_source(self.book.notebook, number)
        if source is None:
            print(_("📖 The reference solution of exercise {number} is missing from this installation of "
                    "pavlovlab (solutions.json): ask your instructor.").format(number=number))
            return
        self._read.add(number)
        self._save(number, False)
        print(_("📖 {name}, the reference solution:").format(name=e.name) + "\n")
        print(textwrap.indent(source, "    "))

    def reveal(self, number: int) -> None:
        """Print the expected values of the last failed check of exercise ``number`` (where the checker has
        them), and show them with every ❌ of that exercise from now on. A verdict never shows them unasked."""
        try:
            e = self.book.get(number)
        except ValueError as err:
            print(f"📋 {err}")
            return
        self._asked.add(number)
        if number in self._details:
            # Translators: {values} is what the check expected and what it got ("expected 3, got 4").
            print(_("📋 {name}, your last check: {values}.").format(name=e.name, values=self._details[number]))
        else:
            print(_("📋 {name}: no failed check with expected values yet; from now on a ❌ of this exercise shows "
                    "them.").format(name=e.name))

    # -- the progress file
    def _save(self, number: int, ok: bool) -> None:
        if self.folder is None:
            return
        try:
            target = self.folder / PROGRESS_FILE
            data = load_progress(self.folder)
            entry = data.setdefault(self.book.notebook, {}).setdefault(str(number), {"attempts": 0, "done": False})
            entry["attempts"] = max(int(entry.get("attempts", 0)), self.attempts.get(number, 0))
            entry["done"] = bool(entry.get("done")) or ok
            if self._hints.get(number):  # the deepest hint tier read; the solution, once read
                entry["hints"] = max(int(entry.get("hints", 0)), self._hints[number])
            if number in self._read:
                entry["solution"] = True
            atomic_write(target, lambda t: t.write_text(json.dumps(data, indent=1, sort_keys=True),
                                                        encoding="utf-8"))
        except Exception:  # a read-only folder or a full disk must never interrupt the learner
            pass


_TOLD_UNREADABLE: set[Path] = set()


def load_progress(folder: Path) -> dict[str, Any]:
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
    kept = set_aside(path)
    if folder.resolve() not in _TOLD_UNREADABLE:
        _TOLD_UNREADABLE.add(folder.resolve())
        if kept is not None:
            print(_("⚠ Your progress record {file} could not be read (cut off or edited?): it is kept as {kept} "
                    "beside your notebooks, and your progress is recorded afresh from now on.").format(
                      file=PROGRESS_FILE, kept=kept.name))
        else:
            print(_("⚠ Your progress record {file} could not be read (cut off or edited?): it could not be moved "
                    "aside, so it is left as it is, and your progress is recorded afresh from now on.").format(
                      file=PROGRESS_FILE))
    return {}


def set_aside(path: Path) -> Path | None:
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
