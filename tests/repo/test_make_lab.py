"""`make lab`, the README's first command, starts a JupyterLab that answers, also as root (containers, cloud
VMs), where JupyterLab stops with "Running as root is not recommended" unless given --allow-root."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(*args: str, env: dict | None = None) -> list[str]:
    # -o: never (re)install into the venv that runs these tests; only the lab recipe runs
    return ["make", "--no-print-directory", "-o", f"{VENV}/.installed", *args, f"VENV={VENV}"]


def test_allow_root_only_for_root(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    for uid in ("0", "1000"):
        (fake / "id").write_text(f"#!/bin/sh\necho {uid}\n")
        (fake / "id").chmod(0o755)
        # learners open their copies (student/, no solutions); the instructor's target opens the full course
        for target, folder in (("lab", "student"), ("lab-instructor", "course")):
            res = subprocess.run(_make("-n", target), cwd=ROOT, capture_output=True, text=True, timeout=60,
                                 env=dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}"))
            assert res.returncode == 0, res.stderr
            line = [ln for ln in res.stdout.splitlines() if "jupyter lab" in ln]
            assert line and line[-1].endswith(f"{folder}/00_start_here.ipynb"), res.stdout
            assert ("--allow-root" in line[-1]) == (uid == "0"), line[-1]


@pytest.mark.slow
def test_make_lab_starts_a_server_that_answers(tmp_path):
    if not (VENV / "bin" / "jupyter").exists():
        pytest.skip(f"no jupyter in {VENV}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port": port, "port_retries": 0, "open_browser": False},
        "IdentityProvider": {"token": token},
        "LabApp": {"workspaces_dir": str(tmp_path / "workspaces"), "news_url": None},
    }))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 (JupyterLab writes it until the test stops it)
    proc = subprocess.Popen(_make("lab"), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline, status = time.time() + 240, None  # a hang, not a slow start (as in test_start)
        while time.time() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                    status = r.status
                    break
            except OSError:
                time.sleep(0.5)
        text = (tmp_path / "lab.log").read_text()
        assert status == 200, f"no JupyterLab at {url} (make exited {proc.poll()}):\n{text[-3000:]}"
        with urllib.request.urlopen(f"{url}/lab?token={token}", timeout=10) as r:
            assert r.status == 200 and "JupyterLab" in r.read().decode()
        assert "Running as root is not recommended" not in text
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


# ------------------------------------------------------------------------------- the learner's install
TEST_TOOLS = {"pytest", "nbval", "playwright", "jupyter-repo2docker", "hypothesis", "ruff", "mypy", "pytest-xdist",
              "mdpo", "polib", "babel"}
"""What the course's own checks and tools (the editions' catalogues) need and a learner never runs."""


def _pins(name: str) -> dict[str, str]:
    from pavlovlab.teach.cli import parse_pins

    return parse_pins((ROOT / name).read_text(encoding="utf-8"))


def test_learner_pins_are_the_course_pins_without_the_test_tools():
    import tomllib

    from pavlovlab.teach.cli import CI_ONLY, normalise

    learner, full = _pins("requirements-learner.txt"), _pins("requirements.txt")
    assert learner and {n: full.get(n) for n in learner} == learner, "a learner pin differs from requirements.txt"
    assert set(full) - set(learner) == TEST_TOOLS, "requirements.txt must be the learner's pins plus the test tools"
    assert TEST_TOOLS <= CI_ONLY  # `pavlovlab doctor` in a learner's clone does not ask for them
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needs = project["dependencies"] + [r for r in project["optional-dependencies"]["lab"]
                                       if not r.startswith(("ipython>", "jupyter_core"))]
    for requirement in needs:  # the package's own and its notebooks' dependencies are pinned for the learner
        name = normalise(requirement.split(">")[0].split("=")[0].strip())
        assert name in learner, f"{name} ({requirement}) is not in requirements-learner.txt"


def test_make_lab_installs_the_learner_pins_and_make_test_the_rest(tmp_path):
    fresh = tmp_path / "venv"  # a venv that does not exist: make prints every install step it would run
    lab = subprocess.run(["make", "--no-print-directory", "-n", "lab", f"VENV={fresh}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert lab.returncode == 0, lab.stderr
    installs = [ln for ln in lab.stdout.splitlines() if "pip install" in ln and " -r " in ln]
    assert installs and all("-r requirements-learner.txt" in ln for ln in installs), installs
    assert "-r requirements.txt" not in lab.stdout and "docs/requirements.txt" not in lab.stdout
    test = subprocess.run(["make", "--no-print-directory", "-n", "test", f"VENV={fresh}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert test.returncode == 0, test.stderr
    assert "-r requirements.txt" in test.stdout and "-r docs/requirements.txt" in test.stdout


def _readme_wheel_lines() -> list[str]:
    """The README's two commands that build the wheel into dist/ and install it, as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [ln.split("  #")[0].strip() for ln in readme.splitlines() if ln.startswith("pip ") and "dist" in ln]
    assert len(lines) == 2 and lines[0].startswith("pip wheel") and lines[1].startswith("pip install"), lines
    return lines


def test_readme_wheel_install_line_names_a_file_not_a_quoted_glob():
    build, install = _readme_wheel_lines()
    assert "--wheel-dir dist" in build
    assert '"dist/' not in install and "'dist/" not in install  # a quoted glob is never expanded


@pytest.mark.slow
def test_readme_wheel_lines_run_as_written(tmp_path):
    """In a copy of the working tree, by bash: the first line builds dist/pavlovlab-<version>-py3-none-any.whl, the
    second resolves (``--dry-run``: nothing is installed into the environment running the tests)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    clone = tmp_path / "clone"
    for rel in filter(None, files):
        if (ROOT / rel).is_file() and not (ROOT / rel).is_symlink():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, clone / rel)
    build, install = _readme_wheel_lines()
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "pip").write_text(f'#!/bin/sh\nexec {sys.executable} -m pip "$@"\n')  # this venv's pip
    (tmp_path / "bin" / "pip").chmod(0o755)
    built = subprocess.run(["bash", "-c", build], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    if built.returncode != 0 and "setuptools" in built.stdout + built.stderr and "No matching" in built.stderr:
        pytest.skip("building the wheel needs setuptools from the package index (offline?)")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert [p.name for p in (clone / "dist").iterdir()] == [f"pavlovlab-{version}-py3-none-any.whl"]
    res = subprocess.run(["bash", "-c", f"{install} --dry-run"], cwd=clone, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    # the wheel is the candidate (installed here already, editable, or not) and its lab extra is resolved with it
    assert (f"Would install pavlovlab-{version}" in res.stdout
            or "already installed with the same version as the provided wheel" in res.stdout), res.stdout[-2000:]
    assert "jupyterlab>=4.0" in res.stdout, res.stdout[-2000:]
