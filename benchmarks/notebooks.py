"""Run notebooks headless in a fresh kernel and report wall time, the kernel's peak memory and stored size.

    python benchmarks/notebooks.py                # every notebook in course/
    python benchmarks/notebooks.py course/04_capacity_limits.ipynb --write   # and store the outputs

Peak memory is the kernel process's resident set size, sampled every 50 ms.
"""

from __future__ import annotations

import argparse
import pathlib
import threading
import time

import nbformat
import psutil
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(path: pathlib.Path, write: bool) -> tuple[float, float, float]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
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
    client.execute()
    wall = time.perf_counter() - start
    done.set()
    if write:
        nbformat.write(nb, path)
    return wall, peak[0], path.stat().st_size / 1e6


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
