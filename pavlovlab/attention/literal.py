"""The attention algorithms written as their maths: each form short enough to check line by line.

These are the definitions. :mod:`pavlovlab.attention` validates the inputs and calls the recurrent and parallel
forms from here; its chunk modes run the fast kernels, and the tests check them against the forms here. No
input checks run here: call them through :func:`pavlovlab.linear_attention`, :func:`pavlovlab.delta_rule_attention`,
:func:`pavlovlab.softmax_attention` or :func:`pavlovlab.attention.scalar_gated_linear_attention`, which do.

Shapes: ``q, k: (..., T, d_k)``, ``v: (..., T, d_v)`` with the same leading dims (batch, heads); the state is
``S: (..., d_v, d_k)``, read as ``S q``; ``S0 = None`` is the empty memory. A decay ``gamma`` is a number or a
tensor of shape ``(..., 1, 1)`` (one γ per head), ``None`` for none. Every form returns ``(o, S_T)`` with
``o: (..., T, d_v)`` (softmax returns ``o`` alone: it has no state).
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def _start(S0: Tensor | None, q: Tensor, v: Tensor) -> Tensor:
    """S0, or the empty memory of shape (..., d_v, d_k)."""
    return q.new_zeros(*q.shape[:-2], v.shape[-1], q.shape[-1]) if S0 is None else S0


def _stack(outputs: list[Tensor], q: Tensor, v: Tensor) -> Tensor:
    """The outputs o_t (..., d_v) of a loop over t as (..., T, d_v); T = 0 gives (..., 0, d_v)."""
    return torch.stack(outputs, dim=-2) if outputs else v.new_zeros(*q.shape[:-2], 0, v.shape[-1])


def softmax_parallel(q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: float | None = None) -> Tensor:
    """``o_t = Σ_s softmax_s(scale · q_t·k_s) v_s`` over ``s ≤ t`` when causal (``T_q = T`` then), over every s
    otherwise; scale = 1/√d_k by default. q: (..., T_q, d_k) -> o: (..., T_q, d_v). No key (T = 0): o = 0."""
    if k.shape[-2] == 0:
        return v.new_zeros(*torch.broadcast_shapes(q.shape[:-2], v.shape[:-2]), q.shape[-2], v.shape[-1])
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = (q @ k.mT) * scale                                         # (..., T_q, T): scale · q_t·k_s
    if causal:
        T = k.shape[-2]
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)  # s > t
        scores = scores.masked_fill(future, float("-inf"))
    return scores.softmax(dim=-1) @ v


def linear_recurrent(q: Tensor, k: Tensor, v: Tensor, gamma: float | Tensor | None = None,
                     S0: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The conditioning circuit, one step per token::

        S_t = γ S_{t-1} + v_t k_tᵀ        (write)
        o_t = S_t q_t                     (read)
    """
    S = _start(S0, q, v)
    outputs = []
    for t in range(q.shape[-2]):
        write = v[..., t, :, None] * k[..., t, None, :]                 # v_t k_tᵀ: (..., d_v, d_k)
        S = write + (S if gamma is None else gamma * S)
        outputs.append((S @ q[..., t, :, None])[..., 0])                # S_t q_t: (..., d_v)
    return _stack(outputs, q, v), S


def linear_parallel(q: Tensor, k: Tensor, v: Tensor, gamma: float | Tensor | None = None,
                    S0: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The same sums as one masked product, with ``D_ts = γ^(t−s)`` for s ≤ t and 0 above the diagonal::

        o = (Q Kᵀ ⊙ D) V + γ^(t+1) Q S_0ᵀ
        S_T = γ^T S_0 + Σ_s γ^(T−1−s) v_s k_sᵀ
    """
    T = q.shape[-2]
    scores = q @ k.mT                                                   # (..., T, T): q_t·k_s
    if gamma is None and S0 is None:                                    # from S_0 = 0: no read of the start
        return scores.tril() @ v, v.mT @ k
    S0 = _start(S0, q, v)
    if gamma is None:
        return scores.tril() @ v + q @ S0.mT, S0 + v.mT @ k
    t = torch.arange(T, device=q.device, dtype=q.dtype)
    lag = t[:, None] - t[None, :]                                       # (T, T): t − s
    D = torch.where(lag >= 0, gamma ** lag.clamp(min=0), 0.0)           # γ^(t−s) for s ≤ t
    o = (scores * D) @ v + gamma ** (t + 1)[:, None] * (q @ S0.mT)
    S = gamma ** T * S0 + (v * gamma ** (T - 1 - t)[:, None]).mT @ k
    return o, S


def linear_chunkwise(q: Tensor, k: Tensor, v: Tensor, gamma: float | Tensor | None = None,
                     S0: Tensor | None = None, chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The chunk form: the parallel form inside each chunk of ``chunk_size`` tokens, started from the state the
    chunk before left. A chunk's outputs are its own masked product plus the carried state read by its queries
    (``γ^(i+1) Q S_startᵀ``), and its end state is ``γ^C S_start + (its writes, decayed to its end)``: exactly
    :func:`linear_parallel` on the chunk with ``S0 = S_start``. The last chunk may be shorter."""
    S = _start(S0, q, v)
    outputs = []
    for start in range(0, q.shape[-2], chunk_size):
        chunk = slice(start, start + chunk_size)
        o, S = linear_parallel(q[..., chunk, :], k[..., chunk, :], v[..., chunk, :], gamma, S)
        outputs.append(o)
    return (torch.cat(outputs, dim=-2) if outputs else _stack([], q, v)), S


def delta_recurrent(q: Tensor, k: Tensor, v: Tensor, beta: Tensor,
                    S0: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The delta rule (Rescorla–Wagner), one step per token; beta: (..., T)::

        S_t = S_{t-1} + β_t (v_t − S_{t-1} k_t) k_tᵀ        (write only the prediction error)
        o_t = S_t q_t
    """
    S = _start(S0, q, v)
    outputs = []
    for t in range(q.shape[-2]):
        k_t = k[..., t, :]
        error = v[..., t, :] - (S @ k_t[..., None])[..., 0]             # US − prediction: (..., d_v)
        S = S + beta[..., t, None, None] * error[..., :, None] * k_t[..., None, :]
        outputs.append((S @ q[..., t, :, None])[..., 0])
    return _stack(outputs, q, v), S


def delta_chunkwise(q: Tensor, k: Tensor, v: Tensor, beta: Tensor, S0: Tensor | None = None,
                    chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The delta rule chunk by chunk. In a chunk started from S, the scaled errors e_t = β_t (v_t − S_{t−1} k_t)
    depend on the earlier errors of the chunk through S_{t−1} k_t = S k_t + Σ_{s<t} e_s (k_s·k_t), so they solve
    one unit lower-triangular system, and the outputs read the start state plus the chunk's own writes::

        (I + diag(β) tril(K Kᵀ, −1)) E = diag(β) (V − K Sᵀ)
        O = Q Sᵀ + tril(Q Kᵀ) E,        S_end = S + Eᵀ K
    """
    S = _start(S0, q, v)
    outputs = []
    for start in range(0, q.shape[-2], chunk_size):
        chunk = slice(start, start + chunk_size)
        Q, K, V, b = q[..., chunk, :], k[..., chunk, :], v[..., chunk, :], beta[..., chunk, None]
        system = torch.eye(K.shape[-2], dtype=K.dtype, device=K.device) + b * (K @ K.mT).tril(-1)
        E = torch.linalg.solve_triangular(system, b * (V - K @ S.mT), upper=False, unitriangular=True)
        outputs.append(Q @ S.mT + (Q @ K.mT).tril() @ E)
        S = S + E.mT @ K
    return (torch.cat(outputs, dim=-2) if outputs else _stack([], q, v)), S


def gated_recurrent(q: Tensor, k: Tensor, v: Tensor, g: Tensor, S0: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Linear attention with a forget gate per token, g: (..., T) in (0, 1]::

        S_t = g_t S_{t-1} + v_t k_tᵀ,      o_t = S_t q_t

    One scalar per token scales the whole memory: the gate of Mamba-2 (``g_t = exp(−Δ_t a)`` with a scalar a
    per head) and of RetNet-style gated retention. Gated linear attention (GLA, Yang et al. 2024) gates each key
    dimension, ``S_t = S_{t-1} diag(α_t) + v_t k_tᵀ`` with α_t in (0, 1)^d_k, and Mamba's selective state space
    model uses ``exp(−Δ_t A)`` with a diagonal A per channel: both are finer than this one.
    """
    S = _start(S0, q, v)
    outputs = []
    for t in range(q.shape[-2]):
        S = g[..., t, None, None] * S + v[..., t, :, None] * k[..., t, None, :]
        outputs.append((S @ q[..., t, :, None])[..., 0])
    return _stack(outputs, q, v), S


def gated_parallel(q: Tensor, k: Tensor, v: Tensor, g: Tensor, S0: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The gated sums as one masked product: with cumulative log-gates b_t = Σ_{r≤t} ln g_r the weight of
    s ≤ t is Π_{r=s+1..t} g_r = exp(b_t − b_s)::

        o = (Q Kᵀ ⊙ D) V + exp(b_t) Q S_0ᵀ,      D_ts = exp(b_t − b_s) for s ≤ t, 0 above
        S_T = exp(b_T) S_0 + Σ_s exp(b_T − b_s) v_s k_sᵀ
    """
    S0 = _start(S0, q, v)
    T = q.shape[-2]
    b = torch.cumsum(torch.log(g), dim=-1)                              # (..., T)
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    D = torch.where(causal, b[..., :, None] - b[..., None, :], float("-inf")).exp()
    o = ((q @ k.mT) * D) @ v + b.exp()[..., None] * (q @ S0.mT)
    S = b[..., -1, None, None].exp() * S0 + (v * (b[..., -1:] - b).exp()[..., None]).mT @ k
    return o, S
