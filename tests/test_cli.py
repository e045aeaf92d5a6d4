"""The `pavlovlab` command: doctor's lines and exit codes, student copies that never overwrite, argument errors."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from pavlovlab import cli
from pavlovlab.__main__ import main
from pavlovlab.student import LEARNER_README_NAME, make_student_copies, student_notebook


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
    code, out, err = run(capsys, *argv)
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
    monkeypatch.setattr(cli, "requirements_file", lambda: None)
    monkeypatch.setattr(cli, "package_lower_bounds", lambda: {"numpy": "1.26", "torch": "99.0"})
    checks = {c.name: c for c in cli.check_packages()}
    assert checks["numpy"].ok and not checks["torch"].ok


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
    # explicit --course first, then ./course when it holds the notebooks, else the checkout's course/
    monkeypatch.chdir(tmp_path)
    assert cli.course_dir() == cli.REPO_ROOT / "course"
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
    from pavlovlab import reproduce

    code, out, _ = run(capsys, "reproduce", "--list")
    assert code == 0
    assert all(e.name in out for e in reproduce.EXPERIMENTS) and len(reproduce.EXPERIMENTS) >= 8


def test_reproduce_out_must_be_a_folder(capsys, tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    code, _, err = run(capsys, "reproduce", "--out", str(f))
    assert code == 2 and "is a file" in err


def test_reproduce_reports_missing_and_failed_experiments(capsys, tmp_path, monkeypatch):
    import json

    from pavlovlab import reproduce

    def boom(out, *, quick, progress):
        raise RuntimeError("broken on purpose")

    def fine(out, *, quick, progress):
        return {"figures": [], "answer": 42}

    monkeypatch.setattr(reproduce, "EXPERIMENTS", [
        reproduce.Experiment("fine", "00", "works", ("attention",), fine),
        reproduce.Experiment("boom", "00", "raises", (), boom),
        reproduce.Experiment("absent", "00", "module missing", ("no_such_module",), fine),
    ])
    code, out, _ = run(capsys, "reproduce", "--out", str(tmp_path), "--no-progress")
    assert code == 1  # one experiment failed
    summary = json.loads((tmp_path / reproduce.SUMMARY_NAME).read_text())["experiments"]
    assert summary["fine"]["status"] == "ok" and summary["fine"]["numbers"] == {"answer": 42}
    assert summary["boom"]["status"] == "failed" and "broken on purpose" in summary["boom"]["reason"]
    assert summary["absent"]["status"] == "missing" and "no_such_module" in summary["absent"]["reason"]
    assert "FAILED   boom" in out and "MISSING  absent" in out


def test_reproduce_one_experiment(capsys, tmp_path):
    import json

    code, out, _ = run(capsys, "reproduce", "--quick", "--out", str(tmp_path), "--only", "linear_equivalence",
                       "--no-progress")
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    res = summary["experiments"]["linear_equivalence"]
    assert res["status"] == "ok" and res["numbers"]["max_rel_error"] < 1e-10
    assert (tmp_path / res["figures"][0]).read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_reproduce_quick_writes_every_figure_and_the_numbers(capsys, tmp_path):
    import json

    from pavlovlab import reproduce

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
    assert results["conditioning"]["numbers"]["blocked_cs_strength"] < 0.1 < results["conditioning"]["numbers"]["control_cs_strength"]
    assert abs(results["hebbian_recall"]["numbers"]["cosine_at_n_eq_dk"] - results["hebbian_recall"]["numbers"]["theory_at_n_eq_dk"]) < 0.05
    assert results["drift"]["numbers"]["final_cosine_delta"] > results["drift"]["numbers"]["final_cosine_hebbian"]
