"""An exercise is keyed once, in its cells' metadata: the heading, the stub's message, the solution's tag and
the check cell's call all agree with the key, and the checker module declares the same exercises."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pavlovlab.teach import exercise_keys
from pavlovlab.teach.exercises import registry

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = {b.notebook: b for b in registry.books()}


def _cells(notebook: str) -> list[dict]:
    return json.loads((ROOT / "course" / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_headings_stubs_checks_and_checkers_agree_with_the_keys(notebook):
    checkers = {e.number: e.checker for e in NOTEBOOKS[notebook]}
    assert exercise_keys.disagreements(_cells(notebook), checkers) == []


def test_every_course_notebook_with_exercises_has_a_checker_module():
    keyed = {p.stem for p in (ROOT / "course").glob("[0-9]*.ipynb")
             if any(exercise_keys.cell_key(c) for c in _cells(p.stem))}
    assert keyed == set(NOTEBOOKS)


def test_every_checker_module_is_named_in_the_registry():
    folder = ROOT / "pavlovlab" / "teach" / "exercises"
    with_a_book = {p.stem for p in folder.glob("[a-z]*.py") if "\nBOOK = Book(" in p.read_text(encoding="utf-8")}
    assert with_a_book == set(registry.CHECKER_MODULES)


def test_the_keys_are_what_the_headings_say():
    out = subprocess.run([sys.executable, "tools/exercise_keys.py", "--check", *sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "course").glob("[0-9]*.ipynb"))], cwd=ROOT, capture_output=True,
        text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _renumbered(cells: list[dict], part: str, old: str, new: str) -> list[dict]:
    cells = copy.deepcopy(cells)
    cell = next(c for c in cells if exercise_keys.cell_key(c) == (2, part))
    cell["source"] = "".join(cell["source"]).replace(old, new)
    return cells


@pytest.mark.parametrize("part, old, new, says", [
    ("task", "Exercise 2", "Exercise 5", "heading does not say"),
    ("stub", '"Exercise 2', '"Exercise 3', 'message is not NotImplementedError("Exercise 2'),
    ("check", "ex.check_delta_write(", "ex.check_unstable_beta(", "does not call ex.check_delta_write"),
])
def test_a_number_changed_in_one_place_is_caught(part, old, new, says):
    book = NOTEBOOKS["06_delta_and_oja"]
    checkers = {e.number: e.checker for e in book}
    problems = exercise_keys.disagreements(_renumbered(_cells(book.notebook), part, old, new), checkers)
    assert any(says in p for p in problems), problems


def test_a_declared_exercise_without_cells_and_a_missing_part_are_caught():
    cells = _cells("06_delta_and_oja")
    checkers = {e.number: e.checker for e in NOTEBOOKS["06_delta_and_oja"]}
    assert any("declared" in p for p in exercise_keys.disagreements(cells, {**checkers, 9: "check_more"}))
    dropped = [c for c in cells if exercise_keys.cell_key(c) != (3, "solution")]
    assert any("exercise 3: parts" in p for p in exercise_keys.disagreements(dropped, checkers))


def test_keys_written_from_headings_touch_metadata_only():
    cells = copy.deepcopy(_cells("06_delta_and_oja"))
    for c in cells:
        c["metadata"].pop(exercise_keys.KEY, None)
    before = copy.deepcopy(cells)
    assert exercise_keys.write_keys(cells, exercise_keys.keys_from_headings(cells)) == 16
    assert [(c["source"], c.get("outputs")) for c in cells] == [(c["source"], c.get("outputs")) for c in before]
    assert cells == _cells("06_delta_and_oja")
