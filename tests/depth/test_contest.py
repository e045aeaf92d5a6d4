"""Depth against width: shapes of a stack compared at an equal budget."""

import math

import numpy as np
import pytest
import torch
from badinput import NAN, check, parametrize

from pavlovlab.depth import contest as dw


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_same_task_budget_scores_one_task():
    rows = dw.same_task_budget(2, 32, 12, trials=60, generator=_gen(15))
    assert [(r["L"], r["H"], r["d_k"]) for r in rows] == [(2, 1, 32), (2, 2, 16), (2, 4, 8), (2, 8, 4)]
    assert all(r["H"] * r["d_k"] == 32 and r["entries"] == r["H"] * r["d_k"] ** 2 for r in rows)
    # the paper's own formula at fixed H·d_k: L ((n−1)H/B)^H, minimised near H = B/(e(n−1)) < 2 here
    assert [r["paper_bound"] for r in rows] == pytest.approx([2 * (11 * h / 32) ** h for h in (1, 2, 4, 8)])
    measured = [r["measured"] for r in rows]
    assert measured[0] < measured[-1], measured               # at equal projections one big head wins here


def test_shape_difference_is_a_welch_interval():
    """By hand: a = (1, 2, 3), b = (1, 1, 1): se² = 1/3, Welch df = 2, t(0.975, 2) = 4.303."""
    r = dw.shape_difference([1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    assert r.diff == pytest.approx(1.0) and r.df == pytest.approx(2.0)
    assert (r.lo, r.hi) == pytest.approx((1 - 4.303 / math.sqrt(3), 1 + 4.303 / math.sqrt(3)))
    # equal sizes and spreads: df = 2(n − 1) = 4, t = 2.776
    r = dw.shape_difference([0.5, 0.6, 0.7], [0.1, 0.2, 0.3])
    assert r.df == pytest.approx(4.0) and r.hi - r.diff == pytest.approx(2.776 * math.sqrt(2 * 0.01 / 3))
    with pytest.raises(ValueError, match="at least 2 seeds"):
        dw.shape_difference([0.5], [0.4, 0.3])


def test_shape_difference_floors_each_seed_at_its_sampling_variance():
    """Three seeds that agree to the last digit: without a floor the interval has zero width and its sign
    follows the rounding of one run; with ``answers`` each seed's variance is at least the binomial p(1 − p)/m."""
    a, b = [0.83, 0.83, 0.83], [0.84, 0.845, 0.85]
    bare = dw.shape_difference(a, b)
    assert bare.verdict == "reversed" and bare.hi < 0                  # the degenerate interval of the old rule
    m = 1536
    r = dw.shape_difference(a, b, answers=m)
    va = 0.83 * 0.17 / m / 3                                             # a's sample variance is 0: floored
    pb = (0.84 + 0.845 + 0.85) / 3
    sb = sum((x - pb) ** 2 for x in b) / 2
    vb = max(sb, pb * (1 - pb) / m) / 3
    assert r.se == pytest.approx(math.sqrt(va + vb))
    assert r.margin == pytest.approx((0.83 - pb) / math.sqrt(va + vb))
    assert r.verdict == "inconclusive" and r.lo < 0 < r.hi
    # a seed spread larger than the floor is kept as it is
    wide = dw.shape_difference([0.5, 0.6, 0.7], [0.1, 0.2, 0.3], answers=m)
    assert wide.se == pytest.approx(math.sqrt(2 * 0.01 / 3)) and wide.verdict == "holds"
    # all seeds perfect: the floor 1/m² keeps the interval open around 0
    tie = dw.shape_difference([1.0] * 5, [1.0] * 5, answers=m)
    assert tie.diff == 0 and tie.se == pytest.approx(math.sqrt(2 / (5 * m * m))) and tie.verdict == "inconclusive"
    with pytest.raises(ValueError, match="answers"):
        dw.shape_difference(a, b, answers=0)


def test_shape_contests_pairs_shapes_by_depth_with_the_floor():
    """A record by hand: three shapes, three seeds; each contest is shape_difference with m = 4 · 3 answers."""
    runs = [{"shape": "deep", "n_layers": 4, "n_heads": 1, "final_accuracy": [0.9, 0.95, 1.0]},
            {"shape": "wide", "n_layers": 1, "n_heads": 4, "final_accuracy": [0.5, 0.5, 0.5]},
            {"shape": "control", "n_layers": 1, "n_heads": 1, "final_accuracy": [0.6, 0.5, 0.4]},
            {"shape": "mid", "n_layers": 2, "n_heads": 2, "final_accuracy": [0.5, 0.52, 0.54]}]
    rows = dw.shape_contests({"setup": {"eval_size": 4, "n_pairs": 3}, "runs": runs})
    assert [(r["wide"], r["deep"]) for r in rows] == [("control", "mid"), ("control", "deep"), ("wide", "mid"),
                                                      ("wide", "deep"), ("mid", "deep")]   # same depth: no contest
    wide_deep = rows[3]
    va = max(0.0, max(0.25, 1 / 12) / 12) / 3                # wide: no spread, floored at max(p(1 − p), 1/m)/m
    vb = max(0.0025, max(0.95 * 0.05, 1 / 12) / 12) / 3       # deep: its sample variance 0.05² is below the floor
    assert wide_deep["diff"] == pytest.approx(-0.45)
    assert wide_deep["margin"] == pytest.approx(-0.45 / math.sqrt(va + vb))
    assert wide_deep["verdict"] == "reversed" and rows[2]["verdict"] == "inconclusive"


# ---------------------------------------------------------------------------------------------------- bad input
def _shape_difference_by_hand():
    """a = (1, 3), b = (0, 2): diff 1, s²/n = 1 each, se = √2, df = 4 / (1 + 1) = 2; the t quantile at 0.975
    with 2 degrees of freedom is (2p − 1)/√(2p(1 − p)) = 4.30265 (the package tabulates 4.303: within 1e-4)."""
    r = dw.shape_difference([1.0, 3.0], np.array([0.0, 2.0]))
    p = 0.975
    half = (2 * p - 1) / math.sqrt(2 * p * (1 - p)) * math.sqrt(2)
    return r.diff == 1.0 and math.isclose(r.df, 2.0) and math.isclose(r.lo, 1 - half, rel_tol=1e-4) \
        and math.isclose(r.hi, 1 + half, rel_tol=1e-4)


def _record(wide: list[float], deep: list[float], eval_size: int = 1) -> dict:
    """A cached record of two shapes, one layer of two heads against two layers of one head."""
    return {"setup": {"eval_size": eval_size, "n_pairs": 2},
            "runs": [{"n_layers": 1, "n_heads": 2, "shape": "1×2", "final_accuracy": wide},
                     {"n_layers": 2, "n_heads": 1, "shape": "2×1", "final_accuracy": deep}]}


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.depth.contest``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("cached_shape_runs(4)", lambda: dw.cached_shape_runs(4), ValueError, "hops, steps: expected a cached run"),
        ("cached_shape_runs(1, steps=7)", lambda: dw.cached_shape_runs(1, steps=7), ValueError,
         "hops, steps: expected a cached run"),
        ("cached_shape_runs(1, steps=0)", lambda: dw.cached_shape_runs(1, steps=0), ValueError,
         "steps: expected an integer >= 1"),
        ("cached_shape_runs('1')", lambda: dw.cached_shape_runs("1"), TypeError, "hops: expected an integer"),
        ("cached_shape_runs(1): one record per shape, accuracies in [0, 1]",
         lambda: all(0 <= a <= 1 for r in dw.cached_shape_runs(1)["runs"] for row in r["accuracy"] for a in row)
         and len({r["shape"] for r in dw.cached_shape_runs(1)["runs"]}) == len(dw.cached_shape_runs(1)["runs"]),
         "ok", ""),
        ("shape_difference(NaN seed)", lambda: dw.shape_difference([1, 2], [1, NAN]), ValueError,
         "b: expected finite numbers"),
        ("shape_difference('ab', ...)", lambda: dw.shape_difference("ab", [1, 2]), TypeError,
         "a: expected a number or an array"),
        ("shape_difference(one seed)", lambda: dw.shape_difference([1], [1, 2]), ValueError,
         "a, b: expected at least 2 seeds each, got 1 and 2"),
        ("shape_difference of (1, 3) and (0, 2): Welch with df = 2", _shape_difference_by_hand, "ok", ""),
        ("shape_difference(answers=0)", lambda: dw.shape_difference([1, 2], [1, 2], answers=0), ValueError,
         "answers: expected an integer >= 1"),
        ("shape_contests([])", lambda: dw.shape_contests([]), TypeError, "record: expected a cached record"),
        ("same_task_budget(2, 3, 8)", lambda: dw.same_task_budget(2, 3, 8), ValueError,
         "width: expected a width with at least one way to cut it into heads of d_k >= 4"),
        ("same_task_budget(n=1)", lambda: dw.same_task_budget(2, 16, 1), ValueError,
         "n: expected at least 2 stored associations"),
        ("same_task_budget(trials=0)", lambda: dw.same_task_budget(2, 16, 8, trials=0), ValueError,
         "trials: expected an integer >= 1, got 0"),
        ("same_task_budget(device='gpu0')", lambda: dw.same_task_budget(2, 16, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("same_task_budget: 32 TB of keys refused",
         lambda: dw.same_task_budget(1, 2 * 10 ** 6, 4, trials=10 ** 6, min_head=10 ** 6), ValueError,
         "shape: (*shape, d) = 8e+12 float32 entries (32 TB) do not fit"),
        ("shape_contests: a shape with one seed", lambda: dw.shape_contests(_record([0.5], [0.5, 0.6])), ValueError,
         "a, b: expected at least 2 seeds each, got 1 and 2"),
        ("shape_contests: a NaN seed", lambda: dw.shape_contests(_record([0.5, 0.6], [0.5, NAN])), ValueError,
         "b: expected finite numbers"),
        ("shape_contests: no held-out answers", lambda: dw.shape_contests(_record([0.5, 0.6], [0.5, 0.6], 0)),
         ValueError, "answers: expected an integer >= 1, got 0"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
