#!/usr/bin/env python3
"""Normalise committed notebooks so that they diff cleanly: outputs kept, per-run noise removed.

What changes (nothing else is touched):

- every cell: ``metadata.execution`` (JupyterLab's timestamps) and ``metadata.ExecuteTime`` are removed;
  a cell without an ``id`` gets a stable one (``cell-<index>``) instead of a random one;
- outputs: consecutive pieces of one stream (stdout or stderr) are joined into one output, as a reader sees them
  (where the kernel cut the text depends on timing); the random ``model_id`` of a widget view is replaced by one
  derived from the cell id and the output's position (the widget state it pointed to is not stored anyway, see
  below);
- notebook: ``metadata.widgets`` (widget model state, random ids) is removed; ``kernelspec`` and
  ``language_info`` are set to the fixed values below (no Python patch version, so executing on
  3.11.7 or 3.11.9 writes the same file);
- the file is written by nbformat (sorted keys, one-space indent, a final newline).

Usage::

    python tools/normalize_notebooks.py course/*.ipynb student/*.ipynb   # rewrite in place when needed
    python tools/normalize_notebooks.py --check course/*.ipynb           # exit 1 and list the files to fix
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import nbformat

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
CELL_NOISE = ("execution", "ExecuteTime")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _stable_model_id(cell_id: str, index: int) -> str:
    return hashlib.sha1(f"{cell_id}/{index}".encode()).hexdigest()[:32]


def _joined_streams(outputs: list) -> list:
    """``outputs`` with each run of consecutive stream outputs of one name (stdout, stderr) joined into one."""
    joined: list = []
    for out in outputs:
        last = joined[-1] if joined else None
        if out.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream" \
                and last.get("name") == out.get("name"):
            last["text"] = "".join(last["text"]) + "".join(out["text"])
        else:
            joined.append(out)
    return joined


def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove the per-run noise of ``nb`` in place (see the module docstring) and return it."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = nbformat.from_dict(KERNELSPEC)
    nb.metadata["language_info"] = nbformat.from_dict(LANGUAGE_INFO)
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        nb.nbformat, nb.nbformat_minor = 4, 5
    seen: set[str] = set()
    for i, cell in enumerate(nb.cells):
        for key in CELL_NOISE:
            cell.metadata.pop(key, None)
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = f"cell-{i}"
        seen.add(cell["id"])
        if "outputs" in cell:
            cell.outputs = _joined_streams(cell.outputs)
        for j, out in enumerate(cell.get("outputs", [])):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and "model_id" in view:
                view["model_id"] = _stable_model_id(cell["id"], j)
    return nb


def normalize_text(text: str) -> str:
    """The normalised file content for a notebook's file content ``text``."""
    nb = nbformat.reads(text, as_version=4)
    return nbformat.writes(normalize(nb)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks (.ipynb) to normalise")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if any file would change")
    args = parser.parse_args(argv)
    changed = []
    for path in args.paths:
        text = path.read_text(encoding="utf-8")
        new = normalize_text(text)
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "not normalised (run `make normalize`)" if args.check else "normalised"
    for path in changed:
        print(f"{verb}: {path}")
    if not changed:
        print(f"{len(args.paths)} notebook(s) already normalised")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
