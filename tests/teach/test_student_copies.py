"""Learner copies of the real course: generated into a temporary folder and executed cell by cell.

Only the exercise stubs (tagged ``raises-exception``) may raise, and only their friendly NotImplementedError;
every check cell must then print "not yet implemented" rather than fail (tests/learnercopy.py). Where Chromium
and Playwright are present and the session also runs tests/browser/test_jupyterlab.py, the copies run there,
in JupyterLab, under the same judge, and this nbclient run of the same notebook is skipped: the course is then
executed twice per session (nbval, JupyterLab), not three times.
"""

import sys
from pathlib import Path

import learnercopy
import nbformat
import pytest

from pavlovlab.teach.student import make_student_copies

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notebooks  # noqa: E402  (benchmarks/notebooks.py: the headless runner the course's outputs come from)

COURSE = ROOT / "course"
NOTEBOOKS = sorted(p.name for p in COURSE.glob("[0-9]*.ipynb"))


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    report = make_student_copies(COURSE, out)
    assert not report.skipped
    return out


def runs_in_jupyterlab(session: pytest.Session, name: str) -> bool:
    """This session also runs learner copy ``name`` in JupyterLab (a browser test of it is selected, and the
    browser tests can run here)."""
    return (learnercopy.browser_missing() is None
            and any(item.nodeid.endswith(f"test_notebook_runs_in_jupyterlab[{name}]")
                    for item in session.items))


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("none", marks=pytest.mark.skip("no notebooks yet"))])
def test_student_copy_runs_with_friendly_stubs(request, copies, name):
    if runs_in_jupyterlab(request.session, name):
        pytest.skip("run in JupyterLab in this session, under the same judge (tests/browser/test_jupyterlab.py)")
    nb = nbformat.read(copies / name, as_version=4)
    # allow_errors: run every cell (like a learner who runs them all), then judge each one
    notebooks.execute(nb, copies, timeout=600, allow_errors=True)
    problems = learnercopy.problems(nb)
    assert not problems, "\n".join(problems)


def test_learner_copies_hold_stubs_and_checks_but_no_solutions(copies):
    """Fast: what HOW_TO_USE.md promises is what the copies hold (every stub and check cell, no solution cell,
    no output), the course itself keeps its solutions, and no temporary file is left behind."""
    from pavlovlab.teach.student import LEARNER_README, LEARNER_README_NAME

    assert (copies / LEARNER_README_NAME).read_text(encoding="utf-8") == LEARNER_README
    assert all(s in LEARNER_README for s in ("No solution cells", "ex.hint(N)", "ex.solution(N)"))
    assert not [p for p in copies.rglob("*") if p.name.startswith(".") and p.suffix == ".tmp"]
    for name in NOTEBOOKS:
        original = nbformat.read(COURSE / name, as_version=4)
        copy = nbformat.read(copies / name, as_version=4)
        kept = [c.source for c in original.cells if "solution" not in learnercopy.tags(c)]
        assert [c.source for c in copy.cells] == kept, name
        assert not any("solution" in learnercopy.tags(c) for c in copy.cells), name
        assert all(c.execution_count is None and not c.outputs for c in copy.cells if c.cell_type == "code"), name


def test_the_judge_names_every_kind_of_problem():
    """Fast: tests/learnercopy.py passes a well-behaved executed copy and names each way a copy can go wrong."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def executed(source, outputs=(), tags=(), count=1):
        return new_code_cell(source, outputs=list(outputs), execution_count=count, metadata={"tags": list(tags)})

    stub_error = new_output("error", ename="NotImplementedError", evalue="your turn", traceback=[])
    waiting = new_output("stream", name="stdout", text="ex 1: not yet implemented\n")
    good = new_notebook(cells=[executed("x = 1"), executed("def f(): ...", [stub_error], ["raises-exception"]),
                               executed("ex.check_f(f)", [waiting])])
    assert learnercopy.problems(good) == []

    bad = new_notebook(cells=[
        executed("y = 1 / 0", [new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                          traceback=[])]),
        executed("def f(): ...", [], ["raises-exception"]),  # the stub did not raise
        executed("ex.check_f(f)", [new_output("stream", name="stdout", text="Traceback ...")]),
        executed("def f(): return 2", [], ["solution"]),
        executed("z = 2", count=None),
    ])
    found = "\n".join(learnercopy.problems(bad))
    for expected in ("cell 0 failed: ZeroDivisionError", "stub cell 1 should raise its NotImplementedError, got no "
                     "error", "check cell 2 should say 'not yet implemented'", "cell 3 is a solution cell",
                     "cells [4] did not run"):
        assert expected in found, (expected, found)
    assert learnercopy.problems(new_notebook(cells=[executed("x = 1")])) == [
        "no exercise stub (a code cell tagged raises-exception)"]
