"""Oja's rule finds the top principal direction with unit norm; plain Hebb on the same data diverges."""

import math

import pytest
import torch
from badinput import FAST, NAN, check, parametrize, with_nan
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab.forgetting import oja


def cloud(gen, device="cpu", dtype=torch.float32, d=5, seeds=6, n=2000):
    return oja.data_cloud(n, d, batch_shape=(seeds,), generator=gen, device=device, dtype=dtype)


def test_data_cloud_is_centred_with_the_given_spread(gen, device, dtype):
    x = oja.data_cloud(4000, 3, scales=[3.0, 1.0, 0.5], batch_shape=(2,), generator=gen, device=device, dtype=dtype)
    assert x.shape == (2, 4000, 3) and x.device.type == device.type and x.dtype == dtype
    assert float(x.mean(-2).abs().max()) < 1e-5
    vals, vecs = oja.principal_components(x, 3)
    assert vals.shape == (2, 3) and vecs.shape == (2, 3, 3)
    assert torch.allclose(vals.sqrt(), torch.tensor([3.0, 1.0, 0.5], dtype=dtype, device=device), rtol=0.06)


def test_oja_reaches_unit_norm_and_the_top_eigenvector(gen, device, dtype):
    x = cloud(gen, device, dtype)
    w = oja.oja_pca(x, lr=0.002, epochs=2, generator=gen)
    top = torch.linalg.eigh(x.mT @ x / x.shape[-2]).eigenvectors[..., -1]
    assert w.shape == (6, 5)
    assert float((w.norm(dim=-1) - 1).abs().max()) < 0.01
    assert float(oja.alignment(w, top).min()) > 0.99


def test_plain_hebb_diverges_on_the_same_data(gen):
    x = cloud(gen, n=400)
    w0 = torch.randn(6, 5, generator=gen) * 0.1
    _, heb = oja.hebbian_unit(x, lr=0.01, w0=w0, return_trajectory=True)
    _, ojas = oja.oja_pca(x, lr=0.01, w0=w0, return_trajectory=True)
    assert heb.shape == (6, 401, 5)
    hn, on = heb.norm(dim=-1), ojas.norm(dim=-1)
    assert bool((hn[:, -1] > 1e4).all()) and bool((hn[:, -1] > 10 * hn[:, 200]).all())
    assert float((on[:, 200:] - 1).abs().max()) < 0.1


def test_subspace_rule_finds_an_orthonormal_basis_of_the_top_subspace(gen, dtype):
    x = cloud(gen, dtype=dtype, seeds=4)
    W = oja.oja_subspace(x, 2, lr=0.003, epochs=3, generator=gen)
    eye = torch.eye(2, dtype=dtype).expand(4, 2, 2)
    assert torch.allclose(W @ W.mT, eye, atol=0.02)
    _, U = oja.principal_components(x, 2)
    assert float(torch.linalg.matrix_norm(W.mT @ W - U @ U.mT).max()) < 0.1


def test_vectorised_over_seeds_equals_one_run_per_seed(gen):
    x = cloud(gen, seeds=3, n=300)
    w0 = torch.randn(3, 5, generator=gen)
    together = oja.oja_pca(x, lr=0.01, w0=w0)
    for i in range(3):
        assert torch.allclose(oja.oja_pca(x[i], lr=0.01, w0=w0[i]), together[i], atol=1e-6)


def test_bad_inputs_name_the_argument(gen):
    x = cloud(gen, seeds=2, n=50)
    with pytest.raises(ValueError, match="rule"):
        oja.oja_pca(x, rule="sanger")
    with pytest.raises(ValueError, match="lr"):
        oja.oja_pca(x, lr=float("nan"))
    with pytest.raises(ValueError, match="w0"):
        oja.oja_pca(x, w0=torch.zeros(3, 5))
    with pytest.raises(TypeError, match="x"):
        oja.oja_pca(x.long())
    with pytest.raises(ValueError, match="scales"):
        oja.data_cloud(10, 3, scales=[1.0, 2.0])
    with pytest.raises(ValueError, match="k"):
        oja.principal_components(x, 6)


def test_progress_bars_name_the_rule(capsys):
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    oja.oja_pca(x, progress=True)
    oja.hebbian_unit(x, progress=True)
    oja.oja_subspace(x, 2, progress=True)
    err = capsys.readouterr().err
    assert "Oja unit" in err and "Hebbian unit" in err and "Oja subspace (2 units)" in err
    assert "<function" not in err


# ---------------------------------------------------------------------------------------------------- bad input
def _fixed_point_by_hand():
    """V = (e1, e2) in R³ (orthonormal, so P keeps rows 0, 1), K = (e1, e2) in R⁴, S = ones: rows 0, 1 become Kᵀ
    and row 2, outside the span of the values, keeps its ones."""
    S = torch.ones(3, 4, dtype=torch.float64)
    got = oja.memory_fixed_point(S, torch.eye(4, dtype=torch.float64)[:2], torch.eye(3, dtype=torch.float64)[:2])
    expected = torch.tensor([[1.0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.float64)
    return bool(torch.allclose(got, expected, atol=1e-12))


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.forgetting.oja``: one row ``(case, call, expect, fragment)`` a case."""
    cloud = oja.data_cloud(200, 3, generator=torch.Generator().manual_seed(0))
    S = torch.zeros(3, 4)
    small_cloud = oja.data_cloud(50, 3, generator=torch.Generator().manual_seed(0))
    return [
        ("oja_subspace k > d", lambda: oja.oja_subspace(cloud, k=5), ValueError, "k: expected at most d = 3"),
        ("oja_pca lr = 5 diverges", lambda: oja.oja_pca(cloud, lr=5.0), "warn", "oja_pca"),
        ("NaN x", lambda: oja.oja_pca(with_nan(cloud)), ValueError, "x: expected finite values"),
        ("memory_fixed_point(rank-1 values)",
         lambda: oja.memory_fixed_point(S, torch.eye(4)[:2], torch.ones(2, 3)), ValueError,
         "values: expected 2 linearly independent values (full rank), got rank 1"),
        ("memory_fixed_point(4 values in d_v = 3)",
         lambda: oja.memory_fixed_point(S, torch.eye(4), torch.eye(4)[:, :3]), ValueError,
         "values: expected at most d_v = 3 values"),
        ("memory_fixed_point(S of the wrong shape)",
         lambda: oja.memory_fixed_point(torch.zeros(4, 4), torch.eye(4)[:2], torch.eye(3)[:2]), ValueError,
         "S: expected shape (..., d_v, d_k) = (..., 3, 4)"),
        ("memory_fixed_point(NaN in S)",
         lambda: oja.memory_fixed_point(S.index_fill(0, torch.tensor([0]), NAN), torch.eye(4)[:2], torch.eye(3)[:2]),
         ValueError, "S: expected finite values"),
        ("memory_fixed_point(float64 keys)",
         lambda: oja.memory_fixed_point(S, torch.eye(4, dtype=torch.float64)[:2], torch.eye(3)[:2]), TypeError,
         "keys: expected dtype torch.float32"),
        ("memory_fixed_point keeps the part of S outside the values' span", _fixed_point_by_hand, "ok", ""),
        ("oja_pca(lr=0)", lambda: oja.oja_pca(torch.randn(20, 3), lr=0.0), ValueError, "lr: expected a number > 0"),
        ("oja_subspace(lr=0)", lambda: oja.oja_subspace(torch.randn(20, 3), 2, lr=0.0), ValueError,
         "lr: expected a number > 0"),
        ("data_cloud(scales='ab')", lambda: oja.data_cloud(10, 2, scales="ab"), TypeError,
         "scales: expected 2 numbers"),
        ("data_cloud(scales=[1, nan])", lambda: oja.data_cloud(10, 2, scales=[1, math.nan]), ValueError,
         "scales: expected finite numbers"),
        ("data_cloud(batch_shape=(-1,))", lambda: oja.data_cloud(10, 2, batch_shape=(-1,)), ValueError,
         "batch_shape[0]: expected an integer >= 1"),
        ("data_cloud(batch_shape=3)", lambda: oja.data_cloud(10, 2, batch_shape=3), TypeError,
         "batch_shape: expected a tuple of sizes"),
        ("data_cloud(device='nope')", lambda: oja.data_cloud(10, 2, device="nope"), ValueError, "device: expected"),
        ("principal_components(n=0)", lambda: oja.principal_components(torch.zeros(0, 3)), ValueError,
         "x: expected at least one sample"),
        ("alignment(w (3,), u (4,))", lambda: oja.alignment(torch.ones(3), torch.ones(4)), ValueError,
         "u: expected the dimension d of w (last dim) = 3, got 4"),
        ("alignment float64 and float32", lambda: oja.alignment(torch.ones(3), torch.ones(3).double()), TypeError,
         "u: expected dtype torch.float32"),
        ("oja_pca(lr=5) diverges: warns", lambda: oja.oja_pca(small_cloud, lr=5.0), "warn", "oja_pca"),
        ("hebbian_unit 30 epochs float32 diverges: warns", lambda: oja.hebbian_unit(small_cloud, lr=0.5, epochs=30),
         "warn", "oja_pca(rule="),
        ("oja_pca(lr=nan)", lambda: oja.oja_pca(small_cloud, lr=math.nan), ValueError, "lr: expected a finite number"),
        ("data_cloud(generator='seed')", lambda: oja.data_cloud(10, 2, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("data_cloud: 1e17 axis entries", lambda: oja.data_cloud(10, 10**7, batch_shape=(10**3,)), ValueError,
         "shape: (*shape, d) = 1e+17 float64 entries"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(n=st.integers(-2, 5), d=st.integers(-2, 4), scales=st.one_of(st.none(), st.text(max_size=3),
                                                                    st.lists(st.floats(allow_nan=True), max_size=4)),
       batch=st.one_of(st.integers(-2, 2), st.lists(st.integers(-2, 2), max_size=2)))
def test_property_oja_names_the_argument(n, d, scales, batch):
    try:
        x = oja.data_cloud(n, d, scales=scales, batch_shape=batch)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"n", "d", "scales", "batch_shape"}, str(e)
        return
    assert bool(torch.isfinite(x).all())
