"""An exercise keyed once: its number lives in the metadata of its four notebook cells, as nbgrader keys a cell
on its ``grade_id``; the heading, the stub's message and the checker's declaration are checked against it.

Each of the four cells of exercise N carries ``{"pavlovlab": {"exercise": N, "part": PART}}`` in its metadata,
PART one of :data:`PARTS`: the task (markdown, its heading names ``Exercise N``), the stub (code ending in
``raise NotImplementedError("Exercise N: …")``), the solution (code tagged ``solution``) and the check (code,
``ex.check_…(…)``). :func:`keys_from_headings` writes those keys from the notebooks' headings (what
``tools/exercise_keys.py --write`` runs); :func:`disagreements` lists every place where a heading, a stub
message or a part's position disagrees with the keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

KEY = "pavlovlab"
"""The cell metadata namespace of the course's own keys."""

PARTS = ("task", "stub", "solution", "check")
"""The cells of one exercise, in the order they appear."""

HEADING = re.compile(r"^#{2,4}\s.*?\bExercise (\d+)\b", re.M)
"""A task cell's heading: ``### Exercise 2: …`` or ``### Try it: Exercise 1, …`` (the first number after it)."""

STUB_MESSAGE = re.compile(r"""NotImplementedError\(\s*["']Exercise (\d+)\b""")
"""The number in a stub's ``raise NotImplementedError("Exercise N: …")``."""

SOLUTION_TAG = "solution"


def _source(cell: Mapping[str, Any]) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


def cell_key(cell: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(exercise number, part)`` of a keyed cell; None for any other cell (or a key of another form)."""
    key = cell.get("metadata", {}).get(KEY, {})
    if not isinstance(key, Mapping):
        return None
    number, part = key.get("exercise"), key.get("part")
    if isinstance(number, int) and not isinstance(number, bool) and part in PARTS:
        return number, str(part)
    return None


def keys_from_headings(cells: list[Any]) -> dict[int, tuple[int, str]]:
    """``{cell index: (exercise number, part)}`` read from today's layout: a markdown cell whose heading names
    ``Exercise N``, then the next three code cells (the stub, the solution, the check). ValueError naming the
    cell where the layout differs."""
    keys: dict[int, tuple[int, str]] = {}
    for i, cell in enumerate(cells):
        found = HEADING.search(_source(cell)) if cell.get("cell_type") == "markdown" else None
        if found is None:
            continue
        number = int(found.group(1))
        keys[i] = (number, "task")
        code = [j for j in range(i + 1, len(cells)) if cells[j].get("cell_type") == "code"][:3]
        if len(code) < 3:
            raise ValueError(f"cells: exercise {number} (cell {i}) is not followed by a stub, a solution and a check")
        for j, part in zip(code, PARTS[1:], strict=True):
            keys[j] = (number, part)
    return keys


def write_keys(cells: list[Any], keys: Mapping[int, tuple[int, str]]) -> int:
    """Set each cell's key to ``keys`` (and drop keys of cells not in it); return how many cells changed."""
    changed = 0
    for i, cell in enumerate(cells):
        want = keys.get(i)
        if cell_key(cell) == want and (want is not None or KEY not in cell.get("metadata", {})):
            continue
        changed += 1
        if want is None:
            cell["metadata"].pop(KEY, None)
        else:
            cell["metadata"][KEY] = {"exercise": want[0], "part": want[1]}
    return changed


def disagreements(cells: list[Any], checkers: Mapping[int, str]) -> list[str]:
    """Where one notebook's cells disagree with their keys and with its declared exercises (``checkers``:
    ``{number: checker name}``): each exercise has its four parts, once each and in order; the task's heading,
    the stub's message, the solution's tag and the check's call say the key's number and checker. [] if none."""
    problems = []
    parts: dict[int, list[tuple[int, str]]] = {}
    for i, cell in enumerate(cells):
        key = cell_key(cell)
        if key is not None:
            parts.setdefault(key[0], []).append((i, key[1]))
            problems += [f"cell {i} (exercise {key[0]}, {key[1]}): {p}" for p in _part_disagrees(cell, *key, checkers)]
        elif cell.get("cell_type") == "code" and STUB_MESSAGE.search(_source(cell)):
            problems.append(f"cell {i}: an exercise stub without a key")
    if sorted(parts) != sorted(checkers):
        problems.append(f"exercises keyed {sorted(parts)}, declared {sorted(checkers)}")
    for number, found in sorted(parts.items()):
        if [p for _, p in found] != list(PARTS):
            problems.append(f"exercise {number}: parts {[p for _, p in found]}, expected {list(PARTS)} in order")
    return problems


def _part_disagrees(cell: Mapping[str, Any], number: int, part: str, checkers: Mapping[int, str]) -> list[str]:
    src = _source(cell)
    kind = "markdown" if part == "task" else "code"
    if cell.get("cell_type") != kind:
        return [f"a {cell.get('cell_type')} cell, expected {kind}"]
    if part == "task":
        heading = HEADING.search(src)
        return [] if heading and int(heading.group(1)) == number else ["its heading does not say this number"]
    if part == "stub":
        message = STUB_MESSAGE.search(src)
        return [] if message and int(message.group(1)) == number else [
            f'its message is not NotImplementedError("Exercise {number}: …")']
    if part == "solution":
        return [] if SOLUTION_TAG in cell.get("metadata", {}).get("tags", []) else ["not tagged solution"]
    checker = checkers.get(number)
    return [] if checker and src.lstrip().startswith(f"ex.{checker}(") else [f"does not call ex.{checker}(…)"]
