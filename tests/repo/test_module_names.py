"""The notebooks and the teaching code call the package's modules by their own names.

A learner reads ``trials.blocking(...)`` and finds ``pavlovlab/conditioning/trials.py``; an alias made of an older
name (``trial_tables``, ``stacking_theory``, ``designs``) would send them looking for a module that does not exist.
So a module of the package is imported under its own name, except the two names every notebook gives its own
exercise and figure modules: ``... exercises import <notebook> as ex`` and ``... figures import <notebook> as
figures`` (and ``import pavlovlab as pl``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pavlovlab"
CONVENTIONS = {"pavlovlab.teach.exercises": "ex", "pavlovlab.teach.figures": "figures"}
"""Packages whose modules are imported under one conventional name (one module per notebook)."""


def _is_module(dotted: str) -> bool:
    path = ROOT / Path(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, module: str | None) -> str:
    """The package an import takes names from, with a relative import resolved against ``module``."""
    if not node.level:
        return node.module or ""
    assert module is not None, "a relative import outside the package"
    base = module.split(".")[:-node.level]
    return ".".join(base + ([node.module] if node.module else []))


def renamed_modules(source: str, module: str | None = None) -> Iterator[tuple[int, str, str]]:
    """``(line, module, alias)`` for each module of the package imported under another name, but the
    conventions."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            package = _absolute(node, module)
            if package.split(".")[0] != "pavlovlab":
                continue
            for a in node.names:
                if a.asname and a.asname != a.name and _is_module(f"{package}.{a.name}") \
                        and CONVENTIONS.get(package) != a.asname:
                    yield node.lineno, f"{package}.{a.name}", a.asname
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name.startswith("pavlovlab.") and a.asname != a.name.rsplit(".", 1)[1]:
                    yield node.lineno, a.name, a.asname


def _code(notebook: Path) -> str:
    """A notebook's code cells, their IPython lines (``%``, ``!``) left out."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "\n".join("\n".join(line for line in "".join(c["source"]).splitlines()
                               if not line.lstrip().startswith(("%", "!")))
                     for c in cells if c["cell_type"] == "code")


def test_the_counter_sees_an_old_name_and_lets_the_conventions_pass():
    source = ("from pavlovlab.conditioning import learning, trials as trial_tables\n"
              "from pavlovlab.teach.exercises import start_here as ex\n"
              "from pavlovlab.teach.figures import start_here as figures\n"
              "from pavlovlab.statistics import fit_slope as fit\n"
              "import pavlovlab as pl\n")
    assert list(renamed_modules(source)) == [(1, "pavlovlab.conditioning.trials", "trial_tables")]
    relative = "from ...phenomena import sequences as designs\n"
    assert list(renamed_modules(relative, "pavlovlab.teach.figures.x")) == [
        (1, "pavlovlab.phenomena.sequences", "designs")]


def test_the_notebooks_import_modules_by_their_names():
    found = [f"{nb.name}: {m} as {alias}" for nb in sorted((ROOT / "course").glob("*.ipynb"))
             for _, m, alias in renamed_modules(_code(nb))]
    assert not found, f"modules imported under another name: {found}"


def test_the_teaching_code_and_benchmarks_import_modules_by_their_names():
    files = sorted((PACKAGE / "teach").rglob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py"))
    found = []
    for path in files:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts) if path.is_relative_to(PACKAGE) else None
        found += [f"{path.relative_to(ROOT)}:{line}: {m} as {alias}"
                  for line, m, alias in renamed_modules(path.read_text(encoding="utf-8"), module)]
    assert not found, f"modules imported under another name: {found}"
