"""`ruff check .` (configured in pyproject.toml, pinned in requirements.txt) reports nothing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed (pip install -r requirements.txt)")
def test_ruff_finds_nothing():
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, f"ruff findings:\n{res.stdout}{res.stderr}"
    assert "All checks passed" in res.stdout
