"""One sentence instead of a traceback for a cell run too early: the IPython hook a notebook's set-up switches on.

A ``NameError`` in a notebook cell usually means a cell above it was not run (after a kernel restart, or when
skipping ahead). :func:`explain` finds, in the notebook's own cells, the first code cell that makes the name and
says which cell to run: the set-up cell at the top, the exercise cell above a check, or the section (its
heading) that makes it. :func:`switch_on` installs that as IPython's handler for ``NameError`` while a learner's
session is open, :func:`switch_off` restores the previous handler (a name no cell makes, a typo, keeps Python's
own traceback). Nothing is installed into the learner's IPython profile.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pavlovlab.teach.language import _

SETUP_MARK = "ex.start("
"""What the set-up cell holds: the call that opens the learner's session (and switches this hook on): ``ex.start()``,
or ``ex.start(language="fr")`` in an edition."""

STUB_MARK = "NotImplementedError("
"""What an exercise cell (the stub, before the learner's code replaces it) holds."""

SECTION = re.compile(r"^#{1,3}\s+(?:(?P<number>\d+[a-z]?)\.\s+)?(?P<title>.+?)\s*$", re.M)
"""A section heading of a notebook (``## 5. A fixed budget``); exercise headings are not sections."""

EXERCISE_HEADINGS = ("Exercise", "练习", "Exercice")
"""How an exercise's heading begins in each edition's notebooks (English, Chinese, French)."""


def notebook_cells(notebook: str, folder: Path | None = None) -> list[dict[str, Any]]:
    """The cells of ``notebook`` (its file stem) in ``folder`` (default: the current folder, the kernel's, where
    the learner's copy is); [] when it cannot be read."""
    path = (Path.cwd() if folder is None else folder) / f"{notebook}.ipynb"
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [c for c in cells if isinstance(c, dict)]


def _source(cell: dict[str, Any]) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


def _bound(node: ast.AST) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, b``, ``*rest``)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for item in node.elts:
            yield from _bound(item)
    elif isinstance(node, ast.Starred):
        yield from _bound(node.value)


def names_made(source: str) -> set[str]:
    """The names a cell's code binds at the top level of the kernel (assignments, ``def``, ``class``, imports,
    loop and ``with`` targets, also inside top-level ``if``/``for``/``with``/``try`` blocks); IPython's magics
    and shell lines are skipped."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                found |= set(_bound(target))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            found |= set(_bound(node.target))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    found |= set(_bound(item.optional_vars))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.NamedExpr):
            found |= set(_bound(node.value.target))
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, []) or [])
    return found


def explain(name: str, notebook: str, cell: str = "", folder: Path | None = None) -> str | None:
    """The one sentence for ``NameError: name`` raised by a cell (source ``cell``) of ``notebook``, after its mark
    (⚠ or ⏳), in the language in use; None when no code cell of the notebook makes ``name`` (a typo: Python's own
    message says it best)."""
    said = advice(name, notebook, cell, folder)
    return None if said is None else f"{said[0]} {said[1]}"


def advice(name: str, notebook: str, cell: str = "", folder: Path | None = None) -> tuple[str, str] | None:
    """:func:`explain`'s sentence as ``(mark, sentence)``, so that a checker can say it after its own mark."""
    cells = notebook_cells(notebook, folder)
    code = [(i, _source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    maker = next(((i, src) for i, src in code if name in names_made(src)), None)
    if maker is None:
        return None
    i, src = maker
    if SETUP_MARK in src:
        return "⚠", _("`{name}` is made by the set-up cell at the top of the notebook: run the set-up cell at the "
                      "top first.").format(name=name)
    if STUB_MARK in src and cell.lstrip().startswith("ex.check_"):
        return "⏳", _("`{name}` is not defined yet: run the exercise cell above (the one with your code, or its "
                      "stub) first, then this check cell again.").format(name=name)
    headings = [m for c in cells[:i] if c.get("cell_type") == "markdown" for m in SECTION.finditer(_source(c))
                if not m.group("title").startswith(EXERCISE_HEADINGS)]
    if not headings:
        return "⚠", _("`{name}` is made in a cell further up this notebook: run the notebook from the top "
                      "first.").format(name=name)
    section = headings[-1]
    if section.group("number"):
        # Translators: {section} is the section's number (5, 3b), {title} its heading as the notebook shows it.
        return "⚠", _("`{name}` is made in section {section}, “{title}”: run that section first.").format(
            name=name, section=section.group("number"), title=section.group("title"))
    return "⚠", _("`{name}` is made in the section “{title}”: run that section first.").format(
        name=name, title=section.group("title"))


_SWITCHED_ON: dict[str, Any] = {}
"""While a session's hook is on: the shell, the notebook and the handler it replaced."""


def switch_on(notebook: str) -> bool:
    """In IPython, answer a ``NameError`` in a cell of ``notebook`` with :func:`explain`'s sentence (other
    NameErrors keep their traceback). Replaces a hook switched on earlier; True when it is on."""
    switch_off()
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False

    def handler(self: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> None:
        import traceback
        frames = traceback.extract_tb(tb)
        name = getattr(value, "name", None)
        in_cell = bool(frames) and "pavlovlab" not in Path(frames[-1].filename).parts
        cell = self.user_ns.get("In", [""])[-1] if isinstance(self.user_ns.get("In"), list) else ""
        sentence = explain(name, notebook, cell) if isinstance(name, str) and in_cell else None
        if sentence is None:
            self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        else:
            print(sentence)

    _SWITCHED_ON.update(shell=shell, notebook=notebook, before=(shell.custom_exceptions, shell.CustomTB))
    shell.set_custom_exc((NameError,), handler)
    return True


def switch_off() -> None:
    """Restore the ``NameError`` handling that was there before :func:`switch_on` (nothing if it is off)."""
    if not _SWITCHED_ON:
        return
    shell = _SWITCHED_ON["shell"]
    shell.custom_exceptions, shell.CustomTB = _SWITCHED_ON["before"]
    _SWITCHED_ON.clear()


def switched_on() -> str | None:
    """The notebook whose hook is on, or None."""
    return _SWITCHED_ON.get("notebook")
