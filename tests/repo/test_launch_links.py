"""Launch links from one setting: the notebooks' launch cells (Colab and Binder badges, a Colab-only install cell),
the book's launch menu, and `make release` on a temporary copy of the repository."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import launch_links  # noqa: E402

REF = launch_links.launch_ref()
NOTEBOOK = ROOT / "course" / "04_capacity_limits.ipynb"


def _copy(tmp_path: Path) -> Path:
    (tmp_path / "course").mkdir()
    return Path(shutil.copy2(NOTEBOOK, tmp_path / "course" / NOTEBOOK.name))


def _launch_cells(nb) -> list:
    return [c for c in nb.cells if launch_links.LAUNCH_TAG in c.metadata.get("tags", [])]


def test_cells_tool_puts_badges_and_install_cell_below_the_title_once(tmp_path):
    path = _copy(tmp_path)
    before = nbformat.read(path, as_version=4)
    before.cells = [c for c in before.cells if c not in _launch_cells(before)]  # as if the tool never ran
    for _ in range(2):  # a second run replaces the cells, it does not add more
        res = subprocess.run([sys.executable, str(ROOT / "tools" / "launch_links.py"), "cells", str(path)],
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert len(nb.cells) == len(before.cells) + 2
    assert nb.cells[0].source == before.cells[0].source  # the title stays first
    badge, install = nb.cells[1], nb.cells[2]
    assert _launch_cells(nb) == [badge, install]
    assert badge.cell_type == "markdown" and install.cell_type == "code"
    learner = f"student/{NOTEBOOK.name}"
    assert launch_links.colab_url(learner, REF) in badge.source
    assert launch_links.binder_url(learner, REF) in badge.source
    assert launch_links.install_spec(REF) in install.source
    assert [c.source for c in nb.cells[3:]] == [c.source for c in before.cells[1:]]


def _exec_install_cell(monkeypatch, *, on_colab: bool, installed: bool, pip_fails: bool = False) -> tuple[list, list]:
    """Run the install cell's code with subprocess.run recorded (and failing as pip does offline when
    ``pip_fails``); on Colab with a stand-in google.colab."""
    import importlib.util

    pip_calls: list = []
    widget_calls: list = []

    def run(*args, **kwargs):
        pip_calls.append(args[0])
        return subprocess.CompletedProcess(args[0], 1 if pip_fails else 0, b"",
                                           b"fatal: unable to access: Could not resolve host: github.com")

    monkeypatch.setattr(subprocess, "run", run)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (real("json") if installed else None) if name == "pavlovlab" else real(name))
    if on_colab:
        colab = types.ModuleType("google.colab")
        colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: widget_calls.append(True))
        monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
        monkeypatch.setitem(sys.modules, "google.colab", colab)
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(compile(launch_links.install_code(REF), "<install cell>", "exec"), {})
    return pip_calls, widget_calls


def test_install_cell_does_nothing_outside_colab(monkeypatch):
    assert _exec_install_cell(monkeypatch, on_colab=False, installed=False) == ([], [])


def test_install_cell_installs_on_colab_only_when_missing(monkeypatch):
    pip_calls, widgets = _exec_install_cell(monkeypatch, on_colab=True, installed=False)
    assert len(pip_calls) == 1 and pip_calls[0][-1] == launch_links.install_spec(REF) and widgets == [True]
    assert pip_calls[0][1:4] == ["-m", "pip", "install"]
    pip_calls, widgets = _exec_install_cell(monkeypatch, on_colab=True, installed=True)
    assert pip_calls == [] and widgets == [True]


def test_install_cell_fails_kindly_without_network(monkeypatch):
    """Offline on Colab the cell stops with one sentence (what is missing, what to do): IPython shows an error's
    ``_render_traceback_`` instead of its traceback, so no CalledProcessError and no pip or git output."""
    with pytest.raises(Exception) as failure:
        _exec_install_cell(monkeypatch, on_colab=True, installed=False, pip_fails=True)
    assert not isinstance(failure.value, subprocess.CalledProcessError)
    assert str(failure.value) == launch_links.INSTALL_FAILED
    assert failure.value._render_traceback_() == [launch_links.INSTALL_FAILED]
    sentence = launch_links.INSTALL_FAILED
    assert sentence.count(". ") == 0 and sentence.endswith(".")  # one sentence: what is missing, what to do
    assert "internet" in sentence and "run this cell" in sentence


def test_links_are_built_from_the_ref():
    assert launch_links.binder_url("student/00.ipynb", "v1.0.0") == (
        "https://mybinder.org/v2/gh/pavlovlab/pavlovlab/v1.0.0?urlpath=lab/tree/student/00.ipynb")
    assert launch_links.colab_url("student/00.ipynb", "v1.0.0") == (
        "https://colab.research.google.com/github/pavlovlab/pavlovlab/blob/v1.0.0/student/00.ipynb")
    url = launch_links.puller_url("student/00.ipynb", "v1.0.0", hub="hub.example.org")
    assert "branch=release-v1.0.0" in url and url.startswith("https://hub.example.org/hub/user-redirect/git-pull?")
    assert "urlpath=lab%2Ftree%2Fpavlovlab%2Fstudent%2F00.ipynb" in url
    assert launch_links.puller_url("a.ipynb", "main").count("branch=main") == 1


def test_a_bad_setting_is_refused(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pavlovlab]\nlaunch-ref = "no spaces allowed"\n'
                                             'repository = "no-owner"\n')
    with pytest.raises(ValueError, match="launch-ref"):
        launch_links.launch_ref(tmp_path)
    with pytest.raises(ValueError, match="repository: expected a GitHub repository 'owner/name'"):
        launch_links.repository(tmp_path)


def test_pyproject_urls_follow_the_settings():
    """The package's URLs (its Changelog at the launch ref) are re-pointed with every other link."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Homepage"] == launch_links.REPO_URL
    assert urls["Changelog"] == f"{launch_links.REPO_URL}/blob/{REF}/CHANGELOG.md"
    assert "pyproject.toml" in launch_links.DOCS
    stale = 'Changelog = "https://github.com/pavlovlab/pavlovlab/blob/v0.0.1/CHANGELOG.md"'
    assert launch_links.stale_links(stale, "v9.9.9", "pavlovlab/pavlovlab") == ["github: v0.0.1"]


def test_a_fork_repoints_every_link_from_its_one_setting(tmp_path):
    """A fork sets ``[tool.pavlovlab] repository`` and runs ``docs --write`` and ``cells``: no link of the files
    the tool owns, nor of a notebook's launch cells, still names the upstream repository."""
    fork = "someone-else/pavlov-fork"
    for rel in [*launch_links.DOCS, *launch_links.REPO_DOCS, "tools/launch_links.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'repository = "{launch_links.REPO}"',
                                                       f'repository = "{fork}"'))
    tool = [sys.executable, str(tmp_path / "tools" / "launch_links.py")]
    check = subprocess.run([*tool, "docs", "--check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and "repository: pavlovlab/pavlovlab" in check.stdout, check.stdout
    nb = Path(shutil.copy2(NOTEBOOK, tmp_path / "course" / NOTEBOOK.name))
    for args in (["docs", "--write"], ["cells", str(nb)]):
        res = subprocess.run([*tool, *args], capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
    assert subprocess.run([*tool, "docs", "--check"], capture_output=True, text=True, timeout=120).returncode == 0
    upstream = re.compile(r"pavlovlab(/|%2F)pavlovlab")
    for rel in launch_links.DOCS + launch_links.REPO_DOCS:
        text = (tmp_path / rel).read_text()
        assert not upstream.search(text), f"{rel} still names the upstream repository"
    readme = (tmp_path / "README.md").read_text()
    assert f"mybinder.org/v2/gh/{fork}/{REF}?urlpath=lab/tree/student/" in readme
    assert f"colab.research.google.com/github/{fork}/blob/{REF}/student/" in readme
    assert f"github.com%2F{fork.replace('/', '%2F')}&branch=" in readme
    cells = "".join(c.source for c in _launch_cells(nbformat.read(nb, as_version=4)))
    assert not upstream.search(cells) and f"git+https://github.com/{fork}@{REF}" in cells


def test_book_launch_menu_comes_from_the_setting(monkeypatch):
    import importlib.util

    monkeypatch.delenv("PAVLOVLAB_HUB_URL", raising=False)
    spec = importlib.util.spec_from_file_location("book_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    options = conf.html_theme_options
    assert options["repository_branch"] == REF
    launch = options["launch_buttons"]
    assert launch["colab_url"] == "https://colab.research.google.com"
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert "jupyterhub_url" not in launch  # no hub known: no broken button
    monkeypatch.setenv("PAVLOVLAB_HUB_URL", "https://hub.example.org")
    spec.loader.exec_module(conf)
    assert conf.html_theme_options["launch_buttons"]["jupyterhub_url"] == "https://hub.example.org"


# ------------------------------------------------------------------------------------- make release
def _repo_copy(tmp_path: Path) -> Path:
    """The working tree (tracked and new files, not ignored ones) as a fresh one-commit git repository."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    repo = tmp_path / "repo"
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.email", "t@t.invalid"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=repo, check=True)
    return repo


@pytest.mark.slow
def test_make_release_bumps_repoints_tags_and_branches_a_clone(tmp_path):
    repo = _repo_copy(tmp_path)
    old = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]
    major, minor, _ = map(int, old.split("."))
    new = f"{major}.{minor + 1}.0"
    tag = f"v{new}"
    res = subprocess.run(["make", "--no-print-directory", "release", f"VERSION={new}",
                          f"BIN={Path(sys.executable).parent}"], cwd=repo, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    py = tomllib.loads((repo / "pyproject.toml").read_text())
    assert py["project"]["version"] == new and py["tool"]["pavlovlab"]["launch-ref"] == tag
    assert f'__version__ = "{new}"' in (repo / "pavlovlab" / "__init__.py").read_text()
    assert f"version: {new}" in (repo / "CITATION.cff").read_text()
    changelog = (repo / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[Unreleased\]\n\n## \[{re.escape(new)}\] - {dt.date.today().isoformat()}$", changelog,
                     flags=re.M)
    assert f"[{new}]: https://github.com/pavlovlab/pavlovlab/compare/v{old}...{tag}" in changelog
    for rel in launch_links.DOCS:
        assert not launch_links.stale_links((repo / rel).read_text(), tag), rel
    nb = nbformat.read(repo / "course" / "00_start_here.ipynb", as_version=4)
    assert launch_links.install_spec(tag) in _launch_cells(nb)[1].source
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
    for ref in (f"{tag}^{{commit}}", f"release-{tag}"):
        got = subprocess.run(["git", "rev-parse", ref], cwd=repo, capture_output=True, text=True).stdout
        assert got == head, ref
    assert not subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                              capture_output=True, text=True).stdout.strip()
    check = subprocess.run([sys.executable, "tools/student_copies.py", "--check"], cwd=repo, capture_output=True,
                           text=True, timeout=300)
    assert check.returncode == 0, check.stdout[-2000:]
    # the same version again is refused, and changes nothing
    again = subprocess.run([sys.executable, "tools/release.py", new], cwd=repo, capture_output=True, text=True)
    assert again.returncode == 2 and "newer" in again.stderr
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout == head


# ------------------------------------------------------------------------- Colab, in principle
COLAB_HAS = {"torch", "numpy", "matplotlib", "ipywidgets", "tqdm", "IPython", "scipy", "nbformat"}
"""Modules a Colab runtime has preinstalled (with the package's own dependencies, which its install brings)."""


@pytest.mark.parametrize("path", sorted((ROOT / "course").glob("[0-9]*.ipynb")), ids=lambda p: p.name)
def test_a_notebook_needs_nothing_colab_lacks(path):
    """On Colab a notebook is opened alone (from GitHub), with the package installed by its launch cell: no code
    cell may read a file (``../``, ``open(``, loaders) or import a module beyond the package and Colab's own."""
    import ast
    import sys as _sys

    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        assert not re.search(r"\.\./|\bopen\(|read_text\(|np\.load\(|torch\.load\(", source), (
            f"{path.name} cell {i} reads a file: Colab opens the notebook without its folder")
        for node in ast.walk(ast.parse(source)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                     else [])
            for name in names:
                top = name.split(".")[0]
                assert top in _sys.stdlib_module_names or top in COLAB_HAS | {"pavlovlab", "google"}, (
                    f"{path.name} cell {i} imports {name}, which Colab does not have")


# ------------------------------------------------------------------ every learner's link opens student/
LAUNCH = re.compile(r"(?:mybinder\.org/v2/gh/\S+?urlpath=lab(?:/|%2F)tree(?:/|%2F)|colab\.research\.google\.com/github/"
                    r"\S+?/blob/[^/\s]+/|git-pull\?\S*?urlpath=lab%2Ftree%2Fpavlovlab%2F|jupyter lab (?:--\S+ )*)"
                    r"(course|student)(?:/|%2F|\\)")
"""A launch link or command that opens a notebook folder (group 1: which one): Binder, Colab, nbgitpuller, or
``jupyter lab <folder>/...``."""


def _course_links(text: str) -> list[str]:
    """The launch links of ``text`` that open ``course/`` (the notebooks with their solutions) in a paragraph that
    does not say it is for instructors."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        if re.search(r"instructor", paragraph, flags=re.I):
            continue
        found += [m.group(0) for m in LAUNCH.finditer(paragraph) if m.group(1) == "course"]
    return found


def test_every_launch_link_a_learner_can_reach_opens_the_learner_copies():
    """README, the guides, deploy/, Binder's start page and the notebooks' launch cells: only links labelled for
    instructors open course/ (the book's launch menu: tests/repo/test_book.py)."""
    texts = {rel: (ROOT / rel).read_text(encoding="utf-8") for rel in [*launch_links.DOCS, "binder/postBuild"]}
    for path in sorted((ROOT / "course").glob("[0-9]*.ipynb")):
        texts[path.name] = "\n\n".join(c.source for c in _launch_cells(nbformat.read(path, as_version=4)))
    learner = {rel: len([m for m in LAUNCH.finditer(text) if m.group(1) == "student"]) for rel, text in texts.items()}
    assert learner["README.md"] >= 18 and learner["00_start_here.ipynb"] == 2, learner
    stray = {rel: links for rel, text in texts.items() if (links := _course_links(text))}
    assert not stray, f"launch links to course/ (the solutions) that a learner can follow: {stray}"
    postbuild = texts["binder/postBuild"]
    assert re.search(r'default_url = "/lab/tree/student/', postbuild), "a bare Binder link must open student/"


def test_the_check_finds_a_learner_link_to_the_solutions():
    assert _course_links("Open [it](https://mybinder.org/v2/gh/a/b/main?urlpath=lab/tree/course/00.ipynb)")
    assert _course_links(".venv\\Scripts\\jupyter lab course\\00_start_here.ipynb")
    assert not _course_links("For the instructor: https://mybinder.org/v2/gh/a/b/main?urlpath=lab/tree/course/0")
    assert not _course_links("jupyter lab student/00_start_here.ipynb")
