"""Tests of pavlovlab.capacity.readouts: the read-outs of every stored item after every write, against literal loops
over n with the package's own memories and layers, and brute force over adversarial value patterns."""


import pytest
import torch
from badinput import LONG, check, column, parametrize

import pavlovlab as pl
from pavlovlab import AssociativeMemory
from pavlovlab.capacity import readouts as R
from pavlovlab.sampling import random_keys, random_values


def _literal_reads(K, V, rule, beta, n):
    """Read-outs of the first n items after n writes, with the package's own memories (an independent path)."""
    if rule == "hebbian":
        mem = AssociativeMemory(K.shape[-1], V.shape[-1], batch_shape=K.shape[:-2], dtype=K.dtype, device=K.device)
        for t in range(n):
            mem.write(K[..., t, :], V[..., t, :])
        return mem.read(K[..., :n, :])
    if rule == "delta":
        _, S = pl.delta_rule_attention(K[..., :n, :], K[..., :n, :], V[..., :n, :], beta, mode="recurrent",
                                       return_state=True)
        return K[..., :n, :] @ S.mT
    return pl.softmax_attention(K[..., :n, :], K[..., :n, :], V[..., :n, :], causal=False, scale=beta)


@pytest.mark.parametrize("rule, beta", [("hebbian", 1.0), ("delta", 1.0), ("delta", 0.6), ("softmax", 3.0)])
def test_min_cosine_curve_matches_a_literal_loop_over_n(rule, beta, device, dtype):
    g = torch.Generator().manual_seed(3)
    K = random_keys(3, 14, d=8, kind="sphere", generator=g, device=device, dtype=dtype)
    V = random_values(3, 14, d=5, kind="sphere", generator=g, device=device, dtype=dtype)
    got = R.min_cosine_curve(*R.readout_weights(K, V, rule, beta), V)
    want = torch.stack([torch.cosine_similarity(_literal_reads(K, V, rule, beta, n), V[:, :n], dim=-1).amin(-1)
                        for n in range(1, 15)], dim=-1)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("rule, beta", [("hebbian", 1.0), ("delta", 1.0), ("softmax", 2.0)])
def test_decoding_curve_matches_a_literal_argmax(rule, beta, device):
    g = torch.Generator().manual_seed(4)
    K = random_keys(6, 20, d=6, kind="sphere", generator=g, device=device, dtype=torch.float64)
    labels = torch.randint(0, 4, (6, 20), generator=g).to(device)
    book = torch.eye(4, dtype=torch.float64, device=device)
    got = R.decoding_curve(*R.readout_weights(K, book[labels], rule, beta), labels, book, block=7)
    want = torch.zeros(6, 20, dtype=torch.bool)
    for n in range(1, 21):
        scores = (_literal_reads(K, book[labels], rule, beta, n) @ book.mT).cpu()   # (6, n, 4)
        for t in range(6):
            want[t, n - 1] = all(
                all(scores[t, j, labels[t, j]] > scores[t, j, m] for m in range(4) if m != labels[t, j])
                for j in range(n))
    assert torch.equal(got.cpu(), want)
    assert want.any() and not want.all()   # the case exercises both outcomes




def test_first_failure_counts_leading_successes():
    ok = torch.tensor([[True, True, False, True], [True, True, True, True], [False, True, True, True]])
    assert R.first_failure(ok).tolist() == [2, 4, 0]
    with pytest.raises(TypeError, match="ok"):
        R.first_failure(torch.ones(3))


@pytest.mark.parametrize("call, err, words", [
    (lambda: R.readout_weights(torch.zeros(3, 4), torch.zeros(2, 4)), ValueError, "values"),
    (lambda: R.readout_weights(torch.zeros(3, 4), torch.zeros(3, 4), "oja"), ValueError, "rule"),
])
def test_bad_inputs_are_rejected(call, err, words):
    with pytest.raises(err, match=words):
        call()


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.capacity.readouts``: one row ``(case, call, expect, fragment)`` a case."""
    k = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(0))
    one = torch.ones(3)
    return [
        ("readout_weights(N = 300,000)", lambda: R.readout_weights(column(LONG), column(LONG)), ValueError,
         "keys: the read-out weights, batch × N × N"),
        ("adversarial_error_curve(1-D)", lambda: R.adversarial_error_curve(torch.randn(8)), ValueError,
         "keys: expected a tensor of rank >= 2"),
        ("decoding_curve(1-D)", lambda: R.decoding_curve(one, one, one, one), ValueError,
         "weights: expected a tensor of rank >= 2"),
        ("first_failure(float)", lambda: R.first_failure(one), TypeError, "ok: expected a boolean tensor"),
        ("min_cosine_curve(1-D)", lambda: R.min_cosine_curve(one, one, one), ValueError,
         "weights: expected a tensor of rank >= 2"),
        ("readout_weights(rule='nope')", lambda: R.readout_weights(k, k, rule="nope"), ValueError,
         "rule: expected one of"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
