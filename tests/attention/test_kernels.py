"""The fast chunk kernels (pavlovlab.attention.kernels) against literal algorithms written in the test."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_forms import DT, _qkv  # the same float64 draws as the attention tests

import pavlovlab as pl


def _delta_loop(q, k, v, beta):
    """S_t = S_{t−1} + β_t (v_t − S_{t−1} k_t) k_tᵀ, o_t = S_t q_t, one token at a time: the literal algorithm."""
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    ref = []
    for t in range(q.shape[-2]):
        S = S + beta[t] * torch.outer(v[t] - S @ k[t], k[t])
        ref.append(S @ q[t])
    return torch.stack(ref), S


@pytest.mark.parametrize("C", [1, 7, 20, 64])
def test_delta_chunk_kernel_against_a_literal_loop(C):
    """Chunks of 1 (no system to solve), 7 and 20 (partial last chunks) and 64, over a length with a partial last
    chunk; random β in [0, 2], then the adversarial system of identical unit keys at β = 2 (the chunk's triangular
    system is I + 2·strictly-lower ones, whose solution alternates in sign), in float64 and in float32."""
    q, k, v = _qkv(T=150, d_k=6, d_v=5, seed=3)
    k = F.normalize(k, dim=-1)
    beta = torch.rand(150, generator=torch.Generator().manual_seed(4), dtype=DT) * 2
    same = k[:1].expand(150, -1).contiguous()
    for keys, b in ((k, beta), (same, torch.full((150,), 2.0, dtype=DT))):
        want_o, want_S = _delta_loop(q, keys, v, b)
        o, S_T = pl.delta_rule_attention(q, keys, v, b, mode="chunk", chunk_size=C, return_state=True)
        torch.testing.assert_close(o, want_o, rtol=1e-9, atol=1e-10)
        torch.testing.assert_close(S_T, want_S, rtol=1e-9, atol=1e-10)
        o32, S32 = pl.delta_rule_attention(q.float(), keys.float(), v.float(), b.float(), mode="chunk",
                                           chunk_size=C, return_state=True)
        for got, want in ((o32, want_o), (S32, want_S)):  # float32 error grows with the outputs' scale (≈ 50 here)
            torch.testing.assert_close(got.double(), want, rtol=1e-4, atol=1e-4 * want.abs().max().item())
