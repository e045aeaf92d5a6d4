"""Where a learner stands, and where the room is stuck: read the exercise checkers' progress files.

Each learner's checks are recorded beside their notebooks in :data:`PROGRESS_FILE` (by
:class:`pavlovlab.teach.exercises.session.Session`), one JSON object per folder::

    {"00_start_here": {"1": {"attempts": 3, "done": false, "hints": 2, "solution": true}}, ...}

``attempts``: different answers checked; ``done``: one of them was right; ``hints``: the deepest hint tier
read (absent: none); ``solution``: the reference solution was shown (absent: no).

Two readers of that format live here:

- :func:`show_learner_progress` (``ex.progress()`` in a notebook): the learner's own map, every notebook's
  exercises as done / tried / not started with the hints and solutions used, as a small table and, on request,
  a figure;
- :func:`read_room` and :func:`summarise_room` (``pavlovlab progress HOMES...``): an instructor's view of a
  workshop, from the learners' home folders (The Littlest JupyterHub keeps them at ``/home/jupyter-<name>``):
  per exercise how many finished, how many are stuck (:data:`STUCK_ATTEMPTS` tries or more, not done) and
  which hint tier the room needed most. It only ever opens learners' files for reading; a missing, unreadable
  or malformed file is reported, never fatal, never touched.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pavlovlab.teach import language
from pavlovlab.teach.exercises.registry import Declared, books
from pavlovlab.teach.exercises.session import PROGRESS_FILE, load_progress
from pavlovlab.teach.language import N_, _

STUCK_ATTEMPTS = 3
"""A learner who checked this many different answers (or more) without a right one is stuck."""

SEARCH_DEPTH = 4
"""How many folders deep under a home :func:`find_progress_files` looks (``~/pavlovlab/student/`` is 2 deep)."""

DONE, TRIED, NOT_STARTED = "done", "tried", "not started"
MARKS = {DONE: "✅", TRIED: "❌", NOT_STARTED: "·"}
STATUS_WORDS = {DONE: N_("done"), TRIED: N_("tried"), NOT_STARTED: N_("not started")}
"""How the learner's map names each status (marked only: the map says ``_(STATUS_WORDS[status])``)."""
FIGURE_TITLE = N_("Your exercises (h2: hint tier 2 read; S: solution read)")
"""The learner's figure's title (marked only, as :data:`STATUS_WORDS`)."""

CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "Microsoft YaHei",
             "PingFang SC", "SimHei")
"""Fonts with Chinese characters that the learner's figure uses, the first one installed (Debian's
``fonts-noto-cjk`` has the first)."""


@dataclass(frozen=True)
class Record:
    """One learner's record of one exercise: different answers checked, solved or not, the deepest hint tier
    read (0: none), whether the solution was read."""

    attempts: int = 0
    done: bool = False
    hints: int = 0
    solution: bool = False

    @property
    def status(self) -> str:
        """``"done"``, ``"tried"`` (checked at least once, not right yet) or ``"not started"``."""
        return DONE if self.done else (TRIED if self.attempts else NOT_STARTED)

    @property
    def stuck(self) -> bool:
        """Tried :data:`STUCK_ATTEMPTS` times or more and not done."""
        return not self.done and self.attempts >= STUCK_ATTEMPTS

    def merged(self, other: Record) -> Record:
        """The record of a learner with two progress files (two folders of notebooks): the most of each."""
        return Record(max(self.attempts, other.attempts), self.done or other.done, max(self.hints, other.hints),
                      self.solution or other.solution)


Records = dict[tuple[str, int], Record]
"""A learner's records, by ``(notebook, exercise number)``."""


def parse_progress(data: object) -> Records:
    """The records of a decoded progress file. Raises ValueError naming the first entry that is not of the
    format (see the module's docstring): a file written by something else is reported, not half-read."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object of notebooks, got {type(data).__name__}")
    records: Records = {}
    for notebook, exercises in data.items():
        if not isinstance(exercises, dict):
            raise ValueError(f"{notebook!r}: expected an object of exercises, got {type(exercises).__name__}")
        for number, entry in exercises.items():
            where = f"{notebook!r} exercise {number!r}"
            if not str(number).isdigit() or not isinstance(entry, dict):
                raise ValueError(f"{where}: expected a numbered exercise holding an object")
            attempts, hints = entry.get("attempts", 0), entry.get("hints", 0)
            for name, value in (("attempts", attempts), ("hints", hints)):
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{where}: {name} must be a whole number >= 0, got {value!r}")
            done, solution = entry.get("done", False), entry.get("solution", False)
            for name, value in (("done", done), ("solution", solution)):
                if not isinstance(value, bool):
                    raise ValueError(f"{where}: {name} must be true or false, got {value!r}")
            records[(str(notebook), int(number))] = Record(attempts, done, hints, solution)
    return records


MAX_FILE_BYTES = 4 * 2**20
"""A progress file larger than this is not one (the course's 26 exercises take about 3 kB)."""


def read_progress_file(path: str | Path) -> Records:
    """Read one progress file (opened for reading only). Raises OSError when it cannot be read and ValueError
    when it is not a progress file (larger than :data:`MAX_FILE_BYTES`, not JSON, not the format)."""
    with open(path, "rb") as f:
        raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON ({e})") from None
    return parse_progress(data)


# ------------------------------------------------------------------------------------ the learner's map
def learner_rows(records: Mapping[tuple[str, int], Record], course: Sequence[Declared] | None = None
                 ) -> list[tuple[str, list[tuple[int, Record]]]]:
    """Every notebook of the course with its exercises' records (an exercise never checked: an empty
    :class:`Record`), in course order."""
    return [(book.notebook, [(e.number, records.get((book.notebook, e.number), Record())) for e in book])
            for book in (books() if course is None else course)]


def learner_table(records: Mapping[tuple[str, int], Record], where: str,
                  course: Sequence[Declared] | None = None) -> str:
    """The learner's map as text: a headline (exercises done of all), then one line per notebook, each exercise
    as ``N ✅`` / ``N ❌`` / ``N ·`` followed by ``💡k`` (hint tier k read) and ``📖`` (solution read)."""
    rows = learner_rows(records, course)
    everything = [r for _notebook, exercises in rows for _number, r in exercises]
    done = sum(r.done for r in everything)
    hinted = sum(r.hints > 0 for r in everything)
    read = sum(r.solution for r in everything)
    # Translators: {where} is "in /home/…/student" or "(not recorded outside a notebook)".
    lines = [_("Your progress {where}: {done} of {total} exercises done (✅ done, ❌ tried, · not started; 💡k: hint "
               "tier k read, 📖: solution read)").format(where=where, done=done, total=len(everything))]
    width = max((len(nb) for nb, _exercises in rows), default=0)
    for notebook, exercises in rows:
        cells = [f"{n} {MARKS[r.status]}" + (f"💡{r.hints}" if r.hints else "") + ("📖" if r.solution else "")
                 for n, r in exercises]
        lines.append(f"  {notebook:<{width}}   " + "   ".join(cells))
    lines.append(_("Hints read for {hinted} exercise(s), solutions for {read}.").format(hinted=hinted, read=read))
    return "\n".join(lines)


def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` that matplotlib finds installed, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def learner_figure(records: Mapping[tuple[str, int], Record], course: Sequence[Declared] | None = None) -> Any:
    """The learner's map as a figure: one row per notebook, one square per exercise, coloured by status,
    labelled with the hint tier read (``h2``) and ``S`` when the solution was read. Returns the Figure (made
    outside pyplot: a notebook shows the returned figure once, and nothing is left open).

    Its title and legend are in the language in use; Chinese is drawn in the first of :data:`CJK_FONTS`
    installed, and where none is, the figure keeps its English words rather than draw empty boxes."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    from pavlovlab.teach.plotting import OKABE_ITO

    font = cjk_font() if language.current() == "zh" else None
    translated = language.current() != "zh" or font is not None

    def say(text: str) -> str:
        return _(text) if translated else text

    colours = {DONE: OKABE_ITO["bluish green"], TRIED: OKABE_ITO["orange"], NOT_STARTED: "#dddddd"}
    rows = learner_rows(records, course)
    width = max((len(ex) for _notebook, ex in rows), default=1)
    fig = Figure(figsize=(1.2 + 0.55 * width + 1.8, 0.35 * len(rows) + 0.9), layout="tight")
    ax = fig.subplots()
    for y, (_notebook, exercises) in enumerate(rows):
        for x, (n, r) in enumerate(exercises):
            ax.add_patch(Rectangle((x + 0.05, y + 0.05), 0.9, 0.9, color=colours[r.status]))
            label = f"{n}" + (f" h{r.hints}" if r.hints else "") + (" S" if r.solution else "")
            ax.text(x + 0.5, y + 0.5, label, ha="center", va="center", fontsize=7)
    ax.set_xlim(0, width)
    ax.set_ylim(len(rows), 0)
    ax.set_yticks([y + 0.5 for y in range(len(rows))], [nb for nb, _exercises in rows], fontsize=8)
    ax.set_xticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    title = ax.set_title(say(FIGURE_TITLE), fontsize=9)
    legend = ax.legend(handles=[Patch(color=c, label=say(STATUS_WORDS[s])) for s, c in colours.items()],
                       loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if font is not None:   # Chinese words, in a font that has their characters
        for text in (title, *legend.get_texts()):
            text.set_fontfamily([font, "DejaVu Sans"])
    return fig


def show_learner_progress(folder: str | Path | None, *, plot: bool = False) -> Any:
    """Print the learner's map from the progress file in ``folder`` (None: not recorded, e.g. outside a
    notebook); with ``plot=True`` also return it as a figure (:func:`learner_figure`), else None."""
    if plot not in (True, False):   # a learner's call, ex.progress(plot="yes"): said in the edition
        raise TypeError(_("plot: expected True or False, got {got}").format(got=repr(plot)))
    records: Records = {}
    if folder is not None:
        try:
            records = parse_progress(load_progress(Path(folder)))
        except ValueError:
            print(_("(The progress file in {folder} is not in the expected format: showing nothing "
                    "recorded.)").format(folder=folder))
    where = (_("in {folder}").format(folder=folder) if folder is not None else
             _("(not recorded outside a notebook)"))
    print(learner_table(records, where))
    return learner_figure(records) if plot else None


# ---------------------------------------------------------------------------------------- the room
@dataclass
class Learner:
    """One home folder given to :func:`read_room`: the learner's name (the folder's, without TLJH's
    ``jupyter-`` prefix), the progress files found and their merged records, and what went wrong
    (``problems``: one line per file or folder that could not be read)."""

    home: Path
    name: str
    files: list[Path] = field(default_factory=list)
    records: Records = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def learner_name(home: Path) -> str:
    """The user name behind a home folder: ``/home/jupyter-alice`` -> ``alice`` (TLJH's convention);
    any other folder's own name."""
    name = home.name or str(home)
    return name[len("jupyter-"):] if name.startswith("jupyter-") and len(name) > len("jupyter-") else name


def find_progress_files(home: Path, depth: int = SEARCH_DEPTH) -> tuple[list[Path], list[str]]:
    """The progress files under ``home`` (at most ``depth`` folders down, hidden folders and symbolic links
    skipped), and the problems met on the way (a folder that cannot be listed, a progress file that is a
    symbolic link: not followed, so the command reads nothing outside the learners' homes; one that is not a
    regular file)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise ValueError(f"depth: expected a whole number >= 0, got {depth!r}")
    found: list[Path] = []
    problems: list[str] = []

    def on_error(e: OSError) -> None:
        problems.append(f"cannot list {e.filename}: {e.strerror or e}" + (
            "; an admin can (sudo)" if isinstance(e, PermissionError) else ""))

    top = len(home.parts)
    for folder, dirs, files in os.walk(home, onerror=on_error):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and len(here.parts) - top < depth)
        if PROGRESS_FILE in files:
            path = here / PROGRESS_FILE
            if path.is_symlink():
                problems.append(f"{path}: a symbolic link, not followed")
            elif not path.is_file():  # a pipe would block the read
                problems.append(f"{path}: not a regular file, not read")
            else:
                found.append(path)
    return found, problems


def read_learner(home: str | Path) -> Learner:
    """Find and read the progress files of one home folder (or one progress file given directly)."""
    home = Path(home)
    if home.is_file() and home.name == PROGRESS_FILE:
        learner = Learner(home, learner_name(home.parent))
        paths: list[Path] = [home]
    else:
        learner = Learner(home, learner_name(home))
        if not home.is_dir():
            learner.problems.append(f"{home}: " + ("not a folder" if home.exists() else "no such folder"))
            return learner
        paths, learner.problems = find_progress_files(home)
        if not paths and not learner.problems:
            learner.problems.append(f"{home}: no progress file yet (no exercise checked, or not in a notebook)")
    for path in paths:
        try:
            records = read_progress_file(path)
        except OSError as e:
            learner.problems.append(f"{path}: cannot read it ({e.strerror or e})" + (
                "; an admin can (sudo)" if isinstance(e, PermissionError) else ""))
            continue
        except ValueError as e:
            learner.problems.append(f"{path}: not a progress file: {e}")
            continue
        learner.files.append(path)
        for key, record in records.items():
            learner.records[key] = learner.records[key].merged(record) if key in learner.records else record
    return learner


def read_room(homes: Iterable[str | Path]) -> list[Learner]:
    """Every learner of ``homes`` (home folders, e.g. ``/home/jupyter-*``), read-only; problems are kept in
    each :class:`Learner`, never raised."""
    if isinstance(homes, (str, Path)):
        raise TypeError(f"homes: expected a list of home folders, got one {type(homes).__name__} {str(homes)!r}")
    return [read_learner(h) for h in homes]


@dataclass(frozen=True)
class ExerciseSummary:
    """The room on one exercise: how many learners finished it, are stuck on it (:data:`STUCK_ATTEMPTS`
    tries or more, not done), tried it otherwise, have not started it; how many read each hint tier as their
    deepest (``hint_tiers[k]``) and the solution; and which learners are stuck (names, for ``--names``)."""

    notebook: str
    number: int
    title: str
    learners: int
    finished: int
    stuck: int
    tried: int
    not_started: int
    hint_tiers: dict[int, int]
    solutions: int
    stuck_names: tuple[str, ...]

    @property
    def most_needed_tier(self) -> int | None:
        """The hint tier most learners needed (read as their deepest), the deeper one on a tie; None when
        nobody read a hint."""
        if not self.hint_tiers:
            return None
        return max(self.hint_tiers, key=lambda t: (self.hint_tiers[t], t))


def summarise_room(learners: Sequence[Learner], course: Sequence[Declared] | None = None) -> list[ExerciseSummary]:
    """Per exercise of the course (in order), the room's counts over the learners with at least one readable
    progress file (the others are reported by :func:`room_table`, not counted as not started)."""
    counted = [lr for lr in learners if lr.files]
    out = []
    for book in (books() if course is None else course):
        for e in book:
            recs = [(lr.name, lr.records.get((book.notebook, e.number), Record())) for lr in counted]
            tiers = Counter(r.hints for _, r in recs if r.hints)
            out.append(ExerciseSummary(
                book.notebook, e.number, e.title, len(recs), sum(r.done for _, r in recs),
                sum(r.stuck for _, r in recs), sum(r.status == TRIED and not r.stuck for _, r in recs),
                sum(r.status == NOT_STARTED for _, r in recs), dict(sorted(tiers.items())),
                sum(r.solution for _, r in recs), tuple(sorted(n for n, r in recs if r.stuck))))
    return out


def room_table(learners: Sequence[Learner], summaries: Sequence[ExerciseSummary], *, names: bool = False) -> str:
    """The instructor's table: one line per exercise (finished, stuck, tried, not started, the hint tier most
    needed, solutions read; with ``names``, who is stuck), then what could not be read: counted only, unless
    ``names`` (then one line per learner and file)."""
    counted = sum(bool(lr.files) for lr in learners)
    lines = [f"The room: {counted} of {len(learners)} learner(s) with a readable progress file "
             f"(stuck: {STUCK_ATTEMPTS} or more tries, not done)"]
    w = max([len("notebook"), *(len(s.notebook) for s in summaries)])
    header = f"{'notebook':<{w}} {'ex':>2}  {'finished':>8} {'stuck':>5} {'tried':>5} {'not started':>11}  " \
             f"{'hint most needed':<18} {'solution read':>13}"
    lines += [header + ("  stuck learners" if names else ""), "-" * len(header)]
    for s in summaries:
        tier = s.most_needed_tier
        hint = f"tier {tier} ({s.hint_tiers[tier]} of {s.learners})" if tier is not None else "-"
        row = (f"{s.notebook:<{w}} {s.number:>2}  {s.finished:>8} {s.stuck:>5} {s.tried:>5} {s.not_started:>11}  "
               f"{hint:<18} {s.solutions:>13}")
        lines.append(row + (f"  {', '.join(s.stuck_names)}" if names and s.stuck_names else ""))
    problems = [(lr, p) for lr in learners for p in lr.problems]
    if problems:
        if names:
            lines.append("Not read:")
            lines += [f"  {lr.name}: {p}" for lr, p in problems]
        else:
            whose = len({id(lr) for lr, _ in problems})
            lines.append(f"Not read: {len(problems)} file(s) or folder(s) of {whose} learner(s) "
                         "(--names shows whose and why).")
    return "\n".join(lines)


def room_figure(summaries: Sequence[ExerciseSummary]) -> Any:
    """The instructor's figure: one horizontal bar per exercise, split into finished / stuck / tried / not
    started (learners), with the hint tier most needed written at its end. Returns the Figure (made outside
    pyplot, as :func:`learner_figure`)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    from pavlovlab.teach.plotting import OKABE_ITO

    parts = (("finished", OKABE_ITO["bluish green"]), ("stuck", OKABE_ITO["vermillion"]),
             ("tried", OKABE_ITO["orange"]), ("not_started", "#dddddd"))
    labels = [f"{s.notebook[:2]} ex {s.number}: " + (s.title if len(s.title) <= 34 else s.title[:33] + "…")
              for s in summaries]
    fig = Figure(figsize=(10, 0.28 * len(summaries) + 1.4), layout="tight")
    ax = fig.subplots()
    y = range(len(summaries))
    left = [0] * len(summaries)
    for name, colour in parts:
        values = [getattr(s, name) for s in summaries]
        ax.barh(y, values, left=left, color=colour, label=name.replace("_", " "), height=0.7)
        left = [a + b for a, b in zip(left, values, strict=True)]
    for i, s in enumerate(summaries):
        tier = s.most_needed_tier
        if tier is not None:
            ax.text(left[i] + 0.1, i, f"hint {tier}", va="center", fontsize=7)
    ax.set_yticks(list(y), labels, fontsize=7)
    ax.invert_yaxis()
    most = max((s.learners for s in summaries), default=0)
    ax.set_xlim(0, max(most, 1) * 1.15)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("learners")
    ax.set_title(f"Where the room is (stuck: {STUCK_ATTEMPTS}+ tries, not done; 'hint k': the tier most needed)",
                 fontsize=9)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return fig


__all__ = ["STUCK_ATTEMPTS", "ExerciseSummary", "Learner", "Record", "find_progress_files", "learner_figure",
           "learner_table", "parse_progress", "read_learner", "read_progress_file", "read_room", "room_figure",
           "room_table", "show_learner_progress", "summarise_room"]
