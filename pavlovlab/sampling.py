"""Random draws shared by the course: keys (the bells) and values (the food) of a chosen distribution.

Every draw is made on the CPU from an explicit ``torch.Generator`` and then moved to the device, so a
seed gives the same numbers on every device. Keys and values have ``E‖x‖² = 1``.
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    check_choice,
    check_device,
    check_fits,
    check_float_dtype,
    check_generator,
    check_int,
    checked_by,
)

KINDS = ("gaussian", "sphere", "orthogonal", "binary")
"""Key/value distributions: i.i.d. N(0, 1/d) entries; uniform on the unit sphere; orthonormal frames
(blocks of ``d`` mutually orthogonal unit vectors); entries ±1/√d with equal probability."""

def _check_draw(shape: tuple, d: int, kind: str, generator: torch.Generator | None,
                device: torch.device | str | None, dtype: torch.dtype | None) -> dict[str, object]:
    """The arguments of :func:`random_keys`, with the draw checked to fit in memory (where it is drawn, and where it
    goes): the sizes (given one by one or as one tuple) as a tuple, the device and dtype as torch objects."""
    shape = _check_sizes(shape)
    d = check_int("d", d, low=1)
    check_choice("kind", kind, KINDS)
    checked_dtype = check_float_dtype("dtype", dtype)
    check_generator("generator", generator)
    checked_device = check_device("device", device)
    drawn = torch.float64 if kind == "orthogonal" else checked_dtype
    check_fits("shape", (*shape, d), drawn, None, "(*shape, d)")
    if checked_device is not None:
        check_fits("shape", (*shape, d), checked_dtype, checked_device, "(*shape, d)")
    return {"shape": shape, "d": d, "device": checked_device, "dtype": checked_dtype}


def _check_sizes(shape: tuple) -> tuple[int, ...]:
    """The sizes, given one by one or as one tuple, each >= 0."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    return tuple(check_int(f"shape[{i}]", s, low=0) for i, s in enumerate(shape))


@checked_by(_check_draw)
def random_keys(*shape: int, d: int, kind: str = "gaussian", generator: torch.Generator | None = None,
                device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Random keys of dimension ``d``, shape ``(*shape, d)``, with ``E‖k‖² = 1``.

    kind: ``"gaussian"`` (entries N(0, 1/d)), ``"sphere"`` (unit vectors, uniform direction),
    ``"orthogonal"`` (along dim -2 the keys form orthonormal frames: the first ``d`` are mutually
    orthogonal, the next ``d`` an independent frame, and so on) or ``"binary"`` (entries ±1/√d).
    Numbers are drawn on the CPU (``generator``) and then moved, so every device sees the same keys.
    ``dtype`` None: torch's default dtype.

    >>> K = random_keys(100, 16, d=32, kind="sphere")   # 100 trials of 16 keys in 32 dimensions
    """
    dtype = dtype or torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    if kind == "binary":
        x = torch.randint(0, 2, (*shape, d), generator=generator, dtype=torch.int8).to(work).mul_(2 / math.sqrt(d))
        x = x.sub_(1 / math.sqrt(d))
    elif kind == "orthogonal":
        lead, n = (shape[:-1], shape[-1]) if shape else ((), 1)
        blocks = max(1, -(-n // d))
        g = torch.randn(*lead, blocks, d, d, generator=generator, dtype=torch.float64)
        q, r = torch.linalg.qr(g)
        q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[..., None, :]  # Haar-distributed frames
        x = q.mT.reshape(*lead, blocks * d, d)[..., :n, :].to(work)  # rows of each frame are orthonormal
        x = x.reshape(*shape, d)
    else:
        x = torch.randn(*shape, d, generator=generator, dtype=work)
        x = x.div_(x.norm(dim=-1, keepdim=True).clamp_min_(1e-30)) if kind == "sphere" else x.div_(math.sqrt(d))
    return x.to(device=device, dtype=dtype)


def random_values(*shape: int, d: int, kind: str = "gaussian", generator: torch.Generator | None = None,
                  device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Random values (the "food", US) of dimension ``d``, shape ``(*shape, d)``: same kinds as :func:`random_keys`."""
    return random_keys(*shape, d=d, kind=kind, generator=generator, device=device, dtype=dtype)


__all__ = ["KINDS", "random_keys", "random_values"]
