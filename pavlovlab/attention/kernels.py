"""The fast chunk kernels behind :func:`pavlovlab.attention.linear_attention` and
:func:`pavlovlab.attention.delta_rule_attention` (``mode="chunk"``).

They compute the same numbers as the literal chunkwise forms of :mod:`pavlovlab.attention.literal` (the tests
hold them equal), in fewer, larger batched products, and check nothing: the public functions of
:mod:`pavlovlab.attention` validate their inputs once, and a caller whose inputs are valid by construction
(``models.Block``) calls a kernel directly. Shapes: ``q, k: (..., T, d_k)``, ``v: (..., T, d_v)``, state
``S: (..., d_v, d_k)``, every tensor with the same leading dims. benchmarks/attention.py measures them.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn.functional as F

Tensor = torch.Tensor
SEGMENT_CHUNKS = 16
"""The chunk kernels walk through a long sequence in segments of this many chunks, carrying the state from
one to the next, so that a segment's working set stays in the CPU cache and the time grows linearly in T."""


def _segments(seqs: tuple[Tensor, ...], C: int) -> Iterator[tuple[Tensor, ...]]:
    """The sequences (time in dim -2) cut into segments of ``SEGMENT_CHUNKS`` chunks, each made contiguous once
    (a slice of time is not: its heads are T rows apart), so that the batched products inside see one batch
    axis and do not copy their operands again. Split, not sliced: under autograd a split's backward is one
    concatenation, where each slice's backward would fill a zero tensor of the whole length (O(T²) in all)."""
    for piece in zip(*(x.split(C * SEGMENT_CHUNKS, dim=-2) for x in seqs), strict=True):
        yield tuple(x.contiguous() for x in piece)


def _chunks(x: Tensor, C: int) -> Tensor:
    """(..., T, d) -> (..., n, C, d) with n = ⌈T/C⌉, zero-padded at the end only when C does not divide T
    (a view, no copy, otherwise). Zero keys (and β = 0) write nothing, so the padding is exact."""
    pad = -x.shape[-2] % C
    if pad:
        x = F.pad(x, (0, 0, 0, pad))
    return x.unflatten(-2, (-1, C))


def _powers(gamma: Tensor, exponents: Tensor | int) -> Tensor:
    """γ^e for γ of shape (..., 1, 1) and integer exponents (m, n) -> (..., m, n); 0^0 = 1."""
    return torch.pow(gamma, exponents.to(gamma.dtype) if isinstance(exponents, Tensor) else float(exponents))


def linear_chunk_kernel(fq: Tensor, fk: Tensor, v: Tensor, gamma: Tensor | None, S0: Tensor,
                        chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The chunk form of :func:`~pavlovlab.attention.linear_attention` (``attention_literal.linear_chunkwise``
    computes the same numbers), on inputs it does not check: fq, fk (..., T, d_k) (feature maps applied),
    v (..., T, d_v), γ (..., 1, 1) or None, S0 (..., d_v, d_k), all with the same leading dims. Returns
    ``(o, S_T)``.

    Per segment of ``SEGMENT_CHUNKS`` chunks of C tokens (n chunks, the last zero-padded): the chunks' own
    masked products ``tril(Q Kᵀ) V`` and writes ``Δ_c = V_cᵀ K_c`` in batched products; the state before each
    chunk, ``S_c = S_0 + Σ_{j<c} Δ_j``, as a running sum (no matrix product, so that the operation count stays
    ``2T(C(d_k + d_v) + 2 d_k d_v)``); then every chunk reads its start state, ``Q_c S_cᵀ``, and adds its masked
    block to that in the same ``baddbmm`` (in place, ``out=``, unless autograd records). With decay, the
    powers of γ weight the same terms and the start states are one product over the chunk axis,
    ``S_c = γ^(Cc) S_0 + Σ_{j<c} γ^(C(c−1−j)) Δ_j``."""
    T, d_v = fq.shape[-2], v.shape[-1]
    if T == 0:
        return v.new_zeros(*v.shape[:-2], 0, d_v), S0.clone()
    C, S, outputs = min(chunk_size, T), S0, []
    grad = torch.is_grad_enabled() and any(x.requires_grad for x in (fq, fk, v, S0))  # out= has no backward
    for q_seg, k_seg, v_seg in _segments((fq, fk, v), C):
        n, part = -(-q_seg.shape[-2] // C), q_seg.shape[-2] % C     # chunks; tokens in a partial last chunk
        qc, kc, vc = _chunks(q_seg, C), _chunks(k_seg, C), _chunks(v_seg, C)  # (..., n, C, d)
        scores = (qc @ kc.mT).tril_()                                # (..., n, C, C): s ≤ t inside a chunk
        if gamma is None:
            deltas = vc.mT @ kc                                      # Δ_c: (..., n, d_v, d_k)
            running = [S]
            for j in range(n - 1):                                   # S_{j+1} = S_j + Δ_j
                running.append(running[-1] + deltas[..., j, :, :])
            starts = torch.stack(running, dim=-3)                    # (..., n, d_v, d_k)
            inter = (qc @ starts.mT).flatten(0, -3)                  # Q_c S_cᵀ: the carried state's read-out
            o = torch.baddbmm(inter, scores.flatten(0, -3), vc.flatten(0, -3),  # + the masked block, in place
                              out=None if grad else inter).view(*qc.shape[:-1], d_v)  # unless autograd records
            S = starts[..., -1, :, :] + deltas[..., -1, :, :]        # padded keys are zero: exact
        else:
            g = gamma[..., None, :, :]                               # (..., 1, 1, 1) against the chunk axis
            i, c = torch.arange(C, device=fq.device), torch.arange(n, device=fq.device)
            lag = (i[:, None] - i[None, :]).clamp(min=0)             # (C, C): t − s (scores are 0 above)
            intra = (scores * _powers(g, lag)) @ vc                  # γ^(t−s) inside a chunk
            deltas = (vc * _powers(g, (C - 1 - i)[:, None])).mT @ kc  # (..., n, d_v, d_k), decayed to chunk end
            gap = (c[:, None] - 1 - c[None, :]).clamp(min=0)         # (n, n): chunks between j and c
            M = torch.where(c[:, None] > c[None, :], _powers(gamma, C * gap), 0.0)  # (..., n, n), j < c
            starts = (M @ deltas.flatten(-2)).unflatten(-1, deltas.shape[-2:])  # (..., n, d_v, d_k)
            starts = starts + _powers(g, C * c[:, None, None]) * S[..., None, :, :]  # + γ^(Cc) S_0
            o = intra.add_(_powers(g, (i + 1)[:, None]) * (qc @ starts.mT))
            if part:  # a partial last chunk: decay its start state and its real writes by their true lags
                r = torch.arange(part, device=fq.device)
                S = _powers(gamma, part) * starts[..., -1, :, :] \
                    + (v_seg[..., -part:, :] * _powers(gamma, (part - 1 - r)[:, None])).mT @ k_seg[..., -part:, :]
            else:
                S = _powers(gamma, C) * starts[..., -1, :, :] + deltas[..., -1, :, :]
        o = o.flatten(-3, -2)                                        # (..., n·C, d_v)
        outputs.append(o[..., :q_seg.shape[-2], :] if part else o)
    return (outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-2)), S


def delta_chunk_kernel(q: Tensor, k: Tensor, v: Tensor, beta: Tensor, S0: Tensor,
                       chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The chunk form of :func:`~pavlovlab.attention.delta_rule_attention` (``attention_literal.delta_chunkwise``
    computes the same numbers), on inputs it does not check: q, k (..., T, d_k), v (..., T, d_v), β (..., T),
    S0 (..., d_v, d_k), all with the same leading dims and one dtype. Returns ``(o, S_T)``.

    Inside a chunk with start state S_0 the errors e_t = β_t (v_t − S_{t−1} k_t) satisfy
    (I + diag(β) tril(K Kᵀ, −1)) E = diag(β) (V − K S_0ᵀ), so E = U − W S_0ᵀ with U, W from one
    unit-triangular system (the UT transform) for all chunks at once: ``torch.linalg.solve_triangular`` reads only
    the strictly lower part of ``diag(β) K Kᵀ`` and takes ones for the diagonal, so the product is not masked.
    Then, with A = tril(Q Kᵀ)::

        O     = Q S_0ᵀ + A E = (Q − A W) S_0ᵀ + A U
        S_end = S_0 + Eᵀ K   = S_0 (I − Wᵀ K) + Uᵀ K

    Everything but the last line's short recurrence over chunks (one fused ``baddbmm`` per chunk) is one batched
    product for all the chunks of a segment."""
    T, d_k, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    if T == 0:
        return v.new_zeros(*v.shape[:-2], 0, d_v), S0.clone()
    C, S, outputs = min(chunk_size, T), S0, []
    *lead, _, _ = q.shape
    for qs, ks, vs, bs in _segments((q, k, v, beta[..., None]), C):
        qc, kc, vc, bc = _chunks(qs, C), _chunks(ks, C), _chunks(vs, C), _chunks(bs, C)  # (..., n, C, ·)
        n = qc.shape[-3]
        system = (kc @ kc.mT).mul_(bc)   # diag(β) K Kᵀ: the solve reads its strictly lower part (I + that)
        UW = torch.linalg.solve_triangular(system, torch.cat([vc, kc], dim=-1).mul_(bc), upper=False,
                                           unitriangular=True)       # [U, W]: (..., n, C, d_v + d_k)
        AUW = (qc @ kc.mT).tril() @ UW                               # [A U, A W]: (..., n, C, d_v + d_k)
        HG = UW.mT @ kc                                              # [Uᵀ K; Wᵀ K]: (..., n, d_v + d_k, d_k)
        P = HG[..., d_v:, :].neg_()                                  # −Wᵀ K, then + I: (..., n, d_k, d_k)
        P.diagonal(dim1=-2, dim2=-1).add_(1.0)
        H, P = HG[..., :d_v, :].reshape(-1, n, d_v, d_k), P.reshape(-1, n, d_k, d_k)  # batch flattened
        starts = [S.reshape(-1, d_v, d_k)]
        for c in range(n):                                           # S_{c+1} = Uᵀ K + S_c (I − Wᵀ K)
            starts.append(torch.baddbmm(H[:, c], starts[-1], P[:, c]))
        S = starts.pop().reshape(*lead, d_v, d_k)
        carried = torch.stack(starts, dim=1).reshape(*lead, n, d_v, d_k)  # the state before each chunk
        o = ((qc - AUW[..., d_v:]) @ carried.mT).add_(AUW[..., :d_v]).flatten(-3, -2)  # (..., n·C, d_v)
        outputs.append(o[..., :qs.shape[-2], :])
    return (outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-2)), S
