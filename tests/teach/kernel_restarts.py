"""The learner copies survive a kernel restart at any check or verdict cell: no traceback from our code, and a
NameError is one sentence saying which cell or section to run.

Each learner copy (as ``make student`` writes it) runs in one kernel. Before every check cell, and in each section
before the first cell that reads a name an earlier section made (a verdict cell), the kernel restarts, the set-up
cell runs again (as the learner is told), and the cells from there run in order up to the next such cell:
together one pass through the notebook, each part started from a fresh kernel. The first check cell is also run
once in a restarted kernel *without* the set-up cell: what the kernel shows there is Python's own NameError
(nothing of ours runs before the set-up cell), and it must not come from our code either.

This module is the run; the ``test_restart_<group>.py`` files beside it each run it over one group of
:data:`GROUPS`, so that ``--dist loadfile`` (which sends a whole file to one worker) can share the notebooks out
between the workers: one notebook takes from a few seconds to more than a minute of kernel time.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from pavlovlab.teach import student
from pavlovlab.teach.exercise_keys import cell_key
from pavlovlab.teach.exercises import name_errors

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import notebooks  # noqa: E402  (benchmarks/notebooks.py: the headless runner's kernel set-up)

NOTEBOOKS = sorted(p.name for p in (ROOT / "course").glob("[0-9]*.ipynb"))
GROUPS = {
    "conditioning_to_depth": "0[0-5]_*",             # 00 start here to 05 depth and width
    "forgetting_and_trained_models": "0[6-8]_*",     # 06 delta and Oja to 08 conditioning in trained models
}
"""``test_restart_<group>.py`` runs the course notebooks whose file names match the glob: together every notebook,
each once (checked when this module is imported, so that a new notebook cannot go untested)."""
PATIENCE_S = 1800
"""Per cell: only catches a hang (the heaviest cell trains small models for a few minutes on a loaded core)."""

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SENTENCE = re.compile(r"^(⚠|⏳) `\w+` (is made|is not defined yet)", re.M)


def restart_points(cells: list) -> list[int]:
    """The check cells, and in each section the first code cell that reads a name only an earlier section's code
    makes (not the set-up cell's): where a learner who restarted, or skipped ahead to that section, lands."""
    sections, made_in, points, entered = 0, {}, [], -1
    for i, cell in enumerate(cells):
        src = cell.source
        if cell.cell_type == "markdown":
            sections += bool(name_errors.SECTION.search(src))
            continue
        if name_errors.SETUP_MARK in src:
            made_in.update(dict.fromkeys(name_errors.names_made(src), -1))
            continue
        key = cell_key(cell)
        earlier = {n for n, s in made_in.items() if 0 <= s < sections}
        reads = set(re.findall(r"\b\w+\b", src)) & earlier - name_errors.names_made(src)
        if (key and key[1] == "check") or (reads and entered < sections):
            points.append(i)
            entered = sections if reads else entered
        for name in name_errors.names_made(src):
            made_in.setdefault(name, sections)
    return points


def problems(index: int, cell) -> list[str]:
    """What is wrong with a cell's outputs: a traceback through pavlovlab/, or a NameError not told in a sentence."""
    found = []
    for out in cell.get("outputs", []):
        text = ANSI.sub("", "\n".join(out.get("traceback", [])) + out.get("text", ""))
        if "Traceback" in text and f"{os.sep}pavlovlab{os.sep}" in text:
            found.append(f"cell {index}: a traceback from our code:\n{text[-1500:]}")
        if out.get("output_type") == "error" and out.get("ename") == "NameError":
            found.append(f"cell {index}: NameError without the sentence: {out.get('evalue')}")
    return found


def group(name: str) -> list[str]:
    """The notebooks of the group ``name`` of :data:`GROUPS`."""
    return fnmatch.filter(NOTEBOOKS, f"{GROUPS[name]}.ipynb")


_grouped = sorted(n for g in GROUPS for n in group(g))
assert _grouped == NOTEBOOKS, f"each course notebook in one restart group of GROUPS: {_grouped} != {NOTEBOOKS}"


def check_restarts(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the learner copy of notebook ``name`` (written by ``make student``'s code into ``tmp_path``) with a
    kernel restart at every restart point; fail on a traceback of ours or a NameError without its sentence."""
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    learner_copies = tmp_path / "student"
    student.make_student_copies(ROOT / "course", learner_copies)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.read(learner_copies / name, as_version=4)
    setup = next(i for i, c in enumerate(nb.cells) if name_errors.SETUP_MARK in c.source)
    points = restart_points(nb.cells)
    assert points, f"{name}: no check cell found"
    sockets = tmp_path / "sockets"
    sockets.mkdir()
    client = NotebookClient(nb, timeout=PATIENCE_S, allow_errors=True, kernel_name="python3",
                            config=notebooks.kernel_config(str(sockets)),
                            resources={"metadata": {"path": str(learner_copies)}})
    found, told = [], 0
    with client.setup_kernel():
        def restart() -> None:
            run_sync(client.km.restart_kernel)(now=True)
            run_sync(client.kc.wait_for_ready)(timeout=120)

        for i in range(setup + 1):
            client.execute_cell(nb.cells[i], i)
        restart()                                   # no set-up: what the kernel itself shows
        bare = nbformat.from_dict(json.loads(json.dumps(nb.cells[points[0]])))
        client.execute_cell(bare, points[0])
        found += problems(points[0], {"outputs": [o for o in bare.outputs if o.get("ename") != "NameError"]})
        assert any(o.get("ename") == "NameError" for o in bare.outputs), bare.outputs
        client.execute_cell(nb.cells[setup], setup)
        for i in range(setup + 1, len(nb.cells)):
            if i in points:
                restart()
                client.execute_cell(nb.cells[setup], setup)
            client.execute_cell(nb.cells[i], i)
            found += problems(i, nb.cells[i])
            told += sum(len(SENTENCE.findall(o.get("text", ""))) for o in nb.cells[i].get("outputs", []))
    assert not found, "\n".join(found)
    assert told, f"{name}: no restart needed a sentence (is the hook on?)"
