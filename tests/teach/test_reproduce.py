"""``pavlovlab reproduce`` loses nothing: the user's summary.json is merged, Ctrl-C is one line and exit 130, a
killed run's temporary files are removed."""

from __future__ import annotations

import contextlib
import json
import os
import time

import pytest

from pavlovlab.teach import reproduce, student
from pavlovlab.teach.cli import main


def _experiments(monkeypatch, names=("conditioning", "other"), value=1, interrupt=None):
    def draw(name):
        def fn(out, *, quick, progress):
            if name == interrupt:
                raise KeyboardInterrupt
            fig, (ax,) = reproduce._figure()
            ax.plot([0, 1], [0, value])
            return {"figures": [reproduce._save(fig, out, name)], "value": value}
        return fn

    monkeypatch.setattr(reproduce, "EXPERIMENTS", [reproduce.Experiment(name=n, notebook="00", title=n, run=draw(n))
                                                   for n in names])


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_force_merges_into_the_users_own_summary(capsys, tmp_path, monkeypatch):
    """The user's summary.json keeps every key the run does not write: their own top-level keys, and the
    entries of experiments this run does not run."""
    _experiments(monkeypatch)
    mine = {"my notes": {"keep": [1, 2, 3]}, "experiments": {"my own run": {"status": "ok", "x": 1}}}
    (tmp_path / "summary.json").write_text(json.dumps(mine))
    code, text, _ = _run(capsys, "reproduce", "--out", str(tmp_path), "--force", "--only", "conditioning",
                         "--no-progress")
    assert code == 0, text
    got = json.loads((tmp_path / "summary.json").read_text())
    assert got["my notes"] == {"keep": [1, 2, 3]}
    assert got["experiments"]["my own run"] == {"status": "ok", "x": 1}
    assert got["experiments"]["conditioning"]["numbers"] == {"value": 1} and "other" not in got["experiments"]


@pytest.mark.parametrize("content", ["not json at all", "[1, 2]", '{"experiments": [1]}'])
def test_a_summary_that_is_not_ours_is_refused_and_kept(capsys, tmp_path, monkeypatch, content):
    _experiments(monkeypatch)
    (tmp_path / "summary.json").write_text(content)
    code, _, err = _run(capsys, "reproduce", "--out", str(tmp_path), "--force", "--no-progress")
    assert code == 2 and "never overwritten" in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "summary.json").read_text() == content


def test_ctrl_c_is_one_line_exit_130_and_keeps_the_summary(capsys, tmp_path, monkeypatch):
    _experiments(monkeypatch)
    assert _run(capsys, "reproduce", "--out", str(tmp_path), "--no-progress")[0] == 0
    before = (tmp_path / "summary.json").read_text()
    _experiments(monkeypatch, value=2, interrupt="other")
    code, _, err = _run(capsys, "reproduce", "--out", str(tmp_path), "--force", "--no-progress")
    assert code == 130 and len(err.strip().splitlines()) == 1 and "interrupted" in err, err
    assert (tmp_path / "summary.json").read_text() == before


def test_a_killed_runs_temporary_files_are_removed_by_the_next_run(capsys, tmp_path, monkeypatch):
    _experiments(monkeypatch)
    old = time.time() - 3600
    stale = [tmp_path / ".summary.json.ab12cd_9.tmp", tmp_path / ".conditioning.png.zz00zz00.tmp"]
    fresh = tmp_path / ".other.png.q1w2e3r4.tmp"                     # a run writing now: left alone
    not_ours = [tmp_path / ".notes.tmp", tmp_path / "draft.abcdefgh.tmp", tmp_path / ".x.abc.tmp"]
    for p in [*stale, fresh, *not_ours]:
        p.write_text("partial")
    for p in [*stale, *not_ours]:
        os.utime(p, (old, old))
    with _held(fresh):                                                 # as atomic_write holds its file
        code, _, _ = _run(capsys, "reproduce", "--out", str(tmp_path), "--force", "--no-progress")
    assert code == 0
    assert not any(p.exists() for p in stale)
    assert fresh.exists() and all(p.exists() for p in not_ours)


@contextlib.contextmanager
def _held(path):
    """Hold ``path`` under the writer's lock (where the system has flock)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if student.fcntl is not None:
            student.fcntl.flock(fd, student.fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
