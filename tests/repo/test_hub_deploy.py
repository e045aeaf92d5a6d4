"""deploy/: the TLJH and Z2JH recipes agree with each other, with the pins, with the nbgitpuller link and
with the memory that benchmarks/hub.py measured (benchmarks/hub_results.json)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.parse

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
sys.path.insert(0, str(ROOT / "tools"))
import launch_links  # noqa: E402

RELEASE = launch_links.launch_ref()
"""The ref the recipes install and the link pulls: the release setting (main before the first release)."""
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
    assert q["branch"] == launch_links.puller_branch(RELEASE), q["branch"]
    assert RELEASE == "main" or q["branch"] == f"release-{RELEASE}"
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


@pytest.mark.parametrize("learners, notebooks, threads, runs", [
    ([2], ["03"], 1, [(2, "03", 1)]),                        # one configuration: nothing unasked beside it
    ([8], None, None, [(8, "03", None), (8, "05", None)]),   # --learners 8 --uncapped
    ([4, 12], ["05"], 2, [(4, "05", 2), (12, "05", 2)]),
])
def test_hub_benchmark_runs_only_what_was_asked(hub_benchmark, learners, notebooks, threads, runs):
    assert hub_benchmark.run_plan(learners, notebooks, threads) == runs


def test_hub_benchmark_default_plan_is_the_guides(hub_benchmark):
    plan = hub_benchmark.run_plan(None, None, 1)
    assert sorted(p for p in plan if p[2] == 1) == sorted((n, nb, 1) for nb in ("03", "05") for n in (4, 8, 12))
    assert [p for p in plan if p[2] is None] == [(8, "03", None)]
    assert plan.index((8, "03", None)) == plan.index((8, "03", 1)) + 1  # beside its capped twin: a similar load


# ------------------------------------------------------------------------------------ logins and HTTPS
def _z2jh() -> dict:
    return yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())


def test_z2jh_shared_password_logins_work_with_the_real_authenticator():
    """The chart's hub.config is plain JupyterHub configuration: load it into the JupyterHub this repository
    pins, with passwords as `helm --set` would add them, and log in as a learner and as the admin."""
    import importlib.metadata as md

    pytest.importorskip("jupyterhub", reason="jupyterhub is not installed (pip install -r deploy/requirements-hub.txt)")
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
    from traitlets.config import Config

    hub_config = _z2jh()["hub"]["config"]
    name = hub_config["JupyterHub"]["authenticator_class"]
    found = [e for e in md.entry_points(group="jupyterhub.authenticators") if e.name == name]
    assert found and found[0].load() is SharedPasswordAuthenticator, f"{name!r} is not JupyterHub's shared password"
    assert not any("password" in k for k in hub_config["SharedPasswordAuthenticator"]), \
        "passwords belong on the helm command line, not in the committed values"
    text = (DEPLOY / "z2jh" / "config.yaml").read_text()
    assert "--set hub.config.SharedPasswordAuthenticator.user_password=" in text
    config = Config(json.loads(json.dumps(hub_config)))
    config.SharedPasswordAuthenticator.user_password = "learners-2026"
    config.SharedPasswordAuthenticator.admin_password = "an-admin-password-of-32-characters!"
    auth = SharedPasswordAuthenticator(config=config)
    traits = set(auth.trait_names())
    for section in ("SharedPasswordAuthenticator", "Authenticator"):
        unknown = set(hub_config[section]) - traits
        assert not unknown, f"hub.config.{section}: no such setting {unknown}"
    admins = hub_config["SharedPasswordAuthenticator"]["admin_users"]
    assert admins and auth.admin_users == set(admins) and auth.allow_all

    def login(name, password):
        # in a thread of its own: after the Playwright tests this thread may already run an event loop
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, auth.get_authenticated_user(
                None, {"username": name, "password": password})).result()

    learner = login("learner17", "learners-2026")
    assert learner and learner["name"] == "learner17" and not learner.get("admin")
    assert login("learner17", "wrong-password") is None
    admin = login(admins[0], "an-admin-password-of-32-characters!")
    assert admin and admin["admin"] is True
    assert login(admins[0], "learners-2026") is None  # an admin name never logs in with the learners' password


def test_z2jh_https_is_lets_encrypt_and_cull_and_limits_are_kept():
    cfg = _z2jh()
    https = cfg["proxy"]["https"]
    assert https["enabled"] is True and https["hosts"] and "@" in https["letsencrypt"]["contactEmail"]
    assert cfg["cull"]["enabled"] is True and int(cfg["cull"]["timeout"]) >= 3600
    assert cfg["singleuser"]["memory"]["limit"] and float(cfg["singleuser"]["cpu"]["limit"]) == 1.0


def _tljh_dry_run(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(DEPLOY / "tljh" / "setup.sh")], env={**os.environ, "DRY_RUN": "1", **env},
                          capture_output=True, text=True, timeout=60)


def test_tljh_logins_admins_and_https():
    out = _tljh_dry_run(ADMINS="alice,bob", HTTPS_DOMAIN="hub.example.org", HTTPS_EMAIL="me@example.org")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    want = ["+ tljh-config set auth.type firstuseauthenticator.FirstUseAuthenticator",
            "+ tljh-config add-item users.admin alice", "+ tljh-config add-item users.admin bob",
            "+ tljh-config set https.enabled true", "+ tljh-config set https.letsencrypt.email me@example.org",
            "+ tljh-config add-item https.letsencrypt.domains hub.example.org"]
    for line in want:
        assert line in lines, line
    # settings come before the reload that applies them; cull and limits are still set
    reload = lines.index("+ tljh-config reload hub")
    assert all(lines.index(line) < reload for line in want)
    assert "+ tljh-config set services.cull.timeout 7200" in lines and "+ tljh-config set limits.memory 2G" in lines
    plain = _tljh_dry_run()
    assert plain.returncode == 0 and "users.admin" not in plain.stdout and "https." not in plain.stdout
    assert "auth.type" not in _tljh_dry_run(AUTH="keep").stdout


@pytest.mark.parametrize("env, message", [({"AUTH": "github"}, "AUTH must be"),
                                          ({"HTTPS_DOMAIN": "hub.example.org"}, "HTTPS needs both")])
def test_tljh_refuses_incomplete_login_settings(env, message):
    out = _tljh_dry_run(**env)
    assert out.returncode == 1 and message in out.stderr and "tljh-config" not in out.stdout


# ------------------------------------------------------------------------------- TLJH's Python, Z2JH's chart
def test_tljh_names_the_release_whose_user_environment_has_python_3_11(tmp_path):
    """An old user environment is refused before anything is installed, with the TLJH release that fixes it."""
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert "TLJH 2.0.0b1 or later" in readme and "Python 3.12" in readme
    fake = tmp_path / "user" / "bin" / "python"  # a TLJH 1.x user environment: Python 3.10
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\ncase "$1" in -c) exit 1;; -V) echo "Python 3.10.12";; *) exit 3;; esac\n')
    fake.chmod(0o755)
    out = subprocess.run(["bash", str(DEPLOY / "tljh" / "setup.sh")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "DRY_RUN": "0", "USER_ENV": str(tmp_path / "user"),
                              "TLJH_CONFIG_D": str(tmp_path / "config")})
    assert out.returncode == 1, out.stderr
    assert "Python 3.10.12" in out.stderr and "TLJH 2.0.0b1 or later" in out.stderr, out.stderr
    assert "+ " not in out.stdout and not (tmp_path / "config").exists()


def _chart_version() -> str:
    """The chart version that deploy/README.md's `helm upgrade` names (the recipe's pin)."""
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    m = re.search(r"helm upgrade --install pavlovlab jupyterhub/jupyterhub --version (\S+)", readme)
    assert m, "deploy/README.md must install the chart at a pinned --version"
    return m.group(1)


def test_z2jh_recipe_names_every_step_and_one_chart_version():
    version = _chart_version()
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    z2jh = readme[readme.index("## Zero to JupyterHub"):readme.index("## Checked here")]
    assert "helm repo add jupyterhub https://hub.jupyter.org/helm-chart/" in z2jh and "helm repo update" in z2jh
    assert "z2jh.jupyter.org" in z2jh and "clusters create" in z2jh  # where the cluster comes from
    assert "docker build" in z2jh and "docker push" in z2jh and "--values deploy/z2jh/config.yaml" in z2jh
    for text in (z2jh, (DEPLOY / "z2jh" / "config.yaml").read_text(encoding="utf-8")):
        helm = re.findall(r"helm (?:upgrade|install|show \w+|pull|template)\b[^\n]*(?:\\\n[^\n]*)*", text)
        assert helm and all(f"--version {version}" in cmd for cmd in helm), helm
    assert f"chart **{version}**" in z2jh


def _gke_reserved_gib(memory_gib: float) -> float:
    """Memory a GKE node keeps for the system: 25 % of the first 4 GiB, 20 % of the next 4, 10 % of the next 8,
    6 % of the next 112, 2 % above, plus the 100 MiB eviction threshold (Google's documented rule)."""
    tiers = [(4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06), (float("inf"), 0.02)]
    left, reserved = memory_gib, 0.1
    for size, share in tiers:
        reserved += min(left, size) * share
        left -= min(left, size)
    return reserved


def test_z2jh_node_arithmetic_follows_from_the_values():
    cfg = yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())
    guarantee = _gigabytes(cfg["singleuser"]["memory"]["guarantee"])
    placeholders = cfg["scheduling"]["userPlaceholder"]["replicas"]
    node, system = 16.0, 0.5
    reserved = _gke_reserved_gib(node)
    per_node = int((node - reserved - system) // guarantee)
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert f"| − {reserved:.1f} |" in readme and f"| − {system:.1f} |" in readme
    assert f"| {node - reserved - system:.1f} |" in readme
    assert f"**{per_node} learners per node**" in readme
    nodes, with_placeholders = -(-30 // per_node), -(-(30 + placeholders) // per_node)
    assert f"⌈30 / {per_node}⌉ = **{nodes} nodes**" in readme
    assert f"⌈{30 + placeholders} / {per_node}⌉ = **{with_placeholders} nodes**" in readme
    assert f"--max-nodes {with_placeholders}" in readme
    guide = (ROOT / "course" / "INSTRUCTOR_GUIDE.md").read_text(encoding="utf-8")
    assert f"hold {per_node} learners by memory guarantee" in guide and f"{nodes} nodes for 30" in guide


def _chart_archive(version: str) -> pathlib.Path | None:
    """The pinned chart's archive: ``$PAVLOVLAB_Z2JH_CHART``, or ``~/.cache/pavlovlab-hub/jupyterhub-<version>.tgz``
    (``helm pull jupyterhub/jupyterhub --version <version>`` puts it there), else None."""
    explicit = os.environ.get("PAVLOVLAB_Z2JH_CHART")
    if explicit:
        return pathlib.Path(explicit)
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "pavlovlab-hub"
    found = cache / f"jupyterhub-{version}.tgz"
    return found if found.is_file() else None


def _merged(defaults: dict, values: dict) -> dict:
    """Helm's merge of user values over a chart's defaults: maps merged key by key, anything else replaced."""
    out = dict(defaults)
    for key, value in values.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def schema_errors(archive: pathlib.Path, values: dict) -> list[str]:
    """What the chart's ``values.schema.json`` says about ``values`` merged over the chart's ``values.yaml``
    (what Helm checks before it installs), one line per error; empty when the values are valid."""
    import tarfile

    import jsonschema

    with tarfile.open(archive) as tar:
        names = {pathlib.PurePosixPath(m.name).name: m for m in tar.getmembers()
                 if len(pathlib.PurePosixPath(m.name).parts) == 2}
        schema = json.load(tar.extractfile(names["values.schema.json"]))
        defaults = yaml.safe_load(tar.extractfile(names["values.yaml"])) or {}
    validator = jsonschema.validators.validator_for(schema)(schema)
    merged = _merged(defaults, values)
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(merged)]


def _values_as_installed() -> dict:
    values = _z2jh()
    values["hub"]["config"]["SharedPasswordAuthenticator"].update(
        user_password="learners-2026", admin_password="an-admin-password-of-32-characters!")  # helm --set
    return values


def test_z2jh_values_validate_against_the_pinned_charts_schema():
    version = _chart_version()
    archive = _chart_archive(version)
    if archive is None:
        pytest.skip(f"the jupyterhub chart {version} is not at hand (no network to its repository here): "
                    f"`helm pull jupyterhub/jupyterhub --version {version}` into ~/.cache/pavlovlab-hub/, or set "
                    "PAVLOVLAB_Z2JH_CHART to its .tgz")
    assert archive.name == f"jupyterhub-{version}.tgz", f"{archive} is not the pinned chart {version}"
    assert schema_errors(archive, _values_as_installed()) == []


def test_schema_check_catches_a_misspelt_key(tmp_path):
    """The check above can fail: a chart whose schema (like the real one) refuses unknown keys rejects a typo."""
    import io
    import tarfile

    schema = {"type": "object", "additionalProperties": False, "properties": {
        "singleuser": {"type": "object", "additionalProperties": False, "properties": {
            "memory": {"type": "object", "additionalProperties": False,
                       "properties": {"guarantee": {"type": ["string", "null"]}, "limit": {}}}}}}}
    archive = tmp_path / "jupyterhub-0.0.0.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in (("values.schema.json", json.dumps(schema)),
                           ("values.yaml", "singleuser:\n  memory:\n    guarantee:\n    limit:\n")):
            data = text.encode()
            info = tarfile.TarInfo(f"jupyterhub/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert schema_errors(archive, {"singleuser": {"memory": {"guarantee": "1.1G"}}}) == []
    errors = schema_errors(archive, {"singleuser": {"memory": {"guarentee": "1.1G"}}})
    assert len(errors) == 1 and "singleuser.memory" in errors[0] and "guarentee" in errors[0], errors
