"""The release is consistent: one version everywhere, the licences and the citation exist and are named, every
launch link names the one release setting (pyproject.toml's launch-ref, tools/launch_links.py), `make release`
bumps and tags a temporary clone, and `pavlovlab doctor` prints the version."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import pavlovlab

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import launch_links  # noqa: E402

VERSION = pavlovlab.__version__
REF = launch_links.launch_ref()
FOOTER = ("*Text and figures: [CC BY 4.0](../LICENSE-CONTENT) · code: [MIT](../LICENSE) · "
          "cite: [CITATION.cff](../CITATION.cff)*")
BINDER = re.compile(r"mybinder\.org/v2/gh/pavlovlab/pavlovlab/([^/?\s)\"'`]+)")
PULLER = re.compile(r"git-pull\?[^\s)\"'`]*?branch=([^&\s)\"'`]+)")
COLAB = re.compile(r"colab\.research\.google\.com/github/pavlovlab/pavlovlab/blob/([^/\s)\"'`]+)/")


def _text(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def test_one_version_everywhere():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert tomllib.loads(_text("pyproject.toml"))["project"]["version"] == VERSION
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load(_text("CITATION.cff"))
    assert str(cff["version"]) == VERSION
    first = re.search(r"^## \[(\d+\.\d+\.\d+)\]", _text("CHANGELOG.md"), flags=re.M)
    assert first and first.group(1) == VERSION, "CHANGELOG.md's newest section is not the package version"


def test_licences_and_citation():
    assert _text("LICENSE").startswith("MIT License")
    assert tomllib.loads(_text("pyproject.toml"))["project"]["license"] == "MIT"
    content = _text("LICENSE-CONTENT")
    assert "CC BY 4.0" in content and "https://creativecommons.org/licenses/by/4.0/" in content
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load(_text("CITATION.cff"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}
    paper = [r for r in cff["references"] if "2508.08289" in json.dumps(r)]
    assert paper, "the paper is not a reference of CITATION.cff"
    readme = _text("README.md")
    for name in ("LICENSE", "LICENSE-CONTENT", "CITATION.cff", "CHANGELOG.md"):
        assert f"]({name})" in readme, f"README.md does not link {name}"


def test_the_release_setting_names_a_ref():
    assert REF == "main" or re.fullmatch(r"v\d+\.\d+\.\d+", REF), REF
    if REF != "main":
        assert f"v{VERSION}" == REF, f"launch-ref {REF} is not the package's release v{VERSION}"
    assert launch_links.puller_branch("v1.2.3") == "release-v1.2.3"
    assert launch_links.puller_branch("main") == "main"


@pytest.mark.parametrize("rel", launch_links.DOCS)
def test_launch_links_of_the_docs_name_the_release_setting(rel):
    text = _text(rel)
    assert not launch_links.stale_links(text, REF), f"{rel}: run `python tools/launch_links.py docs --write`"
    # the patterns are not vacuous: every file names the ref at least once, and a stale ref is caught
    assert any(p.search(text) for p in launch_links.PATTERNS.values()), f"{rel} has no launch link"
    stale = launch_links.repoint(text, "v9.9.9")
    assert stale != text and launch_links.stale_links(stale, REF)
    assert launch_links.repoint(stale, REF) == text


def test_readme_links_to_binder_colab_and_nbgitpuller_at_the_ref():
    text = _text("README.md")
    assert set(BINDER.findall(text)) == {REF}
    assert set(COLAB.findall(text)) == {REF}
    assert set(PULLER.findall(text)) == {launch_links.puller_branch(REF)}
    for nb in sorted((ROOT / "student").glob("[0-9]*.ipynb")):
        assert launch_links.colab_url(f"student/{nb.name}", REF) in text, f"README has no Colab link to {nb.name}"


@pytest.mark.parametrize("path", sorted((ROOT / "course").glob("[0-9]*.ipynb")), ids=lambda p: p.name)
def test_notebook_launch_cells_name_the_release_setting(path):
    """Every course notebook carries the launch cells of the current setting (`make launch-cells` writes them)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    want = launch_links.with_launch_cells(nbformat.read(path, as_version=4), launch_links.learner_copy(path.name),
                                          REF)
    assert [c.source for c in nb.cells] == [c.source for c in want.cells], (
        f"{path.name}: launch cells missing or stale: run `make launch-cells`")


def test_readme_has_an_nbgitpuller_link():
    assert PULLER.findall(_text("README.md")), "README.md has no nbgitpuller link"


@pytest.mark.parametrize("path", sorted((ROOT / "course").glob("[0-9]*.ipynb")), ids=lambda p: p.name)
def test_notebook_footer_names_the_licences(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    last_md = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"][-1]
    assert last_md.rstrip().endswith(FOOTER), f"{path.name}: the last markdown cell does not end with the footer"


@pytest.mark.slow
def test_doctor_prints_the_version():
    res = subprocess.run([sys.executable, "-m", "pavlovlab", "doctor"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.stdout.splitlines()[0].startswith(f"pavlovlab {VERSION} "), res.stdout[:500] + res.stderr[-500:]
