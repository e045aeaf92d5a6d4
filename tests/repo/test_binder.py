"""Binder configuration: the real repo2docker writes a Dockerfile that installs from binder/ as intended,
and binder/requirements.txt pins the same versions as requirements.txt."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pavlovlab.teach.cli import CI_ONLY, parse_pins, public_version

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def test_binder_pins_match_root_pins():
    root = parse_pins((ROOT / "requirements.txt").read_text())
    binder = parse_pins((BINDER / "requirements.txt").read_text())
    assert root and binder
    # Same packages (except the CI-only test tools), same versions (torch's "+cpu" label aside).
    assert set(binder) == set(root) - CI_ONLY, (set(binder) ^ (set(root) - CI_ONLY))
    diff = {n: (root[n], binder[n]) for n in binder if public_version(binder[n]) != public_version(root[n])}
    assert not diff, f"binder/requirements.txt and requirements.txt disagree: {diff}"
    # Binder is a learner's environment: exactly the learner's pins (what `make lab` installs)
    assert set(binder) == set(parse_pins((ROOT / "requirements-learner.txt").read_text()))


def test_binder_torch_is_the_cpu_wheel():
    text = (BINDER / "requirements.txt").read_text()
    lines = [ln.strip() for ln in text.splitlines()]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert parse_pins(text)["torch"].endswith("+cpu")


def test_binder_python_version_and_postbuild():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text()
    assert "pip install" in text and "--no-deps -e ." in text
    # a Binder link without a path opens the learner copy, never the notebook with its solutions
    assert "/lab/tree/student/00_start_here.ipynb" in text and "/lab/tree/course/" not in text
    # the learner copies are committed (tests/repo/test_student_committed.py), not generated on Binder
    commands = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert not any("pavlovlab student" in ln for ln in commands)
    assert (ROOT / "student" / "00_start_here.ipynb").is_file()


def test_postbuild_runs(tmp_path):
    """postBuild's own commands work from a copy of the repository (pip step replaced: no network)."""
    script = (BINDER / "postBuild").read_text().replace("python -m pip install --no-cache-dir --no-deps -e .", "true")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "course", repo / "course", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    res = subprocess.run(["bash", "-c", script], cwd=repo, env=dict(os.environ, HOME=str(tmp_path / "home"),
                         PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}"), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    config = (tmp_path / "home" / ".jupyter" / "jupyter_server_config.py").read_text()
    assert 'default_url = "/lab/tree/student/00_start_here.ipynb"' in config


def _repo2docker() -> list[str]:
    import importlib.util

    if importlib.util.find_spec("repo2docker") is None:
        pytest.skip("jupyter-repo2docker is not installed (pip install -r requirements.txt)")
    return [sys.executable, "-m", "repo2docker"]


@pytest.fixture(scope="module")
def dockerfile(tmp_path_factory) -> str:
    cmd = _repo2docker()
    # A clean copy of the files repo2docker looks at, so that nothing uncommitted or ignored leaks in.
    repo = tmp_path_factory.mktemp("repo")
    shutil.copytree(BINDER, repo / "binder")
    for name in ("requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, repo / name)
    (repo / "pavlovlab").mkdir()
    (repo / "course").mkdir()
    try:
        res = subprocess.run([*cmd, "--no-build", "--debug", str(repo)], capture_output=True, text=True,
                             timeout=120, cwd=repo)
    except subprocess.TimeoutExpired:
        pytest.skip("repo2docker --no-build did not finish in 120 s (offline?)")
    out = res.stdout + res.stderr
    if res.returncode != 0:
        if any(s in out for s in ("ConnectionError", "Name or service not known", "Temporary failure")):
            pytest.skip(f"repo2docker needs the network here: {out[-300:]}")
        pytest.fail(f"repo2docker --no-build failed ({res.returncode}):\n{out[-3000:]}")
    assert "FROM " in out, out[-2000:]
    return out


def test_repo2docker_uses_python_311(dockerfile):
    assert "conda environment for python=3.11" in dockerfile
    # the locked base environment it copies in (file names are escaped: "." -> "-2e", "-" -> "-2d")
    assert "environment.py-3.11" in dockerfile or "environment-2epy-2d3-2e11" in dockerfile


def test_repo2docker_installs_binder_requirements(dockerfile):
    assert "binder/requirements.txt" in dockerfile
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile
    # binder/ wins: the root requirements.txt is not what Binder installs.
    assert '-r "requirements.txt"' not in dockerfile


def test_repo2docker_runs_postbuild_after_requirements(dockerfile):
    assert "./binder/postBuild" in dockerfile
    assert dockerfile.index("binder/requirements.txt") < dockerfile.index("./binder/postBuild")
