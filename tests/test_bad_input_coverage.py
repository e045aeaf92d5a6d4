"""Every public function and class of the core package has a bad-input test: every name in the ``__all__`` of the
top level, of each part (``pavlovlab.conditioning``, ``pavlovlab.memory``, ...) and of each shared module
(``pavlovlab.sampling``, ``pavlovlab.statistics``, ``pavlovlab.device``) must appear in a bad-input table
(``tests/test_bad_input*.py``). That is the public door, what a learner or a notebook calls: the functions behind it
trust the arguments the door checked, and are tested through it.

Records that functions return (NamedTuples, dataclasses such as ``Effect``), constants and the warning class are
not inputs, so they are left out; so are the fast kernels (``attention.*_kernel``) and the literal forms
(``pavlovlab.attention.literal``), documented as running without input checks: the public attention functions
check once and then call them, and the tests use the literal forms as references."""

from __future__ import annotations

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


def test_every_public_name_has_a_bad_input_test():
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(TESTS.glob("test_bad_input*.py")))
    missing = sorted(f"{module}.{name}" for name, module in public_names().items()
                     if not re.search(rf"\b{re.escape(name)}\(", text)
                     and not name.endswith("_kernel") and module not in UNCHECKED_MODULES)
    assert not missing, f"public names without a bad-input row: {missing}"


def test_the_walk_sees_the_package():
    names = public_names()
    assert {"linear_attention", "AssociativeMemory", "rescorla_wagner", "track", "random_keys", "fit_slope",
            "train_models"} <= set(names)
    assert names["linear_attention"] == "pavlovlab.attention.forms"
    assert "Design" not in names and "NonFiniteWarning" not in names      # records and warnings are left out
    assert "_check_qkv" not in names and "delta_chunk_kernel" not in names    # helpers are not doors
