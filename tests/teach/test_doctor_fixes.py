"""`pavlovlab doctor`: every FAIL line says how to fix it, and the write check really writes (and removes) a byte."""

from __future__ import annotations

import errno
import os
import re
import sys
import types
from pathlib import Path

from pavlovlab.teach import cli

FIX = re.compile(r"pip install|install Python|copy the course to a folder of yours|check the disk|free some space")
"""What a fix looks like: a command to run, or the one thing to do."""


def _fails_with_a_fix(check: cli.Check) -> None:
    assert not check.ok, check.line()
    assert FIX.search(check.detail), f"FAIL without a fix: {check.line()}"


def test_missing_and_old_packages_say_what_to_install(monkeypatch):
    monkeypatch.setattr(cli, "requirements_file", lambda course=None: None)
    monkeypatch.setattr(cli, "package_lower_bounds", lambda: {"torch": "2.2", "numpy": "1.26"})
    monkeypatch.setattr(cli, "installed_version", lambda name: None if name == "torch" else "1.0")
    checks = {c.name: c for c in cli.check_packages()}
    for c in checks.values():
        _fails_with_a_fix(c)
    assert cli.CPU_TORCH in checks["torch"].detail and "numpy>=1.26" in checks["numpy"].detail


def test_every_torch_pin_names_one_version():
    """doctor's fix, the learner's, the tests' and Binder's pins: one torch version, written in four places."""
    root = Path(__file__).resolve().parents[2]
    fix = re.fullmatch(r"pip install torch==(\S+) --index-url https://download\.pytorch\.org/whl/cpu", cli.CPU_TORCH)
    assert fix, cli.CPU_TORCH
    pins = {name: cli.public_version(cli.parse_pins((root / name).read_text(encoding="utf-8"))["torch"])
            for name in ("requirements.txt", "requirements-learner.txt", "binder/requirements.txt")}
    assert set(pins.values()) == {fix.group(1)}, (fix.group(1), pins)


def test_pinned_packages_say_to_install_the_pins(monkeypatch, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.13.0+cpu\ntqdm==4.0.0\n")
    monkeypatch.setattr(cli, "installed_version", lambda name: None if name == "torch" else "9.9.9")
    checks = {c.name: c for c in cli.check_packages(tmp_path / "course")}
    for c in checks.values():
        _fails_with_a_fix(c)
    assert checks["torch"].detail.count("pip install") == 2  # CPU torch first, then the pins


def test_broken_torch_matplotlib_widgets_and_python_say_how_to_fix(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # imports, but has no ones()
    _fails_with_a_fix(cli.check_torch())
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # ImportError on import
    _fails_with_a_fix(cli.check_matplotlib())
    monkeypatch.setitem(sys.modules, "jupyterlab_widgets", None)
    _fails_with_a_fix(cli.check_widgets())
    monkeypatch.setattr(cli, "MIN_PYTHON", (3, 99))
    _fails_with_a_fix(cli.check_python())


def test_write_check_writes_a_real_byte_and_removes_it(monkeypatch, tmp_path):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.fstat(fd).st_size), real_fsync(fd)))
    assert cli.check_write_access(tmp_path).ok
    assert synced == [1], "the byte was not written and flushed to the disk"
    assert list(tmp_path.iterdir()) == [], "the probe file was left behind"


def test_write_check_fails_on_a_full_disk_and_leaves_nothing(monkeypatch, tmp_path):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    c = cli.check_write_access(tmp_path)
    _fails_with_a_fix(c)
    assert "No space left" in c.detail and "free some space" in c.detail and list(tmp_path.iterdir()) == []
    _fails_with_a_fix(cli.check_write_access(tmp_path / "no-such-folder"))


def test_write_check_never_targets_the_course_inside_the_package(monkeypatch, tmp_path):
    shipped = tmp_path / "site" / "pavlovlab"
    (shipped / cli.COURSE_DATA / "course").mkdir(parents=True)
    (shipped / cli.COURSE_DATA / "course" / "00_x.ipynb").write_text("{}")
    monkeypatch.setattr(cli.importlib.resources, "files", lambda pkg: shipped)
    elsewhere = tmp_path / "here"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv(cli.COURSE_ENV, raising=False)
    assert cli.course_dir() == shipped / cli.COURSE_DATA / "course"
    c = cli.check_write_access()
    assert c.ok and c.detail == str(elsewhere)


def test_the_summary_promise_is_kept(capsys, monkeypatch):
    monkeypatch.setattr(cli, "doctor_checks", lambda course=None: [cli.Check(False, "x", "broken: pip install x")])
    assert cli.main(["doctor"]) == 1
    assert "fix these first (each line says how)" in capsys.readouterr().out
