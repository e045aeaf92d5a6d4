"""Exercise checkers. Each notebook's checkers live in a module named after the notebook
(``pavlovlab.teach.exercises.pavlovian_conditioning`` for ``01_pavlovian_conditioning``, ...), where every exercise is
declared once, next to its checker (``@BOOK.exercise(number, title, kind=..., hints=[...])``). A notebook opens a
learner's session, ``ex = exercises.session("01")``, and calls ``ex.check_...``, ``ex.hint(n)``, ``ex.solution(n)``,
``ex.progress()``. The checkers compare the learner's function or value with the package on several cases, or judge a
designed measurement, and print a friendly verdict, never a traceback. docs/authoring-exercises.md says how to add one.
"""

from pathlib import Path

from ._core import Book, Exercise, Session, Verdict, books, check_function, check_measurement, check_value, verdict


def session(notebook: str, folder: str | Path | None = None) -> Session:
    """A learner's session for the exercises of ``notebook`` (its file stem, e.g. ``"04_capacity_limits"``, or
    its number, ``"04"``): ``ex = exercises.session("04")`` in the notebook's setup cell. See :class:`Session`."""
    if not isinstance(notebook, str):
        raise TypeError(f"notebook: expected a notebook name such as '04', got {type(notebook).__name__}")
    found = [b for b in books() if b.notebook == notebook or b.notebook.split("_", 1)[0] == notebook]
    if len(found) != 1:
        raise ValueError(f"notebook: expected one of {[b.notebook for b in books()]} (or its number), got {notebook!r}")
    return found[0].session(folder)


__all__ = ["Book", "Exercise", "Session", "Verdict", "books", "check_function", "check_measurement", "check_value",
           "session", "verdict"]
