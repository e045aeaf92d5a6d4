"""Shared fixtures: every test that takes ``device`` runs on cpu and, where available, on cuda.

Under pytest-xdist (``make test`` runs two workers) each worker, and every kernel it starts, gets its share of
the cores, and the tests are sent one file at a time, except files that share a once-per-session build, which
go to one worker together (:data:`SHARED_BUILDS`).
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest
import torch

if "PYTEST_XDIST_WORKER_COUNT" in os.environ:  # two workers of two threads each would oversubscribe 2 cores
    THREADS = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))  # read by the kernels nbval, nbclient and JupyterLab start
    torch.set_num_threads(THREADS)

# The tests read the English sentences (a French or Chinese locale would make `doctor` speak it): the editions'
# tests choose their language themselves, and every process and kernel started from here inherits this.
os.environ["PAVLOVLAB_LANGUAGE"] = "en"

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
"""For a test that compares a CUDA run with the CPU one (on the CPU there is nothing to compare)."""

DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
"""Relative RMS tolerance for forms of one algorithm that must give the same numbers."""


@pytest.fixture(params=DEVICES)
def device(request) -> torch.device:
    return torch.device(request.param)


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request) -> torch.dtype:
    return request.param


@pytest.fixture
def gen() -> torch.Generator:
    """A seeded CPU generator: draw on the CPU, then move, so CPU and CUDA see the same numbers."""
    return torch.Generator().manual_seed(0)


def rel_rms(a: torch.Tensor, b: torch.Tensor) -> float:
    """Relative RMS error ‖a − b‖ / ‖b‖ (0 when both are zero)."""
    denom = b.norm().item()
    return (a - b).norm().item() / denom if denom > 0 else (a - b).norm().item()


@pytest.fixture(autouse=True)
def fresh_sessions():
    """Every test starts with fresh learner sessions, as in a new kernel: no attempts, no hints shown, no
    solution read (a test calls ``ex.check_...`` on a checker module, whose book's session this renews). A test
    that needs a new learner part-way through calls the fixture's value: ``fresh_sessions()``."""
    def renew() -> None:
        if "pavlovlab.teach.exercises.registry" in sys.modules:   # a test that never loaded them has none
            for book in sys.modules["pavlovlab.teach.exercises.registry"].books():
                book.stop()

    renew()
    yield renew
    renew()


NBVAL_OUTPUT_PATIENCE_S = 120
"""How long nbval waits for a cell's next output message once the cell has run (nbval's own is 5 s)."""


def pytest_collection_modifyitems(items) -> None:
    """On a loaded machine a kernel can send a long cell's last progress-bar messages more than nbval's
    5 s after its reply: wait for the kernel's messages as long as they take, not a fixed 5 s."""
    for item in items:
        if hasattr(item, "output_timeout") and type(item).__module__.startswith("nbval"):
            item.output_timeout = NBVAL_OUTPUT_PATIENCE_S


SHARED_BUILDS = {
    "tests/repo/test_book.py": "the book", "tests/browser/test_book_pages.py": "the book",  # tests/bookbuild.py
    "tests/repo/test_packaging.py": "the wheel", "tests/teach/test_start.py": "the wheel",  # both build in build/
}
"""Test files that must run on one worker: they share one build per session, or write the same build folder."""


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the files of :data:`SHARED_BUILDS` sent to one worker as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LoadFileSharingBuilds(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SHARED_BUILDS.get(path, path)

    return LoadFileSharingBuilds(config, log)


@pytest.fixture(scope="session")
def hub_benchmark():
    """``benchmarks/hub.py`` as a module (not a package): the hub tests read its run plan and run its workshop."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "hub.py"
    spec = importlib.util.spec_from_file_location("pavlovlab_bench_hub", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def one_thread():
    """Tiny models train fastest on one thread (and a loaded machine slows a second one down badly)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
