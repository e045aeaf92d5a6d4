"""Smoke test of the workshop recipe: a real JupyterHub on 127.0.0.1 with 2 learners, each pulling the
course through nbgitpuller (twice: the link clicked again) and running the learner copy of notebook 00
end to end through the kernel protocol; then everything it started is gone. No time limit is asserted
(the workshop's timings are measured by ``benchmarks/hub.py``): a cell that gets no reply for
:data:`CELL_HANG_S` is a hang.

Then each learner answers exercise 1 as a person would (learner01 reads the solution and gets it right,
learner02 checks three wrong answers and asks for the next hint), and ``pavlovlab progress`` reads their
homes while the servers still run: the instructor's table must show exactly that, without changing a file.

Needs ``jupyterhub`` and ``nbgitpuller`` (pinned in requirements.txt) and the npm package
``configurable-http-proxy`` (found on PATH, or installed by npm on first use into
``~/.cache/pavlovlab-hub``). Skipped, saying which, only when one of them cannot be had.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import urllib.parse

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = "00_start_here.ipynb"
CELL_HANG_S = 300.0
"""Seconds without a cell's reply that count as a hang (as ``--nbval-cell-timeout`` in pyproject.toml)."""

pytest.importorskip("jupyterhub", reason="jupyterhub is not installed (pip install -r deploy/requirements-hub.txt)")
pytest.importorskip("nbgitpuller", reason="nbgitpuller is not installed (pip install -r deploy/requirements-hub.txt)")


def _deploy_link() -> dict[str, str]:
    """The query of the nbgitpuller link that deploy/README.md hands out."""
    text = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    link = re.search(r"https://\S+/hub/user-redirect/git-pull\?\S+", text)
    assert link, "deploy/README.md must give the nbgitpuller link"
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link.group(0).rstrip("`)")).query))


AFTER_THE_NOTEBOOK = {
    # the notebook's own `ex.hint(1)` cell already showed hint tier 1 to both
    "learner01": ["ex.solution(1)", "def match(bell, test):\n    return (bell * test).sum()", "ex.check_match(match)"],
    "learner02": [*(f"def match(bell, test):\n    return {wrong}\nex.check_match(match)"
                    for wrong in ("(bell * test).mean()", "(bell + test).sum()", "(bell - test).sum()")),
                  "ex.hint(1)"],
}
"""What each simulated learner types after running the notebook: learner01 finishes exercise 1 (after reading
the solution), learner02 is stuck on it (three different wrong answers) and read hint tier 2."""


def _room(homes: list[pathlib.Path], seen: dict) -> None:
    """What an instructor's `pavlovlab progress HOMES --names` prints, with the learners' progress files
    (mtime and bytes) just before and just after it."""
    from pavlovlab.teach import cli

    files = lambda: {str(p): (p.stat().st_mtime_ns, p.read_bytes())  # noqa: E731
                     for h in homes for p in sorted(h.rglob(".pavlovlab_progress.json"))}
    seen["before"] = files()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        seen["code"] = cli.main(["progress", *map(str, homes), "--names"])
    seen["table"], seen["after"] = out.getvalue(), files()


def _expected_cells() -> tuple[int, int]:
    """Code cells of the learner copy and, among them, the stubs (tagged raises-exception), read here
    from the course notebook without the solution cells (independently of the code under test)."""
    nb = nbformat.read(ROOT / "course" / NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and "solution" not in c.metadata.get("tags", [])]
    return len(code), sum("raises-exception" in c.metadata.get("tags", []) for c in code)


@pytest.mark.slow
def test_two_learners_pull_and_run_a_notebook_on_a_local_hub(hub_benchmark):
    bench = hub_benchmark
    link = _deploy_link()
    proxy = bench.find_proxy(install=True)
    if proxy is None:
        pytest.skip("configurable-http-proxy is not on PATH and `npm install configurable-http-proxy@5.3.0` failed")
    seen: dict = {}
    run = bench.run_workshop(2, NOTEBOOK, threads=1, proxy=proxy, cell_timeout=CELL_HANG_S,
                             branch=link["branch"], pulls=2, extra_cells=AFTER_THE_NOTEBOOK,
                             on_homes=lambda homes: _room(homes, seen))
    n_code, n_stubs = _expected_cells()
    for x in run.per_learner:
        assert not x.problem, f"{x.name}: {x.problem}"
        assert x.pulls == 2, f"{x.name}: the second click on the nbgitpuller link failed"
        assert x.cells == n_code + len(AFTER_THE_NOTEBOOK[x.name]), (x.name, x.cells, n_code)
        assert x.stub_errors == n_stubs and not x.other_errors, (x.name, x.stub_errors, x.other_errors)
        assert not x.died
        assert 0.05 < x.kernel_peak_gb < 1.0, (x.name, x.kernel_peak_gb)
        assert 0 < x.server_s < x.pulled_s < x.finish_s
    # the instructor's view of these two learners, read from their homes on the hub (one file each, untouched)
    assert seen["code"] == 0 and len(seen["before"]) == 2 and seen["after"] == seen["before"], seen
    row = next(ln for ln in seen["table"].splitlines() if ln.split()[:2] == ["00_start_here", "1"]).split()
    # finished, stuck, tried, not started; hint tier 2 the deepest of one of two; one solution read; who is stuck
    assert row[2:6] == ["1", "1", "0", "0"] and " ".join(row[6:10]) == "tier 2 (1 of", row
    assert row[-2:] == ["1", "learner02"], row
    assert "2 of 2 learner(s) with a readable progress file" in seen["table"] and "Not read" not in seen["table"]
    assert run.deaths == 0
    assert run.leftover_pids == [], f"processes left running: {run.leftover_pids}"
    assert len(run.workdirs) == 2 and not any(pathlib.Path(d).exists() for d in run.workdirs), run.workdirs
