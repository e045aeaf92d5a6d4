"""Oja's rule finds the top principal direction with unit norm; plain Hebb on the same data diverges."""

import pytest
import torch

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
