"""A notebook's book of exercises: where its checkers are declared and how the learner's calls reach a session.

A checker module (``pavlovlab.teach.exercises.delta_and_oja``, ...) holds one :class:`Book` and declares each
checker with ``@BOOK.exercise(number, title, kind=..., hints=[...])``. What the decorator returns is the function
the learner calls, ``ex.check_recovery(recovery_time)``, with ``ex`` the checker module itself: the call finds
the book's open session (or opens one), so a reader of the notebook, and an editor's jump-to-definition, land on
the checker. The module binds the book's ``hint``, ``solution``, ``reveal`` and ``progress`` beside them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pavlovlab.teach.language import use as speak
from pavlovlab.teach.progress import show_learner_progress

from . import name_errors
from .checking import Turn
from .registry import Declared, Exercise
from .session import Session


class Book(Declared):
    """The exercises of one notebook and the learner's open session of them.

    >>> BOOK = Book("00_start_here", __name__)                        # doctest: +SKIP
    >>> @BOOK.exercise(1, "how well a test stimulus matches the bell", kind="implement", hints=[...])
    ... def check_match(fn, *, turn): ...                              # doctest: +SKIP
    """

    def __init__(self, notebook: str, module: str) -> None:
        super().__init__(notebook, module)
        self._session: Session | None = None

    def exercise(self, number: int, title: str, *, kind: str, hints: Sequence[str]
                 ) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
        """Declare exercise ``number`` and its checker (``title`` and ``hints`` in English, marked ``N_``: they are
        translated where they are shown). The decorated ``check(..., turn)`` receives a
        :class:`~pavlovlab.teach.exercises.checking.Turn` (this exercise in the book's open session, see
        :meth:`session`); what the decorator returns is the learner's ``check(...)``."""

        def declare(check: Callable[..., bool]) -> Callable[..., bool]:
            e = Exercise(self.notebook, number, title, kind, tuple(hints), check.__name__)
            self.declare(e)

            @functools.wraps(check)
            def checker(*args: Any, **kwargs: Any) -> bool:
                return check(*args, turn=Turn(self.current(), e), **kwargs)
            checker.exercise = e  # type: ignore[attr-defined]
            return checker
        return declare

    # -- the learner's session
    def session(self, folder: str | Path | None = None) -> Session:
        """Open a fresh session of this notebook's exercises (progress kept in ``folder``, see
        :class:`~pavlovlab.teach.exercises.session.Session`): the learner's calls use it from now on."""
        self._session = Session(self, folder)
        return self._session

    def current(self) -> Session:
        """The open session (one is opened, as :meth:`session` does, if none is)."""
        return self._session if self._session is not None else self.session()

    def start(self, language: str = "en") -> None:
        """What a notebook's set-up cell does (``ex.start()``; an edition's says its language,
        ``ex.start(language="fr")``): speak ``language`` (:mod:`pavlovlab.teach.language`), open a fresh session
        and, in IPython, answer a cell run too early with one sentence
        (:mod:`~pavlovlab.teach.exercises.name_errors`) until :meth:`stop`.

        Raises:
            ValueError: for a language the course has no edition in.
        """
        speak(language)
        self.session()
        name_errors.switch_on(self.notebook)

    def stop(self) -> None:
        """End the session: the ``NameError`` sentences are switched off, the next call opens a new session."""
        if name_errors.switched_on() == self.notebook:
            name_errors.switch_off()
        self._session = None

    # -- what the learner calls besides the checkers
    def hint(self, number: int, tier: int | None = None) -> None:
        """Print the next hint tier of exercise ``number`` (or tier ``tier``, counting from 1)."""
        self.current().hint(number, tier)

    def solution(self, number: int) -> None:
        """Print the reference solution of exercise ``number``; from then on a ❌ shows the expected values."""
        self.current().solution(number)

    def reveal(self, number: int) -> None:
        """Print the values the last failed check of exercise ``number`` expected; from then on a ❌ shows them."""
        self.current().reveal(number)

    def progress(self, plot: bool = False) -> Any:
        """Print, for every exercise of the course, whether it is done (✅), tried (❌) or not started (·), and
        the hints and solutions read, from the checks run in notebooks of this folder; with ``plot=True`` also
        return the same map as a figure (see :mod:`pavlovlab.teach.progress`)."""
        return show_learner_progress(self.current().folder, plot=plot)
