"""AssociativeMemory: its rules, its shapes, and clear errors."""

import math

import pytest
import torch
import torch.nn.functional as F
from badinput import FAST, check, parametrize, randn, with_nan
from conftest import TOL, rel_rms
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab import AssociativeMemory
from pavlovlab.memory import associative as M
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


# ---------------------------------------------------------------------------------------------------- bad input
def _memory_of_huge_writes() -> AssociativeMemory:
    mem = AssociativeMemory(4, 4)
    for _ in range(3):
        mem.write(torch.full((4,), 1e19), torch.full((4,), 1e19))  # S stays finite (3e38), S q overflows
    return mem


hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.none(), st.text(max_size=2))


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.memory.associative``: one row ``(case, call, expect, fragment)`` a case."""
    def wrong_shape_rule(S, k, v):
        return torch.zeros(3, *S.shape)

    def float64_rule(S, k, v):
        return (v[..., :, None] * k[..., None, :]).double()

    def run_rule(rule):
        mem = M.AssociativeMemory(4, 4, rule=rule)
        mem.write(randn(4), randn(4, seed=1))
        return mem.S

    def long_delta_run():
        mem = M.AssociativeMemory(16, 16, rule="delta")  # N(0, 1) keys: ‖k‖² ≈ 16, 1 − ‖k‖² ≪ −1
        mem.write(randn(300, 16), randn(300, 16, seed=1))
        return mem.S

    def empty_run():
        mem = M.AssociativeMemory(4, 2)
        return mem.run(randn(0, 4), randn(0, 2), randn(0, 4)).shape == (0, 2)

    unit = F.normalize(randn(12, 4), dim=-1)

    def nan_rule(S, k, v):
        return torch.full_like(S, math.nan)

    def written(mem, k, v, **kw):
        mem.write(k, v, **kw)
        return mem.S

    def long_delta(lr):
        mem = M.AssociativeMemory(16, 16, rule="delta", lr=lr)
        mem.write(randn(20000, 16), randn(20000, 16, seed=1))                 # N(0, 1) keys: ‖k‖² ≈ 16
        return mem.S

    return [
        ("rule returns (3, d, d)", lambda: run_rule(wrong_shape_rule), ValueError,
         "rule: expected the callable to return shape (4, 4)"),
        ("rule returns float64", lambda: run_rule(float64_rule), TypeError,
         "rule: expected the callable to return dtype torch.float32"),
        ("hebbian_update k of d+1", lambda: M.hebbian_update(torch.zeros(4, 4), randn(5), randn(4)), ValueError,
         "k: expected key dimension d_k"),
        ("delta memory diverges", long_delta_run, "warn", "AssociativeMemory(rule='delta')"),
        ("dtype as a string", lambda: M.AssociativeMemory(4, 2, dtype="float64").S.dtype == torch.float64, "ok", ""),
        ("dtype long", lambda: M.AssociativeMemory(4, 2, dtype=torch.long), TypeError, "dtype: expected a floating"),
        ("T = 0 run", empty_run, "ok", ""),
        ("NaN key write", lambda: M.AssociativeMemory(4, 2).write(with_nan(randn(3, 4)), randn(3, 2)), ValueError,
         "k: expected finite values"),
        ("AssociativeMemory(batch_shape=(-2,))", lambda: M.AssociativeMemory(4, 4, batch_shape=(-2,)), ValueError,
         "batch_shape[0]: expected an integer >= 1, got -2"),
        ("AssociativeMemory(batch_shape=3)", lambda: M.AssociativeMemory(4, 4, batch_shape=3), TypeError,
         "batch_shape: expected a tuple of sizes such as (3,)"),
        ("AssociativeMemory(device='gpu0')", lambda: M.AssociativeMemory(4, 4, device="gpu0"), ValueError,
         "device: expected a device name such as 'cpu'"),
        ("AssociativeMemory(d_key=10**6, d_value=10**6)", lambda: M.AssociativeMemory(10**6, 10**6), ValueError,
         "S: batch × d_value × d_key = 1e+12 float32 entries (4 TB) do not fit"),
        ("AssociativeMemory(dtype='float32') (accepted by contract)",
         lambda: M.AssociativeMemory(4, 4, dtype="float32").S.dtype == torch.float32, "ok", ""),
        ("AssociativeMemory delta lr = 3 (> 2)", lambda: M.AssociativeMemory(4, 4, rule="delta", lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("AssociativeMemory delta lr = 2 (the bound) on unit keys stays bounded",
         lambda: bool(written(M.AssociativeMemory(4, 4, rule="delta", lr=2.0), unit, unit).norm() < 10), "ok", ""),
        ("write(lr=3) on a delta memory", lambda: written(M.AssociativeMemory(4, 4, rule="delta"), unit, unit, lr=3.0),
         ValueError, "lr: expected a number <= 2 for the delta rule"),
        ("write(lr=<tensor of the wrong length>)",
         lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.ones(5)), ValueError,
         "lr: expected a tensor broadcasting to (*batch_shape, T) = (12,), got shape (5,)"),
        ("write(lr=<tensor (T, 1)>)", lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.ones(12, 1)),
         ValueError, "lr: expected a tensor broadcasting to (*batch_shape, T) = (12,), got shape (12, 1)"),
        ("write(lr=<tensor with a NaN>)",
         lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.tensor([math.nan] * 12)), ValueError,
         "lr: expected finite values"),
        ("custom rule returning NaN: warns", lambda: written(M.AssociativeMemory(4, 4, rule=nan_rule), unit, unit),
         "warn", "AssociativeMemory(rule='nan_rule')"),
        ("20k delta steps at lr = 1 with N(0, 1) keys: warns", lambda: long_delta(1.0), "warn",
         "AssociativeMemory(rule='delta')"),
        ("delta_update(S, k) with the wrong d", lambda: M.delta_update(torch.zeros(3, 4), randn(5), randn(3)),
         ValueError, "k: expected key dimension d_k (last dim of S) = 4, got 5"),
        ("oja_subspace_update(S, k, v) with the wrong d_v",
         lambda: M.oja_subspace_update(torch.zeros(3, 4), randn(4), randn(2)), ValueError,
         "v: expected value dimension"),
        ("step(..., lr=nan)", lambda: M.step(torch.zeros(3, 4), randn(4), randn(3), "hebbian", lr=math.nan), ValueError,
         "lr: expected a finite number"),
        ("step(..., decay=1.5)", lambda: M.step(torch.zeros(3, 4), randn(4), randn(3), "hebbian", decay=1.5),
         ValueError, "decay: expected a number <= 1"),
        ("step(S, k, v, 0.5): lr given where the rule goes",
         lambda: M.step(torch.zeros(3, 4), randn(4), randn(3), 0.5), TypeError,
         "rule: expected a name of memory.RULES or a callable"),
        ("step with an unknown rule name", lambda: M.step(torch.zeros(3, 4), randn(4), randn(3), "hebb"), ValueError,
         "rule: expected one of"),
        ("AssociativeMemory.read overflowing to inf", lambda: _memory_of_huge_writes().read(torch.full((4,), 1e19)),
         "warn", "AssociativeMemory.read"),
        ("AssociativeMemory.read of a sequence overflowing", lambda: _memory_of_huge_writes().read(
            torch.full((2, 4), 1e19)), "warn", "AssociativeMemory.read"),
        ("oja_clamped_update with the wrong d_k",
         lambda: M.oja_clamped_update(torch.zeros(3, 4), torch.ones(5), torch.ones(3)), ValueError,
         "k: expected key dimension"),
        ("resolve_rule('hebb')", lambda: M.resolve_rule("hebb"), ValueError, "rule: expected one of"),
        ("check_lr('lr', 3.0, 'delta')", lambda: M.check_lr("lr", 3.0, "delta"), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(lr=hyper, decay=hyper, d=st.integers(-1, 3), batch=st.one_of(st.integers(-1, 2),
                                                                     st.lists(st.integers(-1, 2), max_size=2)),
       rule=st.sampled_from(["hebbian", "delta", "oja_subspace", "hebb", 3]))
def test_property_memory_names_the_argument(lr, decay, d, batch, rule):
    try:
        mem = M.AssociativeMemory(d, 3, rule=rule, lr=lr, decay=decay, batch_shape=batch)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"d_key", "rule", "lr", "decay", "batch_shape"}, str(e)
        return
    k = F.normalize(randn(*mem.batch_shape, 5, mem.d_key), dim=-1)
    mem.write(k, F.normalize(randn(*mem.batch_shape, 5, 3, seed=1), dim=-1))
    assert bool(torch.isfinite(mem.S).all())
