"""A kernel restart at any check or verdict cell of the notebooks of forgetting and of conditioning in trained
models (06–08) gives no traceback of ours (the run, and how the notebooks are grouped: ``kernel_restarts.py``)."""

import pytest
from kernel_restarts import check_restarts, group

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", group("forgetting_and_trained_models"))
def test_a_restart_at_any_check_or_verdict_cell_gives_no_traceback_of_ours(name, tmp_path, monkeypatch):
    check_restarts(name, tmp_path, monkeypatch)
