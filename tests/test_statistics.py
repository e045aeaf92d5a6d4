"""Tests of pavlovlab.statistics: the slope fits against closed forms and literal loops, the bootstrap
against a loop over resamples, and the t-intervals against hand-computed ones."""

import math

import numpy as np
import pytest
import torch
from badinput import FAST, NAN, check, parametrize
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab import statistics


# ------------------------------------------------------------------------------------------ slope fits
def test_fit_slope_recovers_exact_power_laws():
    assert statistics.fit_slope([1, 2, 4, 8], [3, 6, 12, 24]) == pytest.approx(1.0)
    assert statistics.fit_slope([4, 16, 64], [2, 4, 8]) == pytest.approx(0.5)
    assert statistics.fit_slope(torch.tensor([1.0, 10.0, 100.0]), np.array([5.0, 0.5, 0.05])) == pytest.approx(-1.0)


def test_fit_slope_equals_numpy_polyfit_on_noisy_data():
    rng = np.random.default_rng(0)
    x = np.array([16.0, 32, 64, 128, 256])
    y = x ** 0.7 * np.exp(rng.normal(0, 0.1, x.size))
    assert statistics.fit_slope(x, y) == pytest.approx(np.polyfit(np.log(x), np.log(y), 1)[0], rel=1e-12)


def test_fit_slope_can_leave_out_nonpositive_points():
    assert statistics.fit_slope([1, 2, 3, 4], [0, 2, 3, 4], drop_nonpositive=True) == pytest.approx(
        statistics.fit_slope([2, 3, 4], [2, 3, 4]))
    with pytest.raises(ValueError, match="positive"):
        statistics.fit_slope([1, 2], [1, -2])
    with pytest.raises(ValueError, match="at least two positive"):
        statistics.fit_slope([1, 2], [0, 0], drop_nonpositive=True)
    with pytest.raises(ValueError, match="same length"):
        statistics.fit_slope([1, 2], [1, 2, 3])


def test_fit_log_slope_of_an_exponential_and_its_r2():
    slope, r2 = statistics.fit_log_slope([1, 2, 3], [1e-1, 1e-2, 1e-3])
    assert slope == pytest.approx(-math.log(10)) and r2 == pytest.approx(1.0)
    x, y = np.array([0.0, 1, 2, 3, 4]), np.array([1.0, 0.5, 0.3, 0.1, 0.07])
    b, a = np.polyfit(x, np.log(y), 1)
    resid = np.log(y) - (a + b * x)
    want_r2 = 1 - (resid ** 2).sum() / ((np.log(y) - np.log(y).mean()) ** 2).sum()
    got = statistics.fit_log_slope(x, y)
    assert got[0] == pytest.approx(b, rel=1e-12) and got[1] == pytest.approx(want_r2, rel=1e-12)
    assert statistics.fit_log_slope([1, 2, 3], [0.0, 0.1, 0.01])[0] == pytest.approx(-math.log(10))  # zero dropped
    with pytest.raises(ValueError, match="at least two positive"):
        statistics.fit_log_slope([1, 2], [0, 1])


def test_slope_through_origin_by_hand():
    x = torch.tensor([1.0, 2.0, 4.0])
    y = torch.stack([2 * x, 3 * x])                      # rows with slopes 2 and 3
    slope, se = statistics.slope_through_origin(x, y)
    assert slope == pytest.approx(2.5) and se == pytest.approx(0.5)   # std of (2, 3) is 0.7071, /√2
    with pytest.raises(ValueError, match="y"):
        statistics.slope_through_origin(x, y[:1])
    with pytest.raises(ValueError, match="y"):
        statistics.slope_through_origin(x, y[:, :2])


def test_bootstrap_slope_se_equals_a_loop_over_resamples():
    x = [8, 16, 32]
    samples = [torch.tensor([3.0, 5.0, 4.0, 6.0]), torch.tensor([9.0, 7.0, 8.0]),
               torch.tensor([15.0, 17.0, 16.0, 18.0])]
    got = statistics.bootstrap_slope_se(x, samples, resamples=50, seed=3)
    g = torch.Generator().manual_seed(3)
    idx = [torch.randint(0, len(c), (50, len(c)), generator=g) for c in samples]   # the same draws, in order
    slopes = [statistics.fit_slope(x, [float(c.double()[i[r]].mean()) for c, i in zip(samples, idx, strict=True)])
              for r in range(50)]
    assert got == pytest.approx(float(torch.tensor(slopes, dtype=torch.float64).std()), rel=1e-10)
    with pytest.raises(ValueError, match="samples"):
        statistics.bootstrap_slope_se(x, samples[:2])


# ---------------------------------------------------------------------------------- t-intervals
def test_summarize_matches_a_hand_computed_t_interval():
    x = torch.tensor([[1.0, 3.0], [2.0, 4.0], [6.0, 6.0]])
    means = [2.0, 3.0, 6.0]
    m = sum(means) / 3
    sd = math.sqrt(sum((v - m) ** 2 for v in means) / 2)
    e = statistics.summarize(x)
    assert e.mean == pytest.approx(m)
    assert e.hi - e.mean == pytest.approx(4.303 * sd / math.sqrt(3), rel=1e-4)
    one = statistics.summarize(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    assert one.hi - one.mean == pytest.approx(3.182 * math.sqrt(5 / 3) / 2, rel=1e-4)


def test_observed_categories():
    E = statistics.Effect
    assert E(1.0, 0.5, 1.5, (), 1).observed(0.2) == "effect"
    assert E(-1.0, -1.5, -0.5, (), 1).observed(0.2) == "reversed"
    assert E(0.1, 0.05, 0.15, (), 1).observed(0.2) == "small"
    assert E(0.0, -0.1, 0.1, (), 1).observed(0.2) == "none"
    assert E(0.5, -1.0, 2.0, (), 1).observed(0.2) == "inconclusive"


def test_t_quantile_table_and_normal_limit():
    assert statistics.t_quantile(1) == 12.706 and statistics.t_quantile(30) == 2.042
    assert statistics.t_quantile(1000) == 1.96
    with pytest.raises(ValueError, match="df"):
        statistics.t_quantile(0)


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.statistics``: one row ``(case, call, expect, fragment)`` a case."""
    one = torch.ones(3)
    return [
        ("fit_slope with constant x", lambda: statistics.fit_slope([2, 2, 2], [1, 2, 3]), ValueError,
         "x: expected at least two distinct values"),
        ("fit_slope with NaN in y", lambda: statistics.fit_slope([1, 2, 3], [1, NAN, 3]), ValueError,
         "y: expected finite numbers"),
        ("fit_log_slope with mismatched lengths", lambda: statistics.fit_log_slope([1, 2, 3], [1, 2]), ValueError,
         "y:"),
        ("fit_log_slope with NaN in x", lambda: statistics.fit_log_slope([1, NAN, 3], [1, 2, 3]), ValueError,
         "x: expected finite numbers"),
        ("slope_through_origin with x = 0", lambda: statistics.slope_through_origin(torch.zeros(3), torch.ones(2, 3)),
         ValueError, "x: expected at least one non-zero value"),
        ("summarize of one sequence", lambda: statistics.summarize(torch.ones(1, 1)), ValueError,
         "x: expected at least 2 seeds or 2 sequences"),
        ("summarize of one seed, two sequences", lambda: statistics.summarize(torch.tensor([[1.0, 3.0]])).mean == 2.0,
         "ok", ""),
        ("bootstrap_slope_se with fewer samples", lambda: statistics.bootstrap_slope_se([1, 2], [one]), ValueError,
         "samples: expected number of points"),
        ("t_quantile(0)", lambda: statistics.t_quantile(0), ValueError, "df: expected an integer >= 1"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
       y=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4))
def test_property_statistics_names_the_argument(x, y):
    for call in (lambda: statistics.fit_slope(x, y), lambda: statistics.fit_log_slope(x, y)):
        try:
            out = call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in {"x", "y", "x, y"}, str(e)
            continue
        assert all(math.isfinite(o) for o in (out if isinstance(out, tuple) else (out,))), (x, y, out)
