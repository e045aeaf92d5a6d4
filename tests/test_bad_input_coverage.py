"""Every public function and class of the core package has a bad-input test: every name in the ``__all__`` of the
top level, of each part (``pavlovlab.conditioning``, ``pavlovlab.memory``, ...) and of each shared module
(``pavlovlab.sampling``, ``pavlovlab.statistics``, ``pavlovlab.device``) must appear in a bad-input table. That is
the public door, what a learner or a notebook calls: the functions behind it trust the arguments the door checked,
and are tested through it.

A module's table sits beside its other tests, in the test file that mirrors its path
(``pavlovlab/attention/forms.py`` → ``tests/attention/test_forms.py``): a function ``bad_input_rows`` returning
``(case, call, expect, fragment)`` rows for ``badinput.check``, with the helpers it calls. The property tests of bad
input (``test_property_*``), the non-finite policy's table (``tests/test_nonfinite_policy.py``) and the input
contract of ``pavlovlab._checks`` (``tests/test_checks.py``) count too.

Records that functions return (NamedTuples, dataclasses such as ``Effect``), constants and the warning class are
not inputs, so they are left out; so are the fast kernels (``attention.*_kernel``) and the literal forms
(``pavlovlab.attention.literal``), documented as running without input checks: the public attention functions
check once and then call them, and the tests use the literal forms as references."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pavlovlab

TESTS = Path(__file__).parent
UNCHECKED_MODULES = {"pavlovlab.attention.literal"}


def _doors():
    """The core's sub-packages (its parts) and shared modules; ``pavlovlab.teach`` is the course tooling."""
    for info in pkgutil.iter_modules(pavlovlab.__path__):
        if not info.name.startswith("_") and info.name != "teach":
            yield importlib.import_module(f"pavlovlab.{info.name}")


def _takes_input(obj) -> bool:
    if not callable(obj):
        return False
    try:
        if not inspect.signature(obj).parameters:                  # nothing to get wrong (default_device())
            return False
    except (TypeError, ValueError):
        pass
    if inspect.isclass(obj):
        is_record = (issubclass(obj, tuple) and hasattr(obj, "_fields")) or dataclasses.is_dataclass(obj)
        return not is_record and not issubclass(obj, Warning)
    return True


def public_names() -> dict[str, str]:
    """``{name: module}`` for every public callable of the core package."""
    names = {n: "pavlovlab" for n in pavlovlab.__all__ if _takes_input(getattr(pavlovlab, n))}
    for module in _doors():
        for n in module.__all__:
            obj = getattr(module, n)
            if _takes_input(obj):
                names[n] = getattr(obj, "__module__", module.__name__)
    return names


def mirror(module: str) -> Path:
    """The test file of a module: ``pavlovlab.<part>.<name>`` → ``tests/<part>/test_<name>.py``, a shared module
    ``pavlovlab.<name>`` → ``tests/test_<name>.py``, one under ``pavlovlab.teach`` → ``tests/teach/test_<name>.py``."""
    parts = module.split(".")[1:]
    folder = "teach" if parts[0] == "teach" else "/".join(parts[:-1])
    return TESTS / folder / f"test_{parts[-1].lstrip('_')}.py"


def _with_helpers(path: Path, roots) -> str:
    """The source of the functions of ``path`` that ``roots`` selects, and of the module-level helpers they call."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    todo, seen = [n for n in defs if roots(n)], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name) and n.id in defs]
    return "\n".join(ast.get_source_segment(text, defs[n]) for n in sorted(seen))


def tables() -> dict[Path, str]:
    """``{test file: the source of its bad-input tests}`` for every test file that has some."""
    found = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name in ("test_nonfinite_policy.py", "test_checks.py"):
            found[path] = path.read_text(encoding="utf-8")
            continue
        text = _with_helpers(path, lambda n: n == "bad_input_rows" or n.startswith("test_property_"))
        if text:
            found[path] = text
    return found


def test_every_public_name_has_a_bad_input_test():
    text = "\n".join(tables().values())
    missing = sorted(f"{module}.{name}" for name, module in public_names().items()
                     if not re.search(rf"\b{re.escape(name)}\(", text)
                     and not name.endswith("_kernel") and module not in UNCHECKED_MODULES)
    assert not missing, f"public names without a bad-input row: {missing}"


def test_every_module_has_its_table_beside_its_tests():
    """A module whose functions are public doors has a ``bad_input_rows`` table in its own test file; so do the
    teaching modules that check their input (plots, widgets, answer checking, learner copies)."""
    modules = {m for n, m in public_names().items() if m not in UNCHECKED_MODULES and not n.endswith("_kernel")}
    modules |= {"pavlovlab.teach.plotting", "pavlovlab.teach.widgets", "pavlovlab.teach.exercises.checking",
                "pavlovlab.teach.student"}
    found = tables()
    missing = sorted(f"{m} (in {mirror(m).relative_to(TESTS.parent)})" for m in modules
                     if mirror(m) not in found or "def bad_input_rows" not in found[mirror(m)])
    assert not missing, f"modules without their bad-input table: {missing}"


def test_the_walk_sees_the_package():
    names = public_names()
    assert {"linear_attention", "AssociativeMemory", "rescorla_wagner", "track", "random_keys", "fit_slope",
            "train_models"} <= set(names)
    assert names["linear_attention"] == "pavlovlab.attention.forms"
    assert "Design" not in names and "NonFiniteWarning" not in names      # records and warnings are left out
    assert "_check_qkv" not in names and "delta_chunk_kernel" not in names    # helpers are not doors
