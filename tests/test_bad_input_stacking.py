"""Bad input for ``pavlovlab.depth.chain``/``pavlovlab.depth.theory``/``pavlovlab.depth.contest``,
``pavlovlab.forgetting.decay`` and ``pavlovlab.forgetting.oja``: the exact calls of the hostile-input run, a
property-based test per module, and boundary tests that catch plausible bugs."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from badinput import check, parametrize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pavlovlab._checks import NonFiniteWarning  # noqa: E402
from pavlovlab.depth import contest as Dw  # noqa: E402
from pavlovlab.depth import theory as Th  # noqa: E402
from pavlovlab.forgetting import decay as D  # noqa: E402
from pavlovlab.forgetting import oja as O  # noqa: E402

FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None)


def rows():
    x = O.data_cloud(50, 3, generator=torch.Generator().manual_seed(0))
    return [
        ("raw_noise_theory(-1, 8, 16)", lambda: Th.raw_noise_theory(-1, 8, 16), ValueError, "L: expected numbers >= 0"),
        ("raw_noise_theory(1, 8, nan)", lambda: Th.raw_noise_theory(1, 8, math.nan), ValueError, "d: expected finite"),
        ("same_task_budget(2, 3, 8)", lambda: Dw.same_task_budget(2, 3, 8), ValueError,
         "width: expected a width with at least one way to cut it into heads of d_k >= 4"),
        ("hop_error_theory(n=nan)", lambda: Th.hop_error_theory(math.nan, 16), ValueError, "n: expected finite"),
        ("hop_error_theory(points=0)", lambda: Th.hop_error_theory(8, 16, points=0), ValueError,
         "points: expected an integer >= 1"),
        ("hop_error_theory('3', 16)", lambda: Th.hop_error_theory("3", 16), TypeError, "n: expected a number"),
        ("measured_half_life(L=0)", lambda: D.measured_half_life(torch.ones(0)), ValueError,
         "strength: expected a curve over at least 2 lags"),
        ("measured_half_life(L=1)", lambda: D.measured_half_life(torch.ones(1)), ValueError,
         "strength: expected a curve over at least 2 lags"),
        ("measured_half_life(L=2) interpolates", lambda: float(D.measured_half_life(torch.tensor([1.0, 0.0])))
         == 0.5, "ok", ""),
        ("retnet_decays(device='gpu0')", lambda: D.retnet_decays(4, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_vs_lag(dtype='float64') (accepted by contract)",
         lambda: D.recall_vs_lag(0.9, 3, d_k=4, d_v=4, n_trials=2, dtype="float64").dtype == torch.float64, "ok", ""),
        ("data_cloud(scales='ab')", lambda: O.data_cloud(10, 2, scales="ab"), TypeError,
         "scales: expected 2 numbers"),
        ("data_cloud(scales=[1, nan])", lambda: O.data_cloud(10, 2, scales=[1, math.nan]), ValueError,
         "scales: expected finite numbers"),
        ("data_cloud(batch_shape=(-1,))", lambda: O.data_cloud(10, 2, batch_shape=(-1,)), ValueError,
         "batch_shape[0]: expected an integer >= 1"),
        ("data_cloud(batch_shape=3)", lambda: O.data_cloud(10, 2, batch_shape=3), TypeError,
         "batch_shape: expected a tuple of sizes"),
        ("data_cloud(device='nope')", lambda: O.data_cloud(10, 2, device="nope"), ValueError, "device: expected"),
        ("principal_components(n=0)", lambda: O.principal_components(torch.zeros(0, 3)), ValueError,
         "x: expected at least one sample"),
        ("alignment(w (3,), u (4,))", lambda: O.alignment(torch.ones(3), torch.ones(4)), ValueError,
         "u: expected the dimension d of w (last dim) = 3, got 4"),
        ("alignment float64 and float32", lambda: O.alignment(torch.ones(3), torch.ones(3).double()), TypeError,
         "u: expected dtype torch.float32"),
        ("oja_pca(lr=5) diverges: warns", lambda: O.oja_pca(x, lr=5.0), "warn", "oja_pca"),
        ("hebbian_unit 30 epochs float32 diverges: warns", lambda: O.hebbian_unit(x, lr=0.5, epochs=30), "warn",
         "oja_pca(rule="),
        ("oja_pca(lr=nan)", lambda: O.oja_pca(x, lr=math.nan), ValueError, "lr: expected a finite number"),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


# ------------------------------------------------------------------ boundaries that catch plausible bugs
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_retnet_decays_rounding_boundary_in_every_dtype(dtype):
    """``1 − 2^−m`` is below 1 in a dtype exactly while ``m <= nmant + 1`` (the spacing just below 1 is
    ``eps / 2 = 2^−(nmant+1)``), so with ``first = 5`` the last head that still forgets is h = nmant − 4.
    A check made in float64 before the cast (always "below 1") passes the next head silently."""
    nmant = round(-math.log2(torch.finfo(dtype).eps))
    ok = nmant - 3                                                  # heads h = 0 .. nmant − 4
    if ok > 60:
        pytest.skip("float64 is exact for every practical number of heads")
    g = D.retnet_decays(ok, dtype=dtype)
    assert g.dtype == dtype and bool((g < 1).all())
    with pytest.raises(ValueError, match=f"only the first {ok} of {ok + 1} heads"):
        D.retnet_decays(ok + 1, dtype=dtype)


# ------------------------------------------------------------------ property-based: generated bad input
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40), st.text(max_size=2),
                    st.none())


@FAST
@given(L=numbers, n=numbers, d=numbers)
def test_property_stacking_theories_name_the_argument(L, n, d):
    for call, names in [(lambda: Th.raw_noise_theory(L, n, d), {"L", "n", "d"}),
                        (lambda: Th.paper_bound(L, 1, n, d), {"L", "n", "d_k"}),
                        (lambda: Th.hop_error_theory(n, d), {"n", "d_k", "d_v", "H", "d_k, d_v", "n, H"}),
                        (lambda: Th.crosstalk_variance(n, d), {"n", "d_k", "d_v"})]:
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


@FAST
@given(strength=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
       level=st.one_of(st.floats(allow_nan=True), st.none()), gamma=numbers)
def test_property_decay_names_the_argument(strength, level, gamma):
    for call, names in [(lambda: D.measured_half_life(torch.tensor(strength), level=level), {"strength", "level"}),
                        (lambda: D.half_life(gamma), {"gamma"}),
                        (lambda: D.retention(gamma, torch.arange(3)), {"gamma"})]:
        try:
            call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in names, str(e)


@FAST
@given(n=st.integers(-2, 5), d=st.integers(-2, 4), scales=st.one_of(st.none(), st.text(max_size=3),
                                                                    st.lists(st.floats(allow_nan=True), max_size=4)),
       batch=st.one_of(st.integers(-2, 2), st.lists(st.integers(-2, 2), max_size=2)))
def test_property_oja_names_the_argument(n, d, scales, batch):
    try:
        x = O.data_cloud(n, d, scales=scales, batch_shape=batch)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"n", "d", "scales", "batch_shape"}, str(e)
        return
    assert bool(torch.isfinite(x).all())
