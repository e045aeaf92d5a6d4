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
