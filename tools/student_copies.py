#!/usr/bin/env python3
"""Keep the committed learner copies in ``student/`` (with their editions in other languages, ``student/zh/`` and
``student/fr/``, made from the catalogues in ``locales/``), and the reference solutions that ``ex.solution(n)``
prints (``pavlovlab/teach/exercises/solutions.json``), in step with ``course/``.

The copies are what ``pavlovlab student`` writes (solution cells removed, outputs cleared, a
HOW_TO_USE.md added), normalised like every committed notebook (tools/normalize_notebooks.py).
They are generated into a fresh temporary folder first; then ``--write`` replaces ``student/``'s
files with them (new and changed files written, files the generator no longer makes removed),
and ``--check`` only lists the differences (exit 1 if any). The solutions are the course notebooks' cells
tagged ``solution``; they are committed with the package (a learner's installation has no course notebooks),
and written here, never by hand.

    python tools/student_copies.py --write     # what `make student` runs
    python tools/student_copies.py --check     # what tests/repo/test_student_committed.py asserts
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from normalize_notebooks import normalize_text  # noqa: E402
from translations import build as build_editions  # noqa: E402

from pavlovlab.teach.student import atomic_write, make_student_copies, solutions_json  # noqa: E402

SOLUTIONS = ROOT / "pavlovlab" / "teach" / "exercises" / "solutions.json"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".ipynb_checkpoints" not in p.parts}


def generate(course: Path, out: Path) -> dict[str, bytes]:
    """Fresh, normalised learner copies of ``course`` written into the new folder ``out``, with their editions in
    ``out/<edition>/`` (tools/translations.py): ``{relpath: bytes}``."""
    make_student_copies(course, out, force=True)
    build_editions(out)
    for nb in out.rglob("*.ipynb"):
        nb.write_text(normalize_text(nb.read_text(encoding="utf-8")), encoding="utf-8")
    return _files(out)


def differences(course: Path, student: Path) -> tuple[dict[str, bytes], list[str], list[str], list[str]]:
    """(fresh files, missing in student/, different, stale: in student/ but no longer generated)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(course, Path(tmp) / "student")
    have = _files(student) if student.is_dir() else {}
    missing = [n for n in fresh if n not in have]
    changed = [n for n in fresh if n in have and have[n] != fresh[n]]
    stale = [n for n in have if n not in fresh]
    return fresh, missing, changed, stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate (--write) or check (--check) the learner copies.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="bring student/ up to date with course/")
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 if student/ is out of date")
    parser.add_argument("--course", type=Path, default=ROOT / "course")
    parser.add_argument("--student", type=Path, default=ROOT / "student")
    args = parser.parse_args(argv)
    if args.student.resolve().is_relative_to(args.course.resolve()):
        parser.error("--student must not be inside --course")
    fresh, missing, changed, stale = differences(args.course, args.student)
    solutions = solutions_json(args.course)
    solutions_stale = not SOLUTIONS.is_file() or SOLUTIONS.read_text(encoding="utf-8") != solutions
    if args.check:
        if solutions_stale:
            print(f"out of date: {SOLUTIONS}")
        for label, names in (("missing", missing), ("out of date", changed), ("stale", stale)):
            for n in names:
                print(f"{label}: {args.student / n}")
        if missing or changed or stale or solutions_stale:
            print("student/ or solutions.json is out of date with course/: run `make student` and commit both")
            return 1
        print(f"student/ is up to date ({len(fresh)} files)")
        return 0
    if solutions_stale:
        atomic_write(SOLUTIONS, lambda t: t.write_text(solutions, encoding="utf-8"))
        print(f"wrote    {SOLUTIONS}")
    for n in missing + changed:
        target = args.student / n
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fresh[n])
        print(f"wrote    {target}")
    for n in stale:
        (args.student / n).unlink()
        print(f"removed  {args.student / n} (no longer generated from course/)")
    print(f"student/ is up to date ({len(fresh)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
