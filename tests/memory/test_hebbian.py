"""Tests of pavlovlab.memory.hebbian: the outer-product memory, its crosstalk and recall."""

import math

import pytest
import torch
from badinput import LONG, check, column, parametrize, unit, with_nan
from conftest import TOL, rel_rms

from pavlovlab import AssociativeMemory
from pavlovlab.forgetting import unlearning as U
from pavlovlab.memory import hebbian as Hb
from pavlovlab.memory.hebbian import crosstalk, outer_product_memory, recall_cosine
from pavlovlab.sampling import random_keys


def _values(shape, gen, device, dtype):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)


def _keys_of_many_norms(*shape, d, gen, device, dtype):
    """Random directions with norms from 0.25 to 4 (a log-uniform draw per key): nothing here assumes ‖k‖ = 1,
    so code that normalises the keys, or takes k·k for 1, gives other numbers."""
    directions = random_keys(*shape, d=d, kind="sphere", generator=gen, dtype=torch.float64)
    norms = 4.0 ** (2 * torch.rand(*shape, 1, generator=gen, dtype=torch.float64) - 1)
    return (directions * norms).to(device=device, dtype=dtype)


def test_outer_product_memory_equals_associative_memory(device, dtype, gen):
    keys = _keys_of_many_norms(2, 3, 7, d=5, gen=gen, device=device, dtype=dtype)
    values = _values((2, 3, 7, 4), gen, device, dtype)
    mem = AssociativeMemory(5, 4, batch_shape=(2, 3), device=device, dtype=dtype)
    mem.write(keys, values)
    S = outer_product_memory(keys, values)
    assert S.shape == (2, 3, 4, 5) and S.dtype == dtype and S.device.type == device.type
    assert rel_rms(S, mem.S) < TOL[dtype]
    explicit = sum(torch.outer(values[1, 2, i], keys[1, 2, i]) for i in range(7))
    assert rel_rms(S[1, 2], explicit) < TOL[dtype]


def test_crosstalk_matches_its_definition(device, dtype, gen):
    keys = _keys_of_many_norms(3, 6, d=9, gen=gen, device=device, dtype=dtype)
    values = _values((3, 6, 5), gen, device, dtype)
    c = crosstalk(keys, values)
    assert c.shape == (3, 6, 5)
    S = outer_product_memory(keys, values)
    for j in range(6):
        read = (S @ keys[..., j, :, None])[..., 0]
        signal = values[..., j, :] * (keys[..., j, :] * keys[..., j, :]).sum(-1, keepdim=True)
        assert rel_rms(c[..., j, :], read - signal) < 10 * TOL[dtype]
        others = sum(values[..., i, :] * (keys[..., i, :] * keys[..., j, :]).sum(-1, keepdim=True)
                     for i in range(6) if i != j)
        assert rel_rms(c[..., j, :], others) < 10 * TOL[dtype]
    recalled = torch.stack([(S @ keys[..., j, :, None])[..., 0] for j in range(6)], dim=-2)
    cosine = (recalled * values).sum(-1) / (recalled.norm(dim=-1) * values.norm(dim=-1))
    assert rel_rms(recall_cosine(keys, values), cosine) < 10 * TOL[dtype]


def test_crosstalk_broadcasts_leading_dims(gen):
    keys = random_keys(1, 3, 4, d=6, kind="sphere", generator=gen)
    values = torch.randn(2, 1, 4, 5, generator=gen)
    assert crosstalk(keys, values).shape == (2, 3, 4, 5)
    assert recall_cosine(keys, values).shape == (2, 3, 4)


def test_orthonormal_keys_recall_perfectly(device, dtype, gen):
    keys = random_keys(2, 16, d=16, kind="orthogonal", generator=gen, device=device, dtype=dtype)
    eye = torch.eye(16, device=device, dtype=dtype).expand(2, 16, 16)
    assert rel_rms(keys @ keys.mT, eye) < 10 * TOL[dtype]
    values = _values((2, 16, 3), gen, device, dtype)
    assert crosstalk(keys, values).abs().max().item() < 100 * TOL[dtype]
    assert (recall_cosine(keys, values) - 1).abs().max().item() < 100 * TOL[dtype]


def test_crosstalk_variance_is_n_minus_1_over_d_k(gen):
    for n, d_k in [(2, 8), (17, 32), (65, 64)]:
        keys = random_keys(400, n, d=d_k, kind="sphere", generator=gen, dtype=torch.float64)
        values = torch.randn(400, n, 8, generator=gen, dtype=torch.float64)
        c = crosstalk(keys, values)
        predicted = (n - 1) / d_k
        assert abs(c.mean().item()) < 0.1 * math.sqrt(predicted)
        assert abs(c.pow(2).mean().item() / predicted - 1) < 0.06


def test_recall_cosine_follows_the_theory(gen):
    n, d_k = 33, 64
    keys = random_keys(200, n, d=d_k, kind="sphere", generator=gen, dtype=torch.float64)
    values = torch.randn(200, n, 64, generator=gen, dtype=torch.float64)
    measured = recall_cosine(keys, values).mean().item()
    assert abs(measured - 1 / math.sqrt(1 + (n - 1) / d_k)) < 0.03
    assert recall_cosine(keys[:, :1], values[:, :1]).min().item() > 1 - 1e-9  # one pair: no crosstalk


@pytest.mark.parametrize("bad, error", [
    (lambda k, v: outer_product_memory(k.numpy(), v), TypeError),
    (lambda k, v: outer_product_memory(k, v[..., :3, :]), ValueError),
    (lambda k, v: crosstalk(k, v.double()), TypeError),
    (lambda k, v: crosstalk(k[0], v), ValueError),
    (lambda k, v: crosstalk(k, v.int()), TypeError),
    (lambda k, v: recall_cosine(k.expand(3, 4, 5), v.expand(2, 4, 2)), ValueError),
])
def test_bad_pairs_are_rejected(bad, error, gen):
    keys, values = torch.randn(4, 5, generator=gen), torch.randn(4, 2, generator=gen)
    with pytest.raises(error, match=r"keys|values"):
        bad(keys, values)


def test_crosstalk_variance_equals_a_literal_computation():
    """Same generator, same draws: the measured mean squares equal a hand-written double loop."""
    from pavlovlab.memory.hebbian import measure_crosstalk_variance

    ns, d_k, trials, d_v = [2, 5], 6, 4, 3
    got = measure_crosstalk_variance(ns, d_k, trials=trials, d_v=d_v, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(7)
    want = torch.zeros(trials, len(ns), dtype=torch.float64)
    for col, n in enumerate(ns):
        keys = random_keys(trials, n, d=d_k, kind="sphere", generator=g, dtype=torch.float64)
        values = torch.randn(trials, n, d_v, generator=g, dtype=torch.float64)
        for t in range(trials):
            total = 0.0
            for j in range(n):
                c = sum(values[t, i] * float(keys[t, i] @ keys[t, j]) for i in range(n) if i != j)
                total += float((c ** 2).sum())
            want[t, col] = total / (n * d_v)
    assert got.shape == (trials, 2)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-14)


def test_crosstalk_variance_slope_is_one_for_random_unit_keys():
    """The theory (n − 1)/d_k, an independent closed form: slope 1 within 4 standard errors."""
    from pavlovlab.memory.hebbian import measure_crosstalk_variance
    from pavlovlab.statistics import slope_through_origin

    ns = torch.tensor([2, 8, 32, 64])
    msq = measure_crosstalk_variance(ns, 16, trials=300, generator=torch.Generator().manual_seed(0))
    slope, se = slope_through_origin((ns - 1) / 16, msq)
    assert 0 < se < 0.02 and abs(slope - 1) < 4 * se


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.memory.hebbian``: one row ``(case, call, expect, fragment)`` a case."""
    unit_keys, unit_values = unit(8, 16), unit(8, 16, seed=1)
    keys, values = U.random_associations(6, 8, 4, generator=torch.Generator().manual_seed(0))
    S = Hb.outer_product_memory(keys, values)
    return [
        ("NaN keys", lambda: Hb.recall_cosine(with_nan(unit_keys), unit_values), ValueError,
         "keys: expected finite values"),
        ("mismatched n", lambda: Hb.outer_product_memory(unit_keys, unit_values[:5]), ValueError, "values:"),
        ("list keys", lambda: Hb.crosstalk(unit_keys.tolist(), unit_values), TypeError,
         "keys: expected a torch.Tensor"),
        ("outer_product_memory(repeats wrong shape)",
         lambda: Hb.outer_product_memory(keys, values, torch.ones(5)), ValueError,
         "repeats: expected a number or a tensor broadcasting to (n,) = (6,), got shape (5,)"),
        ("recall_cosine with float64 memory and float32 keys", lambda: Hb.recall_cosine(keys, values, S.double()),
         TypeError, "memory: expected dtype torch.float32"),
        ("crosstalk(n = 300,000)", lambda: Hb.crosstalk(column(LONG), column(LONG)), ValueError,
         "keys: the overlaps, batch × n × n = 9e+10 float32 entries (360 GB)"),
        ("measure_crosstalk_variance([1], 8)", lambda: Hb.measure_crosstalk_variance([1], 8), ValueError,
         "ns[0]: expected an integer >= 2"),
        ("measure_crosstalk_variance(generator='seed')",
         lambda: Hb.measure_crosstalk_variance([2, 3], 4, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("measure_crosstalk_variance: 6e12 key entries",
         lambda: Hb.measure_crosstalk_variance([2, 3], 10**12, trials=3), ValueError,
         "shape: (*shape, d) = 6e+12 float64 entries"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


def test_outer_product_memory_with_non_unit_keys_matches_the_sum():
    """Keys of norm 0.5 to 3: S = Σ v_i k_iᵀ exactly (a memory that normalised its keys fails)."""
    g = torch.Generator().manual_seed(0)
    keys = torch.randn(5, 6, generator=g, dtype=torch.float64) * torch.tensor([0.5, 1.0, 2.0, 3.0, 1.5])[:, None]
    values = torch.randn(5, 3, generator=g, dtype=torch.float64)
    expected = sum(torch.outer(values[i], keys[i]) for i in range(5))
    assert torch.allclose(Hb.outer_product_memory(keys, values), expected, atol=1e-12)
    r = torch.tensor([1.0, 2.0, 0.0, 1.0, 3.0], dtype=torch.float64)
    expected_r = sum(r[i] * torch.outer(values[i], keys[i]) for i in range(5))
    assert torch.allclose(Hb.outer_product_memory(keys, values, r), expected_r, atol=1e-12)
