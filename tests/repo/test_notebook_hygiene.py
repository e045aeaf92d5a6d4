"""Committed notebooks diff cleanly (tools/normalize_notebooks.py, `make normalize`): no per-run noise, and
re-executing a notebook whose outputs do not change leaves its file byte-identical."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from normalize_notebooks import KERNELSPEC, LANGUAGE_INFO, normalize_text  # noqa: E402

COMMITTED = sorted((ROOT / "course").glob("[0-9]*.ipynb")) + sorted((ROOT / "student").glob("[0-9]*.ipynb"))


def _noisy_notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {"abc": {}}}}
    code = nbformat.v4.new_code_cell("interactive_plot(draw, n=(1, 8, 1, 4))", execution_count=1)
    code.metadata["execution"] = {"iopub.status.busy": "2026-11-30T11:59:25.386811Z"}
    code.metadata["tags"] = ["keep-me"]
    code.outputs = [nbformat.v4.new_output("execute_result", execution_count=1, data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "5d48f7053c9f4c859897c703e116e9b9",
                                                     "version_major": 2, "version_minor": 0},
        "text/plain": "VBox(...)"})]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="title"), code]
    code["id"] = "plot-cell"
    return nbformat.writes(nb)


def test_normalize_removes_the_noise_and_keeps_the_rest():
    out = json.loads(normalize_text(_noisy_notebook()))
    code = out["cells"][1]
    assert "execution" not in code["metadata"] and code["metadata"]["tags"] == ["keep-me"]
    assert "widgets" not in out["metadata"]
    assert out["metadata"]["kernelspec"] == KERNELSPEC and out["metadata"]["language_info"] == LANGUAGE_INFO
    assert "version" not in out["metadata"]["language_info"]
    assert "".join(code["source"]) == "interactive_plot(draw, n=(1, 8, 1, 4))" and code["execution_count"] == 1
    assert "".join(code["outputs"][0]["data"]["text/plain"]) == "VBox(...)"  # outputs are kept


def test_normalize_joins_a_stream_the_kernel_cut_in_pieces():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1); print(2, file=sys.stderr); print(3); print(4)", id="prints")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="2\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="3\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="4\n")]
    nb.cells = [cell]
    out = json.loads(normalize_text(nbformat.writes(nb)))["cells"][0]["outputs"]
    assert [(o["name"], "".join(o["text"])) for o in out] == [("stdout", "1\n"), ("stderr", "2\n"),
                                                               ("stdout", "3\n4\n")]


def test_normalize_is_idempotent_and_widget_ids_are_stable():
    once = normalize_text(_noisy_notebook())
    assert normalize_text(once) == once
    # a re-run gives the widget view a new random model id: the normalised files are still equal
    rerun = _noisy_notebook().replace("5d48f7053c9f4c859897c703e116e9b9", "0123456789abcdef0123456789abcdef")
    assert rerun != _noisy_notebook()
    assert normalize_text(rerun) == once


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_notebook_is_normalised(path):
    text = path.read_text(encoding="utf-8")
    assert normalize_text(text) == text, (f"{path.relative_to(ROOT)} carries per-run noise (timestamps, widget "
                                          "state or version metadata): run `make normalize` and commit")


@pytest.mark.slow
def test_reexecuting_twice_is_byte_identical(tmp_path):
    """Execute notebook 00 from a fresh kernel twice (benchmarks/notebooks.py --write, then the normaliser):
    the two files are byte-identical."""
    src = ROOT / "course" / "00_start_here.ipynb"
    nb = tmp_path / src.name
    shutil.copy2(src, nb)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    runs = []
    for _ in range(2):
        for cmd in ([sys.executable, str(ROOT / "benchmarks" / "notebooks.py"), str(nb), "--write", "--timeout", "120"],
                    [sys.executable, str(ROOT / "tools" / "normalize_notebooks.py"), str(nb)]):
            res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            assert res.returncode == 0, res.stdout + res.stderr
        runs.append(nb.read_bytes())
    assert b'"execution"' not in runs[0] and b"widget-state" not in runs[0]
    executed = json.loads(runs[0])
    assert all(isinstance(c.get("execution_count"), int) for c in executed["cells"] if c["cell_type"] == "code")
    assert runs[0] == runs[1], "two executions of 00 differ after normalisation"
