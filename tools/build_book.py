#!/usr/bin/env python3
"""Build the course book: stage the sources into ``_build/src``, then Sphinx into ``_build/html``.

Staged (copied, so that every relative link resolves as it does in the repository): docs/ (conf.py, index.md),
README.md (the landing page, included by index.md; its Binder badge image replaced by a local copy), CHANGELOG.md, the licences, CITATION.cff, course/'s
notebooks (``[0-9]*.ipynb``: a new notebook joins the book by its name alone) and the instructor guide.
An API page with one section per public module of ``pavlovlab`` is written into the staging folder.

    python tools/build_book.py                 # what `make book` runs; -W: warnings are errors
    python tools/build_book.py --out DIR --no-warnings-as-errors
"""

from __future__ import annotations

import argparse
import pkgutil
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["README.md", "CHANGELOG.md", "LICENSE", "LICENSE-CONTENT", "CITATION.cff"]
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
"""README's badge image: in the book, the Binder logo shipped with sphinx-book-theme (the book loads nothing
from the network)."""


def public_modules() -> list[str]:
    """``pavlovlab.X`` for every module of the package whose name does not start with ``_``."""
    import pavlovlab

    return [f"pavlovlab.{m.name}" for m in pkgutil.iter_modules(pavlovlab.__path__)
            if not m.name.startswith("_") and not m.ispkg]


def api_page() -> str:
    lines = ["# API reference", "",
             "Generated from the docstrings of the `pavlovlab` package (shapes are written `(..., T, d_k)`: any "
             "leading batch and head dimensions). `import pavlovlab as pl` exposes the most used names at the "
             "top level.", ""]
    for mod in public_modules():
        lines += [f"## `{mod}`", "", "```{eval-rst}", f".. automodule:: {mod}", "```", ""]
    return "\n".join(lines)


def stage(src: Path) -> None:
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("__pycache__"))
    for name in FILES:
        shutil.copy2(ROOT / name, src / name)
    import sphinx_book_theme

    logo = Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme" / "static" / "images" / "logo_binder.svg"
    (src / "_local").mkdir()
    shutil.copy2(logo, src / "_local" / "binder.svg")
    readme = (src / "README.md").read_text(encoding="utf-8")
    (src / "README.md").write_text(readme.replace(BINDER_BADGE, "_local/binder.svg"), encoding="utf-8")
    (src / "course").mkdir()
    for nb in sorted((ROOT / "course").glob("[0-9]*.ipynb")):
        shutil.copy2(nb, src / "course" / nb.name)
    shutil.copy2(ROOT / "course" / "INSTRUCTOR_GUIDE.md", src / "course" / "INSTRUCTOR_GUIDE.md")
    (src / "api.md").write_text(api_page(), encoding="utf-8")


def build(out: Path, src: Path, warnings_as_errors: bool = True, quiet: bool = True) -> int:
    """Stage and build; returns Sphinx's exit status (non-zero on any warning when ``warnings_as_errors``)."""
    from sphinx.cmd.build import build_main

    stage(src)
    args = ["-b", "html", "-j", "1", "-E", str(src), str(out)]
    if warnings_as_errors:
        args[:0] = ["-W", "--keep-going"]
    if quiet:
        args[:0] = ["-q"]
    return build_main(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the course book into _build/html.")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--src", type=Path, default=ROOT / "_build" / "src", help="staging folder (replaced)")
    parser.add_argument("--no-warnings-as-errors", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    rc = build(args.out, args.src, warnings_as_errors=not args.no_warnings_as_errors)
    print(f"book {'built' if rc == 0 else 'FAILED'} in {time.perf_counter() - t0:.1f} s: {args.out / 'index.html'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
