"""Smoke test of the workshop recipe: a real JupyterHub on 127.0.0.1 with 2 learners, each pulling the
course through nbgitpuller (twice: the link clicked again) and running the learner copy of notebook 00
end to end through the kernel protocol; then everything it started is gone. No time limit is asserted
(the workshop's timings are measured by ``benchmarks/hub.py``): a cell that gets no reply for
:data:`CELL_HANG_S` is a hang.

Needs ``jupyterhub`` and ``nbgitpuller`` (pinned in requirements.txt) and the npm package
``configurable-http-proxy`` (found on PATH, or installed by npm on first use into
``~/.cache/pavlovlab-hub``). Skipped, saying which, only when one of them cannot be had.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import sys
import urllib.parse

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = "00_start_here.ipynb"
CELL_HANG_S = 300.0
"""Seconds without a cell's reply that count as a hang (as ``--nbval-cell-timeout`` in pyproject.toml)."""

pytest.importorskip("jupyterhub", reason="jupyterhub is not installed (pip install -r deploy/requirements-hub.txt)")
pytest.importorskip("nbgitpuller", reason="nbgitpuller is not installed (pip install -r deploy/requirements-hub.txt)")


def _bench():
    spec = importlib.util.spec_from_file_location("pavlovlab_bench_hub", ROOT / "benchmarks" / "hub.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _deploy_link() -> dict[str, str]:
    """The query of the nbgitpuller link that deploy/README.md hands out."""
    text = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    link = re.search(r"https://\S+/hub/user-redirect/git-pull\?\S+", text)
    assert link, "deploy/README.md must give the nbgitpuller link"
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link.group(0).rstrip("`)")).query))


def _expected_cells() -> tuple[int, int]:
    """Code cells of the learner copy and, among them, the stubs (tagged raises-exception), read here
    from the course notebook without the solution cells (independently of the code under test)."""
    nb = nbformat.read(ROOT / "course" / NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and "solution" not in c.metadata.get("tags", [])]
    return len(code), sum("raises-exception" in c.metadata.get("tags", []) for c in code)


@pytest.mark.slow
def test_two_learners_pull_and_run_a_notebook_on_a_local_hub():
    bench = _bench()
    link = _deploy_link()
    proxy = bench.find_proxy(install=True)
    if proxy is None:
        pytest.skip("configurable-http-proxy is not on PATH and `npm install configurable-http-proxy@5.3.0` failed")
    run = bench.run_workshop(2, NOTEBOOK, threads=1, proxy=proxy, cell_timeout=CELL_HANG_S,
                             branch=link["branch"], pulls=2)
    n_code, n_stubs = _expected_cells()
    for x in run.per_learner:
        assert not x.problem, f"{x.name}: {x.problem}"
        assert x.pulls == 2, f"{x.name}: the second click on the nbgitpuller link failed"
        assert x.cells == n_code, (x.name, x.cells, n_code)
        assert x.stub_errors == n_stubs and not x.other_errors, (x.name, x.stub_errors, x.other_errors)
        assert not x.died
        assert 0.05 < x.kernel_peak_gb < 1.0, (x.name, x.kernel_peak_gb)
        assert 0 < x.server_s < x.pulled_s < x.finish_s
    assert run.deaths == 0
    assert run.leftover_pids == [], f"processes left running: {run.leftover_pids}"
    assert len(run.workdirs) == 2 and not any(pathlib.Path(d).exists() for d in run.workdirs), run.workdirs
