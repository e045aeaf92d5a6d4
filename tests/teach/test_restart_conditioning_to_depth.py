"""A kernel restart at any check or verdict cell of the notebooks from start here to depth and width (00–05) gives
no traceback of ours (the run, and how the notebooks are grouped: ``kernel_restarts.py``)."""

import pytest
from kernel_restarts import check_restarts, group

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", group("conditioning_to_depth"))
def test_a_restart_at_any_check_or_verdict_cell_gives_no_traceback_of_ours(name, tmp_path, monkeypatch):
    check_restarts(name, tmp_path, monkeypatch)
