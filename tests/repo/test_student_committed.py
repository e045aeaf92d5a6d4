"""The committed learner copies in student/ are exactly what `make student` (tools/student_copies.py) makes
from course/ now: regenerated in a temporary folder and compared file by file, byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from student_copies import differences  # noqa: E402


def test_student_copies_are_up_to_date_with_the_course():
    fresh, missing, changed, stale = differences(ROOT / "course", ROOT / "student")
    assert any(n.endswith(".ipynb") for n in fresh)
    assert not (missing or changed or stale), (
        f"student/ is out of date with course/: missing {missing}, out of date {changed}, stale {stale}. "
        "Run `make student` and commit student/.")


def test_student_copies_hold_no_solution():
    for path in sorted((ROOT / "student").glob("[0-9]*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        tagged = [i for i, c in enumerate(nb["cells"]) if "solution" in c.get("metadata", {}).get("tags", [])]
        outputs = [i for i, c in enumerate(nb["cells"]) if c.get("outputs")]
        assert not tagged and not outputs, f"{path.name}: solution cells {tagged}, cells with outputs {outputs}"


def test_check_detects_a_stale_copy(tmp_path):
    """The comparison can fail: a copy edited after generation, and a leftover file, are both reported."""
    import shutil

    student = tmp_path / "student"
    shutil.copytree(ROOT / "student", student)
    _, missing0, changed0, stale0 = differences(ROOT / "course", student)  # empty when student/ is up to date
    first = sorted(student.glob("[0-9]*.ipynb"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace("Exercise", "Exercice", 1), encoding="utf-8")
    (student / "99_old.ipynb").write_text("{}", encoding="utf-8")
    _, missing, changed, stale = differences(ROOT / "course", student)
    assert set(changed) == set(changed0) | {first.name} and set(stale) == set(stale0) | {"99_old.ipynb"}
    assert missing == missing0
