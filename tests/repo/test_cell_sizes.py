"""Every step of the course is short enough to read in one go: a markdown cell holds at most ``PROSE_LIMIT``
characters of prose (what a folded ``<details>`` block holds, link targets and the launch cells do not count),
and a code cell the learner sees at most ``CODE_LIMIT`` lines (reference solutions, which the learner copies
leave out, and the generated launch cells do not count)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "course").glob("[0-9]*.ipynb"))
PROSE_LIMIT = 1200
CODE_LIMIT = 15
FOLDED = re.compile(r"<details>.*?</details>", re.S)
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


def prose(markdown: str) -> str:
    """The prose a reader meets unfolded: folded blocks and link targets removed."""
    return LINK_TARGET.sub("]", FOLDED.sub("", markdown)).strip()


def _cells(path: Path, kind: str) -> list[tuple[int, nbformat.NotebookNode]]:
    cells = nbformat.read(path, as_version=4).cells
    skip = {"launch", "solution"}
    return [(i, c) for i, c in enumerate(cells) if c.cell_type == kind and not skip & set(c.metadata.get("tags", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_markdown_cells_are_short_steps(path):
    long = {i: len(prose(c.source)) for i, c in _cells(path, "markdown") if len(prose(c.source)) > PROSE_LIMIT}
    assert not long, f"{path.name}: markdown cells over {PROSE_LIMIT} characters of prose (cell: characters): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem[:2])
def test_code_cells_fit_on_a_screen(path):
    long = {i: len(c.source.splitlines()) for i, c in _cells(path, "code") if len(c.source.splitlines()) > CODE_LIMIT}
    assert not long, f"{path.name}: code cells over {CODE_LIMIT} lines (cell: lines): {long}"


def test_the_measure_counts_unfolded_prose_only():
    text = ("Read [the paper](https://arxiv.org/abs/2508.08289).\n<details><summary>Derivation</summary>\n"
            + "x" * 5000 + "\n</details>")
    assert prose(text) == "Read [the paper]."
    assert len(prose("y" * (PROSE_LIMIT + 1))) > PROSE_LIMIT
