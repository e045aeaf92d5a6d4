"""Shared fixtures: every test that takes ``device`` runs on cpu and, where available, on cuda."""

import pytest
import torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                reason="no CUDA device"))]
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
