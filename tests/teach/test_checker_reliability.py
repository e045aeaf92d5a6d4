"""The checkers keep control of the notebook whatever the learner's code does: an exit or an interrupt raised by
that code becomes a verdict with a sentence, a long measurement says it is still running and how long the check
waits, and a learner who interrupts the kernel gets the verdict "stopped" (no attempt counted)."""

from __future__ import annotations

import _thread
import json
import sys
import threading
import time
from pathlib import Path

import pytest

from pavlovlab.teach.exercises import checking, runner
from pavlovlab.teach.exercises import delta_and_oja as rules
from pavlovlab.teach.exercises import start_here as start
from pavlovlab.teach.exercises.session import PROGRESS_FILE


def _match(b, t):
    return (b * t).sum()


def _exits(b, t):
    sys.exit(1)


def _presses_stop(b, t):
    raise KeyboardInterrupt


def _exits_quietly():
    sys.exit()


@pytest.mark.parametrize("answer, said", [(_exits, "stopped early: it called sys.exit(1), which ends a whole "
                                                   "program"),
                                          (_presses_stop, "stopped early: it raised KeyboardInterrupt itself")])
def test_an_answer_that_exits_gets_a_verdict(answer, said, capsys):
    try:
        ok = start.check_match(answer)
    except BaseException as e:  # what used to escape the checker: fail, never end the run
        pytest.fail(f"{type(e).__name__} escaped the checker")
    out = capsys.readouterr().out
    assert ok is False and "❌" in out and said in out, out
    assert "on test case 1" in out


def test_a_measurement_that_exits_gets_a_verdict(capsys):
    try:
        ok = checking.check_measurement(_exits_quietly, lambda r: (True, "fine"))
    except BaseException as e:
        pytest.fail(f"{type(e).__name__} escaped the checker")
    out = capsys.readouterr().out
    assert ok is False and "running your measurement stopped early: it called sys.exit()" in out, out


def test_a_right_answer_still_passes(capsys):
    assert start.check_match(_match) is True
    assert "✅" in capsys.readouterr().out


def _sleeper(seconds: float):
    def recovery_time(beta, n_keys):
        time.sleep(seconds)
        return 1.0
    return recovery_time


def test_a_long_measurement_says_so_and_has_a_limit(monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_AFTER", 0.2)
    monkeypatch.setattr(checking, "DESIGN_TIME_LIMIT", 1.0)
    assert rules.check_recovery_time(_sleeper(30.0)) is False
    out = capsys.readouterr().out
    assert "⏳ Exercise 1 (measure the recovery time after a drift): still running after 0 s" in out, out
    assert "The check waits up to 1 s; interrupt the kernel" in out
    assert "took more than 1 s to run" in out


def test_the_design_limit_is_one_a_learner_accepts():
    assert 30 <= checking.DESIGN_TIME_LIMIT <= 180


def test_a_quick_measurement_prints_no_progress_line(monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_AFTER", 30.0)
    rules.check_recovery_time(lambda beta, n_keys: 1.0)
    assert "still running" not in capsys.readouterr().out


def _interrupt_when_waiting(deadline: float = 60.0) -> threading.Thread:
    """Interrupt the main thread (as the kernel's ■ does) once it waits on the learner's thread."""
    def press() -> None:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if any(t.name == "pavlovlab-learner-answer" for t in threading.enumerate()):
                time.sleep(0.1)
                _thread.interrupt_main()
                return
            time.sleep(0.02)
    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    return presser


@pytest.mark.parametrize("kind", ["design", "implement"])
def test_an_interrupt_while_waiting_stops_the_check_cleanly(kind, capsys):
    session = (rules if kind == "design" else start).session()
    presser = _interrupt_when_waiting()
    try:
        if kind == "design":
            ok = rules.check_recovery_time(_sleeper(20.0))
        else:
            ok = start.check_match(lambda b, t: time.sleep(20.0))
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped the checker as a traceback")
    presser.join()
    out = capsys.readouterr().out
    assert ok is False and "⏹" in out and ": stopped. You interrupted the check after" in out, out
    assert "❌" not in out and session.attempts.get(1, 0) == 0


def test_a_stopped_check_leaves_the_next_check_working(capsys):
    presser = _interrupt_when_waiting()
    try:
        start.check_match(lambda b, t: time.sleep(20.0))
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped the checker as a traceback")
    presser.join()
    assert start.check_match(_match) is True


# ------------------------------------------------------------------------------- an unreadable progress file
TRUNCATED = ('{\n "00_start_here": {\n  "1": {\n   "attempts": 3,\n   "done": true\n  }\n },\n'
             ' "06_delta_and_oja": {\n  "3": [1, ')


def test_an_unreadable_progress_file_is_kept_aside_and_told_once(tmp_path, capsys):
    record = tmp_path / PROGRESS_FILE
    record.write_text(TRUNCATED, encoding="utf-8")
    rules.session(tmp_path)
    assert rules.check_unstable_beta(lambda: 2.0) is True
    first = capsys.readouterr().out
    kept = tmp_path / ".pavlovlab_progress.unreadable.json"
    assert kept.read_text(encoding="utf-8") == TRUNCATED                       # the learner's bytes, untouched
    assert f"could not be read (cut off or edited?): it is kept as {kept.name}" in first
    assert json.loads(record.read_text(encoding="utf-8")) == {"06_delta_and_oja": {"3": {"attempts": 1,
                                                                                         "done": True}}}
    rules.check_unstable_beta(lambda: 1.0)                                      # carries on, says nothing more
    assert "could not be read" not in capsys.readouterr().out
    assert json.loads(record.read_text(encoding="utf-8"))["06_delta_and_oja"]["3"]["attempts"] == 2


def test_a_second_unreadable_file_does_not_replace_the_first(tmp_path, capsys):
    (tmp_path / ".pavlovlab_progress.unreadable.json").write_text("the first one", encoding="utf-8")
    (tmp_path / PROGRESS_FILE).write_text("[1, 2]", encoding="utf-8")   # JSON, but not a record
    start.session(tmp_path)
    start.progress()
    out = capsys.readouterr().out
    assert (tmp_path / ".pavlovlab_progress.unreadable.json").read_text(encoding="utf-8") == "the first one"
    assert (tmp_path / ".pavlovlab_progress.unreadable-2.json").read_text(encoding="utf-8") == "[1, 2]"
    assert "kept as .pavlovlab_progress.unreadable-2.json" in out and "0 of" in out


# ------------------------------------------------------------------------------------ a kernel half set up
def test_a_name_the_kernel_lacks_is_one_sentence_and_no_attempt(monkeypatch, capsys):
    """After a restart without the set-up cell, the learner's own code lacks `torch`: the check says which cell
    to run, in one sentence, and counts no attempt; a name no cell makes (a typo) is told plainly."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2] / "course")
    namespace: dict = {}
    exec("def match(bell, test):\n    return torch.dot(bell, test)\n", namespace)   # a kernel without `torch`
    assert start.check_match(namespace["match"]) is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "⏳" in out and "run the set-up cell at the top first" in out, out
    assert start.check_match(lambda b, t: no_such_name_anywhere) is False   # noqa: F821
    assert "(or check its spelling)" in capsys.readouterr().out
    assert start.BOOK.current().attempts.get(1, 0) == 0
