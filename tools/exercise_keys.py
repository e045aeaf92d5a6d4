#!/usr/bin/env python3
"""Key every exercise once, in its cells' metadata, from the notebooks' headings (see
``pavlovlab/teach/exercise_keys.py``).

Each markdown cell whose heading names ``Exercise N`` and the three code cells after it (stub, solution,
check) get ``{"pavlovlab": {"exercise": N, "part": ...}}``; nothing else of a notebook changes (its outputs,
sources and other metadata are written back as they were read). ``--check`` only lists the notebooks whose
keys differ from their headings (exit 1 if any); ``--write`` rewrites those, each in one atomic rename.

    python tools/exercise_keys.py --write course/*.ipynb
    python tools/exercise_keys.py --check course/*.ipynb
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from pavlovlab.teach.exercise_keys import keys_from_headings, write_keys  # noqa: E402
from pavlovlab.teach.student import atomic_write  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the notebooks whose keys differ")
    mode.add_argument("--check", action="store_true", help="list the notebooks whose keys differ (exit 1 if any)")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    stale = []
    for path in args.notebooks:
        text = path.read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        try:
            changed = write_keys(nb.cells, keys_from_headings(nb.cells))
        except ValueError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
        if not changed:
            continue
        stale.append(path)
        print(f"{path}: {changed} cell(s) {'keyed' if args.write else 'to key'}")
        if args.write:
            out = nbformat.writes(nb) + ("\n" if text.endswith("\n") else "")
            atomic_write(path, lambda t, out=out: t.write_text(out, encoding="utf-8"))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
