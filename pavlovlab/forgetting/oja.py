"""Oja's rule: Hebbian learning with homeostasis, which finds the principal direction of its inputs.

A single linear unit ``y = wᵀx`` trained by Hebb's rule ``Δw = η y x`` strengthens its weights
without limit. Oja (1982) added a decay proportional to the squared output,
``Δw = η y (x − y w)``: the norm settles at ‖w‖ = 1 and w turns towards the top eigenvector of
the input covariance ``C = E[x xᵀ]``: the unit learns principal component analysis.
The subspace rule (Oja 1989) does the same for k units at once: ``ΔW = η (y xᵀ − y yᵀ W)`` with
``y = W x`` converges to an orthonormal basis of the top-k principal subspace.
With the output clamped to a teacher value it becomes a memory rule (``memory.oja_subspace_update``);
:func:`memory_fixed_point` says where that memory settles from a given state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import torch

from .._checks import (
    all_finite,
    broadcast_lead,
    check_choice,
    check_device,
    check_dim,
    check_float_dtype,
    check_int,
    check_numbers,
    check_real,
    check_same_kind,
    check_shape,
    check_tensor,
    checked_by,
    unchecked,
    warn_nonfinite,
)
from ..sampling import _check_draw, random_keys

__all__ = ["alignment", "data_cloud", "hebbian_unit", "memory_fixed_point", "oja_pca", "oja_subspace",
           "principal_components"]


_random_keys = unchecked(random_keys)
"""The draw of :func:`pavlovlab.sampling.random_keys`, on sizes :func:`data_cloud` checked (with the draw)."""


def _check_cloud(n: int, d: int, scales: Sequence[float] | None, batch_shape: Sequence[int],
                 generator: torch.Generator | None, device: torch.device | str | None,
                 dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`data_cloud`: the batch shape as a ``torch.Size``, the scales as a float64 tensor
    (d,), the device and the dtype as checked; the draw of the axes checked to fit in memory."""
    check_int("n", n, low=2)
    check_int("d", d, low=1)
    batch = torch.Size(check_shape("batch_shape", batch_shape))
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    checked_device = check_device("device", device)
    if isinstance(scales, (str, bytes)):
        raise TypeError(f"scales: expected {d} numbers (one standard deviation per dim), got the string {scales!r}")
    if scales is not None:
        check_numbers("scales", scales, low=0.0)
    s = torch.tensor([2.0 * 0.5 ** i for i in range(d)] if scales is None else list(scales), dtype=torch.float64)
    if s.shape != (d,):
        raise ValueError(f"scales: expected {d} standard deviations (one per dim d), got {s.numel()}")
    _check_draw((*batch, d), d, "orthogonal", generator, None, torch.float64)
    return {"batch_shape": batch, "scales": s, "device": checked_device, "dtype": dtype}


@checked_by(_check_cloud)
def data_cloud(n: int = 2000, d: int = 2, *, scales: Sequence[float] | None = None, batch_shape: Sequence[int] = (),
               generator: torch.Generator | None = None, device: torch.device | str | None = None,
               dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A centred Gaussian cloud with standard deviations ``scales`` along random orthogonal axes.

    ``x = z diag(scales) Qᵀ`` with z standard normal and Q a random rotation; the sample mean is then
    subtracted, so ``C = xᵀx / n`` is both the covariance and the second moment that Oja's rule sees.
    ``scales`` defaults to 2, 1, 0.5, 0.25, ... (d of them). Returns x: (..., n, d).
    """
    axes = _random_keys(*batch_shape, d, d=d, kind="orthogonal", generator=generator, dtype=torch.float64)  # rows: Qᵀ
    x = torch.randn(*batch_shape, n, d, generator=generator, dtype=torch.float64) * cast(torch.Tensor, scales) @ axes
    x = x - x.mean(dim=-2, keepdim=True)
    return x.to(device=device, dtype=dtype)


def principal_components(x: torch.Tensor, k: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The top-k eigenpairs of ``C = xᵀx / n`` (by ``torch.linalg.eigh``), largest first.

    x: (..., n, d). Returns (eigenvalues (..., k), eigenvectors (..., d, k)), columns of unit norm.
    """
    C = _check_second_moment(x, k)
    vals, vecs = torch.linalg.eigh(C)
    return vals.flip(-1)[..., :k], vecs.flip(-1)[..., :k]


def _check_second_moment(x: torch.Tensor, k: int) -> torch.Tensor:
    """The arguments of :func:`principal_components`; returns ``C = xᵀx / n``, checked to fit in x's dtype (eigh
    cannot run on an overflowed C: say why, not LAPACK's "failed to converge")."""
    check_tensor("x", x, min_rank=2)
    check_int("k", k, low=1)
    if k > x.shape[-1]:
        raise ValueError(f"k: expected at most d = {x.shape[-1]} components, got {k}")
    if x.shape[-2] == 0:
        raise ValueError(f"x: expected at least one sample (..., n >= 1, d), got shape {tuple(x.shape)}")
    C = x.mT @ x / x.shape[-2]
    if not all_finite(C):
        raise ValueError(f"x: expected samples whose second moment xᵀx/n fits in {x.dtype}, got entries up to "
                         f"{float(x.abs().max()):.3g} that overflow it (rescale x)")
    return C


def _check_directions(w: torch.Tensor, u: torch.Tensor) -> None:
    """Two tensors of directions (..., d) whose leading dims broadcast."""
    check_tensor("w", w)
    check_tensor("u", u)
    check_same_kind(w=w, u=u)
    check_dim("u", u.shape[-1], w.shape[-1], "the dimension d of w (last dim)")
    broadcast_lead(w=w.shape[:-1], u=u.shape[:-1])


@checked_by(_check_directions, nonfinite="very large w or u overflow their norms in the dtype")
def alignment(w: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """|cos| of the angle between w and u (sign does not matter for a direction). w, u: (..., d) -> (...)."""
    return torch.nn.functional.cosine_similarity(w, u, dim=-1).abs()


def _check_training(x: torch.Tensor, lr: float, epochs: int) -> float:
    """The samples x (..., n, d), the step size lr > 0 (returned as a float) and the number of epochs."""
    check_tensor("x", x, min_rank=2)
    lr = check_real("lr", lr, low=0.0, low_open=True)
    check_int("epochs", epochs, low=1)
    return lr


def _check_unit(x: torch.Tensor, lr: float, epochs: int, w0: torch.Tensor | None, rule: str) -> dict[str, object]:
    """The arguments of :func:`oja_pca`: lr as a float, w0 copied to the shape (..., d) of one unit per run."""
    lr = _check_training(x, lr, epochs)
    check_choice("rule", rule, ("oja", "hebbian"))
    return {"lr": lr, "w0": _check_initial("w0", w0, (*x.shape[:-2], x.shape[-1]), x)}


def _check_initial(name: str, w0: torch.Tensor | None, shape: tuple[int, ...], x: torch.Tensor) -> torch.Tensor | None:
    """Initial weights like x that broadcast to ``shape``, returned as a copy of that shape (None stays None)."""
    if w0 is None:
        return None
    check_tensor(name, w0)
    check_same_kind(x=x, **{name: w0})
    try:
        return w0.expand(shape).clone()
    except RuntimeError:
        raise ValueError(f"{name}: expected a shape that broadcasts to {shape}, got {tuple(w0.shape)}") from None


def _initial(w0: torch.Tensor | None, shape: tuple[int, ...], x: torch.Tensor,
             generator: torch.Generator | None) -> torch.Tensor:
    """The checked initial weights, or small random ones drawn on the CPU generator, then moved."""
    if w0 is not None:
        return w0
    w = torch.randn(*shape, generator=generator, dtype=torch.float64) * 0.1
    return w.to(dtype=x.dtype, device=x.device)


def _run(x: torch.Tensor, w: torch.Tensor, lr: float, epochs: int,
         rule: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor], record: bool,
         progress: bool, label: str) -> list[torch.Tensor]:
    """The weights after every step when ``record`` (the initial ones first), else the final weights alone;
    ``label`` names the progress bar."""
    n = x.shape[-2]
    traj = [w]
    steps = range(epochs * n)
    if progress:
        from tqdm.auto import tqdm
        steps = tqdm(steps, desc=label, unit="sample", leave=False)
    for s in steps:  # the recurrence: one sample at a time, in order
        xt = x[..., s % n, :]
        w = rule(w, xt, lr)
        if record:
            traj.append(w)
    return traj if record else [w]


def _oja_step(w, x, lr):
    y = (w * x).sum(-1, keepdim=True)                          # y = wᵀx
    return w + lr * y * (x - y * w)


def _hebbian_step(w, x, lr):
    y = (w * x).sum(-1, keepdim=True)
    return w + lr * y * x


@checked_by(_check_unit)
def oja_pca(x: torch.Tensor, *, lr: float = 0.01, epochs: int = 1, w0: torch.Tensor | None = None,
            rule: str = "oja", generator: torch.Generator | None = None, return_trajectory: bool = False,
            progress: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Train one linear unit ``y = wᵀx`` on the samples of x, in order: Oja's rule ``Δw = η y (x − y w)``.

    The fixed point is the unit-norm top eigenvector ±u₁ of ``C = E[x xᵀ]`` (stable when
    η λ₁ ≪ 1). With ``rule="hebbian"`` the update is plain Hebb, ``Δw = η y x``, whose norm grows like
    ``(1 + η λ₁)^t``.

    Args:
        x: (..., n, d) samples (leading dims: independent runs, e.g. seeds).
        lr: η > 0 (η = 0 would return the start unchanged); epochs: passes over the n samples.
        w0: (..., d) initial weights (default: small random ones from ``generator``).
        rule: ``"oja"`` or ``"hebbian"``.
        return_trajectory: also return every w, (..., epochs·n + 1, d).

    Returns:
        w: (..., d), or ``(w, trajectory)``.
    """
    step = {"oja": _oja_step, "hebbian": _hebbian_step}[rule]
    shape = (*x.shape[:-2], x.shape[-1])
    w = _initial(w0, shape, x, generator)
    ws = _run(x, w, lr, epochs, step, return_trajectory, progress, "Oja unit" if rule == "oja" else "Hebbian unit")
    w = ws[-1]
    warn_nonfinite(f"oja_pca(rule={rule!r})", w, "the step size lr is too large for the data's variance (Oja needs "
                   "lr·λ₁ ≪ 1) or plain Hebb overflowed")
    return (w, torch.stack(ws, dim=-2)) if return_trajectory else w


def hebbian_unit(x: torch.Tensor, *, lr: float = 0.01, epochs: int = 1, w0: torch.Tensor | None = None,
                 generator: torch.Generator | None = None, return_trajectory: bool = False,
                 progress: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Plain Hebb on one unit, ``Δw = η (wᵀx) x``: the same data as :func:`oja_pca`, no homeostasis,
    so ‖w‖ grows without bound (while its direction still turns towards u₁). Same arguments and returns."""
    return oja_pca(x, lr=lr, epochs=epochs, w0=w0, rule="hebbian", generator=generator,
                   return_trajectory=return_trajectory, progress=progress)


def _check_subspace(x: torch.Tensor, k: int, lr: float, epochs: int, W0: torch.Tensor | None) -> dict[str, object]:
    """The arguments of :func:`oja_subspace`: at most d units; lr as a float, W0 copied to the shape (..., k, d)."""
    check_tensor("x", x, min_rank=2)
    check_int("k", k, low=1)
    if k > x.shape[-1]:
        raise ValueError(f"k: expected at most d = {x.shape[-1]} units (the dimension of x), got {k}")
    lr = _check_training(x, lr, epochs)
    return {"lr": lr, "W0": _check_initial("W0", W0, (*x.shape[:-2], k, x.shape[-1]), x)}


@checked_by(_check_subspace,
            nonfinite="the step size lr is too large for the data's variance (lr·λ₁ ≪ 1 needed)")
def oja_subspace(x: torch.Tensor, k: int = 2, *, lr: float = 0.01, epochs: int = 1, W0: torch.Tensor | None = None,
                 generator: torch.Generator | None = None, return_trajectory: bool = False,
                 progress: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Oja's subspace rule for k units ``y = W x``: ``ΔW = η (y xᵀ − y yᵀ W)``.

    W converges to k orthonormal rows spanning the top-k principal subspace of ``C = E[x xᵀ]``
    (any rotation within it: the rows are not the individual eigenvectors).

    x: (..., n, d); W0: (..., k, d); lr: η > 0. Returns W (..., k, d), or ``(W, trajectory (..., epochs·n + 1, k, d))``.
    """
    shape = (*x.shape[:-2], k, x.shape[-1])
    W = _initial(W0, shape, x, generator)

    def step(W, xt, lr):
        y = (W * xt[..., None, :]).sum(-1)                    # y = W x: (..., k)
        yyW = y[..., :, None] * (y[..., None, :] @ W)           # y yᵀ W: (..., k, d), O(k d)
        return W + lr * (y[..., :, None] * xt[..., None, :] - yyW)

    Ws = _run(x, W, lr, epochs, step, return_trajectory, progress, f"Oja subspace ({k} units)")
    return (Ws[-1], torch.stack(Ws, dim=-2)) if return_trajectory else Ws[-1]


def _check_fixed_point(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> None:
    """The arguments of :func:`memory_fixed_point`: matching sizes, n <= d_v linearly independent values."""
    check_tensor("S", S, min_rank=2)
    check_tensor("keys", keys, min_rank=2)
    check_tensor("values", values, min_rank=2)
    check_same_kind(S=S, keys=keys, values=values)
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(f"values: expected as many values as keys ({keys.shape[-2]}), got {values.shape[-2]}")
    if keys.shape[-1] != S.shape[-1] or values.shape[-1] != S.shape[-2]:
        raise ValueError(f"S: expected shape (..., d_v, d_k) = (..., {values.shape[-1]}, {keys.shape[-1]}), "
                         f"got {tuple(S.shape)}")
    if values.shape[-2] > values.shape[-1]:
        raise ValueError(f"values: expected at most d_v = {values.shape[-1]} values (full rank), "
                         f"got {values.shape[-2]}")
    rank = int(torch.linalg.matrix_rank(values).min()) if values.numel() else values.shape[-2]
    if rank < values.shape[-2]:
        raise ValueError(f"values: expected {values.shape[-2]} linearly independent values (full rank), "
                         f"got rank {rank}")


@checked_by(_check_fixed_point, nonfinite="very large values overflow their Gram matrix VᵀV in the dtype")
def memory_fixed_point(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Where the supervised Oja subspace memory settles from ``S`` when the pairs ``(keys, values)`` are
    written again and again (``pavlovlab.memory.oja_subspace_update``, ``ΔS = v (k − Sᵀv)ᵀ``).

    Every write is ``v`` times a row, so the change of S lies in the span of the values: with V the values
    as columns and ``P = V (VᵀV)⁻¹ Vᵀ`` the projection on their span, ``(I − P) ΔS = 0`` and the part of S
    outside the span never moves. The rule stops where ``Vᵀ S = Kᵀ`` (an affine set when n < d_v); the
    point it reaches from S is the one nearest to S in Frobenius norm::

        S* = (I − P) S + V (VᵀV)⁻¹ Kᵀ        (from S = 0: the dual basis V (VᵀV)⁻¹ Kᵀ, the smallest member)

    S: (..., d_v, d_k); keys: (..., n, d_k); values: (..., n, d_v) of full rank n ≤ d_v -> S*: (..., d_v, d_k).
    """
    V, K = values.mT, keys.mT                                             # (..., d_v, n), (..., d_k, n)
    gram = V.mT @ V                                                       # (..., n, n)
    inside = V @ torch.linalg.solve(gram, V.mT @ S)                       # P S
    return S - inside + V @ torch.linalg.solve(gram, K.mT)
