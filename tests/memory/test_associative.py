"""AssociativeMemory: its rules, its shapes, and clear errors."""

import pytest
import torch
import torch.nn.functional as F
from conftest import TOL, rel_rms

from pavlovlab import AssociativeMemory
from pavlovlab.memory.associative import delta_update, hebbian_update, oja_clamped_update, oja_subspace_update


def test_orthonormal_keys_recall_perfectly(dtype, device, gen):
    keys = torch.linalg.qr(torch.randn(16, 16, generator=gen, dtype=dtype))[0][:10].to(device)  # 10 orthonormal rows
    values = torch.randn(10, 3, generator=gen, dtype=dtype).to(device)
    mem = AssociativeMemory(16, 3, device=device, dtype=dtype)
    mem.write(keys, values)
    assert rel_rms(mem.read(keys), values) <= TOL[dtype]
    assert rel_rms(mem.S, values.mT @ keys) <= TOL[dtype]  # S = Σ v kᵀ


def test_single_pair_and_batch_shapes(device, gen):
    mem = AssociativeMemory(4, 2, batch_shape=(3,), device=device)
    k, v = torch.randn(3, 4, generator=gen).to(device), torch.randn(3, 2, generator=gen).to(device)
    mem.write(k, v)
    assert mem.S.shape == (3, 2, 4)
    assert torch.allclose(mem.S, v[:, :, None] * k[:, None, :])
    assert mem.read(k).shape == (3, 2) and mem.read(k[:, None, :].expand(3, 5, 4)).shape == (3, 5, 2)
    mem.reset()
    assert mem.S.abs().sum() == 0


def test_rules_and_decay(gen):
    S = torch.randn(2, 3, generator=gen)
    k, v = torch.randn(3, generator=gen), torch.randn(2, generator=gen)
    assert torch.allclose(hebbian_update(S, k, v), torch.outer(v, k))
    assert torch.allclose(delta_update(S, k, v), torch.outer(v - S @ k, k))
    assert torch.allclose(oja_subspace_update(S, k, v), torch.outer(v, k - S.T @ v))        # Oja (1989), y := v
    assert torch.allclose(oja_clamped_update(S, k, v), torch.outer(v, k) - torch.diag(v * v) @ S)
    mem = AssociativeMemory(3, 2, rule="delta", lr=0.5, decay=0.9)
    mem.S = S.clone()
    mem.write(k, v)
    assert torch.allclose(mem.S, 0.9 * S + 0.5 * torch.outer(v - S @ k, k))
    custom = AssociativeMemory(3, 2, rule=lambda S, k, v: -S)
    custom.S = S.clone()
    custom.write(k, v)
    assert torch.allclose(custom.S, torch.zeros_like(S))


def test_delta_rule_learns_one_pair_exactly_with_unit_key(gen):
    k = F.normalize(torch.randn(8, generator=gen), dim=0)
    v = torch.randn(4, generator=gen)
    mem = AssociativeMemory(8, 4, rule="delta")
    mem.write(torch.stack([k, k, k]), torch.stack([v, v, v]))
    assert torch.allclose(mem.read(k), v, atol=1e-6)  # β = 1: the error is erased in one step
    heb = AssociativeMemory(8, 4)
    heb.write(torch.stack([k, k, k]), torch.stack([v, v, v]))
    assert torch.allclose(heb.read(k), 3 * v, atol=1e-5)  # Hebb keeps adding: the bell means 3× the food


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"rule: expected one of \['hebbian', 'delta', 'oja_subspace', "
                                         r"'oja_clamped'\], got 'hopfield'"):
        AssociativeMemory(4, 2, rule="hopfield")
    with pytest.raises(ValueError, match=r"lr: expected a number >= 0\.0, got -1\.0"):
        AssociativeMemory(4, 2, lr=-1)
    with pytest.raises(ValueError, match="lr: expected a finite number, got inf"):
        AssociativeMemory(4, 2, lr=float("inf"))
    with pytest.raises(ValueError, match=r"decay: expected a number <= 1\.0, got 1\.5"):
        AssociativeMemory(4, 2, decay=1.5)
    with pytest.raises(ValueError, match="d_key: expected an integer >= 1, got 0"):
        AssociativeMemory(0, 2)
    with pytest.raises(TypeError, match="dtype: expected a floating-point dtype"):
        AssociativeMemory(4, 2, dtype=torch.int64)
    mem = AssociativeMemory(4, 2)
    with pytest.raises(ValueError, match="k: expected key dimension d_key = 4, got 3"):
        mem.write(torch.randn(3), torch.randn(2))
    with pytest.raises(ValueError, match="v: expected value dimension d_value = 2, got 5"):
        mem.write(torch.randn(4), torch.randn(5))
    with pytest.raises(TypeError, match=r"k: expected dtype torch\.float32 on cpu"):
        mem.write(torch.randn(4, dtype=torch.float64), torch.randn(2))
    with pytest.raises(ValueError, match="v: expected sequence length T"):
        mem.write(torch.randn(6, 4), torch.randn(5, 2))
    with pytest.raises(ValueError, match="q: expected key dimension d_key = 4, got 2"):
        mem.read(torch.randn(2))
    with pytest.raises(ValueError, match="k: expected shape"):
        mem.write(torch.randn(2, 3, 4), torch.randn(2, 3, 2))


# --- the Oja-type rules: fixed points against closed forms worked out by hand ---------------------------

V_SMALL = [1.0, 0.5, -0.25, 0.05]      # a value with a small component
"""‖v‖² = 1 + 0.25 + 0.0625 + 0.0025 = 1.315."""


def _repeat_one_pair(rule, lr, steps):
    k = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    v = torch.tensor(V_SMALL, dtype=torch.float64)
    mem = AssociativeMemory(3, 4, rule=rule, lr=lr, dtype=torch.float64)
    mem.write(k.expand(steps, 3), v.expand(steps, 4))
    return mem, k


def test_oja_subspace_one_pair_fixed_point_is_v_over_its_squared_norm():
    mem, k = _repeat_one_pair("oja_subspace", 0.5, 200)
    expected = torch.tensor([1.0, 0.5, -0.25, 0.05], dtype=torch.float64) / 1.315         # S k = v / ‖v‖²
    assert torch.allclose(mem.read(k), expected, atol=1e-12)
    assert abs(mem.S.norm().item() - 1.315 ** -0.5) < 1e-12                                # ‖S‖_F = 1/‖v‖ = 0.8720
    assert torch.allclose(mem.S.T @ torch.tensor(V_SMALL, dtype=torch.float64), k, atol=1e-12)   # Sᵀ v = k


def test_oja_clamped_one_pair_fixed_point_is_one_over_v():
    mem, k = _repeat_one_pair("oja_clamped", 1.0, 12000)     # slowest unit contracts by (1 − 0.0025) per write
    expected = torch.tensor([1.0, 2.0, -4.0, 20.0], dtype=torch.float64)                  # S k = 1/v elementwise
    assert torch.allclose(mem.read(k), expected, rtol=1e-9)
    assert abs(mem.S.norm().item() - 421 ** 0.5) < 1e-8                                    # √(1+4+16+400) = 20.52


def test_oja_subspace_many_pairs_converge_to_the_dual_basis_of_the_values(gen):
    n, d_k, d_v = 5, 8, 7
    K = torch.linalg.qr(torch.randn(d_k, d_k, generator=gen, dtype=torch.float64))[0][:, :n]   # orthonormal keys
    V = torch.randn(d_v, n, generator=gen, dtype=torch.float64)
    V = V / V.norm(dim=0)
    mem = AssociativeMemory(d_k, d_v, rule="oja_subspace", lr=0.5, dtype=torch.float64)
    cycles = 600
    mem.write(K.T.repeat(cycles, 1), V.T.repeat(cycles, 1))
    dual = torch.linalg.solve(V.T @ V, V.T).T              # V (VᵀV)⁻¹, independent of the rule's code
    assert rel_rms(mem.S, dual @ K.T) < 1e-8
    assert torch.allclose((V * (mem.S @ K)).sum(0), torch.ones(n, dtype=torch.float64), atol=1e-8)   # vᵢ·S kᵢ = 1
    assert abs(mem.S.norm().item() ** 2 - torch.linalg.inv(V.T @ V).trace().item()) < 1e-7


def test_step_writes_each_rule_by_the_formula_written_here(gen):
    """memory.step with each rule, by name and as a function: compared with the rule's formula written out
    in this test (S ← γS + η ΔS), not with the package's update functions."""
    from pavlovlab.memory.associative import RULES, step

    rules = ("hebbian", "delta", "oja_subspace", "oja_clamped")
    S = torch.randn(4, 3, 2, 5, 6, generator=gen, dtype=torch.float64)      # (rule, batch 3, 2, d_v = 5, d_k = 6)
    k = torch.randn(3, 2, 6, generator=gen, dtype=torch.float64)
    v = torch.randn(3, 2, 5, generator=gen, dtype=torch.float64)
    eta = torch.tensor([0.5, 0.25, 0.1, 0.2], dtype=torch.float64).view(4, 1, 1, 1, 1)
    got = torch.stack([step(S[i], k, v, r, lr=eta[i], decay=0.9) for i, r in enumerate(rules)])
    by_function = torch.stack([step(S[i], k, v, RULES[r], lr=eta[i], decay=0.9) for i, r in enumerate(rules)])
    assert torch.equal(got, by_function)
    outer = lambda a, b: a[..., :, None] * b[..., None, :]  # noqa: E731
    Sk = lambda M: torch.einsum("...ij,...j->...i", M, k)     # noqa: E731
    Stv = lambda M: torch.einsum("...ij,...i->...j", M, v)    # noqa: E731
    want = [outer(v, k), outer(v - Sk(S[1]), k), outer(v, k - Stv(S[2])), outer(v, k) - (v * v)[..., :, None] * S[3]]
    for i, dS in enumerate(want):
        torch.testing.assert_close(got[i], 0.9 * S[i] + eta[i] * dS, rtol=1e-12, atol=1e-12)
    # a learner's callable: the same update; its wrong output is named
    torch.testing.assert_close(step(S[1], k, v, "delta", lr=0.25), S[1] + 0.25 * want[1], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="rule: expected the callable to return shape"):
        step(S[0], k, v, lambda S, k, v: k)
