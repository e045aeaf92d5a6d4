"""The closed-form error of a stack: per-head theory against the simulation, the paper's bound, shapes."""

import math
import warnings

import numpy as np
import pytest
import torch
from badinput import FAST, NAN, check, parametrize
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab._checks import NonFiniteWarning
from pavlovlab.depth import chain
from pavlovlab.depth import theory as th


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _se(p, chains):
    return math.sqrt(max(p, 1e-4) * (1 - p) / chains)


@pytest.mark.parametrize("n, d_k", [(16, 16), (32, 32), (64, 32)])
def test_per_head_error_matches_theory(n, d_k):
    """Tolerance: 15 % of the theory plus 3 standard errors of the measurement."""
    r = chain.chain_error(1, 3, n, d_k, trials=300, generator=_gen())
    p = th.hop_error_theory(n, d_k)
    draws = r.chains * 3
    assert abs(r.head_error - p) <= 0.15 * p + 3 * _se(p, draws), (r.head_error, p)


def test_paper_bound_derivation_and_vacuous_region():
    # literal three steps: Chebyshev per head, all H heads fail, union over L layers
    for L, H, n, d_k in [(3, 2, 9, 32), (5, 3, 17, 64), (1, 1, 40, 32)]:
        chebyshev = (n - 1) / d_k
        expected = sum(chebyshev ** H for _ in range(L))
        assert th.paper_bound(L, H, n, d_k, cap=False) == pytest.approx(expected)
        assert th.paper_bound(L, H, n, d_k) == pytest.approx(min(1.0, expected))
    loads = np.array([0.5, 0.99, 1.0, 1.5])
    raw = th.paper_bound(1, 3, loads * 64 + 1, 64, cap=False)
    assert list(raw >= 1) == [False, False, True, True]       # vacuous once (n − 1)/d_k ≥ 1, whatever H
    # it is an upper bound where it is not vacuous: measured error below it (n = 12, d_k = 32, L = 2, H = 1)
    r = chain.chain_error(2, 1, 12, 32, trials=200, generator=_gen(11))
    assert r.error < th.paper_bound(2, 1, 12, 32)


CLOSED_FORMS = [
    ("hop_error_theory", lambda n, d, t, L: th.hop_error_theory(n, d)),
    ("stack_error_theory", lambda n, d, t, L: th.stack_error_theory(L, 1, n, d)),
    ("paper_bound", lambda n, d, t, L: th.paper_bound(L, 2, n, d)),
    ("loss_threshold", lambda n, d, t, L: th.loss_threshold(t)),
    ("hop_failure_bound", lambda n, d, t, L: th.hop_failure_bound(n, d)),
    ("hop_failure_bound at t_max", lambda n, d, t, L: th.hop_failure_bound(n, d, t_max=t)),
    ("averaged_heads_bound", lambda n, d, t, L: th.averaged_heads_bound(n, d, t, 2, 1.2)),
    ("raw_noise_theory", lambda n, d, t, L: th.raw_noise_theory(L, n, d)),
]


@pytest.mark.parametrize("name, call", CLOSED_FORMS, ids=[name for name, _ in CLOSED_FORMS])
def test_closed_forms_return_float64_tensors_of_the_broadcast_shape(name, call):
    """As the closed forms of ``pavlovlab.capacity`` do: a float64 tensor on the CPU, 0-d for numbers, the broadcast
    shape for arrays, whatever the inputs are (numbers, lists, NumPy arrays, float32 tensors)."""
    scalar = call(16, 32, 0.1, 2)
    assert isinstance(scalar, torch.Tensor) and scalar.dtype == torch.float64 and scalar.shape == ()
    assert scalar.device.type == "cpu"
    grid = call(np.array([[9], [16], [24]]), torch.tensor([16.0, 32.0], dtype=torch.float32), [0.1, 0.2], 2)
    assert isinstance(grid, torch.Tensor) and grid.dtype == torch.float64 and grid.shape in {(3, 2), (2,)}
    assert float(grid.flatten()[-1]) == pytest.approx(float(call(24, 32, 0.2, 2)), rel=1e-12)


def test_all_heads_fail_bound_reduces_the_heads_axis():
    bound = th.all_heads_fail_bound(8, 32, torch.tensor([[0.1, 0.2], [0.0, 0.3]], dtype=torch.float32))
    assert bound.dtype == torch.float64 and bound.shape == (2,)
    assert th.all_heads_fail_bound(8, 32, [0.1, 0.2]).shape == ()


def test_theory_shapes_and_paper_bound():
    grid = th.stack_error_theory(np.arange(1, 4)[:, None], np.arange(1, 3)[None, :], 16, 32)
    assert grid.shape == (3, 2) and np.all(np.diff(grid, axis=0) > 0) and np.all(np.diff(grid, axis=1) < 0)
    assert th.stack_error_theory(1, 1, 16, 32) == pytest.approx(th.hop_error_theory(16, 32))
    assert th.paper_bound(3, 2, 9, 32) == pytest.approx(3 * (8 / 32) ** 2)
    assert th.paper_bound(3, 1, 64, 32) == 1.0
    assert th._crosstalk_variance(np.array(17), np.array(8), np.array(8), np.array(1)) == pytest.approx(16 / 64)


def test_bad_input():
    with pytest.raises(ValueError, match="d_k"):
        th.hop_error_theory(8, 2)
    with pytest.raises(ValueError, match="rule"):
        th.stack_error_theory(1, 1, 8, 8, rule="vote")


# ---------------------------------------------------------------------------------------------------- bad input
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40), st.text(max_size=2),
                    st.none())


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.depth.theory``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("paper_bound n = 0", lambda: th.paper_bound(1, 1, 0, 16), ValueError, "n: expected numbers >= 1"),
        ("paper_bound L = −1", lambda: th.paper_bound(-1, 1, 8, 16), ValueError, "L: expected numbers >= 0"),
        ("stack_error_theory L = −2", lambda: th.stack_error_theory(-2, 1, 8, 16), ValueError, "L: expected numbers"),
        ("stack_error_theory p_head = 2", lambda: th.stack_error_theory(2, 1, 8, 16, rule="all_fail", p_head=2),
         ValueError, "p_head: expected numbers <= 1"),
        ("paper_bound NaN", lambda: th.paper_bound(1, 1, float("nan"), 16), ValueError, "n: expected finite"),
        ("hop_failure_bound(nan, 8)", lambda: th.hop_failure_bound(NAN, 8), ValueError, "n: expected finite numbers"),
        ("hop_failure_bound(3, 'a')", lambda: th.hop_failure_bound(3, "a"), TypeError, "d_k: expected a number"),
        ("hop_failure_bound(3, 0)", lambda: th.hop_failure_bound(3, 0), ValueError, "d_k: expected numbers >= 1"),
        ("hop_failure_bound(t_max=1.5)", lambda: th.hop_failure_bound(3, 8, t_max=1.5), ValueError,
         "t_max: expected numbers <= 1"),
        ("hop_failure_bound(H=0)", lambda: th.hop_failure_bound(3, 8, H=0), ValueError, "H: expected numbers >= 1"),
        ("hop_failure_bound(3, 64, t_max=0) = 2·2/64; vacuous (capped at 1) once n − 1 ≥ d_k",
         lambda: bool(th.hop_failure_bound(3, 64, t_max=0.0) == 4 / 64 and th.hop_failure_bound(40, 8) == 1.0), "ok",
         ""),
        ("loss_threshold(1.5)", lambda: th.loss_threshold(1.5), ValueError, "t: expected numbers <= 1"),
        ("loss_threshold(-1.5)", lambda: th.loss_threshold(-1.5), ValueError, "t: expected numbers >= -1"),
        ("loss_threshold(nan)", lambda: th.loss_threshold(NAN), ValueError, "t: expected finite numbers"),
        ("loss_threshold('a')", lambda: th.loss_threshold("a"), TypeError, "t: expected a number"),
        ("loss_threshold at t = 0, −1, 1: √(1/2), 1, 0",
         lambda: math.isclose(th.loss_threshold(0), math.sqrt(0.5)) and bool(th.loss_threshold(-1) == 1.0)
         and bool(th.loss_threshold(1) == 0.0), "ok", ""),
        ("all_heads_fail_bound(t_max scalar)", lambda: th.all_heads_fail_bound(3, 8, 0.1), ValueError,
         "t_max: expected one cosine per head"),
        ("all_heads_fail_bound(t_max=1.5)", lambda: th.all_heads_fail_bound(3, 8, [1.5]), ValueError,
         "t_max: expected numbers <= 1"),
        ("averaged_heads_bound(H=0)", lambda: th.averaged_heads_bound(3, 8, 0.1, 0, 1.0), ValueError,
         "H: expected numbers >= 1"),
        ("averaged_heads_bound(moment_ratio=nan)", lambda: th.averaged_heads_bound(3, 8, 0.1, 2, NAN), ValueError,
         "moment_ratio: expected finite numbers"),
        ("raw_noise_theory(-1, 8, 16)", lambda: th.raw_noise_theory(-1, 8, 16), ValueError, "L: expected numbers >= 0"),
        ("raw_noise_theory(1, 8, nan)", lambda: th.raw_noise_theory(1, 8, math.nan), ValueError, "d: expected finite"),
        ("hop_error_theory(n=nan)", lambda: th.hop_error_theory(math.nan, 16), ValueError, "n: expected finite"),
        ("hop_error_theory(points=0)", lambda: th.hop_error_theory(8, 16, points=0), ValueError,
         "points: expected an integer >= 1"),
        ("hop_error_theory('3', 16)", lambda: th.hop_error_theory("3", 16), TypeError, "n: expected a number"),
        ("stack_error_theory(n=1): the hop theory's check, at H as it reads it",
         lambda: th.stack_error_theory(1, 2, 1, 8), ValueError, "n, H: expected n >= 2 and H >= 1, got n=1, H=2.0"),
        ("stack_error_theory(d_k=3, rule='all_fail'): the one-head theory's check",
         lambda: th.stack_error_theory(1, 2, 8, 3, rule="all_fail"), ValueError,
         "d_k, d_v: expected dimensions >= 4 for the theory, got d_k=3, d_v=None"),
        ("stack_error_theory(d_v=2)", lambda: th.stack_error_theory(1, 2, 8, 16, 2), ValueError,
         "d_k, d_v: expected dimensions >= 4"),
        ("stack_error_theory(p_head given): n and d_k are not read", lambda: bool(th.stack_error_theory(
            2, 2, 8, 3, rule="all_fail", p_head=0.1) == 1 - (1 - 0.1 ** 2) ** 2), "ok", ""),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(L=numbers, n=numbers, d=numbers)
def test_property_stacking_theories_name_the_argument(L, n, d):
    for call, names in [(lambda: th.raw_noise_theory(L, n, d), {"L", "n", "d"}),
                        (lambda: th.paper_bound(L, 1, n, d), {"L", "n", "d_k"}),
                        (lambda: th.hop_error_theory(n, d), {"n", "d_k", "d_v", "H", "d_k, d_v", "n, H"})]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = call()
            except (ValueError, TypeError) as e:
                assert str(e).split(":")[0] in names, str(e)
                continue
        if not math.isfinite(out):            # an overflow of the formula itself: the documented warning, once
            assert [w.category for w in caught] == [NonFiniteWarning], (L, n, d, out)
        else:
            assert not caught, [str(w.message) for w in caught]
