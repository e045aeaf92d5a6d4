"""Progress for a learner (``ex.progress()``) and for an instructor (``pavlovlab progress HOMES...``).

The progress files here are written by real checker sessions (the learners' side), and the expected counts
are worked out by hand from what each simulated learner did, never from the reader under test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from pavlovlab.teach import cli, progress
from pavlovlab.teach.exercises import start_here as start_exercises
from pavlovlab.teach.exercises.registry import books
from pavlovlab.teach.exercises.session import PROGRESS_FILE

WRONG = [lambda bell, test: (bell * test).mean(), lambda bell, test: (bell + test).sum(),
         lambda bell, test: (bell - test).sum(), lambda bell, test: bell.sum()]


def _quiet(call, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return call(*args)


def _learner(folder: Path, *, wrong: int = 0, right: bool = False, hints: int = 0, solution: bool = False) -> None:
    """A learner working on exercise 1 of notebook 00 in ``folder``, through the real checker session."""
    folder.mkdir(parents=True, exist_ok=True)
    start_exercises.session(folder)
    ex = start_exercises
    for fn in WRONG[:wrong]:
        assert _quiet(ex.check_match, fn) is False
    for _ in range(hints):
        _quiet(ex.hint, 1)
    if solution:
        _quiet(ex.solution, 1)
    if right:
        assert _quiet(ex.check_match, lambda bell, test: (bell * test).sum()) is True


# ------------------------------------------------------------------------------------- the file format
def test_hints_and_solutions_read_are_recorded(tmp_path):
    _learner(tmp_path, wrong=1, hints=2, solution=True)
    entry = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))["00_start_here"]["1"]
    assert entry == {"attempts": 1, "done": False, "hints": 2, "solution": True}
    # a later session (a restarted kernel) never lowers what was recorded
    _learner(tmp_path, hints=1, right=True)
    entry = json.loads((tmp_path / PROGRESS_FILE).read_text(encoding="utf-8"))["00_start_here"]["1"]
    assert entry == {"attempts": 1, "done": True, "hints": 2, "solution": True}


def test_a_hint_read_before_any_check_is_recorded(tmp_path):
    _learner(tmp_path, hints=1)
    records = progress.read_progress_file(tmp_path / PROGRESS_FILE)
    assert records == {("00_start_here", 1): progress.Record(attempts=0, done=False, hints=1, solution=False)}
    assert records[("00_start_here", 1)].status == "not started"


@pytest.mark.parametrize("data, message", [
    ([], "expected a JSON object"),
    ({"00_start_here": [1]}, "expected an object of exercises"),
    ({"00_start_here": {"one": {}}}, "numbered exercise"),
    ({"00_start_here": {"1": {"attempts": -1}}}, "attempts must be a whole number"),
    ({"00_start_here": {"1": {"attempts": True}}}, "attempts must be a whole number"),
    ({"00_start_here": {"1": {"hints": 1.5}}}, "hints must be a whole number"),
    ({"00_start_here": {"1": {"done": "yes"}}}, "done must be true or false"),
])
def test_a_file_of_another_format_is_refused_whole(data, message):
    with pytest.raises(ValueError, match=message):
        progress.parse_progress(data)


# ---------------------------------------------------------------------------------- the learner's map
def test_learner_map_shows_status_hints_and_solutions(tmp_path, capsys):
    _learner(tmp_path, wrong=3, hints=2, solution=True)
    start_exercises.session(tmp_path)
    assert start_exercises.progress() is None
    out = capsys.readouterr().out
    total = sum(len(b) for b in books())
    assert f"0 of {total} exercises done" in out
    row = next(ln for ln in out.splitlines() if "00_start_here" in ln)
    assert "1 ❌💡2📖" in row
    assert "Hints read for 1 exercise(s), solutions for 1." in out
    assert all("·" in ln for ln in out.splitlines() if "01_pavlovian" in ln)


def test_learner_map_as_a_figure(tmp_path, capsys):
    import matplotlib.pyplot as plt

    _learner(tmp_path, right=True, hints=1)
    open_before = plt.get_fignums()
    start_exercises.session(tmp_path)
    fig = start_exercises.progress(plot=True)
    assert plt.get_fignums() == open_before  # outside pyplot: a notebook shows the returned figure once
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "1 h1" in texts  # exercise 1 of 00, hint tier 1 read
    assert len(texts) == sum(len(b) for b in books())
    fig.savefig(tmp_path / "map.png")
    with pytest.raises(TypeError, match="plot"):
        progress.show_learner_progress(tmp_path, plot="yes")


@pytest.mark.parametrize("font", [None, "DejaVu Sans"], ids=["no-cjk-font", "a-font"])
def test_the_learner_figure_speaks_the_edition_where_it_can_draw_it(font, monkeypatch):
    """The figure's title and legend follow the edition (French: always); Chinese only in a font with its
    characters, else the English words rather than empty boxes."""
    from pavlovlab.teach import language

    def words(edition):
        language.use(edition)
        try:
            ax = progress.learner_figure({}).axes[0]
        finally:
            language.use("en")
        return [ax.get_title(), *(t.get_text() for t in ax.get_legend().get_texts())]

    monkeypatch.setattr(progress, "cjk_font", lambda: font)
    english = words("en")
    assert english == [progress.FIGURE_TITLE, *progress.STATUS_WORDS.values()]
    assert not set(words("fr")) & set(english)
    assert (words("zh") == english) is (font is None)


# ------------------------------------------------------------------------- the room, TLJH's home layout
def _room(root: Path) -> list[Path]:
    """Homes as The Littlest JupyterHub lays them out (/home/jupyter-<name>/pavlovlab/student/, where the
    nbgitpuller link puts the learner copies), each learner doing something else."""
    homes = [root / f"jupyter-{n}" for n in ("alice", "bob", "carol", "dan", "erin", "fay")]
    student = Path("pavlovlab") / "student"
    _learner(homes[0] / student, wrong=1, right=True, hints=1)         # alice: finished, hint 1
    _learner(homes[1] / student, wrong=3, hints=2)                     # bob: stuck (3 tries), hint 2
    _learner(homes[2] / student, wrong=4, hints=2, solution=True)      # carol: stuck, hint 2, read the solution
    _learner(homes[3] / student, wrong=2)                              # dan: tried, not stuck
    (homes[4] / "notes").mkdir(parents=True)                           # erin: nothing checked yet
    (homes[5] / student).mkdir(parents=True)                           # fay: a broken file
    (homes[5] / student / PROGRESS_FILE).write_text('{"00_start_here": ', encoding="utf-8")
    return homes


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(root)): (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
            for p in sorted(root.rglob("*"))}


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["progress", *argv])
    return code, out.getvalue(), err.getvalue()


def _row(out: str, notebook: str, number: int) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.split()[:2] == [notebook, str(number)])
    return line.split()


def test_room_table_from_a_tljh_home_layout_is_read_only(tmp_path):
    root = tmp_path / "home"
    homes = _room(root)
    before = _snapshot(root)
    figure = tmp_path / "room.png"
    code, out, err = _run(*map(str, homes), "--figure", str(figure))
    assert code == 0, err
    assert _snapshot(root) == before, "a learner's file or folder was changed"
    assert f"4 of {len(homes)} learner(s) with a readable progress file" in out
    # 00 ex 1: finished alice; stuck bob and carol; tried dan; hint tier 2 read by 2 of 4; 1 solution
    row = _row(out, "00_start_here", 1)
    assert row[2:6] == ["1", "2", "1", "0"], row
    assert "tier 2 (2 of 4)" in " ".join(row) and row[-1] == "1"
    assert _row(out, "01_pavlovian_conditioning", 1)[2:6] == ["0", "0", "0", "4"]
    # anonymous by default: no learner's name anywhere, the problems only counted
    assert not any(n in out for n in ("alice", "bob", "carol", "dan", "erin", "fay"))
    assert "Not read: 2 file(s) or folder(s) of 2 learner(s)" in out
    assert figure.stat().st_size > 0


def test_room_with_names_says_who_is_stuck_and_whose_file_is_broken(tmp_path):
    homes = _room(tmp_path / "home")
    code, out, _ = _run(*map(str, homes), "--names")
    assert code == 0
    assert _row(out, "00_start_here", 1)[-2:] == ["bob,", "carol"]
    assert "erin: " in out and "no progress file yet" in out
    assert "fay: " in out and "not a progress file" in out


def test_missing_and_unreadable_homes_are_reported_not_fatal(tmp_path):
    homes = _room(tmp_path / "home")
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"00_start_here": {"1": {"attempts": 9, "done": True}}}), encoding="utf-8")
    link_home = tmp_path / "home" / "jupyter-gus" / "pavlovlab"
    link_home.mkdir(parents=True)
    (link_home / PROGRESS_FILE).symlink_to(outside)
    code, out, _ = _run(*map(str, homes), str(tmp_path / "home" / "jupyter-gus"), str(tmp_path / "no-such-home"),
                        "--names")
    assert code == 0
    assert "a symbolic link, not followed" in out and "no such folder" in out
    assert _row(out, "00_start_here", 1)[2] == "1"  # the linked file was not counted as a finish
    pipe_home = tmp_path / "home" / "jupyter-ida"
    pipe_home.mkdir()
    os.mkfifo(pipe_home / PROGRESS_FILE)  # reading it would wait forever
    big_home = tmp_path / "home" / "jupyter-jo"
    big_home.mkdir()
    (big_home / PROGRESS_FILE).write_bytes(b" " * (progress.MAX_FILE_BYTES + 1))
    code, out, _ = _run(str(pipe_home), str(big_home), "--names")
    assert code == 0 and "not a regular file" in out and "larger than" in out
    if os.geteuid() != 0:  # root reads a mode-000 file anyway
        locked = homes[0] / "pavlovlab" / "student" / PROGRESS_FILE
        locked.chmod(0)
        try:
            code, out, _ = _run(str(homes[0]), "--names")
        finally:
            locked.chmod(0o644)
        assert code == 0 and "cannot read it" in out


def test_the_figure_never_replaces_a_file_without_force(tmp_path):
    homes = _room(tmp_path / "home")
    figure = tmp_path / "room.png"
    figure.write_bytes(b"an earlier figure")
    code, out, err = _run(*map(str, homes), "--figure", str(figure))
    assert code == 2 and "--force" in err and out == ""
    assert figure.read_bytes() == b"an earlier figure"
    code, _, err = _run(*map(str, homes), "--figure", str(figure), "--force")
    assert code == 0, err
    assert figure.read_bytes().startswith(b"\x89PNG")
    code, _, err = _run(*map(str, homes), "--figure", str(tmp_path / "room.nope"))
    assert code == 2 and "expected a name ending in one of" in err


def test_two_progress_files_of_one_learner_are_merged(tmp_path):
    home = tmp_path / "jupyter-hal"
    _learner(home / "pavlovlab" / "student", wrong=3, hints=1)
    _learner(home / "pavlovlab-course", right=True, hints=2)   # `pavlovlab start` in the same home
    learner = progress.read_learner(home)
    assert learner.name == "hal" and len(learner.files) == 2
    assert learner.records[("00_start_here", 1)] == progress.Record(attempts=3, done=True, hints=2, solution=False)


def test_most_needed_tier_counts_each_learners_deepest_tier():
    summary = progress.ExerciseSummary("00_start_here", 1, "t", 5, 0, 0, 0, 5, {1: 2, 3: 2, 2: 1}, 0, ())
    assert summary.most_needed_tier == 3  # a tie goes to the deeper tier
    assert progress.ExerciseSummary("00_start_here", 1, "t", 5, 0, 0, 0, 5, {}, 0, ()).most_needed_tier is None


# --------------------------------------------------------------------------------------- the documents
ROOT = Path(__file__).resolve().parents[2]


def _documented_commands(text: str) -> list[list[str]]:
    """Every `pavlovlab progress ...` command line in the code blocks of a document, as the arguments after
    `pavlovlab`."""
    import re
    import shlex

    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", text, re.S))
    return [shlex.split(m.group(1).replace('"$room"', "room"))
            for m in re.finditer(r"pavlovlab (progress [^\n]*)", blocks)]


@pytest.mark.parametrize("document", ["course/INSTRUCTOR_GUIDE.md", "deploy/README.md"])
def test_the_documented_commands_are_the_commands_we_have(document):
    text = (ROOT / document).read_text(encoding="utf-8")
    commands = _documented_commands(text)
    assert commands, f"{document} never shows how to run pavlovlab progress"
    for argv in commands:
        args = cli.build_parser().parse_args(argv)  # argparse exits (SystemExit) on a flag that does not exist
        assert args.func is cli.cmd_progress and args.homes


def test_the_workshop_plans_use_both_views():
    guide = (ROOT / "course" / "INSTRUCTOR_GUIDE.md").read_text(encoding="utf-8")
    plans = guide[guide.index("## Plans"):guide.index("## Launching a class")]
    assert "ex.progress()" in plans and "pavlovlab progress /home/jupyter-*" in plans
    assert f"{progress.STUCK_ATTEMPTS} or more different answers" in plans


def test_bad_arguments_name_themselves(tmp_path):
    with pytest.raises(TypeError, match="homes: expected a list"):
        progress.read_room(str(tmp_path))  # one folder, not a list: never read character by character
    with pytest.raises(ValueError, match="depth"):
        progress.find_progress_files(tmp_path, depth=-1)
