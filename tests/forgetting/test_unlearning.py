"""Unlearning one association: the targeted delta update removes it with small collateral damage;
subtracting a Hebbian trace leaves it behind when the pair was repeated or the keys overlap."""

import pytest
import torch

from pavlovlab.forgetting import unlearning as U
from pavlovlab.memory.hebbian import outer_product_memory, recall_cosine


def test_random_associations_overlap(device):
    keys, values = U.random_associations(5, 16, 8, batch_shape=(3,), overlap=0.7,
                                         generator=torch.Generator().manual_seed(0), device=device)
    assert keys.shape == (3, 5, 16) and values.shape == (3, 5, 8) and keys.device.type == device.type
    assert torch.allclose(keys.norm(dim=-1), torch.ones(3, 5, device=device), atol=1e-5)
    assert torch.allclose((keys[:, 0] * keys[:, 1]).sum(-1), torch.full((3,), 0.7, device=device), atol=1e-5)


def test_repeated_hebbian_memory_is_sum_of_outer_products(dtype):
    gen = torch.Generator().manual_seed(1)
    keys, values = torch.randn(4, 6, generator=gen).to(dtype), torch.randn(4, 3, generator=gen).to(dtype)
    r = torch.tensor([1.0, 2.0, 0.0, 5.0], dtype=dtype)
    S = outer_product_memory(keys, values, r)
    expected = sum(r[i] * torch.outer(values[i], keys[i]) for i in range(4))
    assert torch.allclose(S, expected, atol=1e-5)


def test_delta_update_makes_key_read_the_new_value_exactly(device, dtype):
    gen = torch.Generator().manual_seed(2)
    S = torch.randn(2, 3, 5, 7, generator=gen).to(device=device, dtype=dtype)
    k = torch.randn(3, 7, generator=gen).to(device=device, dtype=dtype)
    v_new = torch.randn(5, generator=gen).to(device=device, dtype=dtype)
    S2 = U.unlearn_delta(S, k, v_new)
    assert S2.shape == (2, 3, 5, 7)
    assert torch.allclose(S2 @ k[..., None], v_new.expand(2, 3, 5)[..., None], atol=1e-4)
    # default target: zero ("stop salivating"); a key orthogonal to k is untouched
    S3 = U.unlearn_delta(S, k)
    assert (S3 @ k[..., None]).abs().max() < 1e-4
    other = torch.randn(3, 7, generator=gen).to(device=device, dtype=dtype)
    other = other - (other * k).sum(-1, keepdim=True) / (k * k).sum(-1, keepdim=True) * k
    assert torch.allclose(S3 @ other[..., None], S @ other[..., None], atol=1e-4)


def test_partial_step_beta():
    S = torch.tensor([[2.0, 0.0]])
    k = torch.tensor([1.0, 0.0])
    assert torch.allclose(U.unlearn_delta(S, k, beta=0.25), torch.tensor([[1.5, 0.0]]))


def test_protected_delta_leaves_protected_keys_exactly(dtype):
    keys, values = U.random_associations(10, 32, 16, batch_shape=(4,), overlap=0.8,
                                         generator=torch.Generator().manual_seed(3), dtype=dtype)
    S = outer_product_memory(keys, values)
    S2 = U.unlearn_delta(S, keys[:, 0], protect=keys[:, 1:])
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    assert (S2 @ keys[:, 0, :, None]).abs().max() < tol
    assert torch.allclose(keys[:, 1:] @ S2.mT, keys[:, 1:] @ S.mT, atol=tol)


def test_targeted_unlearning_small_collateral():
    """One bell among 16 in d_k = 64: the delta update removes its response entirely, and the other
    bells' conditioned responses move by little (key overlaps ~ 1/√d_k); protected: not at all."""
    res = U.unlearning_experiment(16, 64, 64, n_trials=256, generator=torch.Generator().manual_seed(0))
    delta, prot = res["delta"], res["delta_protected"]
    assert delta.residual.max() < 1e-4 and prot.residual.max() < 1e-4
    assert delta.collateral.mean() < 0.05 and delta.worst.mean() < 0.15
    assert delta.cos_change.mean() > -0.01                      # the others are not recalled worse
    assert prot.worst.max() < 1e-4
    assert res["hebbian"].residual.mean() > 0.3                 # the crosstalk response stays


@pytest.mark.parametrize("repeats,overlap", [(5.0, 0.0), (1.0, 0.7)])
def test_hebbian_subtraction_is_worse(repeats, overlap):
    """Repeated pairing: one subtracted trace leaves (r−1)/r of the response. Overlapping keys: even
    the exact trace leaves what the similar bell taught (≈ overlap × its food)."""
    res = U.unlearning_experiment(16, 64, 64, repeats=repeats, overlap=overlap, n_trials=256,
                                  generator=torch.Generator().manual_seed(1))
    heb, delta = res["hebbian"].residual.mean().item(), res["delta"].residual.mean().item()
    assert delta < 1e-4
    assert heb > 0.5
    if repeats > 1:
        assert heb == pytest.approx((repeats - 1) / repeats, abs=0.05)


def test_overlap_cost_of_plain_delta_and_its_fix():
    """With a similar bell (cos 0.7) the plain delta update halves that bell's response
    (1 − 0.7² ≈ 0.51 left); protecting the other keys keeps it."""
    res = U.unlearning_experiment(16, 64, 64, overlap=0.7, n_trials=256, generator=torch.Generator().manual_seed(2))
    s1 = res["delta"].strength_after[:, 1].mean().item()
    assert s1 == pytest.approx(0.51, abs=0.05)
    assert res["delta_protected"].strength_after[:, 1].mean().item() == pytest.approx(
        res["delta_protected"].strength_before[:, 1].mean().item(), abs=1e-4)


def test_recall_measures():
    keys = torch.eye(3)
    values = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    S = outer_product_memory(keys, values, torch.tensor([1.0, 3.0, 0.0]))
    assert torch.allclose(U.recall_strength(S, keys, values), torch.tensor([1.0, 3.0, 0.0]))
    assert torch.allclose(recall_cosine(keys, values, S), torch.tensor([1.0, 1.0, 0.0]))


def test_bad_inputs():
    S = torch.zeros(4, 6)
    with pytest.raises(ValueError, match="k: expected key dimension"):
        U.unlearn_delta(S, torch.ones(5))
    with pytest.raises(ValueError, match="non-zero key"):
        U.unlearn_delta(S, torch.zeros(6))
    with pytest.raises(ValueError, match="v_new"):
        U.unlearn_delta(S, torch.ones(6), torch.ones(3))
    with pytest.raises(ValueError, match="protect: expected fewer"):
        U.unlearn_delta(S, torch.ones(6), protect=torch.randn(6, 6))
    with pytest.raises(ValueError, match="span of the protected"):
        U.unlearn_delta(S, torch.tensor([1.0, 0, 0, 0, 0, 0]), protect=torch.eye(6)[:2])
    with pytest.raises(TypeError, match="k"):
        U.unlearn_delta(S, torch.ones(6, dtype=torch.float64))
    with pytest.raises(ValueError, match="beta"):
        U.unlearn_delta(S, torch.ones(6), beta=-1.0)
    with pytest.raises(ValueError, match="times"):
        U.unlearn_hebbian(S, torch.ones(6), torch.ones(4), times=float("nan"))
    with pytest.raises(ValueError, match="overlap"):
        U.random_associations(4, 8, 8, overlap=1.5)
    with pytest.raises(ValueError, match="values"):
        outer_product_memory(torch.ones(3, 6), torch.ones(2, 4), 2.0)
    with pytest.raises(ValueError, match="target"):
        U.unlearning_report(S, S, torch.ones(3, 6), torch.ones(3, 4), 3)
    with pytest.raises(ValueError, match="n"):
        U.unlearning_experiment(1)
