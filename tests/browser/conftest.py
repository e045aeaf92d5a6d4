"""A real JupyterLab server on localhost and headless Chromium driven by Playwright.

Skips cleanly when Chromium (Debian's `chromium` package at /usr/bin/chromium) or Playwright for
Python is missing; never downloads a browser. The server serves the learner copies of course/ (what
`make lab` opens), generated into a temporary folder, so running them in the browser never writes into the
repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from learnercopy import CHROMIUM, browser_missing

from pavlovlab.teach.student import make_student_copies

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
PARALLEL = int(os.environ.get("PAVLOVLAB_BROWSER_PARALLEL", max(1, min(4, (os.cpu_count() or 2) - 1))))
"""Notebooks running at the same time (each has its own tab and kernel)."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]

# JupyterLab user settings for a quiet, deterministic session: no news or update checks, every cell
# kept in the DOM (no windowing), no autosave racing with the test's own save.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    missing = browser_missing()
    if missing:
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory, browser):
    """A running JupyterLab: ``{"url", "token", "root"}``; root is a temporary folder of learner copies of
    course/ (no solution cells, no outputs: every output seen is live)."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "student"
    report = make_student_copies(COURSE, root)
    assert report.written and not report.skipped, report
    settings = base / "user-settings"
    for rel, value in LAB_SETTINGS.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "runtime"),
               MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONUNBUFFERED="1")
    # kernels run PARALLEL at a time: share the cores between them rather than oversubscribe
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // PARALLEL)))
    log = open(base / "server.log", "w")  # noqa: SIM115 (the server writes it until teardown closes it)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.open_browser=False",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", "--ServerApp.allow_root=True",
         f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
         f"--LabApp.workspaces_dir={base / 'workspaces'}", "--LabApp.news_url=None"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 240  # a hang, not a slow start: test_start allows JupyterLab as long
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            log.close()
            pytest.fail(f"JupyterLab did not start:\n{(base / 'server.log').read_text()[-3000:]}")
        time.sleep(0.5)
    try:
        yield {"url": url, "token": token, "root": root, "log": base / "server.log"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def snapshot(request):
    """Tests put the browser tab they check in ``snapshot["page"]``; on failure a full-page screenshot of it
    goes to tests/browser/screenshots/<test>.png."""
    holder: dict = {}
    yield holder
    rep = getattr(request.node, "rep_call", None)
    page = holder.get("page")
    if page is not None and rep is not None and rep.failed:
        SCREENSHOTS.mkdir(exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid.split("::", 1)[-1])
        with contextlib.suppress(Exception):
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
