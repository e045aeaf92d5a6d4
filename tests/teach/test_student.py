"""``pavlovlab.teach.student``: a run killed mid-write leaves its hidden temporary file behind; the next run removes
it, and only it: never a file of another name, never the temporary file of a run writing now. Bad input is named."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from badinput import check

from pavlovlab.teach import student
from pavlovlab.teach.student import make_student_copies

ROOT = Path(__file__).resolve().parents[2]


def _course(folder: Path) -> Path:
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# One"),
                                         nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["solution"]})])
    nbformat.write(nb, folder / "00_one.ipynb")
    (folder / "notes.txt").write_text("for learners", encoding="utf-8")
    return folder


def _backdate(path: Path, seconds: float = 5.0) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def _killed_mid_write(target: Path) -> Path:
    """A process that dies by SIGKILL while atomic_write fills the temporary file of ``target``."""
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from pavlovlab.teach.student import atomic_write
        def write(tmp):
            tmp.write_text("half a notebook")
            print("writing", flush=True)
            time.sleep(600)
        atomic_write(Path({str(target)!r}), write)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline().strip() == "writing"                # waits on state, not on a clock
        left = [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")]
        assert len(left) == 1 and student.being_written(left[0]) in (True, None)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=120)
    return left[0]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_runs_temporary_file_is_removed_by_the_next_run(tmp_path):
    course, out = _course(tmp_path / "course"), tmp_path / "learner"
    out.mkdir()
    leftover = _killed_mid_write(out / "00_one.ipynb")
    assert leftover.exists() and not (out / "00_one.ipynb").exists()
    if student.fcntl is None:
        _backdate(leftover, 3600)                                        # no locks: only the age tells
    else:
        assert student.being_written(leftover) is False                  # the kill released the lock
        _backdate(leftover)
    report = make_student_copies(course, out)
    assert not leftover.exists()
    assert out / "00_one.ipynb" in report.written
    assert not [p for p in out.iterdir() if p.suffix == ".tmp"]


def test_only_our_own_stale_temporaries_are_removed(tmp_path):
    course, out = _course(tmp_path / "course"), tmp_path / "learner"
    out.mkdir()
    ours = [out / ".00_one.ipynb.ab12cd_9.tmp", out / ".notes.txt.zz00zz00.tmp", out / ".HOW_TO_USE.md.q1w2e3r4.tmp"]
    others = [out / ".mine.ipynb.ab12cd_9.tmp", out / ".00_one.ipynb.tmp", out / "00_one.ipynb.abcdefgh.tmp",
              out / ".00_one.ipynb.abc.tmp", out / "keep.txt"]
    young = out / ".00_one.ipynb.young123.tmp"
    for p in [*ours, *others, young]:
        p.write_text("partial", encoding="utf-8")
    for p in [*ours, *others]:
        _backdate(p, 3600)
    make_student_copies(course, out)
    assert not any(p.exists() for p in ours)
    assert all(p.read_text(encoding="utf-8") == "partial" for p in [*others, young])


@pytest.mark.skipif(student.fcntl is None, reason="needs flock")
def test_a_temporary_file_being_written_now_is_left_alone(tmp_path):
    import fcntl
    course, out = _course(tmp_path / "course"), tmp_path / "learner"
    out.mkdir()
    writing = out / ".00_one.ipynb.w0rk1ng_.tmp"
    writing.write_text("partial", encoding="utf-8")
    _backdate(writing)                                                    # older than a second, but locked
    fd = os.open(writing, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        make_student_copies(course, out)
        assert writing.exists()
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------------- bad input
def _one_cell_course(folder):
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, folder / "00_start.ipynb")
    return folder


def bad_input_rows(tmp):
    """Bad input of ``pavlovlab.teach.student``: one row ``(case, call, expect, fragment)`` a case."""
    course = _one_cell_course(tmp / "course")
    (tmp / "afile").write_text("mine")
    return [
        ("make_student_copies into a folder whose parent is a file",
         lambda: student.make_student_copies(course, tmp / "afile" / "sub"), NotADirectoryError,
         "out_dir: expected a folder path, got"),
        ("student_notebook(<a dict>)", lambda: student.student_notebook({"cells": []}), TypeError,
         "nb: expected a notebook (a NotebookNode"),
        ("student_notebook(<a path>)", lambda: student.student_notebook(str(course / "00_start.ipynb")), TypeError,
         "nb: expected a notebook"),
        ("the parent file is untouched", lambda: (tmp / "afile").read_text() == "mine", "ok", ""),
    ]


@pytest.mark.parametrize("i", range(4))
def test_bad_input(tmp_path, i):
    _, call, expect, fragment = bad_input_rows(tmp_path)[i]
    check(call, expect, fragment)
