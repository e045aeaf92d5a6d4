"""Run notebooks headless in a fresh kernel and report wall time, the kernel's peak memory and stored size.

    python benchmarks/notebooks.py                # every notebook in course/
    python benchmarks/notebooks.py course/04_capacity_limits.ipynb --write   # and store the outputs

Peak memory is the kernel process's resident set size, sampled every 50 ms.

The kernel talks to this client over Unix sockets (ZeroMQ's ``ipc`` transport), not TCP: a TCP kernel gets
ports that its client picked as free a moment earlier, which another kernel started at the same time can take
(each hang we saw, a kernel idle and its client waiting, happened while other kernels were running).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import threading
import time

import nbformat
import psutil
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(path: pathlib.Path, write: bool) -> tuple[float, float, float]:
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="pavlovlab-kernel-") as sockets:
        ipc = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "k")}})
        client = NotebookClient(nb, timeout=300, kernel_name="python3", config=ipc,
                                resources={"metadata": {"path": str(path.parent)}})
        wall, peak = _execute(client)
    if write:
        nbformat.write(nb, path)
    return wall, peak, path.stat().st_size / 1e6


def _execute(client: NotebookClient) -> tuple[float, float]:
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
        client.execute()
    finally:
        done.set()
    return time.perf_counter() - start, peak[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path, help="notebooks (default: course/*.ipynb)")
    parser.add_argument("--write", action="store_true", help="store the executed notebook in place")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "course").glob("[0-9]*.ipynb"))
    print(f"{'notebook':40s} {'wall (s)':>9s} {'peak RSS (GB)':>14s} {'stored (MB)':>12s}")
    for p in paths:
        wall, peak, size = run(p, args.write)
        print(f"{p.name:40s} {wall:9.1f} {peak:14.2f} {size:12.2f}", flush=True)


if __name__ == "__main__":
    main()
