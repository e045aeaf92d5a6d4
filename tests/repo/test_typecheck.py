"""mypy (configured in pyproject.toml's [tool.mypy], pinned in requirements.txt) finds no error in the whole
package, the course tooling of pavlovlab/teach included."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a cold run reads torch's annotations: about 25 s of CPU
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -r requirements.txt)")
def test_mypy_finds_nothing_in_the_package():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's pavlovlab, whatever is installed
    res = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=env)
    assert res.returncode == 0, f"mypy errors:\n{res.stdout}{res.stderr}"
    files = list((ROOT / "pavlovlab").rglob("*.py"))
    assert res.stdout.strip() == f"Success: no issues found in {len(files)} source files", res.stdout  # every file
