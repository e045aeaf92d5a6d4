"""Release 0.2.0 is consistent: one version everywhere, the licences and the citation exist and are named,
launch links are pinned to the release tag (not `main`), and `pavlovlab doctor` prints the version."""

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
VERSION = pavlovlab.__version__
TAG = f"v{VERSION}"
FOOTER = ("*Text and figures: [CC BY 4.0](../LICENSE-CONTENT) · code: [MIT](../LICENSE) · "
          "cite: [CITATION.cff](../CITATION.cff)*")
# files that carry launch links: the README, notebook 00 and the instructor guide
LAUNCH_FILES = ["README.md", "course/00_start_here.ipynb", "course/INSTRUCTOR_GUIDE.md"]
BINDER = re.compile(r"mybinder\.org/v2/gh/pavlovlab/pavlovlab/([^/?\s)\"'`]+)")
PULLER = re.compile(r"git-pull\?[^\s)\"'`]*?branch=([^&\s)\"'`]+)")


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


@pytest.mark.parametrize("rel", LAUNCH_FILES)
def test_launch_links_are_pinned_to_the_release(rel):
    text = _text(rel)
    assert BINDER.findall(text), f"{rel} has no Binder link"
    wrong = sorted({r for r in BINDER.findall(text) if r != TAG})
    assert not wrong, f"{rel}: Binder links point at {wrong}, not at the release tag {TAG}"
    # nbgitpuller follows a branch: a tag clones once, then every later click fails (deploy/README.md)
    wrong = sorted({r for r in PULLER.findall(text) if r != f"release-{TAG}"})
    assert not wrong, f"{rel}: nbgitpuller links follow {wrong}, not the release branch release-{TAG}"


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
