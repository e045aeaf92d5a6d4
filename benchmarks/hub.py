"""A workshop on a real (local) JupyterHub: N simulated learners at once, measured.

    python benchmarks/hub.py                                  # the guide's plan: N = 4, 8, 12 on notebooks 03 and 05,
                                                              # then 8 learners on 03 without thread caps
    python benchmarks/hub.py --learners 4 --notebooks 03      # only that: 4 learners on 03, capped
    python benchmarks/hub.py --learners 8 --uncapped          # only that: 8 learners on 03 and 05, uncapped
    python benchmarks/hub.py --json benchmarks/hub_results.json   # append every run's full result
    python benchmarks/hub.py --table benchmarks/hub_results.json  # the guide's markdown table from stored runs

Needs ``pip install -r deploy/requirements-hub.txt`` (jupyterhub, nbgitpuller) and npm (for the proxy).

What one run does, all on 127.0.0.1:

1. builds a local git repository of the course (``course/`` and the learner copies ``student/`` made by
   ``pavlovlab.teach.student``), served to nbgitpuller as a ``file://`` URL: nothing leaves the machine;
2. starts ``jupyterhub`` (pip) with its ``configurable-http-proxy`` (npm, installed on first use into
   ``$XDG_CACHE_HOME/pavlovlab-hub``), the ``DummyAuthenticator`` and the ``SimpleLocalProcessSpawner``:
   every learner's server runs as the current user in its own temporary home folder (no system users
   are created), with the single-user environment of this venv (nbgitpuller and the pinned course
   requirements, ``pavlovlab`` on ``PYTHONPATH``);
3. for every learner at once: asks the hub's REST API for a server, waits until it is ready, pulls the
   course through nbgitpuller (the ``git-pull`` endpoint that an nbgitpuller link opens), reads the learner
   copy of the notebook through the contents API, starts a kernel and executes every code cell through
   the kernel protocol (websocket), continuing past the exercise stubs' expected ``NotImplementedError``;
4. samples every process the hub started (hub, proxy, servers, kernels) every 0.5 s: resident memory
   (RSS) per kernel and of the largest server, total RSS, total PSS (shared library pages counted once;
   every 2 s) and CPU seconds; a kernel that restarts, dies or drops its websocket counts as a death;
5. stops every server, the proxy and the hub, ends any process of that tree still alive (by pid) and
   removes the temporary homes, repository and database.

Threads: by default every learner's server gets ``OMP_NUM_THREADS=1`` (and the MKL/OpenBLAS/NumExpr
equivalents) through the spawner's environment, so a kernel uses one core; ``--uncapped`` leaves them out.
The machine's load (``os.getloadavg``) is recorded next to every run: on a shared machine it says how
much of the wall time is someone else's.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import psutil

from pavlovlab.teach.student import atomic_write

ROOT = pathlib.Path(__file__).resolve().parents[1]
VENV_BIN = pathlib.Path(sys.executable).parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
CHP_PACKAGE = "configurable-http-proxy@5.3.0"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS")
TARGET = "pavlovlab"  # the folder nbgitpuller clones into, in each learner's home
NOTEBOOKS = {p.name[:2]: p.name for p in sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb"))}


def cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "pavlovlab-hub"


def find_proxy(install: bool = True) -> str | None:
    """The ``configurable-http-proxy`` command: ``$PAVLOVLAB_CHP``, then ``PATH``, then the cache folder;
    when none is found and ``install``, ``npm install`` it into the cache folder. None if impossible."""
    explicit = os.environ.get("PAVLOVLAB_CHP")
    if explicit and pathlib.Path(explicit).is_file():
        return explicit
    on_path = shutil.which("configurable-http-proxy")
    if on_path:
        return on_path
    local = cache_dir() / "node_modules" / ".bin" / "configurable-http-proxy"
    if local.is_file():
        return str(local)
    if not install or not shutil.which("npm"):
        return None
    cache_dir().mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(cache_dir()),
                        CHP_PACKAGE], check=True, capture_output=True, timeout=300)
    except (subprocess.SubprocessError, OSError):
        return None
    return str(local) if local.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_course_repo(dest: pathlib.Path, notebooks: list[str], branch: str = "main") -> str:
    """A bare git repository (one branch, ``branch``) holding ``course/`` and the learner copies ``student/``
    of ``notebooks``; returns its ``file://`` URL for nbgitpuller."""
    from pavlovlab.teach.student import make_student_copies

    src = dest / "src"
    (src / "course").mkdir(parents=True)
    for name in notebooks:
        shutil.copy2(ROOT / "course" / name, src / "course" / name)
    make_student_copies(src / "course", src / "student")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=src, check=True)
    subprocess.run([*git, "add", "."], cwd=src, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "course"], cwd=src, check=True)
    subprocess.run([*git, "branch", "-q", "-M", branch], cwd=src, check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(dest / "course.git")], check=True)
    return (dest / "course.git").as_uri()


def nbgitpuller_link(hub_url: str, repo: str, branch: str, urlpath: str, targetpath: str = TARGET) -> str:
    """The link a learner clicks: ``<hub>/hub/user-redirect/git-pull?repo=...&branch=...&urlpath=...``."""
    query = urllib.parse.urlencode({"repo": repo, "branch": branch, "targetpath": targetpath, "urlpath": urlpath})
    return f"{hub_url}/hub/user-redirect/git-pull?{query}"


# ------------------------------------------------------------------------------------------- sampling
class Sampler(threading.Thread):
    """Every ``period`` s: RSS of every process under the hub, per kernel (by kernel id), total RSS,
    total PSS (every 4th sample), last CPU seconds seen per pid, and the 1-min load average."""

    def __init__(self, root_pid: int, period: float = 0.5):
        super().__init__(daemon=True)
        self.root_pid, self.period = root_pid, period
        self.stop_event = threading.Event()
        self.kernel_peak: dict[str, float] = {}
        self.kernel_pid: dict[str, int] = {}
        self.cpu: dict[int, float] = {}
        self.pids: set[int] = set()
        self.peak_rss = self.peak_pss = 0.0
        self.server_peak = 0.0  # the largest single-user server (jupyterhub-singleuser + JupyterLab), GB RSS
        self.load_max = 0.0
        self._cmd: dict[int, str] = {}

    def procs(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.root_pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def run(self) -> None:
        i = 0
        while not self.stop_event.is_set():
            total_rss = total_pss = 0.0
            for p in self.procs():
                try:
                    with p.oneshot():
                        rss = p.memory_info().rss / 2**30
                        t = p.cpu_times()
                        # read every time: a kernel is forked by its server and shows the server's command line
                        # until it execs, so a command line remembered from the first sample can be the server's
                        self._cmd[p.pid] = " ".join(p.cmdline())
                        if i % 4 == 0:
                            total_pss += p.memory_full_info().pss / 2**30
                except psutil.Error:
                    continue
                self.pids.add(p.pid)
                self.cpu[p.pid] = t.user + t.system + t.children_user + t.children_system
                total_rss += rss
                cmd = self._cmd[p.pid]
                if "jupyterhub-singleuser" in cmd:
                    self.server_peak = max(self.server_peak, rss)
                if "kernel-" in cmd and ".json" in cmd:
                    kid = cmd.split("kernel-", 1)[1].split(".json", 1)[0]
                    self.kernel_pid[kid] = p.pid
                    self.kernel_peak[kid] = max(self.kernel_peak.get(kid, 0.0), rss)
            self.peak_rss = max(self.peak_rss, total_rss)
            if i % 4 == 0:
                self.peak_pss = max(self.peak_pss, total_pss)
            self.load_max = max(self.load_max, os.getloadavg()[0])
            i += 1
            self.stop_event.wait(self.period)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=10)


# ------------------------------------------------------------------------------------------------ hub
class LocalHub:
    """A JupyterHub on 127.0.0.1 in a temporary folder; ``with LocalHub(...) as hub:`` starts and stops it."""

    def __init__(self, proxy: str, threads: int | None = 1, workdir: pathlib.Path | None = None):
        self.proxy, self.threads = proxy, threads
        self.own_workdir = workdir is None
        self.workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="pavlovlab-hub-"))
        self.token = secrets.token_hex(32)
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.sampler: Sampler | None = None
        self.users: list[str] = []

    def config(self) -> str:
        env = {"PYTHONPATH": str(ROOT)}
        if self.threads is not None:
            env.update({v: str(self.threads) for v in THREAD_VARS})
        args = ["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []
        w = self.workdir
        return f"""
c = get_config()  # noqa
c.JupyterHub.bind_url = "{self.url}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{self.hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{self.api_port}"
c.ConfigurableHTTPProxy.command = [{self.proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {str(w / 'proxy.pid')!r}
c.JupyterHub.db_url = "sqlite:///{w / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(w / 'cookie_secret')!r}
c.JupyterHub.pid_file = {str(w / 'hub.pid')!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = {str(w / 'home' / '{username}')!r}
c.Spawner.cmd = [{str(VENV_BIN / 'jupyterhub-singleuser')!r}]
c.Spawner.args = {args!r}
c.Spawner.ip = "127.0.0.1"
c.Spawner.environment = {env!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 600
c.Spawner.http_timeout = 600
c.JupyterHub.services = [{{"name": "bench", "api_token": {self.token!r}}}]
c.JupyterHub.load_roles = [{{"name": "bench", "services": ["bench"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]}}]
"""

    def __enter__(self) -> LocalHub:
        (self.workdir / "home").mkdir(parents=True, exist_ok=True)
        cfg = self.workdir / "jupyterhub_config.py"
        cfg.write_text(self.config())
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
        env["PATH"] = f"{VENV_BIN}:{env.get('PATH', '')}"
        self.log = open(self.workdir / "hub.log", "wb")
        self.process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(cfg)], cwd=self.workdir,
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.sampler = Sampler(self.process.pid)
        self.sampler.start()
        import urllib.request
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                self.__exit__(None, None, None)
                raise RuntimeError("jupyterhub exited at start; see its log")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/api/", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError("jupyterhub did not answer within 120 s")
            time.sleep(0.5)
        return self

    def log_tail(self, n: int = 4000) -> str:
        with contextlib.suppress(OSError):
            return (self.workdir / "hub.log").read_text(errors="replace")[-n:]
        return ""

    def __exit__(self, *exc) -> None:
        """Stop the servers (through the API), then the hub and its proxy; end survivors by pid; clean up."""
        if self.process is not None and self.process.poll() is None:
            import urllib.request
            for name in self.users:
                req = urllib.request.Request(f"{self.url}/hub/api/users/{name}/server", method="DELETE",
                                             headers={"Authorization": f"token {self.token}"})
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(req, timeout=30).close()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.sampler is not None:
            self.sampler.stop()
            started = self.sampler.pids - {self.process.pid if self.process else -1}
            for pid in started:
                with contextlib.suppress(psutil.Error):
                    p = psutil.Process(pid)
                    # only a process that is still one of ours (same command line as when sampled)
                    if " ".join(p.cmdline()) == self.sampler._cmd.get(pid):
                        p.kill()
        if hasattr(self, "log"):
            self.log.close()
        if self.own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def leftover_pids(self) -> list[int]:
        """Pids sampled under this hub that are still alive with the same command line (should be none)."""
        alive = []
        for pid, cmd in (self.sampler._cmd.items() if self.sampler else []):
            with contextlib.suppress(psutil.Error):
                if " ".join(psutil.Process(pid).cmdline()) == cmd:
                    alive.append(pid)
        return alive


# -------------------------------------------------------------------------------------------- learner
@dataclass
class LearnerResult:
    name: str
    server_s: float = float("nan")      # spawn request -> server ready
    pulled_s: float = float("nan")      # ... -> nbgitpuller finished
    finish_s: float = float("nan")      # ... -> last cell executed
    run_s: float = float("nan")         # kernel start -> last cell executed
    cells: int = 0
    stub_errors: int = 0                # the exercise stubs' expected NotImplementedError
    other_errors: list[str] = field(default_factory=list)
    died: bool = False
    kernel_id: str = ""
    kernel_peak_gb: float = float("nan")
    problem: str = ""
    pulls: int = 0                      # nbgitpuller pulls that finished


class Client:
    """Async HTTP + websocket calls to the hub and to the learners' servers (service token)."""

    def __init__(self, hub: LocalHub):
        from tornado.httpclient import AsyncHTTPClient
        AsyncHTTPClient.configure(None, max_clients=200)
        self.http = AsyncHTTPClient()
        self.hub = hub
        self.headers = {"Authorization": f"token {hub.token}"}

    async def call(self, method: str, url: str, body=None, timeout: float = 600, **kw):
        from tornado.httpclient import HTTPRequest
        req = HTTPRequest(url, method=method, headers=self.headers, request_timeout=timeout,
                          body=None if body is None else json.dumps(body),
                          allow_nonstandard_methods=True, **kw)
        resp = await self.http.fetch(req, raise_error=False)
        if resp.code >= 400 or resp.code == 599:
            raise RuntimeError(f"{method} {url} -> {resp.code} {resp.body[:300] if resp.body else resp.error}")
        return json.loads(resp.body) if resp.body and resp.headers.get("Content-Type", "").startswith(
            "application/json") else resp.body

    async def api(self, method: str, path: str, body=None, **kw):
        return await self.call(method, f"{self.hub.url}/hub/api{path}", body, **kw)


def _msg(session: str, code: str) -> dict:
    return {"header": {"msg_id": uuid.uuid4().hex, "username": "learner", "session": session,
                       "msg_type": "execute_request", "version": "5.3",
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": False}}


async def execute_cells(client: Client, base: str, kernel_id: str, sources: list[str], res: LearnerResult,
                        cell_timeout: float) -> None:
    """Run ``sources`` one after another in the kernel over its websocket; record errors and deaths."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect
    ws_url = base.replace("http://", "ws://") + f"/api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(ws_url, headers=client.headers, request_timeout=120),
                                 max_message_size=256 * 2**20)
    session = uuid.uuid4().hex
    try:
        for code in sources:
            msg = _msg(session, code)
            mid = msg["header"]["msg_id"]
            await ws.write_message(json.dumps(msg))
            replied = idle = False
            deadline = time.monotonic() + cell_timeout
            while not (replied and idle):
                raw = await asyncio.wait_for(ws.read_message(), timeout=max(1.0, deadline - time.monotonic()))
                if raw is None:
                    res.died, res.problem = True, "kernel websocket closed"
                    return
                m = json.loads(raw)
                if m.get("msg_type") == "status" and m["content"].get("execution_state") in ("restarting", "dead"):
                    res.died, res.problem = True, f"kernel {m['content']['execution_state']}"
                    return
                if m.get("parent_header", {}).get("msg_id") != mid:
                    continue
                if m.get("msg_type") == "execute_reply":
                    replied = True
                    c = m["content"]
                    if c.get("status") == "error":
                        if c.get("ename") == "NotImplementedError":
                            res.stub_errors += 1
                        else:
                            res.other_errors.append(f"{c.get('ename')}: {c.get('evalue', '')[:120]}")
                elif m.get("msg_type") == "status" and m["content"].get("execution_state") == "idle":
                    idle = True
            res.cells += 1
    finally:
        ws.close()


async def learner(client: Client, name: str, repo: str, notebook: str, t0: float, cell_timeout: float,
                  branch: str = "main", pulls: int = 1, extra: Sequence[str] = ()) -> LearnerResult:
    """One learner: server, nbgitpuller pull, the learner copy of ``notebook`` executed cell by cell, then the
    cells ``extra`` (what this learner types afterwards, e.g. an answer to an exercise)."""
    res = LearnerResult(name)
    base = f"{client.hub.url}/user/{name}"
    try:
        await client.api("POST", f"/users/{name}/server")
        deadline = time.monotonic() + 600
        while not (await client.api("GET", f"/users/{name}"))["servers"].get("", {}).get("ready"):
            if time.monotonic() > deadline:
                raise RuntimeError("server not ready within 600 s")
            await asyncio.sleep(0.5)
        res.server_s = time.perf_counter() - t0
        # What the nbgitpuller link's page does: an event stream from git-pull/api until "finished".
        events: list[dict] = []

        def on_chunk(chunk: bytes) -> None:
            for line in chunk.decode(errors="replace").splitlines():
                if line.startswith("data: "):
                    with contextlib.suppress(ValueError):
                        events.append(json.loads(line[6:]))
        q = urllib.parse.urlencode({"repo": repo, "branch": branch, "targetpath": TARGET})
        for _ in range(pulls):  # pulls=2: the learner clicks the link a second time (pull into an existing clone)
            events.clear()
            await client.call("GET", f"{base}/git-pull/api?{q}", streaming_callback=on_chunk)
            if not events or events[-1].get("phase") != "finished":
                raise RuntimeError(f"nbgitpuller did not finish: {events[-1:] or 'no event'}")
            if res.pulled_s != res.pulled_s:
                res.pulled_s = time.perf_counter() - t0
        res.pulls = pulls
        rel = f"{TARGET}/student/{notebook}"
        nb = (await client.call("GET", f"{base}/api/contents/{rel}?content=1"))["content"]
        sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                   for c in nb["cells"] if c["cell_type"] == "code"]
        kernel = await client.call("POST", f"{base}/api/kernels", {"name": "python3", "path": f"{TARGET}/student"})
        res.kernel_id = kernel["id"]
        t_run = time.perf_counter()
        await execute_cells(client, base, res.kernel_id, [*sources, *extra], res, cell_timeout)
        res.run_s = time.perf_counter() - t_run
        res.finish_s = time.perf_counter() - t0
    except Exception as e:
        res.problem = res.problem or f"{type(e).__name__}: {e}"[:300]
    return res


@dataclass
class RunResult:
    notebook: str
    learners: int
    threads: int | None
    load_before: tuple[float, float, float]
    load_max_1min: float
    load_after: tuple[float, float, float]
    wall_s: float
    hub_overhead_gb: float          # PSS of hub + proxy + idle servers, before any kernel
    peak_total_rss_gb: float
    peak_total_pss_gb: float
    cpu_s: float
    deaths: int
    per_learner: list[LearnerResult]
    leftover_pids: list[int]
    workdirs: list[str] = field(default_factory=list)   # the temporary folders it made (removed at the end)
    server_peak_gb: float = float("nan")                 # RSS of the largest single-user server, kernel excluded


async def _run(hub: LocalHub, names: list[str], repo: str, notebook: str, cell_timeout: float,
               branch: str = "main", pulls: int = 1, extra: Mapping[str, Sequence[str]] | None = None
               ) -> tuple[list[LearnerResult], float]:
    client = Client(hub)
    await client.api("POST", "/users", {"usernames": names})
    hub.users.extend(names)
    t0 = time.perf_counter()
    results = await asyncio.gather(*(learner(client, n, repo, notebook, t0, cell_timeout, branch, pulls,
                                             (extra or {}).get(n, ())) for n in names))
    return list(results), time.perf_counter() - t0


def idle_pss(sampler: Sampler) -> float:
    total = 0.0
    for p in sampler.procs():
        with contextlib.suppress(psutil.Error):
            total += p.memory_full_info().pss / 2**30
    return total


def run_workshop(n: int, notebook: str, threads: int | None = 1, proxy: str | None = None,
                 cell_timeout: float = 900, branch: str = "main", pulls: int = 1,
                 extra_cells: Mapping[str, Sequence[str]] | None = None,
                 on_homes: Callable[[list[pathlib.Path]], None] | None = None) -> RunResult:
    """Start a hub, run ``n`` learners on the learner copy of ``notebook`` at once, stop and clean up.

    ``branch``: the branch of the local course repository that the nbgitpuller link names; ``pulls``: how
    many times each learner pulls (2 = the link clicked again, a pull into the existing clone); ``extra_cells``:
    code each named learner (``learner01``, ...) runs after the notebook; ``on_homes``: called with the learners'
    home folders once they all finished, while their servers still run (the homes are removed at the end)."""
    proxy = proxy or find_proxy()
    if proxy is None:
        raise RuntimeError("configurable-http-proxy not found and npm could not install it")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="pavlovlab-course-") as tmp:
        repo = make_course_repo(pathlib.Path(tmp), [notebook], branch)
        hub = LocalHub(proxy, threads=threads)
        with hub:
            overhead = idle_pss(hub.sampler)
            names = [f"learner{i:02d}" for i in range(1, n + 1)]
            # asyncio.run in a thread of its own, so that it also works when the caller's thread already runs an
            # event loop (Playwright's sync API does, when the browser tests ran earlier in the same pytest session)
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                results, wall = pool.submit(asyncio.run, _run(hub, names, repo, notebook, cell_timeout, branch,
                                                              pulls, extra_cells)).result()
            if on_homes is not None:
                on_homes([hub.workdir / "home" / name for name in names])
            s = hub.sampler
            for r in results:
                r.kernel_peak_gb = s.kernel_peak.get(r.kernel_id, float("nan"))
                if r.kernel_id and r.kernel_id in s.kernel_pid and not psutil.pid_exists(s.kernel_pid[r.kernel_id]):
                    r.died = True
            time.sleep(1.0)  # one more sample of CPU times before the servers stop
            cpu = sum(s.cpu.values())
            peak_rss, peak_pss, load_max, server_peak = s.peak_rss, s.peak_pss, s.load_max, s.server_peak
            if any(r.problem for r in results):
                print(hub.log_tail(), file=sys.stderr)
        leftovers = hub.leftover_pids()
    return RunResult(notebook, n, threads, load_before, load_max, os.getloadavg(), wall, overhead, peak_rss,
                     peak_pss, cpu, sum(r.died for r in results), results, leftovers, [tmp, str(hub.workdir)],
                     server_peak)


def summary_line(r: RunResult) -> str:
    ok = [x for x in r.per_learner if not x.problem]
    srv = [x.server_s for x in ok]
    fin = [x.finish_s for x in ok]
    peak = [x.kernel_peak_gb for x in ok]
    fmt = lambda xs: f"{min(xs):6.1f}–{max(xs):6.1f}" if xs else "      –      "  # noqa: E731
    return (f"{r.notebook[:2]:>3s} {r.learners:3d} {r.threads or 'all'!s:>7s} {fmt(srv)} {fmt(fin)} "
            f"{max(peak) if peak else float('nan'):6.2f} {r.server_peak_gb:6.2f} {r.hub_overhead_gb:6.2f} "
            f"{r.peak_total_pss_gb:7.2f} "
            f"{r.peak_total_rss_gb:7.2f} {r.cpu_s:7.0f} {r.deaths:3d} {len(r.per_learner) - len(ok):4d} "
            f"{r.load_before[0]:5.2f} {r.load_max_1min:5.2f}")


HEADER = (f"{'nb':>3s} {'N':>3s} {'threads':>7s} {'server ready (s)':>13s} {'finished (s)':>13s} "
          f"{'kern GB':>6s} {'srv GB':>6s} {'hub GB':>6s} {'PSS GB':>7s} {'RSS GB':>7s} {'CPU s':>7s} {'die':>3s} "
          f"{'fail':>4s} "
          f"{'load0':>5s} {'loadM':>5s}")


def markdown_table(runs: list[dict]) -> str:
    """The guide's measured table from the stored runs (``--table FILE``)."""
    lines = ["| notebook | learners | threads per learner | load (1-min avg: before / highest) | time to a running "
             "server (s, min–max) | time to finish (s, min–max) | kernel peak RSS (GB, max) | total PSS (GB) "
             "| PSS per learner (GB) | total RSS (GB) | CPU (s) | CPU per learner (s) | kernel deaths |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        ok = [x for x in r["per_learner"] if not x["problem"]]
        srv = [x["server_s"] for x in ok]
        fin = [x["finish_s"] for x in ok]
        lines.append(
            f"| {r['notebook'][:2]} | {r['learners']} | {r['threads'] or 'uncapped'} | "
            f"{r['load_before'][0]:.1f} / {r['load_max_1min']:.1f} | {min(srv):.0f}–{max(srv):.0f} | "
            f"{min(fin):.0f}–{max(fin):.0f} | {max(x['kernel_peak_gb'] for x in ok):.2f} | "
            f"{r['peak_total_pss_gb']:.2f} | {(r['peak_total_pss_gb'] - r['hub_overhead_gb']) / r['learners']:.2f} | "
            f"{r['peak_total_rss_gb']:.2f} | {r['cpu_s']:.0f} | "
            f"{r['cpu_s'] / r['learners']:.1f} | {r['deaths']}"
            + (f" ({len(r['per_learner']) - len(ok)} failed)" if len(ok) < len(r["per_learner"]) else "") + " |")
    return "\n".join(lines)


DEFAULT_PLAN = ((4, 8, 12), ("03", "05"), 8)
"""The guide's measurements: these learner counts on these notebooks, capped at one thread, and one run of
this many learners on the first notebook without caps (beside the capped run of the same size)."""


def run_plan(learners: Sequence[int] | None, notebooks: Sequence[str] | None,
             threads: int | None) -> list[tuple[int, str, int | None]]:
    """The runs to make, as ``(learners, notebook, threads)``: exactly the configurations asked for (every
    learner count on every notebook, at ``threads``; None: uncapped), or the guide's plan
    (:data:`DEFAULT_PLAN`) when neither learner counts nor notebooks are given."""
    if learners is None and notebooks is None:
        counts, nbs, uncapped = DEFAULT_PLAN
        plan: list[tuple[int, str, int | None]] = [(n, nb, threads) for nb in nbs for n in counts]
        if threads is not None:  # right after the capped run of the same size: both see a similar load
            plan.insert(plan.index((uncapped, nbs[0], threads)) + 1, (uncapped, nbs[0], None))
        return plan
    counts = learners if learners is not None else DEFAULT_PLAN[0]
    nbs = notebooks if notebooks is not None else DEFAULT_PLAN[1]
    return [(n, nb, threads) for nb in nbs for n in counts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", metavar="N",
                        help="learners at once, one run per value (default: the guide's plan, see above)")
    parser.add_argument("--notebooks", nargs="+", choices=sorted(NOTEBOOKS), metavar="NB",
                        help="notebook numbers, one run per value (default: the guide's plan, see above)")
    parser.add_argument("--threads", type=int, default=1, help="threads per learner (OMP_NUM_THREADS etc.)")
    parser.add_argument("--uncapped", action="store_true",
                        help="leave the thread variables out (each kernel may use every core) instead of --threads")
    parser.add_argument("--json", type=pathlib.Path, help="append every run's full result to this JSON file")
    parser.add_argument("--table", type=pathlib.Path, help="only print the markdown table of a stored JSON file")
    args = parser.parse_args()
    if args.table:
        print(markdown_table(json.loads(args.table.read_text())))
        return
    import importlib.util
    missing = [m for m in ("jupyterhub", "nbgitpuller") if importlib.util.find_spec(m) is None]
    if missing:  # `make bench` runs every benchmark: say why this one does nothing, without failing
        print(f"hub benchmark skipped: {', '.join(missing)} not installed (pip install -r deploy/requirements-hub.txt)")
        return
    proxy = find_proxy()
    if proxy is None:
        sys.exit("configurable-http-proxy not found and npm could not install it")
    plan = run_plan(args.learners, args.notebooks, None if args.uncapped else args.threads)
    print(f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB; 'load0'/'loadM': "
          "1-min load average before / highest during the run")
    print(HEADER, flush=True)
    stored = json.loads(args.json.read_text()) if args.json and args.json.is_file() else []
    for n, nb, threads in plan:
        r = run_workshop(n, NOTEBOOKS[nb], threads=threads, proxy=proxy)
        print(summary_line(r), flush=True)
        for x in r.per_learner:
            if x.problem or x.other_errors:
                print(f"    {x.name}: {x.problem} {x.other_errors}", flush=True)
        if r.leftover_pids:
            print(f"    left running: {r.leftover_pids}", flush=True)
        if args.json:
            stored.append({**asdict(r), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "cpus": os.cpu_count()})
            text = json.dumps(stored, indent=1) + "\n"          # an interrupted write keeps the old file
            atomic_write(args.json, lambda tmp, text=text: tmp.write_text(text))


if __name__ == "__main__":
    main()
