"""The package's layers. Core algorithms and experiments in ``pavlovlab/``, one sub-package per part of the course
(conditioning, memory, attention, capacity, depth, forgetting, phenomena, and the trained models), over the shared
modules (sampling, statistics, device, _checks); course tooling in ``pavlovlab/teach/``. Imports go one way only:
teach uses core, core never imports teach, and neither the core's modules nor its parts import in a circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pavlovlab"
CORE = sorted(p for p in PACKAGE.rglob("*.py") if "teach" not in p.relative_to(PACKAGE).parts
              and p.name != "__main__.py")
"""``__main__.py`` is the ``python -m pavlovlab`` entry: it only hands over to ``teach.cli``."""
TEACH = sorted((PACKAGE / "teach").rglob("*.py"))
PARTS = {"conditioning", "memory", "attention", "capacity", "depth", "forgetting", "phenomena", "models"}
SHARED = {"sampling", "statistics", "device", "_checks"}


def module_name(path: Path) -> str:
    """``pavlovlab.teach.cli`` for ``pavlovlab/teach/cli.py`` (``pavlovlab.capacity.__init__`` for a package)."""
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def dotted(path: Path) -> str:
    """The name Python imports a file under: ``pavlovlab.capacity`` for ``pavlovlab/capacity/__init__.py``."""
    return module_name(path).removesuffix(".__init__")


def imported_modules(path: Path, source: str | None = None, name: str | None = None) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` for every import statement of a module of the package, at any depth
    (relative imports resolved against the module's own package; ``from X import Y`` also yields ``X.Y``,
    since Y may be a submodule). ``source``/``name`` replace the file's text and dotted name."""
    source = path.read_text(encoding="utf-8") if source is None else source
    parts = (name or module_name(path)).split(".")
    package = parts[:-1]  # every file here is a plain module or an __init__ (whose package is parts[:-1] too)
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.append((node.lineno, mod))
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return found


def teach_imports(path: Path, source: str | None = None, name: str | None = None) -> list[str]:
    return [f"{path.name}:{line}: {mod}" for line, mod in imported_modules(path, source, name)
            if mod == "pavlovlab.teach" or mod.startswith("pavlovlab.teach.")]


def test_the_layers_are_where_the_tree_says():
    packages = {p.parent.name for p in CORE if p.name == "__init__.py" and p.parent != PACKAGE}
    modules = {p.stem for p in CORE if p.parent == PACKAGE}
    assert packages == PARTS, "one sub-package per part of the course"
    assert modules - {"__init__"} == SHARED, "only the shared modules sit beside the parts"
    core = {p.stem for p in CORE}
    assert not core & {"plotting", "widgets", "student", "reproduce", "cli"}, "course tooling belongs in teach/"
    assert {p.stem for p in TEACH} >= {"plotting", "widgets", "student", "reproduce", "cli", "registry",
                                      "session", "book", "checking", "runner", "fingerprint", "name_errors"}


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_core_never_imports_teach(path):
    assert not teach_imports(path), f"core module imports the course tooling: {teach_imports(path)}"


def test_the_import_parser_sees_every_spelling():
    # the check above could pass vacuously if the parser missed a form: each of these must be caught in a core
    # module, and none of the core-only imports may be
    probe = PACKAGE / "memory" / "associative.py"
    for source in ("from ..teach import plotting", "from ..teach.plotting import labels", "from .. import teach",
                   "import pavlovlab.teach.cli", "from pavlovlab.teach import widgets", "from pavlovlab import teach",
                   "def f():\n    from ..teach.student import atomic_write"):
        assert teach_imports(probe, source, "pavlovlab.memory.associative"), source
    for source in ("from .. import attention", "from ..sampling import random_keys", "import pavlovlab.depth.chain",
                   "from .._checks import check_int", "from .hebbian import crosstalk"):
        assert not teach_imports(probe, source, "pavlovlab.memory.associative"), source
    assert imported_modules(PACKAGE / "teach" / "reproduce.py")  # teach does import core (relative, two dots)
    assert any(mod == "pavlovlab.conditioning.learning"
               for _, mod in imported_modules(PACKAGE / "teach" / "reproduce.py"))


@pytest.mark.slow
def test_importing_the_core_loads_no_course_tooling():
    core = [dotted(p) for p in CORE]
    code = ("import importlib, sys\n"
            f"for m in {core!r}:\n    importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith('pavlovlab.teach')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.strip()
    assert out == "[]"


def core_import_graph(files: list[Path] = CORE) -> dict[str, set[str]]:
    """``{module: the core modules it imports}`` over the core's modules and sub-packages (their ``__init__``)
    (or over ``files``, the course tooling's),
    function-local imports included: an import inside a function is still a dependency. Importing
    ``pavlovlab.capacity.average`` first runs ``pavlovlab.capacity``'s ``__init__``, so an import of a module is also
    an edge to each sub-package above it (not to the top level, whose ``__init__`` gathers everything). A module's
    import from its own package (``from . import literal``) is no edge to that package: it is already running."""
    names = {dotted(p) for p in files}
    graph = {}
    for p in files:
        targets = set()
        for _, mod in imported_modules(p):
            parts = mod.split(".")
            targets |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)} & names
        name = dotted(p).split(".")
        graph[dotted(p)] = targets - {".".join(name[:i]) for i in range(1, len(name) + 1)}  # itself, its packages
    return graph


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between the parts and shared modules (``capacity``, ``sampling``, ...)."""
    part = {m: m.split(".")[1] for m in graph if m != "pavlovlab"}
    return {p: {part[t] for m in graph if part.get(m) == p for t in graph[m] if t in part} - {p}
            for p in set(part.values())}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle ``[a, b, ..., a]`` of ``graph``, or None (depth-first search with colours)."""
    state: dict[str, int] = {}   # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_core_import_graph_has_no_cycle():
    graph = core_import_graph()
    assert graph["pavlovlab.capacity.criteria"] >= {"pavlovlab.capacity.readouts", "pavlovlab.sampling",
                                                    "pavlovlab.statistics"}   # the graph is really parsed
    assert {"pavlovlab.sampling", "pavlovlab.memory"} <= graph["pavlovlab.capacity.average"]  # a package above
    graph.pop("pavlovlab")   # the top level re-exports every part: it imports, nothing imports it
    assert find_cycle(graph) is None, f"import cycle among core modules: {' -> '.join(find_cycle(graph))}"


def test_the_course_tooling_imports_in_no_cycle():
    graph = core_import_graph(TEACH)
    assert "pavlovlab.teach.exercises.session" in graph["pavlovlab.teach.progress"]   # the graph is really parsed
    assert "pavlovlab.teach.exercises" in graph["pavlovlab.teach.progress"]            # and sees the package above
    assert find_cycle(graph) is None, f"import cycle in teach/: {' -> '.join(find_cycle(graph))}"


def test_the_parts_import_one_way():
    parts = part_graph(core_import_graph())
    assert parts["phenomena"] >= {"conditioning", "memory", "models"}   # the graph is really parsed
    assert not parts["_checks"], "the checks import no part"
    assert find_cycle(parts) is None, f"import cycle among the parts: {' -> '.join(find_cycle(parts))}"


def test_the_cycle_finder_finds_cycles_and_local_imports():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    local = "def f():\n    from ..capacity.average import n_grid\n"   # a function-local import is an edge too
    assert any(mod == "pavlovlab.capacity.average"
               for _, mod in imported_modules(PACKAGE / "memory" / "hebbian.py", local, "pavlovlab.memory.hebbian"))
