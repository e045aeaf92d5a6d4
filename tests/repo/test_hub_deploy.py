"""deploy/: the TLJH and Z2JH recipes agree with each other, with the pins, with the nbgitpuller link and
with the memory that benchmarks/hub.py measured (benchmarks/hub_results.json)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import urllib.parse

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
RELEASE = "v0.2.0"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")


def _gigabytes(size: str) -> float:
    """A JupyterHub memory size (``1.1G``, ``512M``; K/M/G are powers of 1024 there) in GiB, the unit of
    the measurements."""
    m = re.fullmatch(r"([\d.]+)([KMG])", str(size).strip())
    assert m, f"{size!r}: JupyterHub (KubeSpawner, SystemdSpawner) reads only K, M, G, T suffixes"
    return float(m.group(1)) * {"K": 2**-20, "M": 2**-10, "G": 1.0}[m.group(2)]


def _link() -> tuple[str, dict[str, str]]:
    text = (DEPLOY / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"https://\S+/hub/user-redirect/git-pull\?[^\s`)]+", text)
    assert links, "deploy/README.md gives no nbgitpuller link"
    assert len(set(links)) == 1, f"deploy/README.md gives different links: {set(links)}"
    return links[0], dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(links[0]).query))


def _pin(text: str, name: str) -> str:
    m = re.search(rf"^{name}==(\S+)", text, re.M) or re.search(rf"{name}==([\w.]+)", text)
    assert m, name
    return m.group(1)


def test_link_opens_the_learner_copies_of_the_release_on_a_branch():
    link, q = _link()
    assert q["repo"] == "https://github.com/pavlovlab/pavlovlab"
    # nbgitpuller needs a branch: a tag pulls once, then every later click fails (`git diff ..origin/<tag>`)
    assert q["branch"] != RELEASE and RELEASE in q["branch"], q["branch"]
    assert q["urlpath"] == f"lab/tree/{q['targetpath']}/student/00_start_here.ipynb", q
    assert (ROOT / "course" / "00_start_here.ipynb").is_file()
    guide = (ROOT / "course" / "INSTRUCTOR_GUIDE.md").read_text(encoding="utf-8")
    assert link in guide, "the guide must hand out the same link as deploy/README.md"


def test_same_release_everywhere():
    cfg = yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())
    assert cfg["singleuser"]["image"]["tag"] == RELEASE
    for f in (DEPLOY / "z2jh" / "Dockerfile", DEPLOY / "tljh" / "setup.sh"):
        assert f"--branch {RELEASE}" in f.read_text(), f


def test_nbgitpuller_pinned_the_same_everywhere():
    pin = _pin((DEPLOY / "requirements-hub.txt").read_text(), "nbgitpuller")
    for f in (DEPLOY / "z2jh" / "Dockerfile", DEPLOY / "tljh" / "setup.sh"):
        assert _pin(f.read_text(), "nbgitpuller") == pin, f
    assert "binder/requirements.txt" in (DEPLOY / "z2jh" / "Dockerfile").read_text()


def test_thread_caps_in_every_recipe():
    from traitlets.config import Config

    c = Config()
    code = (DEPLOY / "tljh" / "jupyterhub_config.d" / "pavlovlab.py").read_text()
    exec(compile(code, "pavlovlab.py", "exec"), {"c": c})  # what TLJH does with jupyterhub_config.d/*.py
    env = dict(c.Spawner.environment.get_value({})) if hasattr(c.Spawner.environment, "get_value") \
        else dict(c.Spawner.environment)
    assert {k: env.get(k) for k in THREAD_VARS} == dict.fromkeys(THREAD_VARS, "1")
    z2jh = yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())["singleuser"]["extraEnv"]
    assert {k: z2jh.get(k) for k in THREAD_VARS} == dict.fromkeys(THREAD_VARS, "1")
    docker = (DEPLOY / "z2jh" / "Dockerfile").read_text()
    assert all(f"{k}=1" in docker for k in THREAD_VARS)
    bench = (ROOT / "benchmarks" / "hub.py").read_text()
    assert all(k in bench for k in THREAD_VARS), "the benchmark must cap the same variables"


def test_memory_settings_cover_the_measured_peaks():
    runs = json.loads((ROOT / "benchmarks" / "hub_results.json").read_text())
    assert runs, "no measured runs"
    # per learner: its kernel's peak RSS plus its share of (total PSS - hub overhead) beyond the kernels
    worst_kernel = max(x["kernel_peak_gb"] for r in runs for x in r["per_learner"] if not x["problem"])
    per_learner = max((r["peak_total_pss_gb"] - r["hub_overhead_gb"]) / r["learners"] for r in runs)
    # every notebook's single-kernel peak (benchmarks/notebooks.py) and the largest server seen on the hub
    peaks = json.loads((ROOT / "benchmarks" / "hub_kernel_peaks.json").read_text())["peak_gb"]
    servers = [r["server_peak_gb"] for r in runs if r.get("server_peak_gb", float("nan")) > 0]
    assert servers, "no run recorded a server's memory"
    worst_kernel = max(worst_kernel, *peaks.values())
    cfg = yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())["singleuser"]
    guarantee, limit = _gigabytes(cfg["memory"]["guarantee"]), _gigabytes(cfg["memory"]["limit"])
    assert guarantee >= per_learner and guarantee >= worst_kernel + max(servers), (guarantee, worst_kernel, servers)
    two_worst = sum(sorted(peaks.values())[-2:])
    assert limit >= two_worst + max(servers), "two notebooks left open at their peaks must fit under the limit"
    setup = (DEPLOY / "tljh" / "setup.sh").read_text()
    tljh_limit = re.search(r'MEM_LIMIT="\$\{MEM_LIMIT:-(\w+)\}"', setup).group(1)
    assert _gigabytes(tljh_limit) == limit
    assert float(cfg["cpu"]["limit"]) == 1.0  # one thread per learner


def test_tljh_setup_script_installs_into_the_user_environment_only():
    script = DEPLOY / "tljh" / "setup.sh"
    assert os.access(script, os.X_OK)
    subprocess.run(["bash", "-n", str(script)], check=True)
    out = subprocess.run(["bash", str(script)], env={**os.environ, "DRY_RUN": "1"}, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pips = [ln for ln in out.stdout.splitlines() if " pip install " in ln]
    assert len(pips) == 2 and all(ln.startswith("+ /opt/tljh/user/bin/python -m pip") for ln in pips), pips
    assert "binder/requirements.txt" in pips[0] and "nbgitpuller==" in pips[0]
    assert "/opt/tljh/hub" not in out.stdout
    assert "+ tljh-config set services.cull.timeout" in out.stdout


def test_measured_runs_cover_notebooks_03_and_05_at_4_8_12_learners():
    runs = json.loads((ROOT / "benchmarks" / "hub_results.json").read_text())
    sizes = {(r["notebook"][:2], r["learners"], r["threads"]) for r in runs}
    for nb in ("03", "05"):
        assert {(nb, n, 1) for n in (4, 8, 12)} <= sizes, sizes
    assert any(t is None for _, _, t in sizes), "the uncapped run is missing"
    assert all(r["leftover_pids"] == [] for r in runs)
