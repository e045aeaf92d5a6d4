"""Inputs are checked once, at the public door, and the algorithm reads at a glance.

A small counter over the source (no import, no run): the *doors* are the public functions of the core's parts and
shared modules (every name in a module's ``__all__``, with the public methods and ``__init__`` of a public class).
For each door it counts

- *body lines*: the lines of code of its body (its docstring, blank lines and comment-only lines left out, nested
  definitions counted with it);
- *check lines*: a statement that calls a helper of ``pavlovlab._checks`` (a ``check_*`` call, ``broadcast_lead``,
  ``warn_nonfinite``, ...; not ``unchecked``, which calls an algorithm) or a validator of the module (a name that
  starts with ``check_`` or ``_check_``), all its lines (of a compound statement its header only); an ``if``
  whose body only raises or warns, with its raise lines; any other ``raise`` and ``warnings.warn``.

A door declares its check with ``@checked_by(validator, ...)`` (``pavlovlab._checks``): the declaration is not
part of the body, so it is neither a body line nor a check line; it is not hidden either: the script prints each
door's validator, and the share with every declaration's lines counted as body lines that are check lines.

The share of check lines among body lines, over all doors, stays under :data:`CHECK_SHARE`. Internal helpers
(a name that starts with ``_``) trust their inputs: none calls into ``_checks`` except a validator, a helper named
``_check_*`` whose one job is to check an argument group for the doors of its module. Nothing is checked twice:
no function of the core calls a declared door (a door that needs another's algorithm calls its body,
``unchecked(door)``), except the calls of :data:`PASSES_ON` (the door checks what its caller does not).

``python tests/repo/test_checks_at_the_door.py`` prints the figures, the doors with the most check lines and the
validators the doors declare.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pavlovlab"
PARTS = ("conditioning", "memory", "attention", "capacity", "depth", "forgetting", "phenomena", "models")
SHARED = ("sampling.py", "statistics.py", "device.py")
CHECK_SHARE = 0.05
"""The most check lines may weigh among the doors' body lines. Checking inline, the core stood at 39 %; with one
validator per argument group called in each body, at 24.0 % (228 of 951 lines, the trained models left out);
with the memory rules, conditioning, forgetting and three attention forms declaring their check (``checked_by``),
at 12.6 % (107 of 850); with every door that checks declaring it, the trained models included, at 2.3 % (27 of
1,157 lines over 161 doors, 141 of which declare their check; 13.2 % with the 145 lines of the declarations
counted as body check lines; the trained models alone stood at 28 %, 111 of 392). What is left in bodies: checks
of what the body computes (a mean curve that must be finite, held-out batches of one shape, a product xᵀx/n that
must not overflow), the non-finite warnings on a result that is not one tensor (a pair of readouts, a float) or
that name the rule that diverged, and ``seed_everything``'s own argument."""
PASSES_ON = {
    ("pavlovlab.forgetting.decay.half_life_se", "measured_half_life"):
        "each resample's mean curve is checked to reach the level, which the door cannot know before it draws them",
    ("pavlovlab.conditioning.learning.blocking_curve", "rescorla_wagner"):
        "α and β are checked against Rescorla–Wagner's bound on the trials the door builds",
    ("pavlovlab.forgetting.decay.gated_recall", "scalar_gated_linear_attention"):
        "the gates' range (0, 1] and their length against the sequence are checked by the form",
    ("pavlovlab.phenomena.probes.relative_effects", "summarize"):
        "the ratios to acquisition's mean are NaN/inf when that mean is 0, which only the division shows",
    ("pavlovlab.depth.chain.bounds_against_heads", "averaged_heads_bound"):
        "t̄_max and M_H are measured on the door's own draws: their range and finiteness are the bound's to check",
    ("pavlovlab.models.head_memory.trained_head_overlaps", "mean_squared_overlap"):
        "the keys are the model's, computed inside the door: whether they are finite is known only after it runs",
    ("pavlovlab.models.head_memory.recall_against_load", "mean_squared_overlap"):
        "the keys are the model's, computed inside the door: whether they are finite is known only after it runs",
    ("pavlovlab.depth.chain.bounds_against_heads", "all_heads_fail_bound"):
        "each head's t_max is measured on the door's own draws: its range [−1, 1] is the bound's to check",
}
"""Calls of a declared door that check what the caller does not: (caller, door) and why."""
def core_files() -> list[Path]:
    """The modules of the core's parts and its shared modules (``_checks`` left out)."""
    files = [p for part in PARTS for p in sorted((PACKAGE / part).glob("*.py")) if p.name != "__init__.py"]
    return files + [PACKAGE / name for name in SHARED]


def _exported(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {ast.literal_eval(e) for e in node.value.elts}  # type: ignore[attr-defined]
    return set()


def _check_names(tree: ast.Module) -> set[str]:
    """The names a module imports from ``_checks``, but ``checked_by`` and ``unchecked``, which declare a check
    and give a body that checks nothing."""
    return {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom)
            and (node.module or "").endswith("_checks") for a in node.names} - {"checked_by", "unchecked"}


def _code_lines(source: str) -> set[int]:
    """The lines that hold a token of code (not only a comment, a string on its own or whitespace)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def _lines(node: ast.AST) -> set[int]:
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))  # type: ignore[attr-defined]


def _is_validator(name: str) -> bool:
    return name.startswith(("check_", "_check_"))


def _calls_check(node: ast.AST, checks: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in checks or _is_validator(name):
                return True
    return False


def _is_warn(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "warn")


def _header(node: ast.stmt) -> set[int]:
    """The lines of a compound statement before its body."""
    first_body = node.body[0].lineno  # type: ignore[attr-defined]
    return set(range(node.lineno, first_body))


def check_lines(body: list[ast.stmt], checks: set[str]) -> set[int]:
    """The check lines of a body, as the module docstring defines them."""
    found: set[int] = set()
    for node in body:
        if isinstance(node, ast.If) and all(isinstance(s, ast.Raise) or _is_warn(s) for s in node.body):
            found |= _header(node) | {n for s in node.body for n in _lines(s)}
            found |= check_lines(node.orelse, checks)
        elif isinstance(node, (ast.Raise,)) or _is_warn(node):
            found |= _lines(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found |= check_lines(node.body, checks)
        elif isinstance(node, ast.Try):
            found |= check_lines(node.body, checks) | check_lines(node.orelse, checks)
            found |= check_lines(node.finalbody, checks)
            for handler in node.handlers:
                found |= check_lines(handler.body, checks)
        elif hasattr(node, "body") and isinstance(node.body, list):  # with, for, while, if (not a raise block)
            if _calls_check_header(node, checks):
                found |= _header(node)
            found |= check_lines(node.body, checks) | check_lines(getattr(node, "orelse", []), checks)
        elif _calls_check(node, checks):
            found |= _lines(node)
    return found


def _calls_check_header(node: ast.stmt, checks: set[str]) -> bool:
    parts: list[ast.AST] = []
    if isinstance(node, (ast.With, ast.AsyncWith)):
        parts = [item.context_expr for item in node.items]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        parts = [node.iter]
    elif isinstance(node, (ast.If, ast.While)):
        parts = [node.test]
    return any(_calls_check(p, checks) for p in parts)


@dataclass(frozen=True)
class Door:
    """One public function (``module.name`` or ``module.Class.method``), its counts, and the validator it declares
    (``checked_by``) with the number of lines of that declaration."""
    name: str
    body: int
    checks: int
    validator: str | None = None
    declared: int = 0


def _declaration(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    """The ``@checked_by(...)`` decorator of a function, if it has one."""
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "checked_by":
            return d
    return None


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _measure(module: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, code: set[int], checks: set[str]) -> Door:
    body = _body(fn)
    lines = {n for s in body for n in _lines(s)} & code
    declared = _declaration(fn)
    return Door(f"{module}.{fn.name}", len(lines), len(check_lines(body, checks) & lines),
                ast.unparse(declared.args[0]) if declared and declared.args else None,
                len(_lines(declared) & code) if declared else 0)


def doors(path: Path) -> list[Door]:
    """The counts of every door of one module."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    code, checks, exported = _code_lines(source), _check_names(tree), _exported(tree)
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    found: list[Door] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in exported:
            if not any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list):
                found.append(_measure(module, node, code, checks))
        elif isinstance(node, ast.ClassDef) and node.name in exported:
            for fn in node.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        not fn.name.startswith("_") or fn.name in ("__init__", "__post_init__", "__call__")):
                    found.append(_measure(f"{module}.{node.name}", fn, code, checks))
    return found


def revalidating_helpers(path: Path) -> list[str]:
    """Internal helpers (a name that starts with ``_``, at any depth) that call into ``_checks`` although they are
    not validators (``_check_*``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checks = _check_names(tree)
    return sorted(f"{path.stem}.{node.name}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_")
                  and not node.name.startswith("__") and not _is_validator(node.name)
                  and _calls_check(ast.Module(body=_body(node), type_ignores=[]), checks))


def declared_doors(paths: list[Path]) -> set[str]:
    """The names of the functions and methods that declare their check (``@checked_by``)."""
    return {node.name for path in paths for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _declaration(node)}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def checking_doors(paths: list[Path]) -> set[str]:
    """The doors that check their arguments, at the door (``@checked_by``) or in their body (check lines), by
    qualified name (``pavlovlab.part.module.function`` or ``pavlovlab.part.module.Class.method``)."""
    return {d.name for path in paths for d in doors(path) if d.checks or d.validator is not None}


def _imported(tree: ast.Module, module: str) -> tuple[dict[str, str], dict[str, str]]:
    """The names a module imports from the package, by what they are called there: functions and classes
    (``from ..sampling import random_keys``) and modules (``from ..conditioning import trials``), each mapped to
    its qualified name."""
    names: dict[str, str] = {}
    modules: dict[str, str] = {}
    package = module.split(".")
    for node in ast.walk(tree):  # a function's own imports too
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package[:len(package) - node.level] + ([node.module] if node.module else []))
            for a in node.names:
                target = f"{base}.{a.name}"
                local = a.asname or a.name
                if (PACKAGE.parent / Path(*target.split("."))).with_suffix(".py").exists():
                    modules[local] = target
                else:
                    names[local] = target
    return names, modules


def door_calls(path: Path, checking: set[str]) -> list[tuple[str, str]]:
    """``(caller, door)`` for each call of a checking door (:func:`checking_doors`) in a function of one module
    that checks something itself: a declared door, an internal helper or validator (a name that starts with
    ``_``), or a door with check lines. A door is called by its name (defined or imported in the module), through
    an imported module (``trials.blocking(...)``), or, for a method, on any object (``memory.read(...)``). A
    public function that checks nothing and calls a door (``blocking_control``, ``AssociativeMemory.write``)
    passes its arguments on to that door's check, which is its one check."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checks = _check_names(tree)
    module = _module(path)
    names, modules = _imported(tree, module)
    methods = {q.rsplit(".", 1)[1]: q for q in checking if q.rsplit(".", 2)[1][:1].isupper()}
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                _declaration(fn) or fn.name.startswith("_") or check_lines(_body(fn), checks)):
            for call in ast.walk(ast.Module(body=_body(fn), type_ignores=[])):
                if not isinstance(call, ast.Call):
                    continue
                f, target = call.func, None
                if isinstance(f, ast.Name):
                    target = names.get(f.id, f"{module}.{f.id}")
                elif isinstance(f, ast.Attribute):
                    if isinstance(f.value, ast.Name) and f.value.id in modules:
                        target = f"{modules[f.value.id]}.{f.attr}"
                    else:
                        target = methods.get(f.attr)
                if target in checking and target.rsplit(".", 1)[1] != fn.name:
                    found.append((f"{module}.{fn.name}", target.rsplit(".", 1)[1]))
    return sorted(set(found))


def share() -> tuple[int, int, list[Door]]:
    """``(check lines, body lines, doors)`` over the core."""
    found = [d for path in core_files() for d in doors(path)]
    return sum(d.checks for d in found), sum(d.body for d in found), found


def test_the_counter_counts_what_it_says():
    source = '''
from ._checks import check_int
__all__ = ["f"]
def f(x, n):
    """Doc."""
    # a comment
    n = check_int("n", n, low=1)
    if x < 0:
        raise ValueError(
            "x: expected >= 0")
    y = x * n

    return y
def _helper(x):
    return check_int("x", x)
def _check_pair(x):
    return check_int("x", x)
'''
    tree = ast.parse(source)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f"]
    door = _measure("m", fn, _code_lines(source), _check_names(tree))
    assert (door.body, door.checks, door.validator, door.declared) == (6, 4, None, 0)


def test_a_declared_check_is_named_and_counted_apart_from_the_body():
    source = '''
from ._checks import checked_by
__all__ = ["f"]
@checked_by(_check_pair,
            nonfinite="x overflows")
def f(x, n):
    """Doc."""
    return x * n
'''
    tree = ast.parse(source)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    door = _measure("m", fn, _code_lines(source), _check_names(tree))
    assert (door.body, door.checks, door.validator, door.declared) == (1, 0, "_check_pair", 2)


def test_check_lines_are_a_small_share_of_the_doors():
    checks, body, found = share()
    worst = sorted(found, key=lambda d: -d.checks)[:5]
    assert body > 500, "the counter sees the core"
    assert checks / body < CHECK_SHARE, (
        f"{checks} of {body} body lines ({checks / body:.0%}) are checks; the most: "
        + ", ".join(f"{d.name} {d.checks}/{d.body}" for d in worst))


def test_no_internal_helper_revalidates():
    found = [h for path in core_files() for h in revalidating_helpers(path)]
    assert not found, f"internal helpers that check what their caller checked: {found}"


def test_no_function_calls_a_checking_door():
    checking = checking_doors(core_files())
    assert len(checking) > 100, "the counter sees the doors"
    found = [c for path in core_files() for c in door_calls(path, checking) if c not in PASSES_ON]
    assert not found, f"calls that check again what their caller checked (call unchecked(door) instead): {found}"


if __name__ == "__main__":
    checks, body, found = share()
    declared = sum(d.declared for d in found)
    print(f"doors: {len(found)}, body lines: {body}, check lines: {checks} ({checks / body:.1%}); "
          f"{sum(d.validator is not None for d in found)} doors declare their check in {declared} lines "
          f"(counted as body check lines too: {(checks + declared) / (body + declared):.1%})")
    for d in sorted(found, key=lambda d: (-d.checks, d.name))[:15]:
        print(f"  {d.checks:3d} / {d.body:3d}  {d.name}")
    print("declared validators:")
    for d in sorted(found, key=lambda d: d.name):
        print(f"  {d.name}: {d.validator or '(none declared)'}")
    calls = [c for path in core_files() for c in door_calls(path, checking_doors(core_files()))]
    print(f"calls of a checking door by a function that checks: {len(calls)}")
    for caller, door in calls:
        why = PASSES_ON.get((caller, door))
        print(f"  {caller} -> {door}" + (f"  (passes on: {why})" if why else ""))
    helpers = [h for path in core_files() for h in revalidating_helpers(path)]
    print(f"internal helpers that call into _checks: {len(helpers)}")
    for h in helpers:
        print(f"  {h}")
