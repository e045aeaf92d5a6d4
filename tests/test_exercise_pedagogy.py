"""The pedagogy held in place: every exercise is registered with tiered hints and
a reference solution; a typical wrong answer is rejected with a hint that gives nothing away and the
solution is accepted; stubs and first hints never contain the solution's key expression; every
Think! has an answer; check cells end with the verdict alone; learner copies keep the stubs and lose
the solutions, and every solution stays reachable through ``ex.solution(n)``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import pkgutil
import re
import tokenize
from pathlib import Path

import pytest

import pavlovlab.teach.exercises as exercises_pkg
from pavlovlab.teach import student

COURSE = Path(__file__).resolve().parent.parent / "course"
PRELUDE = "import math\nimport torch\nimport pavlovlab as pl\n"


def _modules():
    mods = []
    for info in pkgutil.iter_modules(exercises_pkg.__path__):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"pavlovlab.teach.exercises.{info.name}"))
    return mods


MODULES = _modules()
BOOKS = [(m, m.BOOK) for m in MODULES if hasattr(m, "BOOK")]
EXERCISES = [(m, e) for m, book in BOOKS for e in book]
IDS = [f"{m.__name__.rsplit('.', 1)[1]}-{e.number}" for m, e in EXERCISES]


def _cells(notebook: str) -> list[dict]:
    return json.loads((COURSE / f"{notebook}.ipynb").read_text())["cells"]


def _src(cell: dict) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def _run(module, exercise, answer: str) -> str:
    """Run the exercise's setup, an answer and its check cell in a fresh namespace; return what it printed."""
    ns: dict = {}
    exec(PRELUDE, ns)
    ns["ex"] = module
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(exercise.setup, ns)
        exec(answer, ns)
        exec(exercise.check, ns)
    return out.getvalue()


def _tokens(code: str) -> list[str]:
    toks = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(code).readline):
            if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING):
                toks.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        toks = re.findall(r"\w+|[^\w\s]", code)
    return toks


_TRIVIAL = {"def", "return", "import", "from", "for", "in", "if", "else", "print", "(", ")", ":", ",", "=",
            "[", "]", "None", "True", "False", "."}


def _key_expressions(solution: str, stub: str) -> list[list[str]]:
    """The solution's lines that the stub does not share, as token lists with enough substance to be an
    answer (at least 4 tokens that are not keywords or punctuation)."""
    stub_lines = {re.sub(r"\s+", "", ln.split("#", 1)[0]) for ln in stub.splitlines()}
    keys = []
    for line in solution.splitlines():
        code = line.split("#", 1)[0].strip()
        if not code or re.sub(r"\s+", "", code) in stub_lines or code.startswith(("def ", "import ", "from ")):
            continue
        toks = _tokens(code)
        if toks and toks[0] == "return":
            toks = toks[1:]
        if sum(t not in _TRIVIAL for t in toks) >= 4:
            keys.append(toks)
    return keys


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def test_every_exercise_module_has_a_book():
    assert MODULES, "no exercise modules found"
    missing = [m.__name__ for m in MODULES if not hasattr(m, "BOOK")]
    assert not missing, f"exercise modules without a BOOK of registered exercises: {missing}"


def test_every_notebook_has_an_implement_and_a_design_exercise():
    kinds: dict[str, set[str]] = {}
    for _, book in BOOKS:
        for e in book:
            kinds.setdefault(book.notebook, set()).add(e.kind)
    for nb in sorted(p.stem for p in COURSE.glob("0[1-9]_*.ipynb")):
        assert kinds.get(nb, set()) >= {"implement", "design"}, f"{nb}: exercise kinds {kinds.get(nb)}"


@pytest.mark.parametrize("module, exercise", EXERCISES, ids=IDS)
def test_wrong_answer_rejected_without_giving_it_away(module, exercise):
    exercise.attempts = 0
    out = _run(module, exercise, exercise.wrong)
    assert "❌" in out and "✅" not in out, out
    assert f"ex.hint({exercise.number})" in out, "a ❌ must say where the next hint is"
    toks = _tokens(out)
    for key in _key_expressions(exercise.solution, exercise.wrong):
        assert not _contains(toks, key), f"the first ❌ contains the solution's {' '.join(key)!r}:\n{out}"


@pytest.mark.parametrize("module, exercise", EXERCISES, ids=IDS)
def test_solution_accepted(module, exercise):
    out = _run(module, exercise, exercise.solution)
    assert "✅" in out and "❌" not in out, out


@pytest.mark.parametrize("module, exercise", EXERCISES, ids=IDS)
def test_hints_in_tiers_and_solution_reachable(module, exercise, capsys):
    assert len(exercise.hints) >= 2, "at least two hint tiers: the idea, then a nearer step"
    module.hint(exercise.number)
    first = capsys.readouterr().out
    assert "hint 1 of" in first
    for key in _key_expressions(exercise.solution, ""):
        assert not _contains(_tokens(exercise.hints[0]), key), f"hint 1 gives away {' '.join(key)!r}"
    module.solution(exercise.number)
    assert exercise.solution.splitlines()[-1].strip() in capsys.readouterr().out


@pytest.mark.parametrize("module, exercise", EXERCISES, ids=IDS)
def test_notebook_holds_the_registered_cells(module, exercise):
    cells = _cells(module.BOOK.notebook)
    code = [(c, _src(c).strip("\n")) for c in cells if c["cell_type"] == "code"]
    solutions = [s for c, s in code if "solution" in c.get("metadata", {}).get("tags", [])]
    assert exercise.solution in solutions, "the notebook's solution cell differs from the registered solution"
    assert any(s == exercise.check for _, s in code), "the notebook has no check cell equal to the registered one"
    stubs = [s for c, s in code if f'NotImplementedError("Exercise {exercise.number}' in s]
    assert len(stubs) == 1, f"expected one stub cell for exercise {exercise.number}, found {len(stubs)}"
    stub_toks = _tokens(stubs[0])
    for key in _key_expressions(exercise.solution, stubs[0]):
        assert not _contains(stub_toks, key), f"the stub contains the solution's {' '.join(key)!r}"


@pytest.mark.parametrize("notebook", sorted(p.stem for p in COURSE.glob("[0-9]*.ipynb")))
def test_every_solution_cell_is_registered(notebook):
    registered = {e.solution for _, book in BOOKS if book.notebook == notebook for e in book}
    for c in _cells(notebook):
        if "solution" in c.get("metadata", {}).get("tags", []):
            assert _src(c).strip("\n") in registered, f"{notebook}: an unregistered solution cell"


@pytest.mark.parametrize("notebook", sorted(p.stem for p in COURSE.glob("[0-9]*.ipynb")))
def test_every_think_has_an_answer(notebook):
    cells = _cells(notebook)
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown" and "think!" in _src(c).lower():
            near = [_src(d) for d in cells[i:i + 2] if d["cell_type"] == "markdown"]
            tail = near[0][near[0].lower().rfind("think!"):]
            assert "<details" in tail or (len(near) > 1 and "<details" in near[1]), \
                f"{notebook} cell {i}: a Think! without an answer block under it"


@pytest.mark.parametrize("notebook", sorted(p.stem for p in COURSE.glob("[0-9]*.ipynb")))
def test_check_cells_end_with_the_verdict(notebook):
    checks = {e.check for _, book in BOOKS if book.notebook == notebook for e in book}
    for c in _cells(notebook):
        if c["cell_type"] == "code" and _src(c).strip("\n") in checks:
            kinds = [o["output_type"] for o in c.get("outputs", [])]
            assert "execute_result" not in kinds, f"{notebook}: a check cell prints a stray value after its verdict"
            text = "".join("".join(o.get("text", "")) for o in c["outputs"] if o["output_type"] == "stream")
            last = [ln for ln in text.splitlines() if ln.strip()][-1:] or [""]
            assert last[0].startswith(("✅", "❌", "⏳", "   ")), f"{notebook}: check output ends with {last[0]!r}"


def test_learner_copies_keep_stubs_and_drop_solutions(tmp_path):
    student.make_student_copies(COURSE, tmp_path / "learner")
    for _, book in BOOKS:
        cells = json.loads((tmp_path / "learner" / f"{book.notebook}.ipynb").read_text())["cells"]
        srcs = [_src(c) for c in cells]
        for e in book:
            assert not any(s.strip("\n") == e.solution for s in srcs), f"{book.notebook}: solution {e.number} leaked"
            assert any(f'NotImplementedError("Exercise {e.number}' in s for s in srcs)
