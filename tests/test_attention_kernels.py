"""The fast chunk kernels (pavlovlab.attention_kernels) against literal algorithms written in the test."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_attention import DT, _qkv  # the same float64 draws as the attention tests

import pavlovlab as pl
from pavlovlab import attention_kernels


def _forward_substitution(A, R):
    """x_i = r_i − Σ_{j<i} A_ij x_j, one row at a time (A unit lower-triangular): the literal algorithm."""
    X = torch.zeros_like(R)
    for i in range(A.shape[-1]):
        X[..., i, :] = R[..., i, :] - (A[..., i, :i, None] * X[..., :i, :]).sum(-2)
    return X


@pytest.mark.parametrize("C", [1, 7, 8, 9, 64, 70])
@pytest.mark.parametrize("grad", [False, True])
def test_unit_lower_solve_against_forward_substitution(C, grad):
    """The solve of the delta rule's chunk form (blocked, in place, without autograd; solve_triangular with it),
    for sizes below, at and across its block size, against the literal row-by-row algorithm; the adversarial
    system of identical unit keys at β = 2 (A = I + 2·strictly-lower ones, whose solution alternates in sign)
    included."""
    g = torch.Generator().manual_seed(C)
    k = F.normalize(torch.randn(2, 3, C, 5, generator=g, dtype=DT), dim=-1)
    random = (k @ k.mT).tril(-1) * torch.rand(2, 3, C, 1, generator=g, dtype=DT) * 2 + torch.eye(C, dtype=DT)
    identical = 2 * torch.ones(C, C, dtype=DT).tril(-1) + torch.eye(C, dtype=DT)
    for A in (random, identical.expand(2, 3, C, C)):
        R = torch.randn(2, 3, C, 4, generator=g, dtype=DT)
        with torch.set_grad_enabled(grad):
            got = attention_kernels._unit_lower_solve(A.clone().requires_grad_(grad), R)
        torch.testing.assert_close(got, _forward_substitution(A, R), rtol=1e-10, atol=1e-10)
        got32 = attention_kernels._unit_lower_solve(A.float(), R.float())
        torch.testing.assert_close(got32.double(), _forward_substitution(A, R), rtol=1e-4, atol=1e-4)


def test_delta_chunk_across_solve_blocks_against_a_literal_loop():
    """Chunks of 64 (8 solve blocks) and of 20 (a partial block), over a length with a partial last chunk."""
    q, k, v = _qkv(T=150, d_k=6, d_v=5, seed=3)
    k = F.normalize(k, dim=-1)
    beta = torch.rand(150, generator=torch.Generator().manual_seed(4), dtype=DT) * 2
    S = torch.zeros(5, 6, dtype=DT)
    ref = []
    for t in range(150):
        S = S + beta[t] * torch.outer(v[t] - S @ k[t], k[t])
        ref.append(S @ q[t])
    for C in (64, 20):
        o, S_T = pl.delta_rule_attention(q, k, v, beta, mode="chunk", chunk_size=C, return_state=True)
        torch.testing.assert_close(o, torch.stack(ref), rtol=1e-9, atol=1e-10)
        torch.testing.assert_close(S_T, S, rtol=1e-9, atol=1e-10)
