#!/usr/bin/env python3
"""Move each figure's alt text out of its code cell into the cell's metadata, where the book reads it.

Authors give a figure its one sentence of alt text as a comment line ``# alt: <what the figure shows>`` in the
code cell that draws it. This tool moves that line into the cell's metadata as ``mystnb.image.alt``, the image
option myst-nb applies to the cell's image outputs (the book's ``<img alt>``), so the sentence is no longer shown
as code. It is re-runnable: a cell without an ``# alt:`` line is left alone, and the notebooks it rewrites are
normalised (tools/normalize_notebooks.py) and written atomically.

    python tools/alt_text.py course/[0-9]*.ipynb           # move the lines (``make alt-text``)
    python tools/alt_text.py --check course/[0-9]*.ipynb   # change nothing; exit 1 naming the cells left to move

myst-nb gives every image of a cell the same options, so a cell has at most one figure with alt text: a cell with
two ``# alt:`` lines, or an alt line and more than one stored figure, is refused (exit 2, nothing written) with
the notebook and cell named. JupyterLab 4.6 takes no alt text from a notebook for an image output (its image
renderer reads only the size and background from the output's metadata), so there the sentence lives in the
cell's metadata only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from normalize_notebooks import normalize_text

from pavlovlab.teach.student import atomic_write

ALT_LINE = re.compile(r"^[ \t]*#[ \t]*alt:[ \t]*(\S.*?)[ \t]*(?:\n|$)", flags=re.M)
"""A figure's alt text as authors write it: one comment line ``# alt: <one sentence>``."""


def alt_text(cell) -> str | None:
    """The alt text in ``cell``'s metadata (``mystnb.image.alt``), or None."""
    return cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")


def move_alt_lines(nb, name: str = "notebook") -> int:
    """Move every code cell's ``# alt:`` line of ``nb`` (an nbformat notebook, changed in place) into its metadata;
    returns how many moved. Raises ValueError naming ``name`` and the cell for a cell with more than one alt line
    or more than one stored figure."""
    moved = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        alts = ALT_LINE.findall(cell.source)
        if not alts:
            continue
        figures = sum(1 for o in cell.get("outputs", []) if "image/png" in o.get("data", {}))
        if len(alts) > 1 or figures > 1:
            raise ValueError(f"{name}: cell {i} has {len(alts)} '# alt:' line(s) and {figures} stored figure(s); "
                             "expected one figure per cell (myst-nb gives every image of a cell the same alt text): "
                             "split the cell")
        cell.metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = alts[0]
        cell.source = ALT_LINE.sub("", cell.source).rstrip("\n")
        moved += 1
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks (.ipynb)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if an '# alt:' line is left")
    args = parser.parse_args(argv)
    results = {}
    try:
        for path in args.paths:
            nb = nbformat.read(path, as_version=4)
            results[path] = (move_alt_lines(nb, path.name), nb)
    except ValueError as e:
        print(f"alt_text: {e}", file=sys.stderr)
        return 2
    left = {path: n for path, (n, _) in results.items() if n}
    for path, (n, nb) in results.items():
        if n and not args.check:
            text = normalize_text(nbformat.writes(nb))
            atomic_write(path, lambda t, text=text: t.write_text(text, encoding="utf-8"))
        if n:
            print(f"{'alt lines left' if args.check else 'alt text moved into the metadata'}: {path} ({n})")
    if not left:
        print(f"{len(results)} notebook(s): no '# alt:' line left in a code cell")
    return 1 if (args.check and left) else 0


if __name__ == "__main__":
    sys.exit(main())
