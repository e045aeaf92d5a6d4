"""The editions' learner copies (what ``pavlovlab start --lang zh|fr`` writes) executed cell by cell, as
tests/teach/test_student_copies.py runs the English ones: only the stubs raise, every check cell waits in the
edition's words, and no check cell prints a line that reads as English. A file of its own, so that the test
workers share the editions and the English copies.
"""

import contextlib
import io
import re
import sys
from pathlib import Path

import learnercopy
import nbformat
import pytest

from pavlovlab.teach import language
from pavlovlab.teach.exercises.checking import Turn
from pavlovlab.teach.student import make_student_copies

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notebooks  # noqa: E402  (benchmarks/notebooks.py: the headless runner the course's outputs come from)

NOTEBOOKS = sorted(p.name for p in (ROOT / "course").glob("[0-9]*.ipynb"))
CHECK = re.compile(r"\bex\.check_\w+\(")
"""A check cell: what it prints is the package's (the notebook's own prints are code's output, kept as they are)."""

EDITIONS = ["zh", "fr"]


def waiting_words(edition: str) -> str:
    """What a check cell says, in ``edition``, while its exercise is not written: the framework's own sentence
    (asked of it, not typed here), from after the exercise's name to the end of its first clause."""
    said = io.StringIO()
    try:
        language.use(edition)
        with contextlib.redirect_stdout(said):
            Turn.loose("NAME").pending()
    finally:
        language.use("en")
    return re.split(r"[.。]", said.getvalue().split("NAME", 1)[1])[0].strip(" :：")


@pytest.fixture(scope="module")
def edition_copies(tmp_path_factory) -> dict[str, Path]:
    """What `pavlovlab start --lang zh|fr` writes: the learner copies of each edition, in a folder of their own."""
    out = {}
    for edition in EDITIONS:
        out[edition] = tmp_path_factory.mktemp(f"student-{edition}")
        assert not make_student_copies(ROOT / "student" / edition, out[edition]).skipped
    return out


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("none", marks=pytest.mark.skip("no notebooks yet"))])
def test_an_editions_copy_runs_and_its_checks_speak_its_language(edition_copies, edition, name):
    """An edition's learner copy runs top to bottom as the English one does (its stubs raise, its check cells
    wait, in its own words), and no check cell prints a line that reads as English."""
    folder = edition_copies[edition]
    nb = nbformat.read(folder / name, as_version=4)
    notebooks.execute(nb, folder, timeout=600, allow_errors=True)
    problems = learnercopy.problems(nb, waiting=waiting_words(edition))
    assert not problems, "\n".join(problems)
    said = "".join(learnercopy.text(c) for c in nb.cells if c.cell_type == "code" and CHECK.search(c.source))
    assert not learnercopy.english_lines(said, edition), learnercopy.english_lines(said, edition)
