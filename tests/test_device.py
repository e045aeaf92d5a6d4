"""Tests of ``pavlovlab.device``."""

from __future__ import annotations

import numpy as np
import torch
from badinput import check, parametrize

from pavlovlab import device as Dv


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.device``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("seed 2**70", lambda: Dv.seed_everything(2**70), ValueError, "seed: expected an integer in [0, 2**64)"),
        ("seed float", lambda: Dv.seed_everything(1.5), TypeError, "seed: expected a non-negative integer"),
        ("seed numpy int", lambda: isinstance(Dv.seed_everything(np.int64(3)), torch.Generator), "ok", ""),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
