"""Unlearning one association: the targeted delta update removes it with small collateral damage;
subtracting a Hebbian trace leaves it behind when the pair was repeated or the keys overlap."""

import math

import pytest
import torch
import torch.nn.functional as F
from badinput import FAST, NAN, check, parametrize, with_nan
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab.forgetting import unlearning as U
from pavlovlab.memory import hebbian as Hb
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


# ---------------------------------------------------------------------------------------------------- bad input
def _cue_response_by_hand():
    """S = v kᵀ with v = (2, 0, 0), k = e1: cues e1, e2, e1/2 evoke 1, 0, 1/2 of the learned response."""
    k, v = torch.eye(4)[0], torch.tensor([2.0, 0.0, 0.0])
    cues = torch.stack([k, torch.eye(4)[1], 0.5 * k])
    return bool(torch.allclose(U.cue_response(torch.outer(v, k), cues, v), torch.tensor([1.0, 0.0, 0.5])))


def _generalisation_by_hand():
    """The delta edits set S k₀ = 0, so bell 0 evokes nothing after them; the protected edit leaves S k₁ as it
    was, so bell 1's response is the one before the edit."""
    out = U.generalisation_after_unlearning(4, 8, 8, n_trials=5, generator=_gen(2), dtype="float64")
    zero = torch.zeros(5, dtype=torch.float64)
    return bool(torch.allclose(out["delta"][:, 0], zero, atol=1e-10)
                and torch.allclose(out["delta_protected"][:, 0], zero, atol=1e-10)
                and torch.allclose(out["delta_protected"][:, 1], out["before"][:, 1], atol=1e-10))


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _probe_cues_by_hand():
    """Keys e1, e2, e3: cues e1, e2, (e1 + e2)/√2, a look-alike at cosine 0.7 with e1, all of unit norm."""
    keys = torch.eye(4, dtype=torch.float64)[:3]
    c = U.probe_cues(keys, overlap=0.7, generator=_gen(1))
    return bool(torch.allclose(c[:2], keys[:2]) and torch.allclose(c[2], (keys[0] + keys[1]) / math.sqrt(2))
                and math.isclose(float(c[3] @ keys[0]), 0.7, abs_tol=1e-12)
                and torch.allclose(c.norm(dim=-1), torch.ones(5, dtype=torch.float64)))


def _unlearn_at_the_bound() -> bool:
    S = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    k = torch.tensor([2.0, 0.0], dtype=torch.float64)                    # ‖k‖² = 4: β = 0.5 reflects the error
    after = U.unlearn_delta(S, k, beta=0.5) @ k
    return bool(torch.allclose(after, -(S @ k)))


def _unlearn_strengthens() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    S = torch.randn(3, 4, generator=g, dtype=torch.float64)
    k = torch.tensor([2.0, 1.5, 0.9, 0.3], dtype=torch.float64)        # ‖k‖² = 7.15
    return U.unlearn_delta(S, k, beta=3.0)


hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 50), st.text(max_size=2), st.none())


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.forgetting.unlearning``: one row ``(case, call, expect, fragment)`` a case."""
    identity = torch.eye(4)
    keys, values = U.random_associations(6, 8, 4, generator=torch.Generator().manual_seed(0))
    S = Hb.outer_product_memory(keys, values)
    dup = torch.stack([keys[1], keys[2], keys[1]])
    basis = torch.eye(4)[:3]
    empty = torch.zeros(3, 4)
    return [
        ("unlearn_delta NaN k", lambda: U.unlearn_delta(identity, with_nan(torch.ones(4), 0)), ValueError,
         "k: expected finite"),
        ("unlearning_experiment n = 10, d_k = 4", lambda: U.unlearning_experiment(n=10, d_k=4, n_trials=2), ValueError,
         "n: the 'delta_protected' method protects the other n − 1 keys"),
        ("random_associations dtype string",
         lambda: U.random_associations(3, 4, 4, dtype="float64")[0].dtype == torch.float64, "ok", ""),
        ("recall_strength with float64 S and float32 keys", lambda: U.recall_strength(S.double(), keys, values),
         TypeError, "keys: expected dtype torch.float64"),
        ("unlearning_report(v_new wrong shape)",
         lambda: U.unlearning_report(S, S, keys, values, 0, v_new=torch.zeros(7)), ValueError,
         "v_new: expected value dimension d_v (dim -2 of S_before) = 4, got 7"),
        ("unlearn_delta with duplicate protected keys", lambda: U.unlearn_delta(S, keys[0], protect=dup), ValueError,
         "protect: rows 0 and 2 are the same key"),
        ("random_associations(batch_shape=(-1,))", lambda: U.random_associations(3, 4, 4, batch_shape=(-1,)),
         ValueError, "batch_shape[0]: expected an integer >= 1"),
        ("random_associations(device='nope')", lambda: U.random_associations(3, 4, 4, device="nope"), ValueError,
         "device: expected a device name"),
        ("edit_reach(n_cues=0)", lambda: U.edit_reach(n_cues=0), ValueError, "n_cues"),
        ("probe_cues(overlap=2)", lambda: U.probe_cues(basis, overlap=2), ValueError,
         "overlap: expected a number <= 1"),
        ("probe_cues(overlap=nan)", lambda: U.probe_cues(basis, overlap=NAN), ValueError,
         "overlap: expected a finite number"),
        ("probe_cues(one key)", lambda: U.probe_cues(basis[:1]), ValueError, "keys: expected at least 2 keys"),
        ("probe_cues(keys of norm 2)", lambda: U.probe_cues(2 * basis), ValueError, "keys: expected unit keys"),
        ("probe_cues(integer keys)", lambda: U.probe_cues(basis.long()), TypeError,
         "keys: expected a floating-point tensor"),
        ("probe_cues of e1, e2, e3 by hand", _probe_cues_by_hand, "ok", ""),
        ("cue_response(cues of d_k 5)", lambda: U.cue_response(empty, torch.zeros(2, 5), torch.ones(3)), ValueError,
         "cues: expected key dimension d_k (last dim of S) = 4, got 5"),
        ("cue_response(value of d_v 2)", lambda: U.cue_response(empty, torch.zeros(2, 4), torch.ones(2)), ValueError,
         "value: expected value dimension d_v (dim -2 of S) = 3, got 2"),
        ("cue_response(zero value)", lambda: U.cue_response(empty, torch.zeros(2, 4), torch.zeros(3)), ValueError,
         "value: expected a non-zero value vector"),
        ("cue_response(float64 cues)", lambda: U.cue_response(empty, torch.zeros(2, 4).double(), torch.ones(3)),
         TypeError, "cues: expected dtype torch.float32"),
        ("cue_response(inf in S)", lambda: U.cue_response(empty.index_fill(0, torch.tensor([1]), math.inf),
                                                          torch.zeros(2, 4), torch.ones(3)),
         ValueError, "S: expected finite values"),
        ("cue_response of S = v kᵀ by hand", _cue_response_by_hand, "ok", ""),
        ("generalisation_after_unlearning(n=1)", lambda: U.generalisation_after_unlearning(n=1), ValueError,
         "n: expected an integer >= 2"),
        ("generalisation_after_unlearning(n=5, d_k=4) (n − 1 ≥ d_k)",
         lambda: U.generalisation_after_unlearning(n=5, d_k=4), ValueError, "n: protecting the other n − 1 keys"),
        ("generalisation_after_unlearning(overlap=1.5)",
         lambda: U.generalisation_after_unlearning(n=3, d_k=4, overlap=1.5), ValueError,
         "overlap: expected a number <= 1.0"),
        ("generalisation_after_unlearning(overlap=1.0)",
         lambda: U.generalisation_after_unlearning(n=3, d_k=4, overlap=1.0), ValueError,
         "overlap: expected a number strictly between -1 and 1"),
        ("generalisation_after_unlearning(overlap=nan)",
         lambda: U.generalisation_after_unlearning(n=3, d_k=4, overlap=NAN), ValueError,
         "overlap: expected a finite number"),
        ("generalisation_after_unlearning(n_trials=0)",
         lambda: U.generalisation_after_unlearning(n_trials=0), ValueError, "n_trials: expected an integer >= 1"),
        ("generalisation_after_unlearning(device='gpu0')",
         lambda: U.generalisation_after_unlearning(n=3, d_k=4, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("generalisation_after_unlearning: the delta edits silence bell 0, the protected one spares bell 1",
         _generalisation_by_hand, "ok", ""),
        ("unlearn_delta(beta=3) with ‖k‖² = 7.15", _unlearn_strengthens, ValueError, "beta: expected beta·‖k‖² <= 2"),
        ("unlearn_delta(beta·‖k‖² = 2) reflects the error", _unlearn_at_the_bound, "ok", ""),
        ("unlearn_delta(protect=..., beta=2.5)",
         lambda: U.unlearn_delta(torch.eye(3), torch.eye(3)[0], beta=2.5, protect=torch.eye(3)[1:2]), ValueError,
         "beta: expected a number <= 2 with protect"),
        ("unlearn_delta with a key whose ‖k‖² overflows float32",
         lambda: U.unlearn_delta(torch.ones(3, 4), torch.full((4,), 1e20)), ValueError,
         "k: expected a key whose squared norm ‖k‖² fits in torch.float32"),
        ("unlearn_hebbian with the wrong d_v",
         lambda: U.unlearn_hebbian(torch.zeros(3, 4), torch.ones(4), torch.ones(2)), ValueError,
         "v: expected value dimension"),
        # what only the draws checked, now checked by the doors (the same messages)
        ("random_associations(generator='seed')", lambda: U.random_associations(3, 4, 4, generator="seed"),
         TypeError, "generator: expected a torch.Generator"),
        ("probe_cues(generator='seed')", lambda: U.probe_cues(torch.eye(3), generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("unlearning_experiment(generator='seed')", lambda: U.unlearning_experiment(4, 8, 8, generator="seed"),
         TypeError, "generator: expected a torch.Generator"),
        ("generalisation_after_unlearning(generator='seed')",
         lambda: U.generalisation_after_unlearning(4, 8, 8, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("edit_reach(generator='seed')", lambda: U.edit_reach(4, 8, 8, generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("random_associations: 1e13 key entries", lambda: U.random_associations(10**6, 10**7, 4), ValueError,
         "shape: (*shape, d) = 1e+13 float64 entries"),
        ("edit_reach: 2e15 unseen cue entries", lambda: U.edit_reach(4, 8, 8, n_cues=10**12), ValueError,
         "shape: (*shape, d) = 2.048e+15 float64 entries"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


def test_unlearn_delta_partial_step_removes_beta_norm_squared_of_the_error():
    """With β and a key of norm 2, one step removes the fraction β‖k‖² of the error: ``S + β (v − S k) kᵀ``."""
    g = torch.Generator().manual_seed(0)
    S = torch.randn(3, 5, generator=g, dtype=torch.float64)
    k = 2 * F.normalize(torch.randn(5, generator=g, dtype=torch.float64), dim=0)
    v = torch.randn(3, generator=g, dtype=torch.float64)
    beta = 0.1
    after = U.unlearn_delta(S, k, v, beta=beta)
    assert torch.allclose(after, S + beta * torch.outer(v - S @ k, k), atol=1e-12)
    assert torch.allclose(v - after @ k, (1 - beta * 4.0) * (v - S @ k), atol=1e-12)


@FAST
@given(n=st.integers(-1, 6), d_k=st.integers(-1, 6), overlap=hyper,
       batch=st.lists(st.integers(-1, 2), max_size=2))
def test_property_unlearning_names_the_argument(n, d_k, overlap, batch):
    try:
        keys, _ = U.random_associations(n, d_k, 3, batch_shape=batch, overlap=overlap)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"n", "d_k", "overlap", "batch_shape"}, str(e)
        return
    assert bool(torch.isfinite(keys).all()) and keys.shape == (*batch, n, d_k)
