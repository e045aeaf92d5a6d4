"""Learner copies of the course notebooks: solution cells removed, outputs cleared, checkers kept.

``make_student_copies(course_dir, out_dir)`` never overwrites a file that already exists in
``out_dir`` (a learner's work is never lost) unless ``force=True``; it returns what it wrote and
what it skipped so that the caller can say so.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

SOLUTION_TAG = "solution"
"""Cells carrying this tag are the worked answers: removed from learner copies."""

NOT_COPIED = {"INSTRUCTOR_GUIDE.md"}
"""Course files that stay with the instructor."""

LEARNER_README_NAME = "HOW_TO_USE.md"
LEARNER_README = """\
# pavlovlab: your copy of the course

These are your own copies of the course notebooks. Work through them in order, starting with
`00_start_here.ipynb`.

- Each exercise has a cell that raises `NotImplementedError("Exercise N: ...")`: replace that line
  with your code and run the cell, then run the check cell under it. It says ✅ when your answer
  matches the package, ❌ with a hint when it does not, and ⏳ while the exercise is not done yet.
- The worked solutions are not in these copies; ask your instructor, or look at the original
  notebooks in the course repository once you have tried.
- Nothing here is overwritten when your instructor hands out new copies: existing files are kept.
- If something does not work, run `pavlovlab doctor` in a terminal and paste its output when you ask
  for help.
"""


@dataclass
class CopyReport:
    """What ``make_student_copies`` did: files written and existing files left alone."""

    written: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)


def course_notebooks(course_dir: str | Path) -> list[Path]:
    """The course notebooks in reading order: ``course_dir/[0-9]*.ipynb``, sorted by name."""
    course_dir = Path(course_dir)
    if not course_dir.is_dir():
        raise ValueError(f"course_dir: expected an existing folder, got {str(course_dir)!r}")
    return sorted(p for p in course_dir.glob("[0-9]*.ipynb") if p.is_file())


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A learner copy of one notebook (a new object; ``nb`` is left unchanged).

    Drops every cell tagged ``solution``; clears outputs and execution counts; drops stored widget
    state and per-cell execution metadata; keeps every other cell (tasks, stubs, checks) as it is.
    """
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)  # a deep copy
    cells = []
    for cell in nb.cells:
        if SOLUTION_TAG in _tags(cell):
            continue
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb


def make_student_copies(course_dir: str | Path, out_dir: str | Path, *, force: bool = False) -> CopyReport:
    """Write learner copies of every course notebook (and the other learner files) into ``out_dir``.

    Existing files in ``out_dir`` are skipped (listed in the report) unless ``force`` is true.
    A ``HOW_TO_USE.md`` for learners is added. Raises ValueError if ``course_dir`` has no notebook or
    ``out_dir`` exists and is not a folder.
    """
    course_dir, out_dir = Path(course_dir), Path(out_dir)
    notebooks = course_notebooks(course_dir)
    if not notebooks:
        raise ValueError(f"course_dir: expected notebooks named like 00_*.ipynb in {str(course_dir)!r}, found none")
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out_dir: expected a folder (new or existing), got the file {str(out_dir)!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    report = CopyReport()

    def put(target: Path, write) -> None:
        if target.exists() and not force:
            report.skipped.append(target)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        write(target)
        report.written.append(target)

    for src in notebooks:
        nb = student_notebook(nbformat.read(src, as_version=4))
        put(out_dir / src.name, lambda t, nb=nb: nbformat.write(nb, t))
    # Other learner material next to the notebooks (pictures, data), never the instructor's files.
    for src in sorted(course_dir.rglob("*")):
        rel = src.relative_to(course_dir)
        if (not src.is_file() or src.suffix == ".ipynb" or rel.name in NOT_COPIED
                or any(part.startswith(".") or part == "__pycache__" for part in rel.parts)):
            continue
        put(out_dir / rel, lambda t, src=src: shutil.copy2(src, t))
    put(out_dir / LEARNER_README_NAME, lambda t: t.write_text(LEARNER_README, encoding="utf-8"))
    return report


__all__ = ["CopyReport", "course_notebooks", "make_student_copies", "student_notebook"]
