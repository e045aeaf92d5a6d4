"""Build the course book once per test session (tests/repo/test_book.py and the browser test share it)."""

from __future__ import annotations

import atexit
import functools
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEEDS = ("sphinx", "myst_nb", "sphinx_book_theme", "jieba")  # jieba: the Chinese edition's search


@functools.lru_cache(maxsize=1)
def _build() -> tuple[Path, int, float, str]:
    sys.path.insert(0, str(ROOT / "tools"))
    import build_book

    base = Path(tempfile.mkdtemp(prefix="pavlovlab-book-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    out = base / "html"
    import contextlib
    import io

    log = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
        rc = build_book.build(out, base / "src", warnings_as_errors=True, quiet=True)
    return out, rc, time.perf_counter() - t0, log.getvalue()


def built_book() -> dict:
    """``{"html": Path, "rc": int, "seconds": float, "log": str}`` of one ``-W`` build (skips without Sphinx)."""
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the book needs {', '.join(missing)}: pip install -r docs/requirements.txt")
    out, rc, seconds, log = _build()
    return {"html": out, "rc": rc, "seconds": seconds, "log": log}
