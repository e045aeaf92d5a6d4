"""The ``pavlovlab`` command: ``start``, ``doctor``, ``student``, ``reproduce`` and ``progress``.

Each subcommand is a small function taking parsed arguments and returning an exit status, so the
tests call ``main([...])`` directly.
"""

from __future__ import annotations

import argparse
import errno
import importlib.metadata as md
import importlib.resources
import io
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .language import _, from_environment, use

MIN_PYTHON = (3, 11)
COURSE_ENV = "PAVLOVLAB_COURSE"
"""Environment variable naming an installed course folder (e.g. set once on a hub image)."""

WIDGETS_LABEXTENSION = ("@jupyter-widgets", "jupyterlab-manager")
CPU_TORCH = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
"""The CPU build of torch (about 0.2 GB instead of several GB of CUDA libraries): install it before the package."""
COURSE_DATA = "_course"
"""The course inside an installed package: ``pavlovlab/_course/course`` (full notebooks) and ``.../student``
(learner copies), copied there when the wheel is built (setup.py)."""
CI_ONLY = frozenset({"pytest", "nbval", "playwright", "jupyter-repo2docker", "hypothesis", "ruff", "mypy",
                     "pytest-xdist", "mdpo", "polib", "babel"})
"""Pinned in requirements.txt for the course's own tests and tools only (``mdpo``, ``polib`` and ``babel`` make
the editions); learners (``make lab``: requirements-learner.txt, and Binder) do not need them."""


# ----------------------------------------------------------------------------------------- doctor
@dataclass
class Check:
    """One doctor line: OK or FAIL, what was checked, and what was found (or how to fix it)."""

    ok: bool
    name: str
    detail: str

    def line(self) -> str:
        """The printed line: ``OK``/``FAIL``, the check's name padded to a column, then the detail."""
        return f"{'OK  ' if self.ok else 'FAIL'}  {self.name:<22} {self.detail}"


def requirements_file(course: str | Path | None = None) -> Path | None:
    """The course's ``requirements.txt``: next to ``course`` (``--course``'s parent) when given, else in the
    current folder (a clone, Binder), else None (the package installed on its own). Never looked up from
    where the package's files happen to lie."""
    folder = Path(course).parent if course is not None else Path.cwd()
    path = folder / "requirements.txt"
    return path if path.is_file() else None


def parse_pins(text: str) -> dict[str, str]:
    """``{name: version}`` for every ``name==version`` line of a requirements file (names normalised)."""
    pins = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([^\s;]+).*", line)
        if m:
            pins[normalise(m.group(1))] = m.group(2)
    return pins


def normalise(name: str) -> str:
    """PEP 503 name normalisation: ``jupyterlab_widgets`` and ``JupyterLab-Widgets`` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def public_version(version: str) -> str:
    """A version without its local label: ``2.13.0+cpu`` -> ``2.13.0`` (a CPU wheel satisfies the pin)."""
    return version.split("+", 1)[0]


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def package_lower_bounds() -> dict[str, str]:
    """``{name: minimum}`` from the installed package's own metadata (used when requirements.txt is absent)."""
    bounds = {}
    try:
        requires = md.requires("pavlovlab") or []
    except md.PackageNotFoundError:
        requires = []
    for req in requires:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([^\s,;]+).*", req.strip())
        if m:
            bounds[normalise(m.group(1))] = m.group(2)
    return bounds


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", public_version(v))[:3])


def check_python() -> Check:
    """The running Python is at least ``MIN_PYTHON``."""
    v = sys.version_info
    ok = (v.major, v.minor) >= MIN_PYTHON
    want = ".".join(map(str, MIN_PYTHON))
    return Check(ok, "python", _("{found} (need >= {want})").format(found=platform.python_version(), want=want)
                 + ("" if ok else _(": install Python {want} or newer").format(want=want)))


def check_packages(course: str | Path | None = None) -> list[Check]:
    """One line per pinned package: the installed version against requirements.txt's pin.

    Without a requirements.txt (the package installed on its own), the package's lower bounds
    from its metadata are checked instead.
    """
    req = requirements_file(course)
    checks = []
    if req is not None:
        for name, pin in parse_pins(req.read_text(encoding="utf-8")).items():
            got = installed_version(name)
            if got is None and name in CI_ONLY:
                checks.append(Check(True, name, _("not installed (only the course's own tests use it)")))
            elif got is None:
                fix = (_("{cpu_torch}, then pip install -r {req}") if name == "torch" else "pip install -r {req}"
                       ).format(cpu_torch=CPU_TORCH, req=req)
                checks.append(Check(False, name, _("not installed (pinned {pin}): {fix}").format(pin=pin, fix=fix)))
            elif public_version(got) != public_version(pin):
                checks.append(Check(False, name, _("{got} installed, {pin} pinned: pip install -r {req}").format(
                    got=got, pin=pin, req=req)))
            else:
                checks.append(Check(True, name, got))
        return checks
    for name, low in package_lower_bounds().items():
        got = installed_version(name)
        fix = CPU_TORCH if name == "torch" else f"pip install '{name}>={low}'"
        if got is None:
            checks.append(Check(False, name, _("not installed (need >= {low}): {fix}").format(low=low, fix=fix)))
        elif _version_tuple(got) < _version_tuple(low):
            checks.append(Check(False, name, _("{got} installed, need >= {low}: {fix}").format(got=got, low=low,
                                                                                             fix=fix)))
        else:
            checks.append(Check(True, name, _("{got} (>= {low}; no requirements.txt found, lower bounds checked)"
                                              ).format(got=got, low=low)))
    return checks


def check_torch() -> Check:
    """torch imports and a 4×4 matmul on the default device gives the right sum."""
    try:
        import torch

        from ..device import default_device

        device = default_device()
        x = torch.ones(4, 4, device=device)
        ok = float((x @ x).sum()) == 64.0
        what = torch.cuda.get_device_name(device) if device.type == "cuda" else _("CPU (enough for this course)")
        return Check(ok, "torch device", f"{device} - {what}" + ("" if ok else _(": a small matmul gave a wrong "
                                                                              "result")))
    except Exception as e:
        return Check(False, "torch device", _("{error}: reinstall torch's CPU build: {cpu_torch} --force-reinstall"
                                              ).format(error=f"{type(e).__name__}: {e}", cpu_torch=CPU_TORCH))


def labextension_dirs() -> list[Path]:
    """Folders where JupyterLab looks for prebuilt extensions."""
    try:
        from jupyter_core.paths import jupyter_path

        return [Path(p) for p in jupyter_path("labextensions")]
    except Exception:
        return [Path(sys.prefix) / "share" / "jupyter" / "labextensions"]


def check_widgets() -> Check:
    """jupyterlab_widgets is installed and its JupyterLab extension is where JupyterLab looks (sliders render)."""
    try:
        import jupyterlab_widgets  # noqa: F401
    except ImportError:
        return Check(False, "jupyterlab widgets", _("jupyterlab_widgets not installed (sliders show as text): "
                                                    "pip install 'pavlovlab[lab]'"))
    found = [d for d in labextension_dirs() if (d.joinpath(*WIDGETS_LABEXTENSION) / "package.json").is_file()]
    if not found:
        return Check(False, "jupyterlab widgets", _("the @jupyter-widgets/jupyterlab-manager extension is "
                                                    "missing: pip install --force-reinstall jupyterlab_widgets"))
    return Check(True, "jupyterlab widgets", _("{extension} in {folder}").format(
        extension="/".join(WIDGETS_LABEXTENSION), folder=found[0]))


def check_matplotlib() -> Check:
    """matplotlib renders a small figure to PNG (what the notebooks' inline backend needs)."""
    try:
        import matplotlib
        from matplotlib.figure import Figure

        fig = Figure(figsize=(1, 1))
        fig.add_subplot().plot([0, 1], [0, 1])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        ok = buf.getvalue()[:4] == b"\x89PNG"
        said = (_("{backend} (PNG rendering works; notebooks use the inline backend)") if ok else
                _("{backend} (PNG rendering FAILED: pip install --force-reinstall matplotlib; notebooks use the "
                  "inline backend)"))
        return Check(ok, "matplotlib backend", said.format(backend=matplotlib.get_backend()))
    except Exception as e:
        return Check(False, "matplotlib backend", _("{error}: pip install --force-reinstall matplotlib").format(
            error=f"{type(e).__name__}: {e}"))


def course_dir(explicit: str | Path | None = None) -> Path:
    """The course folder, the one resolver of ``doctor`` and ``student``.

    ``explicit`` (``--course``) when given; else ``./course`` when the current folder holds the course
    (a clone, Binder: a ``course/`` with numbered notebooks); else an installed course: the folder named by
    ``$PAVLOVLAB_COURSE``, else the package's data (``pavlovlab/_course/course``, shipped in the wheel).
    When none holds notebooks, ``./course`` (absent: ``student`` then asks for ``--course``).
    """
    if explicit is not None:
        return Path(explicit)
    here = Path.cwd() / "course"
    env = os.environ.get(COURSE_ENV)
    package_data = Path(str(importlib.resources.files("pavlovlab"))) / COURSE_DATA / "course"
    for folder in (here, *([Path(env)] if env else []), package_data):
        if folder.is_dir() and any(folder.glob("[0-9]*.ipynb")):
            return folder
    return here


def check_write_access(folder: Path | None = None) -> Check:
    """One byte can be written, read back and removed in ``folder``: by default the course folder
    (:func:`course_dir`), or the current folder when there is none or it is the course shipped inside the
    package (installed from the wheel), where learner copies go."""
    if folder is None:
        folder = course_dir()
        shipped = Path(str(importlib.resources.files("pavlovlab"))) / COURSE_DATA
        if not folder.is_dir() or folder.resolve().is_relative_to(shipped.resolve()):
            folder = Path.cwd()  # the course shipped in the package is read, never written: copies go here
    probe = Path(folder) / f".pavlovlab-doctor-{os.getpid()}"
    try:
        try:
            with open(probe, "xb") as f:  # one real byte, flushed to the disk: a full disk or a quota fails here
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
            ok = probe.read_bytes() == b"\n"
        finally:
            probe.unlink(missing_ok=True)
        if not ok:
            return Check(False, "write access", _("a byte written in {folder} read back differently: check the "
                                                  "disk").format(folder=folder))
        return Check(True, "write access", str(folder))
    except OSError as e:
        if e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            return Check(False, "write access", _("cannot write in {folder} ({reason}): free some space (the disk "
                                                  "or your quota is full), then run doctor again").format(
                folder=folder, reason=e.strerror))
        return Check(False, "write access", _("cannot write in {folder} ({reason}): copy the course to a folder of "
                                              "yours, e.g. `pavlovlab student ~/pavlovlab`").format(
            folder=folder, reason=e.strerror))


def doctor_checks(course: str | Path | None = None) -> list[Check]:
    """Every doctor check, in the order printed; write access is checked in ``course`` when given."""
    return [check_python(), *check_packages(course), check_torch(), check_widgets(), check_matplotlib(),
            check_write_access(None if course is None else Path(course))]


def cmd_doctor(args: argparse.Namespace) -> int:
    """``pavlovlab doctor [--course PATH]``: print every check's line; exit 1 if any fails."""
    from .. import __version__

    print(_("pavlovlab {version} on {platform} (python {python})").format(
        version=__version__, platform=platform.platform(), python=sys.executable))
    checks = doctor_checks(args.course or None)
    for c in checks:
        print(c.line())
    failed = [c for c in checks if not c.ok]
    said = (_("{ok}/{total} checks OK: ready for the course.") if not failed else
            _("{ok}/{total} checks OK; {failed} FAIL: fix these first (each line says how)."))
    print(said.format(ok=len(checks) - len(failed), total=len(checks), failed=len(failed)))
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------- student
def _cannot_write(command: str, e: OSError) -> int:
    """The one line for a filesystem fault (read-only folder, a parent that is a file, disk full)."""
    path = e.filename if e.filename is not None else "?"
    reason = e.strerror or str(e) or type(e).__name__
    return _fail(_("{command}: cannot write {path}: {reason}").format(command=command, path=path, reason=reason))


def cmd_student(args: argparse.Namespace) -> int:
    """``pavlovlab student OUTDIR [--force] [--course PATH]``: write learner copies; exit 2 on a bad folder.

    Refused (exit 2, one line naming the folder, nothing written): an empty OUTDIR, the course folder or
    a folder inside it, a folder holding course notebooks, a file. A filesystem fault while writing is
    reported as ``pavlovlab student: cannot write PATH: REASON`` (exit 2)."""
    from .student import make_student_copies

    if args.course is not None and str(args.course).strip() == "":
        return _fail("student: --course: expected a folder, got an empty string")
    src = course_dir(args.course or None)
    if not src.is_dir():
        return _fail(f"student: course folder {str(src)!r} not found; pass --course PATH to the course's notebooks")
    try:
        report = make_student_copies(src, args.outdir, force=args.force)
    except ValueError as e:
        return _fail(f"student: {str(e).replace('out_dir: ', 'OUTDIR: ', 1)}")
    except OSError as e:
        return _cannot_write("student", e)
    out = Path(args.outdir)
    for p in report.written:
        print(f"wrote    {p}")
    for p in report.skipped:
        print(f"skipped  {p} (already there: kept as is)")
    print(f"{len(report.written)} file(s) written to {out}", end="")
    if report.skipped:
        print(f"; {len(report.skipped)} existing file(s) kept. To replace them with fresh copies (losing the "
              f"changes in them), run: pavlovlab student {out} --force")
    else:
        print(".")
    return 0


# ------------------------------------------------------------------------------------------ start
START_DIR = "pavlovlab-course"
"""``pavlovlab start``'s folder when none is given (in the current folder)."""
FIRST_NOTEBOOK = "00_start_here.ipynb"


def lab_command(folder: Path, *, no_browser: bool = False) -> list[str]:
    """The command that opens JupyterLab in ``folder`` at the first notebook: this Python's ``jupyter lab``
    (``--allow-root`` when run as root, as in containers and cloud machines; ``--no-browser`` on request)."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    if no_browser:
        cmd.append("--no-browser")
    return [*cmd, FIRST_NOTEBOOK]


EDITIONS = {"zh": "中文", "fr": "français"}
"""The course's editions besides English (``student/<edition>/``, made from gettext catalogues)."""
LANGUAGE_PACKS = {"zh": "jupyterlab-language-pack-zh-cn", "fr": "jupyterlab-language-pack-fr-fr"}


def _installed(distribution: str) -> bool:
    try:
        md.distribution(distribution)
    except md.PackageNotFoundError:
        return False
    return True


def edition_dir(course: Path, lang: str) -> Path:
    """The learner copies of an edition, beside the course folder: ``student/<lang>/`` (English: the course itself,
    from which the copies are made)."""
    return course if lang == "en" else course.parent / "student" / lang


def cmd_start(args: argparse.Namespace) -> int:
    """``pavlovlab start [DIR] [--no-browser] [--dry-run] [--course PATH] [--lang en|zh|fr]``: write the learner
    copies of the edition into DIR (default ``./pavlovlab-course``; an existing file is never overwritten), then
    open JupyterLab there.

    Returns JupyterLab's exit status; 0 after ``--dry-run`` (copies written, the command printed, nothing
    launched); 2 for an unusable DIR or course folder (one line, as ``student``) or a missing JupyterLab."""
    import importlib.util

    from .student import make_student_copies

    src = course_dir(args.course or None)
    if not src.is_dir():
        return _fail(_("start: course folder {folder} not found; pass --course PATH to the course's notebooks"
                       ).format(folder=repr(str(src))))
    lang = args.lang or from_environment()
    if lang != "en":
        edition = edition_dir(src, lang)
        if not any(edition.glob("[0-9]*.ipynb")):
            return _fail(_("start: --lang {lang}: no {edition} edition beside {folder} (expected {expected}); run "
                           "`make student` in a clone, or choose --lang en").format(
                lang=lang, edition=EDITIONS[lang], folder=repr(str(src)), expected=repr(str(edition))))
        src = edition
    try:
        report = make_student_copies(src, args.dir)
    except ValueError as e:
        return _fail(f"start: {str(e).replace('out_dir: ', 'DIR: ', 1)}")
    except OSError as e:
        return _cannot_write("start", e)
    folder = Path(args.dir).resolve()
    print(_("{n} learner file(s) written to {folder}").format(n=len(report.written), folder=folder)
          + (_(", {n} already there kept as they are (your work is never overwritten)").format(n=len(report.skipped))
             if report.skipped else ""))
    cmd = lab_command(folder, no_browser=args.no_browser)
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        return _fail(_("start: JupyterLab is not installed: pip install 'pavlovlab[lab]', then run this again"))
    if lang != "en" and not _installed(LANGUAGE_PACKS[lang]):
        print(_("JupyterLab's own menus stay in English: pip install 'pavlovlab[{lang}]' (its language pack), then "
                "choose {edition} under Settings → Language").format(lang=lang, edition=EDITIONS[lang]))
    print(_("opening JupyterLab at {notebook} (stop it with Ctrl+C)").format(notebook=folder / FIRST_NOTEBOOK),
          flush=True)
    if os.name == "posix":  # JupyterLab takes this process's place: Ctrl+C and signals reach it directly
        os.chdir(folder)
        os.execv(cmd[0], cmd)
    try:
        return subprocess.call(cmd, cwd=folder)
    except KeyboardInterrupt:
        return 0


# -------------------------------------------------------------------------------------- reproduce
def cmd_reproduce(args: argparse.Namespace) -> int:
    """``pavlovlab reproduce [--out DIR] [--force] [--quick] [--only NAME...] [--list]``.

    Exit 1 if an experiment failed; exit 2 (one line, nothing written) for an unusable ``--out``: empty,
    a file, the course folder or inside it, a folder holding course notebooks, or a non-empty folder
    without ``--force``. With ``--force`` the files this run makes are replaced and its results are merged
    into an existing ``summary.json`` (the other experiments' entries are kept). A filesystem fault is
    ``pavlovlab reproduce: cannot write PATH: REASON`` (exit 2). Ctrl-C: one line, exit 130."""
    from . import reproduce
    from .student import refuse_unsafe_outdir

    names = [e.name for e in reproduce.EXPERIMENTS]
    if args.list:
        for e in reproduce.EXPERIMENTS:
            print(f"{e.name:<22} {e.notebook:<28} {e.title}")
        return 0
    unknown = [n for n in (args.only or []) if n not in names]
    if unknown:
        return _fail(f"reproduce: unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    try:
        out = refuse_unsafe_outdir(args.out, course_dir(), name="--out")
    except ValueError as e:
        return _fail(f"reproduce: {e}")
    if out.exists() and not out.is_dir():
        return _fail(f"reproduce: --out {str(out)!r} is a file, expected a folder")
    merged = False
    if out.is_dir() and any(out.iterdir()):
        if not args.force:
            return _fail(f"reproduce: --out {str(out)!r} is not empty; pass --force to replace the figures this run "
                         f"makes and merge its results into {reproduce.SUMMARY_NAME}, or choose a new folder")
        merged = (out / reproduce.SUMMARY_NAME).is_file()
    try:
        summary = reproduce.run_all(out, quick=args.quick, only=args.only, progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"\npavlovlab reproduce: interrupted; {reproduce.SUMMARY_NAME} in {str(out)!r} is as it was before "
              "this run (figures finished before the interruption were replaced)", file=sys.stderr)
        return 130
    except OSError as e:
        return _cannot_write("reproduce", e)
    except ValueError as e:
        return _fail(f"reproduce: {e}")
    ran = [n for n in names if not args.only or n in args.only]
    for name in ran:
        res = summary["experiments"][name]
        status = res["status"]
        extra = f" ({res['seconds']:.1f} s)" if "seconds" in res else ""
        print(f"{status.upper():<8} {name}{extra}" + (f": {res['reason']}" if "reason" in res else ""))
    kept = sorted(set(summary["experiments"]) - set(ran))
    note = (f" (merged: results of {', '.join(kept)} kept from the earlier run)" if merged and kept else "")
    print(f"figures and {reproduce.SUMMARY_NAME} in {out}{note}")
    return 1 if any(summary["experiments"][n]["status"] == "failed" for n in ran) else 0


# --------------------------------------------------------------------------------------- progress
def cmd_progress(args: argparse.Namespace) -> int:
    """``pavlovlab progress HOMES... [--names] [--figure FILE [--force]]``: the room's table (and figure).

    Reads the learners' progress files under HOMES (read-only: nothing in a home is written, moved or
    created); a missing, unreadable or malformed file is reported under the table, never fatal (exit 0).
    Exit 2 (one line, nothing written) for an unusable ``--figure``: an existing file without ``--force``,
    a folder, or a name whose suffix matplotlib cannot write."""
    from .progress import read_room, room_figure, room_table, summarise_room

    figure = Path(args.figure) if args.figure else None
    if figure is not None:
        from matplotlib.figure import Figure

        formats = Figure().canvas.get_supported_filetypes()
        if figure.is_dir():
            return _fail(f"progress: --figure {str(figure)!r} is a folder, expected a file name")
        if figure.suffix.lstrip(".").lower() not in formats:
            return _fail(f"progress: --figure {str(figure)!r}: expected a name ending in one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")
        if figure.exists() and not args.force:
            return _fail(f"progress: --figure {str(figure)!r} already exists; pass --force to replace it")
    learners = read_room(args.homes)
    summaries = summarise_room(learners)
    print(room_table(learners, summaries, names=args.names))
    if figure is not None:
        from .student import atomic_write

        fig = room_figure(summaries)
        fmt = figure.suffix.lstrip(".").lower()
        try:
            atomic_write(figure, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120))
        except OSError as e:
            return _cannot_write("progress", e)
        print(f"figure: {figure}")
    return 0


# --------------------------------------------------------------------------------------- the parser
def _fail(message: str) -> int:
    print(f"pavlovlab {message}", file=sys.stderr)
    return 2


COURSE_HELP = ("folder of the course notebooks (default: ./course if present, else $PAVLOVLAB_COURSE or an "
               "installed copy); its parent's requirements.txt gives doctor's pins")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pavlovlab",
        description="Companion command of the course 'Transformers through the lens of Pavlovian conditioning'.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"pavlovlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("start", help="write your copy of the course into a folder and open it in JupyterLab",
                       description="Write the learner copies of the notebooks (solutions removed) into DIR, "
                       f"default ./{START_DIR}, then open JupyterLab there at {FIRST_NOTEBOOK}. A file that "
                       "already exists in DIR is kept as it is: run it again any day to continue where you were.")
    p.add_argument("dir", nargs="?", default=START_DIR, metavar="DIR",
                   help=f"folder for your copies (created if needed; default ./{START_DIR})")
    p.add_argument("--no-browser", action="store_true", help="start JupyterLab without opening a browser tab")
    p.add_argument("--dry-run", action="store_true", help="write the copies, print the JupyterLab command, launch "
                   "nothing")
    p.add_argument("--course", metavar="PATH", help=COURSE_HELP)
    p.add_argument("--lang", choices=["en", *EDITIONS], help="the edition: en (English), zh (中文) or fr "
                   "(français); default: the system's language (LANG), English where there is no edition")
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("doctor", help="check that this machine is ready for the course (exit 1 on a FAIL)",
                       description="Print one OK/FAIL line per check: Python, every pinned package, the torch "
                       "device, the JupyterLab widgets extension, matplotlib, write access to the course folder. "
                       "Exit status 1 if any check fails. Paste the output when asking for help.")
    p.add_argument("--course", metavar="PATH", help=COURSE_HELP)
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("student", help="write learner copies of the notebooks (solutions removed)",
                       description="Write learner copies of every course notebook into OUTDIR: cells tagged "
                       "'solution' removed, outputs cleared, exercise checkers kept. Existing files are never "
                       "overwritten unless --force is given. OUTDIR must lie outside the course folder.")
    p.add_argument("outdir", metavar="OUTDIR", help="folder for the copies (created if needed; not the course folder)")
    p.add_argument("--force", action="store_true", help="replace files that already exist in OUTDIR")
    p.add_argument("--course", metavar="PATH", help=COURSE_HELP)
    p.set_defaults(func=cmd_student)

    p = sub.add_parser("reproduce", help="re-run the course's figure experiments and save PNGs + JSON",
                       description="Re-run each notebook's figure experiments from the package (not from the "
                       "notebooks), with progress bars, and save one PNG per figure plus a JSON of the headline "
                       "numbers.")
    p.add_argument("--out", default="reproduce", metavar="DIR",
                   help="output folder, new or empty (default: ./reproduce); never the course folder")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty DIR: replace this run's figures, merge its results into summary.json")
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer trials (about a minute on a laptop)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these experiments (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("progress", help="an instructor's view of the room: where learners are, where they are stuck",
                       description="Read the learners' exercise progress files under HOMES (e.g. /home/jupyter-* on "
                       "The Littlest JupyterHub; run it as an admin, with sudo, if homes are private) and print one "
                       "table: per exercise, how many learners finished it, are stuck on it (3 or more tries, not "
                       "done), tried it, have not started it, and the hint tier most needed. Anonymous unless "
                       "--names. Read-only: nothing in a learner's home is written. Files that cannot be read "
                       "are reported under the table.")
    p.add_argument("homes", nargs="+", metavar="HOME", help="a learner's home folder (or a progress file)")
    p.add_argument("--names", action="store_true", help="show the stuck learners' names and whose files were not read")
    p.add_argument("--figure", metavar="FILE", help="also save the table as a figure (e.g. room.png)")
    p.add_argument("--force", action="store_true", help="replace an existing --figure file")
    p.set_defaults(func=cmd_progress)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``pavlovlab`` and ``python -m pavlovlab``; returns the exit status."""
    args = build_parser().parse_args(argv)
    use(getattr(args, "lang", None))  # start's --lang, else PAVLOVLAB_LANGUAGE or the locale
    return int(args.func(args) or 0)


__all__ = ["Check", "build_parser", "doctor_checks", "lab_command", "main", "parse_pins"]
