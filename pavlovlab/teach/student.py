"""Learner copies of the course notebooks: solution cells removed, outputs cleared, checkers kept.

``make_student_copies(course_dir, out_dir)`` never overwrites a file that already exists in
``out_dir`` (a learner's work is never lost) unless ``force=True``; it returns what it wrote and
what it skipped so that the caller can say so. It refuses an ``out_dir`` that is the course folder
or lies inside it (the course's own notebooks would lose their solutions), and writes every file
under a temporary name first, then renames it (:func:`atomic_write`): an interrupted run leaves no
half-written notebook.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat

from pavlovlab.teach.exercise_keys import cell_key

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # Windows: a killed run's temporary files are recognised by their age alone
    fcntl = None

SOLUTION_TAG = "solution"
"""Cells carrying this tag are the worked answers: removed from learner copies."""

NOT_COPIED = {"INSTRUCTOR_GUIDE.md"}
"""Course files that stay with the instructor."""

LEARNER_README_NAME = "HOW_TO_USE.md"
LEARNER_README = """\
# pavlovlab: your copy of the course

These are your own copies of the course notebooks. Work through them in order, starting with
`00_start_here.ipynb`.

## What these copies hold

- Every notebook's text, figures' code and widgets, with the outputs cleared: run the cells yourself.
- For each exercise, a **stub** cell and a **check** cell. The stub raises
  `NotImplementedError("Exercise N: ...")` (the task in words): replace that line with your code and
  run the cell, then run the check cell under it. It says ✅ when your answer is right, ❌ with a hint
  about the idea when it is not (the expected numbers only when you ask for them, see below), and ⏳
  while the exercise is not done yet.
- **No solution cells**: the hidden solution cells of the course notebooks are removed from these
  copies. The reference solutions are still reachable from inside the notebook, see below.

## When you are stuck: hints, then the solution

Each notebook opens your exercises as `ex` in its setup cell (`ex.start()`): run that cell first after
every kernel restart. A cell run too early says, in one sentence, which cell or section to run first.

- `ex.hint(N)` prints the next hint tier of exercise N, from the idea to nearly the code: run it
  again for the next tier.
- `ex.solution(N)` prints the reference solution of exercise N. Try the hints first; read the
  solution, then write your own version.
- `ex.reveal(N)` prints the values your last check of exercise N expected; from then on its ❌ shows them.
- `ex.progress()` lists every exercise of the course as done, tried or not yet, from the checks you ran
  in this folder (kept in `.pavlovlab_progress.json` here; nothing is sent anywhere).

## Good to know

- Nothing here is overwritten when your instructor hands out new copies: existing files are kept
  (only `pavlovlab student OUTDIR --force` replaces them).
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


def _tags(cell: Mapping[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A learner copy of one notebook (a new object; ``nb`` is left unchanged).

    Drops every cell tagged ``solution``; clears outputs and execution counts; drops stored widget
    state and per-cell execution metadata; keeps every other cell (tasks, stubs, checks) as it is.
    """
    if not isinstance(nb, nbformat.NotebookNode) or not isinstance(nb.get("cells"), list):
        raise TypeError(f"nb: expected a notebook (a NotebookNode from nbformat.read(path, as_version=4)), got "
                        f"{type(nb).__name__}")
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


def exercise_number(cell: Mapping[str, Any]) -> int | None:
    """The exercise a cell belongs to: N of its key in the cell metadata (:mod:`pavlovlab.teach.exercise_keys`),
    None for a cell of no exercise."""
    key = cell_key(cell)
    return key[0] if key is not None else None


def solution_sources(course_dir: str | Path) -> dict[str, dict[str, str]]:
    """The reference solutions of the course: ``{notebook stem: {"N": source of its solution cell}}``.

    A solution cell is a code cell tagged ``solution``; the key in its metadata says its exercise. Raises
    ValueError naming the notebook for a solution cell without a key, or two solution cells for one exercise."""
    out: dict[str, dict[str, str]] = {}
    for path in course_notebooks(course_dir):
        nb = nbformat.read(path, as_version=4)
        found: dict[str, str] = {}
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or SOLUTION_TAG not in _tags(cell):
                continue
            number = exercise_number(cell)
            if number is None:
                raise ValueError(f"course_dir: {path.name} cell {i} is a solution without an exercise key in its "
                                 "metadata (python tools/exercise_keys.py --write writes them)")
            if str(number) in found:
                raise ValueError(f"course_dir: {path.name} has two solution cells for exercise {number}")
            found[str(number)] = cell.source.strip("\n")
        if found:
            out[path.stem] = found
    return out


def solutions_json(course_dir: str | Path) -> str:
    """:func:`solution_sources` as the text of ``pavlovlab/teach/exercises/solutions.json`` (sorted, one
    trailing newline), which ``ex.solution(n)`` reads."""
    return json.dumps(solution_sources(course_dir), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def atomic_write(target: str | Path, write: Callable[[Path], object]) -> Path:
    """Write a file safely: ``write(tmp)`` fills a temporary file next to ``target``, which then replaces
    ``target`` in one rename. An interrupted or failing ``write`` leaves ``target`` as it was (absent or
    old) and removes the temporary file; OSErrors propagate with ``target`` as their filename.

    The temporary file is named ``.TARGET.xxxxxxxx.tmp`` and, where the system has ``flock``, held under an
    exclusive lock until the rename: a process killed mid-write leaves it unlocked, which is how
    :func:`remove_stale_temporaries` tells it from one being written now."""
    target = Path(target)
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        e.filename = str(target)
        raise
    tmp = Path(name)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes, or when the process dies
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        write(tmp)
        os.replace(tmp, target)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and (e.filename is None or str(e.filename) == str(tmp)):
            e.filename = str(target)
        raise
    finally:
        os.close(fd)
    return target


def being_written(path: Path) -> bool | None:
    """Whether a temporary file of :func:`atomic_write` is locked by a writer now (None where the system has
    no ``flock``, so that only its age can tell)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True  # gone or unreadable: not ours to remove
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$")
"""The name :func:`atomic_write` gives a file while it is being written."""
STALE_AFTER_S = 60.0
"""A temporary file untouched for this long belongs to a run that was killed (a write takes well under a
second), not to one writing now: :func:`remove_stale_temporaries` removes it."""
UNLOCKED_AFTER_S = 1.0
"""A temporary file this old that no writer holds locked (``flock``) was left by a killed run (a writer locks
its file a few microseconds after creating it)."""


def remove_stale_temporaries(folder: Path, *, now: float | None = None,
                             names: Collection[str] | None = None) -> list[Path]:
    """Remove the hidden ``.NAME.xxxxxxxx.tmp`` files that a killed run left in ``folder`` (only files of that
    pattern, for a NAME in ``names`` when given): untouched for ``STALE_AFTER_S`` seconds, or, where the
    system has ``flock``, older than ``UNLOCKED_AFTER_S`` and not locked by the writer that
    :func:`atomic_write` holds. Returns those removed."""
    now = time.time() if now is None else now
    removed = []
    for path in sorted(folder.glob(".*.tmp")):
        match = TEMPORARY.match(path.name)
        if not match or (names is not None and match["name"] not in names):
            continue
        try:
            age = now - path.stat().st_mtime if path.is_file() and not path.is_symlink() else None
        except OSError:
            continue
        if age is None:
            continue
        if age > STALE_AFTER_S or (age > UNLOCKED_AFTER_S and being_written(path) is False):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def refuse_unsafe_outdir(out_dir: str | Path, course_dir: str | Path | None = None, *,
                         name: str = "out_dir") -> Path:
    """Refuse an output folder that would harm the course: an empty name (the current folder by
    accident), the course folder itself or a folder inside it, or a folder that holds course notebooks
    (``[0-9]*.ipynb`` with a ``solution`` cell). Raises ValueError naming the folder; returns it as a Path."""
    if not isinstance(out_dir, (str, Path)):
        raise TypeError(f"{name}: expected a folder path, got {type(out_dir).__name__}")
    if str(out_dir).strip() == "":
        raise ValueError(f"{name}: expected a folder name, got an empty string (it would write into the "
                         "current folder)")
    out = Path(out_dir)
    resolved = out.resolve()
    if course_dir is not None:
        course = Path(course_dir).resolve()
        if resolved == course or course in resolved.parents:
            where = "is the course folder" if resolved == course else f"lies inside the course folder {str(course)!r}"
            raise ValueError(f"{name}: {str(out)!r} {where}; choose a folder outside the course, "
                             "e.g. ~/pavlovlab")
    if resolved.is_dir() and any(_has_solutions(p) for p in resolved.glob("[0-9]*.ipynb")):
        raise ValueError(f"{name}: {str(out)!r} holds course notebooks with their solutions; choose a folder "
                         "outside the course, e.g. ~/pavlovlab")
    return out


def _has_solutions(path: Path) -> bool:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return False
    return any(SOLUTION_TAG in _tags(c) for c in nb.cells)


def _written_here(course_dir: Path, out_dir: Path, folder: Path) -> Collection[str]:
    """The names of the files :func:`make_student_copies` writes into ``folder`` (a folder of ``out_dir``)."""
    rel = folder.relative_to(out_dir)
    names = {p.name for p in (course_dir / rel).iterdir() if p.is_file()} if (course_dir / rel).is_dir() else set()
    return names | ({LEARNER_README_NAME} if rel == Path() else set())


def make_student_copies(course_dir: str | Path, out_dir: str | Path, *, force: bool = False) -> CopyReport:
    """Write learner copies of every course notebook (and the other learner files) into ``out_dir``.

    Existing files in ``out_dir`` are skipped (listed in the report) unless ``force`` is true.
    A ``HOW_TO_USE.md`` for learners is added (an edition's own, translated, when ``course_dir`` has one). Every
    file is written under a temporary name and then renamed, so an interrupted run leaves no half-written file;
    the temporary files of the names it writes that a killed run left behind are removed (never another file,
    never one being written now). Raises ValueError if ``course_dir`` has no notebook, or ``out_dir`` is empty, is
    the course folder, lies inside it, holds course notebooks or exists and is not a folder; NotADirectoryError
    (before writing) if a parent of ``out_dir`` is a file; filesystem faults raise OSError (its ``filename`` is
    the file).
    """
    course_dir = Path(course_dir)
    notebooks = course_notebooks(course_dir)
    if not notebooks:
        raise ValueError(f"course_dir: expected notebooks named like 00_*.ipynb in {str(course_dir)!r}, found none")
    out_dir = refuse_unsafe_outdir(out_dir, course_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out_dir: expected a folder (new or existing), got the file {str(out_dir)!r}")
    parent = next((p for p in out_dir.absolute().parents if p.exists()), None)
    if parent is not None and not parent.is_dir():  # an OSError, as the mkdir would raise, but said before writing
        raise NotADirectoryError(errno.ENOTDIR, f"out_dir: expected a folder path, got {str(out_dir)!r} whose parent "
                                 "is a file, not a folder", str(parent))
    out_dir.mkdir(parents=True, exist_ok=True)
    report = CopyReport()
    cleaned: set[Path] = set()

    def put(target: Path, write: Callable[[Path], object]) -> None:
        if target.parent not in cleaned and target.parent.is_dir():  # a killed run's leftovers, ours only
            remove_stale_temporaries(target.parent, names=_written_here(course_dir, out_dir, target.parent))
            cleaned.add(target.parent)
        if target.exists() and not force:
            report.skipped.append(target)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, write)
        report.written.append(target)

    def writer(nb: nbformat.NotebookNode) -> Callable[[Path], object]:
        return lambda t: nbformat.write(nb, t)

    def copier(src: Path) -> Callable[[Path], object]:
        return lambda t: shutil.copyfile(src, t)

    for src in notebooks:
        put(out_dir / src.name, writer(student_notebook(nbformat.read(src, as_version=4))))
    # Other learner material next to the notebooks (pictures, data), never the instructor's files.
    for src in sorted(course_dir.rglob("*")):
        rel = src.relative_to(course_dir)
        if (not src.is_file() or src.suffix == ".ipynb" or rel.name in NOT_COPIED
                or any(part.startswith(".") or part == "__pycache__" for part in rel.parts)):
            continue
        put(out_dir / rel, copier(src))
    if not (course_dir / LEARNER_README_NAME).is_file():  # an edition's folder has its translated guide (copied above)
        put(out_dir / LEARNER_README_NAME, lambda t: t.write_text(LEARNER_README, encoding="utf-8"))
    return report


__all__ = ["CopyReport", "atomic_write", "course_notebooks", "exercise_number", "make_student_copies",
           "refuse_unsafe_outdir", "solution_sources", "solutions_json", "student_notebook"]
