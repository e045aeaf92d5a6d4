"""`pavlovlab start`: the learner copies written into a folder (never overwriting), then JupyterLab opened there;
and the wheel carries the course, so that `pip install <wheel>` then `pavlovlab start` works from any folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

from pavlovlab.teach import cli, language
from pavlovlab.teach.student import LEARNER_README_NAME, SOLUTION_TAG

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
NOTEBOOKS = sorted(p.name for p in COURSE.glob("[0-9]*.ipynb"))


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_start_has_help(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["start", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "usage: pavlovlab start" in out and "--no-browser" in out and "--dry-run" in out


def test_start_dry_run_writes_the_learner_copies_and_prints_the_lab_command(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "start", "--course", str(COURSE), "--dry-run")
    folder = tmp_path / cli.START_DIR
    assert code == 0
    assert sorted(p.name for p in folder.glob("[0-9]*.ipynb")) == NOTEBOOKS
    assert (folder / LEARNER_README_NAME).is_file() and not (folder / "INSTRUCTOR_GUIDE.md").exists()
    for name in NOTEBOOKS:
        nb = nbformat.read(folder / name, as_version=4)
        assert not [c for c in nb.cells if SOLUTION_TAG in c.metadata.get("tags", [])], name
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"{sys.executable} -m jupyterlab ") and last.endswith(cli.FIRST_NOTEBOOK)
    assert f"--ServerApp.root_dir={folder}" in last


def test_start_never_overwrites_a_learners_file(capsys, tmp_path):
    folder = tmp_path / "mine"
    assert _run(capsys, "start", str(folder), "--course", str(COURSE), "--dry-run")[0] == 0
    work = folder / NOTEBOOKS[1]
    work.write_text("my own work", encoding="utf-8")
    code, out, _ = _run(capsys, "start", str(folder), "--course", str(COURSE), "--dry-run")
    assert code == 0 and work.read_text(encoding="utf-8") == "my own work"
    assert f"{len(NOTEBOOKS) + 1} already there kept" in out and "0 learner file(s) written" in out


def test_start_refuses_the_course_folder(capsys):
    code, _, err = _run(capsys, "start", str(COURSE), "--course", str(COURSE), "--dry-run")
    assert code == 2 and "DIR" in err and "course folder" in err


def test_lab_command_adds_allow_root_only_for_root(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "--allow-root" in cli.lab_command(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    cmd = cli.lab_command(tmp_path, no_browser=True)
    assert "--allow-root" not in cmd and "--no-browser" in cmd


def test_start_without_jupyterlab_says_how_to_get_it(capsys, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jupyterlab" else real(name, *a))
    code, _, err = _run(capsys, "start", str(tmp_path / "c"), "--course", str(COURSE))
    assert code == 2 and "pip install 'pavlovlab[lab]'" in err


# ---------------------------------------------------------------------------------- from the wheel
def _build_wheel(out: Path) -> Path:
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                          str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return next(out.glob("pavlovlab-*.whl"))


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", cli.COURSE_ENV)}
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "jcfg"), JUPYTER_RUNTIME_DIR=str(tmp / "jrt"),
               JUPYTER_DATA_DIR=str(tmp / "jdata"), BROWSER="true")
    return env


@pytest.mark.slow
def test_the_wheel_carries_the_course_and_start_opens_it_from_any_folder(tmp_path):
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    for name in NOTEBOOKS:
        assert f"pavlovlab/_course/course/{name}" in names and f"pavlovlab/_course/student/{name}" in names
    # A fresh venv. Its dependencies come from this interpreter's site-packages through a .pth line (no
    # network): a path added that way is not scanned for .pth files, so an editable install of pavlovlab
    # there stays invisible, and the venv's own site-packages (the wheel) comes first.
    venv = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True,
                   timeout=300)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    env = _clean_env(tmp_path)  # no PYTHONPATH: the checkout's package (or its build metadata) must not be seen
    res = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    import sysconfig  # after the install: pip would take the shared folder's pavlovlab metadata as installed

    Path(site, "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run([str(py), "-c", "import pavlovlab; print(pavlovlab.__file__)"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), f"pavlovlab imported from {where}, not from the wheel"
    exe = venv / "bin" / "pavlovlab"
    # `student` from an unrelated folder finds the installed course too
    res = subprocess.run([str(exe), "student", "handout"], cwd=elsewhere, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (elsewhere / "handout").glob("[0-9]*.ipynb")) == NOTEBOOKS
    # `start --lang` writes an edition from the wheel and speaks its language (the compiled catalogues travel too)
    for lang, says in (("fr", "fichier(s) du cours écrit(s)"), ("zh", "个学习者文件写入")):
        assert f"pavlovlab/locale/{language.EDITIONS[lang]}/LC_MESSAGES/pavlovlab.mo" in names
        res = subprocess.run([str(exe), "start", f"course-{lang}", "--lang", lang, "--dry-run"], cwd=elsewhere,
                             env=dict(env, LANG="C.UTF-8"), capture_output=True, text=True, timeout=300)
        assert res.returncode == 0 and says in res.stdout, res.stdout + res.stderr
        first = nbformat.read(elsewhere / f"course-{lang}" / cli.FIRST_NOTEBOOK, as_version=4)
        edition = nbformat.read(ROOT / "student" / lang / cli.FIRST_NOTEBOOK, as_version=4)
        assert [c.source for c in first.cells] == [c.source for c in edition.cells]
    # `start` writes the copies and serves them: ask the running JupyterLab for notebook 00 through its API
    # its output goes to a file, read whole each time: a pipe read line by line behind select() can leave the
    # URL's line in the reader's buffer, where select() no longer sees it
    log_path = tmp_path / "start.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(exe), "start", "my-course", "--no-browser"], cwd=elsewhere,
                                env=dict(env, PYTHONUNBUFFERED="1"), stdout=log, stderr=subprocess.STDOUT)
    try:
        m, deadline = None, time.monotonic() + 240
        while m is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            m = re.search(r"(http://127\.0\.0\.1:\d+/)lab\?token=(\w+)", log_path.read_text())
        assert m, (f"JupyterLab did not print its URL (exit status {proc.poll()}):\n"
                   + "".join(log_path.read_text().splitlines(keepends=True)[-30:]))
        base, token = m.groups()
        req = urllib.request.Request(f"{base}api/contents/{cli.FIRST_NOTEBOOK}?content=1",
                                     headers={"Authorization": f"token {token}"})
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # localhost, never a proxy
        model, tries = None, time.monotonic() + 60
        while model is None:  # the URL is printed as the server starts: on a loaded machine, ask again shortly
            try:
                with direct.open(req, timeout=60) as r:
                    model = json.load(r)
            except OSError as e:
                if proc.poll() is not None or time.monotonic() > tries:
                    raise AssertionError(f"{base} (JupyterLab exit status {proc.poll()}): {e}\n"
                                         + log_path.read_text()[-3000:]) from e
                time.sleep(1)
        cells = model["content"]["cells"]
        assert model["name"] == cli.FIRST_NOTEBOOK and cells
        assert not [c for c in cells if SOLUTION_TAG in c.get("metadata", {}).get("tags", [])]
        assert (elsewhere / "my-course" / cli.FIRST_NOTEBOOK).is_file()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
