"""The `pavlovlab` command: doctor's lines and exit codes, student copies that never overwrite, argument errors."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from pavlovlab.__main__ import main
from pavlovlab.teach import cli
from pavlovlab.teach.student import LEARNER_README_NAME, make_student_copies, student_notebook


# ------------------------------------------------------------------------------------------- helpers
def tiny_course(folder: Path) -> Path:
    """A two-notebook course with a stub, a solution, a check and stored outputs."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("00_start.ipynb", "01_next.ipynb"):
        nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                   "language": "python"}, "widgets": {"state": {}}})
        stub = new_code_cell('def f(x):\n    raise NotImplementedError("Exercise 1: double x")\nf(1)',
                             metadata={"tags": ["raises-exception"]}, execution_count=2)
        stub.outputs = [new_output("error", ename="NotImplementedError", evalue="Exercise 1", traceback=[])]
        sol = new_code_cell("def f(x):\n    return 2 * x", execution_count=3,
                            metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}})
        check = new_code_cell("print('check', f)", execution_count=4)
        check.outputs = [new_output("stream", name="stdout", text="check\n")]
        nb.cells = [new_markdown_cell("# Title"), new_code_cell("x = 1", execution_count=1), stub, sol, check]
        nbformat.write(nb, folder / name)
    (folder / "INSTRUCTOR_GUIDE.md").write_text("secret answers")
    (folder / "pics").mkdir(exist_ok=True)
    (folder / "pics" / "bell.txt").write_text("ding")
    return folder


def run(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse errors and --help
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


# -------------------------------------------------------------------------------------------- parser
@pytest.mark.parametrize("sub", ["doctor", "student", "reproduce"])
def test_every_subcommand_has_help(capsys, sub):
    code, out, _ = run(capsys, sub, "--help")
    assert code == 0 and f"usage: pavlovlab {sub}" in out


@pytest.mark.parametrize("argv, message", [
    ([], "required"),
    (["bogus"], "invalid choice"),
    (["student"], "OUTDIR"),
    (["reproduce", "--quick", "--nope"], "unrecognized arguments"),
    (["reproduce", "--only", "no_such_experiment"], "unknown experiment"),
])
def test_bad_arguments_give_a_clear_message_and_a_nonzero_exit(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code != 0
    assert message in err


def test_console_entry_point_runs_as_a_module():
    res = subprocess.run([sys.executable, "-m", "pavlovlab", "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "doctor" in res.stdout and "student" in res.stdout and "reproduce" in res.stdout


# -------------------------------------------------------------------------------------------- doctor
def test_parse_pins_reads_exact_pins_only():
    pins = cli.parse_pins("# c\ntorch==2.13.0+cpu\n--extra-index-url x\nJupyterLab_Widgets == 3.0.17  # c\nfoo>=1\n")
    assert pins == {"torch": "2.13.0+cpu", "jupyterlab-widgets": "3.0.17"}


def test_doctor_all_ok_in_the_course_environment(capsys):
    checks = cli.doctor_checks()
    names = [c.name for c in checks]
    for expected in ("python", "torch", "numpy", "torch device", "jupyterlab widgets", "matplotlib backend",
                     "write access"):
        assert expected in names
    code, out, _ = run(capsys, "doctor")
    lines = [ln for ln in out.splitlines() if ln.startswith(("OK", "FAIL"))]
    assert len(lines) == len(checks)
    assert code == (1 if any(ln.startswith("FAIL") for ln in lines) else 0)


def test_doctor_fails_on_a_wrong_package_version(capsys, monkeypatch):
    real = cli.installed_version
    monkeypatch.setattr(cli, "installed_version", lambda n: "0.0.1" if n == "numpy" else real(n))
    monkeypatch.setattr(cli, "check_write_access", lambda folder=None: cli.Check(True, "write access", "x"))
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert any(ln.startswith("FAIL") and "numpy" in ln and "0.0.1 installed" in ln for ln in out.splitlines())


def test_doctor_fails_on_a_missing_package(capsys, monkeypatch):
    real = cli.installed_version
    monkeypatch.setattr(cli, "installed_version", lambda n: None if n == "tqdm" else real(n))
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and any(ln.startswith("FAIL") and "tqdm" in ln and "not installed" in ln
                             for ln in out.splitlines())


def test_doctor_ci_only_tools_may_be_missing(monkeypatch):
    real = cli.installed_version
    monkeypatch.setattr(cli, "installed_version", lambda n: None if n in cli.CI_ONLY else real(n))
    checks = {c.name: c for c in cli.check_packages()}
    assert all(checks[n].ok for n in cli.CI_ONLY)


def test_doctor_accepts_the_cpu_torch_wheel(monkeypatch):
    real = cli.installed_version
    monkeypatch.setattr(cli, "installed_version", lambda n: "2.13.0+cpu" if n == "torch" else real(n))
    pin = cli.parse_pins(cli.requirements_file().read_text())["torch"]
    checks = {c.name: c for c in cli.check_packages()}
    assert checks["torch"].ok == (cli.public_version(pin) == "2.13.0")


def test_doctor_without_requirements_checks_lower_bounds(monkeypatch):
    monkeypatch.setattr(cli, "requirements_file", lambda course=None: None)
    monkeypatch.setattr(cli, "package_lower_bounds", lambda: {"numpy": "1.26", "torch": "99.0"})
    checks = {c.name: c for c in cli.check_packages()}
    assert checks["numpy"].ok and not checks["torch"].ok


def test_course_and_requirements_found_without_the_checkout(monkeypatch, tmp_path):
    # an installed course named by $PAVLOVLAB_COURSE; requirements.txt from --course's parent, else the cwd
    monkeypatch.chdir(tmp_path)
    installed = tiny_course(tmp_path / "share" / "course")
    monkeypatch.setenv(cli.COURSE_ENV, str(installed))
    assert cli.course_dir() == installed
    assert cli.requirements_file() is None and cli.requirements_file(installed) is None
    (tmp_path / "share" / "requirements.txt").write_text("tqdm==0.0.1\n")
    assert cli.requirements_file(installed) == tmp_path / "share" / "requirements.txt"
    checks = {c.name: c for c in cli.check_packages(installed)}
    assert list(checks) == ["tqdm"] and not checks["tqdm"].ok
    (tmp_path / "requirements.txt").write_text("numpy==0.0.1\n")
    assert cli.requirements_file() == tmp_path / "requirements.txt"


def test_doctor_fails_without_python_311(monkeypatch):
    monkeypatch.setattr(cli, "MIN_PYTHON", (3, 99))
    assert not cli.check_python().ok


def test_doctor_fails_without_the_widgets_extension(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "labextension_dirs", lambda: [tmp_path])
    c = cli.check_widgets()
    assert not c.ok and "jupyterlab-manager" in c.detail


def test_doctor_write_access(tmp_path):
    assert cli.check_write_access(tmp_path).ok
    assert not cli.check_write_access(tmp_path / "does-not-exist").ok


def test_doctor_and_student_resolve_the_same_course_folder(capsys, monkeypatch, tmp_path):
    # explicit --course first, then ./course when it holds the notebooks, else an installed course; never the
    # folder the package's files lie in (the checkout's course/ is not found from elsewhere)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cli.COURSE_ENV, raising=False)
    assert cli.course_dir() == tmp_path / "course" and not cli.course_dir().exists()
    local = tiny_course(tmp_path / "course")
    assert cli.course_dir() == local
    other = tiny_course(tmp_path / "other")
    assert cli.course_dir(other) == other
    seen = []
    monkeypatch.setattr(cli, "check_write_access", lambda folder=None: seen.append(folder or cli.course_dir())
                        or cli.Check(True, "write access", "x"))
    run(capsys, "doctor")
    run(capsys, "doctor", "--course", str(other))
    assert seen == [local, other]
    code, text, _ = run(capsys, "student", str(tmp_path / "out"))
    assert code == 0 and str(tmp_path / "out") in text
    assert sorted(p.name for p in (tmp_path / "out").glob("*.ipynb")) == ["00_start.ipynb", "01_next.ipynb"]


def test_doctor_exit_1_on_any_fail(capsys, monkeypatch):
    monkeypatch.setattr(cli, "doctor_checks",
                        lambda course=None: [cli.Check(True, "a", "fine"), cli.Check(False, "b", "broken")])
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "FAIL  b" in out and "OK    a" in out
    monkeypatch.setattr(cli, "doctor_checks", lambda course=None: [cli.Check(True, "a", "fine")])
    assert run(capsys, "doctor")[0] == 0


# ------------------------------------------------------------------------------------------- student
def test_student_notebook_removes_solutions_and_outputs(tmp_path):
    course = tiny_course(tmp_path / "course")
    nb = nbformat.read(course / "00_start.ipynb", as_version=4)
    copy = student_notebook(nb)
    assert len(nb.cells) == 5 and len(copy.cells) == 4  # the original is untouched
    assert not any("solution" in c.metadata.get("tags", []) for c in copy.cells)
    for c in copy.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None
    assert any("raises-exception" in c.metadata.get("tags", []) for c in copy.cells)  # stub kept
    assert any("print('check'" in c.source for c in copy.cells)  # checker kept
    assert "widgets" not in copy.metadata
    nbformat.validate(copy)


def test_student_command_writes_copies_and_never_overwrites(capsys, tmp_path):
    course = tiny_course(tmp_path / "course")
    out = tmp_path / "mine"
    code, text, _ = run(capsys, "student", str(out), "--course", str(course))
    assert code == 0
    assert sorted(p.name for p in out.glob("*.ipynb")) == ["00_start.ipynb", "01_next.ipynb"]
    assert (out / LEARNER_README_NAME).is_file() and (out / "pics" / "bell.txt").is_file()
    assert not (out / "INSTRUCTOR_GUIDE.md").exists()
    # The learner works in a notebook; a second hand-out keeps that work and says how to force.
    (out / "00_start.ipynb").write_text("my work")
    code, text, _ = run(capsys, "student", str(out), "--course", str(course))
    assert code == 0
    assert (out / "00_start.ipynb").read_text() == "my work"
    assert "skipped" in text and "00_start.ipynb" in text and "--force" in text
    code, text, _ = run(capsys, "student", str(out), "--course", str(course), "--force")
    assert code == 0 and "skipped" not in text
    assert nbformat.read(out / "00_start.ipynb", as_version=4).cells


def test_student_command_errors(capsys, tmp_path):
    course = tiny_course(tmp_path / "course")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    code, _, err = run(capsys, "student", str(a_file), "--course", str(course))
    assert code == 2 and "is a file" not in err and "expected a folder" in err
    code, _, err = run(capsys, "student", str(tmp_path / "o"), "--course", str(tmp_path / "nope"))
    assert code == 2 and "not found" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "student", str(tmp_path / "o"), "--course", str(tmp_path / "empty"))
    assert code == 2 and "found none" in err


def test_make_student_copies_reports(tmp_path):
    course = tiny_course(tmp_path / "course")
    rep = make_student_copies(course, tmp_path / "out")
    assert len(rep.written) == 4 and not rep.skipped
    rep = make_student_copies(course, tmp_path / "out")
    assert not rep.written and len(rep.skipped) == 4


# ----------------------------------------------------------------------------------------- reproduce
def test_reproduce_list(capsys):
    from pavlovlab.teach import reproduce

    code, out, _ = run(capsys, "reproduce", "--list")
    assert code == 0
    assert all(e.name in out for e in reproduce.EXPERIMENTS) and len(reproduce.EXPERIMENTS) >= 8


def test_reproduce_out_must_be_a_folder(capsys, tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    code, _, err = run(capsys, "reproduce", "--out", str(f))
    assert code == 2 and "is a file" in err


def test_reproduce_reports_failed_experiments(capsys, tmp_path, monkeypatch):
    import json

    from pavlovlab.teach import reproduce

    def boom(out, *, quick, progress):
        raise RuntimeError("broken on purpose")

    def fine(out, *, quick, progress):
        return {"figures": [], "answer": 42}

    monkeypatch.setattr(reproduce, "EXPERIMENTS", [
        reproduce.Experiment("fine", "00", "works", fine),
        reproduce.Experiment("boom", "00", "raises", boom),
    ])
    code, out, _ = run(capsys, "reproduce", "--out", str(tmp_path), "--no-progress")
    assert code == 1  # one experiment failed
    summary = json.loads((tmp_path / reproduce.SUMMARY_NAME).read_text())["experiments"]
    assert summary["fine"]["status"] == "ok" and summary["fine"]["numbers"] == {"answer": 42}
    assert summary["boom"]["status"] == "failed" and "broken on purpose" in summary["boom"]["reason"]
    assert "FAILED   boom" in out and "OK       fine" in out


def test_reproduce_one_experiment(capsys, tmp_path):
    import json

    code, _, _ = run(capsys, "reproduce", "--quick", "--out", str(tmp_path), "--only", "linear_equivalence",
                       "--no-progress")
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    res = summary["experiments"]["linear_equivalence"]
    assert res["status"] == "ok" and res["numbers"]["max_rel_error"] < 1e-10
    assert (tmp_path / res["figures"][0]).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_reproduce_quick_writes_every_figure_and_the_numbers(capsys, tmp_path):
    import json

    from pavlovlab.teach import reproduce

    code, out, _ = run(capsys, "reproduce", "--quick", "--out", str(tmp_path), "--no-progress")
    assert code == 0, out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["quick"] is True
    results = summary["experiments"]
    assert set(results) == {e.name for e in reproduce.EXPERIMENTS}
    for name, res in results.items():
        assert res["status"] == "ok", (name, res)
        assert res["figures"] and res["numbers"], name
        for fig in res["figures"]:
            assert (tmp_path / fig).read_bytes()[:4] == b"\x89PNG", fig
    # a few headline numbers the course states
    cond, hebb = results["conditioning"]["numbers"], results["hebbian_recall"]["numbers"]
    assert cond["blocked_cs_strength"] < 0.1 < cond["control_cs_strength"]
    assert abs(hebb["cosine_at_n_eq_dk"] - hebb["theory_at_n_eq_dk"]) < 0.05
    assert results["drift"]["numbers"]["final_cosine_delta"] > results["drift"]["numbers"]["final_cosine_hebbian"]


# ------------------------------------------------------------------ nothing lost: the data-loss cases
# Every case runs against a temporary copy of the real course (never the checkout) and checks that the
# command exits 2 with one line naming the folder, and that not one byte of the course changed.
COURSE = Path(__file__).resolve().parents[2] / "course"


@pytest.fixture
def course_copy(tmp_path, monkeypatch) -> Path:
    import shutil

    dst = tmp_path / "course"
    shutil.copytree(COURSE, dst)
    monkeypatch.chdir(tmp_path)  # ./course is the course, as in a clone
    return dst


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def solution_cells(folder: Path) -> int:
    return sum("solution" in c.metadata.get("tags", []) for p in folder.glob("[0-9]*.ipynb")
               for c in nbformat.read(p, as_version=4).cells)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("extra", [[], ["--force"]])
def test_student_refuses_the_course_folder_itself(capsys, course_copy, extra):
    before, n_solutions = snapshot(course_copy), solution_cells(course_copy)
    assert n_solutions > 0
    code, _, err = run(capsys, "student", str(course_copy), "--course", str(course_copy), *extra)
    assert code == 2 and "is the course folder" in one_line(err) and str(course_copy) in err
    assert snapshot(course_copy) == before and solution_cells(course_copy) == n_solutions
    assert not (course_copy / LEARNER_README_NAME).exists()


def test_student_refuses_the_course_folder_with_a_readme_already_there(capsys, course_copy):
    (course_copy / LEARNER_README_NAME).write_text("the instructor's own notes")
    before = snapshot(course_copy)
    code, _, err = run(capsys, "student", "course", "--force")  # ./course resolved as the course
    assert code == 2 and "course folder" in one_line(err) and "SameFileError" not in err
    assert snapshot(course_copy) == before


def test_student_refuses_a_folder_inside_the_course(capsys, course_copy):
    before = snapshot(course_copy)
    for _ in range(2):  # run twice: no course/learner/learner either
        code, _, err = run(capsys, "student", str(course_copy / "learner"))
        assert code == 2 and "inside the course folder" in one_line(err)
    assert snapshot(course_copy) == before and not (course_copy / "learner").exists()


def test_student_refuses_a_copy_of_the_course_elsewhere(capsys, course_copy, tmp_path):
    import shutil

    other = tmp_path / "elsewhere"
    shutil.copytree(course_copy, other)
    before = snapshot(other)
    code, _, err = run(capsys, "student", str(other))
    assert code == 2 and "holds course notebooks with their solutions" in one_line(err)
    assert snapshot(other) == before


def test_student_refuses_an_empty_folder_name(capsys, course_copy, tmp_path):
    code, _, err = run(capsys, "student", "")
    assert code == 2 and "OUTDIR: expected a folder name, got an empty string" in one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course"]  # nothing written in the current folder


def test_student_writes_beside_the_course(capsys, course_copy, tmp_path):
    before = snapshot(course_copy)
    code, _, _ = run(capsys, "student", str(tmp_path / "learner"))
    assert code == 0 and snapshot(course_copy) == before
    assert solution_cells(tmp_path / "learner") == 0
    assert len(list((tmp_path / "learner").glob("[0-9]*.ipynb"))) == len(list(course_copy.glob("[0-9]*.ipynb")))
    assert not list((tmp_path / "learner").rglob("*.tmp"))  # no temporary file left


def fake_experiments(monkeypatch, value=1):
    from pavlovlab.teach import reproduce

    def draw(name):
        def fn(out, *, quick, progress):
            fig, (ax,) = reproduce._figure()
            ax.plot([0, 1], [0, value])
            return {"figures": [reproduce._save(fig, out, name)], "value": value}
        return fn

    monkeypatch.setattr(reproduce, "EXPERIMENTS", [reproduce.Experiment(n, "00", n, draw(n))
                                                   for n in ("first", "second")])
    return reproduce


def test_reproduce_refuses_the_course_folder(capsys, course_copy, monkeypatch):
    fake_experiments(monkeypatch)
    before = snapshot(course_copy)
    for out in ("course", str(course_copy / "figures"), ""):
        code, _, err = run(capsys, "reproduce", "--out", out, "--no-progress", "--force")
        line = one_line(err)
        assert code == 2 and "--out" in line, line
        assert ("empty string" in line) if out == "" else ("course folder" in line)
    assert snapshot(course_copy) == before
    assert sorted(p.name for p in course_copy.parent.iterdir()) == ["course"]


def test_reproduce_never_overwrites_an_earlier_run_without_force(capsys, tmp_path, monkeypatch):
    import json

    reproduce = fake_experiments(monkeypatch, value=1)
    out = tmp_path / "figs"
    assert run(capsys, "reproduce", "--out", str(out), "--no-progress")[0] == 0
    before = snapshot(out)
    assert set(json.loads(before["summary.json"])["experiments"]) == {"first", "second"}
    fake_experiments(monkeypatch, value=2)
    code, _, err = run(capsys, "reproduce", "--only", "first", "--out", str(out), "--no-progress")
    assert code == 2 and "is not empty" in one_line(err) and "--force" in err and str(out) in err
    assert snapshot(out) == before
    # with --force: this run's figure replaced, the other experiment's result kept in summary.json, said so
    code, text, _ = run(capsys, "reproduce", "--only", "first", "--out", str(out), "--no-progress", "--force")
    assert code == 0 and "merged" in text and "second" in text
    summary = json.loads((out / reproduce.SUMMARY_NAME).read_text())["experiments"]
    assert summary["first"]["numbers"] == {"value": 2} and summary["second"]["numbers"] == {"value": 1}
    assert (out / "second.png").read_bytes() == before["second.png"]
    assert (out / "first.png").read_bytes() != before["first.png"]
    assert not list(out.glob(".*"))  # no temporary file left


def test_reproduce_refuses_an_empty_name_and_writes_nothing_here(capsys, tmp_path, monkeypatch):
    fake_experiments(monkeypatch)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "reproduce", "--out", "", "--no-progress")
    assert code == 2 and "--out: expected a folder name" in one_line(err)
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------- filesystem faults
@pytest.mark.parametrize("command", ["student", "reproduce"])
def test_a_parent_that_is_a_file_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, command):
    fake_experiments(monkeypatch)
    course = tiny_course(tmp_path / "course")
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "sub"
    argv = (["student", str(target), "--course", str(course)] if command == "student"
            else ["reproduce", "--out", str(target), "--no-progress"])
    code, _, err = run(capsys, *argv)
    line = one_line(err)
    assert code == 2 and line.startswith(f"pavlovlab {command}: cannot write ") and "afile" in line, line


@pytest.mark.parametrize("command", ["student", "reproduce"])
@pytest.mark.parametrize("errno_name, reason", [("ENOSPC", "No space left on device"),
                                                ("EROFS", "Read-only file system"),
                                                ("EACCES", "Permission denied")])
def test_write_faults_are_one_line_and_exit_2(capsys, tmp_path, monkeypatch, command, errno_name, reason):
    import errno
    import os

    from pavlovlab.teach import student

    fake_experiments(monkeypatch)
    course = tiny_course(tmp_path / "course")
    out = tmp_path / "out"

    def replace(src, dst):  # the rename that would publish the file fails (we run as root: chmod is no test)
        raise OSError(getattr(errno, errno_name), os.strerror(getattr(errno, errno_name)), str(src))

    monkeypatch.setattr(student.os, "replace", replace)
    argv = (["student", str(out), "--course", str(course)] if command == "student"
            else ["reproduce", "--out", str(out), "--no-progress"])
    code, _, err = run(capsys, *argv)
    line = one_line(err)
    assert code == 2 and line.startswith(f"pavlovlab {command}: cannot write {out}") and line.endswith(reason), line
    assert not [p for p in out.rglob("*") if p.is_file()]  # nothing half-written, no temporary file


def test_an_interrupted_copy_leaves_no_half_written_notebook(tmp_path, monkeypatch):
    from pavlovlab.teach import student

    course = tiny_course(tmp_path / "course")
    out = tmp_path / "out"
    make_student_copies(course, out)
    old = (out / "01_next.ipynb").read_bytes()
    real = nbformat.write

    def half_then_interrupt(nb, fp, **kw):
        Path(fp).write_text('{"cells": [')  # half a notebook, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(student.nbformat, "write", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        make_student_copies(course, out, force=True)
    monkeypatch.setattr(student.nbformat, "write", real)
    assert (out / "01_next.ipynb").read_bytes() == old  # the old copy, whole
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
    with pytest.raises(KeyboardInterrupt):
        monkeypatch.setattr(student.nbformat, "write", half_then_interrupt)
        make_student_copies(course, tmp_path / "fresh")
    assert not [p for p in (tmp_path / "fresh").iterdir() if p.suffix == ".ipynb" or p.name.startswith(".")]


def test_learner_readme_says_what_the_copy_holds_and_how_to_get_unstuck(tmp_path):
    from pavlovlab.teach.student import LEARNER_README

    course = tiny_course(tmp_path / "course")
    make_student_copies(course, tmp_path / "out")
    text = (tmp_path / "out" / LEARNER_README_NAME).read_text()
    assert text == LEARNER_README
    for needle in ("stub", "check", "No solution cells", "ex.hint(N)", "run it\n  again for the next tier",
                   "ex.solution(N)", "reference solution"):
        assert needle in text, needle
