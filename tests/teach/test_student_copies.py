"""Learner copies of the real course: generated into a temporary folder and executed cell by cell.

Only the exercise stubs (tagged ``raises-exception``) may raise, and only their friendly
NotImplementedError; every check cell must then print "not yet implemented" rather than fail.
"""

import os
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config import Config

from pavlovlab.teach.student import make_student_copies

COURSE = Path(__file__).resolve().parents[2] / "course"
NOTEBOOKS = sorted(p.name for p in COURSE.glob("[0-9]*.ipynb"))


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    report = make_student_copies(COURSE, out)
    assert not report.skipped
    return out


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            parts.append(o.get("data", {}).get("text/plain", ""))
    return "".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS or [pytest.param("none", marks=pytest.mark.skip("no notebooks yet"))])
def test_student_copy_runs_with_friendly_stubs(copies, name):
    nb = nbformat.read(copies / name, as_version=4)
    assert not any("solution" in _tags(c) for c in nb.cells), "a solution cell was left in the learner copy"
    assert all(c.execution_count is None and not c.outputs for c in nb.cells if c.cell_type == "code")
    # allow_errors: run every cell (like a learner who runs them all), then judge each one. The kernel talks to
    # this client over Unix sockets, as in benchmarks/notebooks.py: over TCP a kernel started while JupyterLab's
    # kernels ran (the browser tests) once sat idle while this client waited for it, until the cell timed out.
    with tempfile.TemporaryDirectory(prefix="pavlovlab-kernel-") as sockets:
        ipc = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "k")}})
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, config=ipc,
                       resources={"metadata": {"path": str(copies)}}).execute()
    problems, stubs, checks = [], 0, 0
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    for k, (i, c) in enumerate(code):
        errors = [o for o in c.outputs if o.output_type == "error"]
        if "raises-exception" in _tags(c):
            stubs += 1
            if not errors or errors[0].ename != "NotImplementedError":
                got = f"{errors[0].ename}: {errors[0].evalue}" if errors else "no error"
                problems.append(f"stub cell {i} should raise its NotImplementedError, got {got}")
            # the code cell after a stub is its check: it must wait kindly for the learner
            if k + 1 < len(code) and "check_" in code[k + 1][1].source:
                j, check = code[k + 1]
                checks += 1
                if "not yet implemented" not in _text(check):
                    problems.append(f"check cell {j} should say 'not yet implemented', printed: {_text(check)[:200]!r}")
        elif errors:
            problems.append(f"cell {i} failed in the learner copy: {errors[0].ename}: {errors[0].evalue}")
    assert not problems, "\n".join(problems)
    assert stubs >= 1 and checks == stubs, f"{name}: {stubs} exercise stubs but {checks} check cells right after them"


def test_learner_copies_hold_stubs_and_checks_but_no_solutions(copies):
    """Fast: what HOW_TO_USE.md promises is what the copies hold (every stub and check cell, no solution cell),
    the course itself keeps its solutions, and no temporary file is left behind."""
    from pavlovlab.teach.student import LEARNER_README, LEARNER_README_NAME

    assert (copies / LEARNER_README_NAME).read_text(encoding="utf-8") == LEARNER_README
    assert all(s in LEARNER_README for s in ("No solution cells", "ex.hint(N)", "ex.solution(N)"))
    assert not [p for p in copies.rglob("*") if p.name.startswith(".") and p.suffix == ".tmp"]
    for name in NOTEBOOKS:
        original = nbformat.read(COURSE / name, as_version=4)
        copy = nbformat.read(copies / name, as_version=4)
        kept = [c.source for c in original.cells if "solution" not in _tags(c)]
        assert [c.source for c in copy.cells] == kept, name
        assert not any("solution" in _tags(c) for c in copy.cells), name
