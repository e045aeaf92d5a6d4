"""The course's exercises as declared: each notebook's list of :class:`Exercise` records, the registry of those
lists in course order, and the reference solutions extracted from the notebooks.

A checker module declares its notebook's exercises through its :class:`~pavlovlab.teach.exercises.book.Book` (a
:class:`Declared` list that also opens the learner's session); :data:`CHECKER_MODULES` names the nine modules in
course order, and :func:`books` loads them by those names.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pavlovlab.teach.language import _

SOLUTIONS = Path(__file__).with_name("solutions.json")
"""The reference solutions, extracted from the course notebooks' ``solution`` cells by ``make student``."""

CHECKER_MODULES = ("start_here", "pavlovian_conditioning", "hebbian_memory", "linear_attention", "capacity_limits",
                   "depth_and_width", "delta_and_oja", "decay_and_unlearning", "conditioning_in_trained_models")
"""The checker modules of the course's notebooks (``pavlovlab.teach.exercises.<name>``), in course order."""

KINDS = ("implement", "design")
"""``implement``: write a function the checker compares with the package; ``design``: design a measurement."""


@dataclass(frozen=True)
class Exercise:
    """One exercise, declared once next to its checker.

    notebook: the notebook's file stem; number: its number there; title: a few words (the verdicts say
    ``Exercise {number} ({title})``); kind: ``"implement"`` or ``"design"`` (design the measurement); hints:
    tiers, from the idea (tier 1) to nearly the code (last tier); checker: the name of its check function.
    The title and the hints are English, marked ``N_`` where they are declared: what shows them translates them
    (:attr:`name`, :meth:`hint`).
    """

    notebook: str
    number: int
    title: str
    kind: str
    hints: tuple[str, ...]
    checker: str

    @property
    def name(self) -> str:
        """``Exercise {number} ({title})`` in the language in use."""
        return _("Exercise {number} ({title})").format(number=self.number, title=_(self.title))

    def hint(self, tier: int) -> str:
        """Hint tier ``tier`` (counting from 1) in the language in use."""
        return _(self.hints[tier - 1])


class Declared:
    """The exercises declared for one notebook (``notebook``: its file stem; ``module``: the checker module's
    ``__name__``), iterated in number order."""

    def __init__(self, notebook: str, module: str) -> None:
        self.notebook = notebook
        self.module = module
        self._items: dict[int, Exercise] = {}

    def declare(self, exercise: Exercise) -> None:
        """Add ``exercise``; ValueError for an unknown kind, fewer than two hint tiers or a number declared twice."""
        if exercise.kind not in KINDS:
            raise ValueError(f"kind: expected 'implement' or 'design', got {exercise.kind!r}")
        if len(exercise.hints) < 2:
            raise ValueError(f"hints: exercise {exercise.number} needs at least two hint tiers, got "
                             f"{len(exercise.hints)}")
        if exercise.number in self._items:
            raise ValueError(f"number: exercise {exercise.number} of {self.notebook} is declared twice")
        self._items[exercise.number] = exercise

    def __iter__(self) -> Iterator[Exercise]:
        return iter(sorted(self._items.values(), key=lambda e: e.number))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, number: object) -> Exercise:
        """Exercise ``number``; ValueError listing the notebook's exercises for any other value."""
        if isinstance(number, bool) or not isinstance(number, int) or number not in self._items:
            # Translators: a learner meets it with ex.hint(99); {numbers} is a list such as [1, 2, 3].
            raise ValueError(_("number: expected one of the exercises {numbers} of {notebook}, got {got}").format(
                numbers=sorted(self._items), notebook=self.notebook, got=repr(number)))
        return self._items[number]


def books() -> list[Declared]:
    """Every notebook's exercises, in course order: the ``BOOK`` of each of :data:`CHECKER_MODULES`."""
    found = []
    for name in CHECKER_MODULES:
        book = getattr(importlib.import_module(f"{__package__}.{name}"), "BOOK", None)
        if not isinstance(book, Declared):
            raise TypeError(f"CHECKER_MODULES: {name} has no BOOK of exercises")
        found.append(book)
    return found


def book(notebook: str) -> Declared:
    """The exercises of ``notebook``: its file stem (``"04_capacity_limits"``) or its number (``"04"``)."""
    if not isinstance(notebook, str):
        raise TypeError(f"notebook: expected a notebook name such as '04', got {type(notebook).__name__}")
    found = [b for b in books() if notebook in (b.notebook, b.notebook.split("_", 1)[0])]
    if len(found) != 1:
        raise ValueError(f"notebook: expected one of {[b.notebook for b in books()]} (or its number), got {notebook!r}")
    return found[0]


def solution_source(notebook: str, number: int) -> str | None:
    """The reference solution of an exercise, as extracted from the notebook (None if it is not there)."""
    try:
        data = json.loads(SOLUTIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = data.get(notebook, {}).get(str(number))
    return found if isinstance(found, str) else None
