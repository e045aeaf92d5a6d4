"""`pip install .` alone gives a working package and command: every third-party import of pavlovlab/ is a
declared dependency (the ones imported at module level in the core list), the wheel builds and its
metadata carries the version and the dependencies, and the README's test command is the Makefile's."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")


def _imports() -> dict[str, bool]:
    """``{top-level module: imported at module level somewhere}`` for pavlovlab/'s third-party imports."""
    found: dict[str, bool] = {}
    for path in (ROOT / "pavlovlab").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for m in mods:
                root = m.split(".")[0]
                if root in sys.stdlib_module_names or root in ("pavlovlab", "__future__"):
                    continue
                found[root] = found.get(root, False) or id(node) in top
    return found


def test_every_import_is_a_declared_dependency():
    core = {_name(r) for r in PROJECT["dependencies"]}
    extras = {_name(r) for reqs in PROJECT.get("optional-dependencies", {}).values() for r in reqs}
    dists = md.packages_distributions()
    imports = _imports()
    assert {"torch", "nbformat"} <= set(imports)
    problems = []
    for mod, module_level in sorted(imports.items()):
        names = {d.lower().replace("_", "-") for d in dists.get(mod, [mod])}
        if module_level and not names & core:
            problems.append(f"{mod} is imported at module level but not in [project] dependencies ({names})")
        elif not names & (core | extras):
            problems.append(f"{mod} is imported but declared nowhere in pyproject.toml ({names})")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_wheel_builds_with_version_and_dependencies(tmp_path):
    try:  # the installed setuptools when it is recent enough for pyproject.toml, else pip's isolated build
        local = int(md.version("setuptools").split(".")[0]) >= 77
    except md.PackageNotFoundError:
        local = False
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)]
                         + (["--no-build-isolation"] if local else []), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    import pavlovlab

    wheel = next(tmp_path.glob("pavlovlab-*.whl"))
    assert wheel.name.startswith(f"pavlovlab-{pavlovlab.__version__}-")
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        names = z.namelist()
    requires = {_name(line.split(":", 1)[1].strip()) for line in meta.splitlines() if line.startswith("Requires-Dist:")}
    assert {"torch", "numpy", "matplotlib", "ipywidgets", "tqdm", "nbformat"} <= requires
    assert "pavlovlab/teach/cli.py" in names and "pavlovlab/teach/exercises/__init__.py" in names
    # the course travels as package data (setup.py): every full notebook and its learner copy
    for nb in sorted((ROOT / "course").glob("[0-9]*.ipynb")):
        assert f"pavlovlab/_course/course/{nb.name}" in names and f"pavlovlab/_course/student/{nb.name}" in names
    assert any(n.endswith("licenses/LICENSE") or n.endswith("/LICENSE") for n in names)


def test_readme_test_command_is_the_makefiles():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test:.*\n\t\$\(BIN\)/python -m (pytest .+)$", make, flags=re.M)
    assert recipe, "no `test` recipe running pytest in the Makefile"
    # the command as make runs it by default: its variables (``-n $(TEST_WORKERS)``) set to their defaults
    defaults = dict(re.findall(r"^(\w+)\s*\??=\s*(\S+)\s*$", make, flags=re.M))
    command = re.sub(r"\$\((\w+)\)", lambda m: defaults[m.group(1)], recipe.group(1))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{command}`" in readme, f"README does not state the test command `{command}`"
    assert f"python -m {command}" in readme, "README's command for a machine without make differs"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, flags=re.M)
