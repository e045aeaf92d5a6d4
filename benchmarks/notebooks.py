"""Run notebooks headless in a fresh kernel and report wall time, the kernel's peak memory and stored size.

    python benchmarks/notebooks.py                # every notebook in course/
    python benchmarks/notebooks.py --threads 1 2  # each at one thread, then at two: a learner's hub, this machine
    python benchmarks/notebooks.py course/04_capacity_limits.ipynb --write   # and store the outputs

Peak memory is the kernel process's resident set size, sampled every 50 ms. ``--threads N`` limits the kernel
to N threads the way a hub's deploy recipe does, through its environment: ``OMP_NUM_THREADS`` (torch's
intra-op pool and OpenMP), ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``NUMEXPR_NUM_THREADS``; without
it the kernel takes what the machine gives. The table ends with the course total (the sum of the wall times,
the largest peak).

The kernel talks to this client over Unix sockets (ZeroMQ's ``ipc`` transport), not TCP: a TCP kernel gets
ports that its client picked as free a moment earlier, which another kernel started at the same time can take.
The client waits for each message in polls of at most half a second (:class:`SlicedPollClient`), which finds
a reply that reached its socket without waking a longer poll. ``--timeout`` bounds each cell: a cell that runs
longer stops the run with the cell named.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import threading
import time
from queue import Empty
from typing import Any

import nbformat
import psutil
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient
from nbformat import NotebookNode
from traitlets import Type
from traitlets.config import Config

ROOT = pathlib.Path(__file__).resolve().parents[1]


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def kernel_env(threads: int | None) -> dict[str, str]:
    """The kernel's environment: this process's, with every thread pool limited to ``threads`` when given."""
    env = dict(os.environ)
    if threads is not None:
        env |= {name: str(threads) for name in THREAD_VARIABLES}
    return env


POLL_SLICE = 0.5  # seconds: the longest single wait of SlicedPollClient for a message


class SlicedPollChannel(AsyncZMQSocketChannel):
    """A kernel channel that waits for a message in polls of at most ``POLL_SLICE`` seconds.

    pyzmq's asyncio poll sleeps on the socket's edge-triggered file descriptor, and a message can reach the
    socket without waking it. Six runs of notebook 00 at once on a 2-core machine: 6 of 36 stopped after the
    widget cell (whose output widget makes the client send to the kernel while it waits), the kernel idle,
    the cell's ``execute_reply`` in the client's shell socket (a synchronous poll of it found the message) and
    the client's poll asleep until its timeout; with this channel, 0 of 36. Each new poll reads the socket's
    pending events before it sleeps, so a message stranded that way is found within one slice.
    """

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message; ``Empty`` when none came within ``timeout`` seconds (``None``: wait for one)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SLICE if deadline is None else min(POLL_SLICE, max(0.0, deadline - time.monotonic()))
            if await self.socket.poll(int(left * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty


class SlicedPollClient(AsyncKernelClient):
    """nbclient's kernel client, with :class:`SlicedPollChannel` for the two channels it waits on (nbclient
    turns stdin off)."""

    shell_channel_class = Type(SlicedPollChannel)
    iopub_channel_class = Type(SlicedPollChannel)


def kernel_config(sockets: str) -> Config:
    """nbclient's configuration for a kernel whose sockets are files in the folder ``sockets`` (no TCP port to
    collide with another run's) and whose client waits in slices (:class:`SlicedPollClient`)."""
    return Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "k"),
                                     "client_factory": SlicedPollClient}})


def execute(nb: NotebookNode, folder: pathlib.Path, *, timeout: int = 300, threads: int | None = None,
            allow_errors: bool = False) -> tuple[float, float]:
    """Execute ``nb`` in place, in a fresh kernel working in ``folder``; return the wall time (s) and the
    kernel's peak resident memory (GB).

    Each cell may run ``timeout`` seconds; ``threads`` limits the kernel's thread pools (:func:`kernel_env`);
    with ``allow_errors`` every cell runs and errors stay in the outputs, as for a learner who runs them all.
    """
    with tempfile.TemporaryDirectory(prefix="pavlovlab-kernel-") as sockets:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                                config=kernel_config(sockets), resources={"metadata": {"path": str(folder)}})
        return _execute(client, kernel_env(threads))


def run(path: pathlib.Path, write: bool, threads: int | None = None, timeout: int = 300) -> tuple[float, float, float]:
    """Execute the notebook at ``path`` (:func:`execute`), store it when ``write``; return the wall time (s),
    the peak memory (GB) and the stored size (MB)."""
    nb = nbformat.read(path, as_version=4)
    wall, peak = execute(nb, path.parent, timeout=timeout, threads=threads)
    if write:
        nbformat.write(nb, path)
    return wall, peak, path.stat().st_size / 1e6


def _execute(client: NotebookClient, env: dict[str, str]) -> tuple[float, float]:
    """Execute the client's notebook in a fresh kernel; return the wall time and the kernel's peak RSS (GB)."""
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            km = client.km
            pid = getattr(getattr(km, "provisioner", None), "pid", None) if km is not None else None
            if pid:
                try:
                    proc = psutil.Process(pid)
                    rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
                    peak[0] = max(peak[0], rss / 2**30)
                except psutil.Error:
                    pass
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    try:
        client.execute(env=env)
    finally:
        done.set()
    return time.perf_counter() - start, peak[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path, help="notebooks (default: course/*.ipynb)")
    parser.add_argument("--write", action="store_true", help="store the executed notebook in place")
    parser.add_argument("--threads", type=int, nargs="+", metavar="N",
                        help="run each notebook once per thread count (e.g. 1 2), each in a kernel limited to it")
    parser.add_argument("--timeout", type=int, default=300, metavar="S",
                        help="seconds a cell may run before the run stops with that cell named (default 300)")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "course").glob("[0-9]*.ipynb"))
    threads: list[int | None] = list(args.threads) if args.threads else [None]
    if args.write and len(threads) > 1:
        parser.error("--write stores one run: give at most one --threads value with it")
    if any(n is not None and n < 1 for n in threads):
        parser.error(f"--threads: expected counts >= 1, got {args.threads}")
    if args.timeout < 1:
        parser.error(f"--timeout: expected seconds >= 1, got {args.timeout}")
    labels = ["" if n is None else f" {n}t" for n in threads]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'notebook':40s}" + "".join(f"{'wall (s)' + lab:>13s}{'peak (GB)' + lab:>14s}" for lab in labels)
          + f"{'stored (MB)':>12s}")
    totals = [[0.0, 0.0] for _ in threads]
    for p in paths:
        cells = ""
        for total, n in zip(totals, threads, strict=True):
            wall, peak, size = run(p, args.write, n, args.timeout)
            total[0], total[1] = total[0] + wall, max(total[1], peak)
            cells += f"{wall:13.1f}{peak:14.2f}"
        print(f"{p.name:40s}{cells}{size:12.2f}", flush=True)
    print(f"{'course total (sum of walls, largest peak)':40s}"
          + "".join(f"{wall:13.1f}{peak:14.2f}" for wall, peak in totals))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
