"""Bad input for ``pavlovlab.capacity``/``pavlovlab.capacity.average``, ``pavlovlab.statistics``,
``pavlovlab.memory.hebbian``, ``pavlovlab.forgetting.unlearning`` and
``pavlovlab.phenomena.probes``/``pavlovlab.models.head_memory``/``pavlovlab.phenomena.sequences``: the exact calls of
the hostile-input run, property-based tests, and tests that catch plausible bugs (thresholds at their boundary, non-unit
keys, partial steps, paired arms)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from badinput import check, parametrize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pavlovlab import statistics as Stt  # noqa: E402
from pavlovlab.capacity import average as Ar  # noqa: E402
from pavlovlab.capacity import criteria as Cp  # noqa: E402
from pavlovlab.forgetting import decay as Dc  # noqa: E402
from pavlovlab.forgetting import unlearning as U  # noqa: E402
from pavlovlab.memory import hebbian as Hb  # noqa: E402
from pavlovlab.models import head_memory as Hm  # noqa: E402
from pavlovlab.phenomena import probes as Pr  # noqa: E402
from pavlovlab.phenomena import sequences as De  # noqa: E402

FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None)
NAN = math.nan


def _t(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def rows():
    keys, values = U.random_associations(6, 8, 4, generator=torch.Generator().manual_seed(0))
    S = Hb.outer_product_memory(keys, values)
    dup = torch.stack([keys[1], keys[2], keys[1]])
    return [
        # capacity
        ("fidelity_theory(nan, 8)", lambda: Ar.fidelity_theory(NAN, 8), ValueError, "n: expected finite numbers"),
        ("fidelity_theory('3', 8)", lambda: Ar.fidelity_theory("3", 8), TypeError, "n: expected a number"),
        ("fidelity_theory(3, 0)", lambda: Ar.fidelity_theory(3, 0), ValueError, "d_k: expected numbers > 0"),
        ("fidelity_theory keeps a float32 tensor's dtype",
         lambda: Ar.fidelity_theory(torch.tensor([3.0]), 8).dtype == torch.float32, "ok", ""),
        ("worst_case_bound(nan)", lambda: Cp.worst_case_bound(NAN), ValueError, "d_k: expected finite numbers"),
        ("worst_case_bound(inf)", lambda: Cp.worst_case_bound(math.inf), ValueError, "d_k: expected finite numbers"),
        ("capacity_from_fidelity all-NaN curve", lambda: Ar.capacity_from_fidelity([1, 2, 3], torch.full((3,), NAN)),
         ValueError, "fidelity: expected finite mean cosines"),
        ("capacity_from_fidelity NaN inside the curve",
         lambda: Ar.capacity_from_fidelity([1, 2, 3], torch.tensor([0.9, NAN, 0.9])), ValueError,
         "fidelity: expected finite mean cosines"),
        ("capacity_from_fidelity per-item NaN for items not stored is fine",
         lambda: Ar.capacity_from_fidelity([1, 2], torch.tensor([[[0.9, NAN], [0.85, 0.85]]])) == 2, "ok", ""),
        ("n_grid(16, points=100, max_ratio=0.5) is 1..8 (documented: never past max_ratio · d_k)",
         lambda: Ar.n_grid(16, points=100, max_ratio=0.5).tolist() == list(range(1, 9)), "ok", ""),
        ("n_grid(64, points=20) stays within 1..256, distinct",
         lambda: (lambda g: int(g[0]) == 1 and int(g[-1]) == 256 and bool((g.diff() > 0).all()) and len(g) == 20)(
             Ar.n_grid(64, points=20)), "ok", ""),
        ("n_grid(16, points=8, max_ratio=0.5) stays <= 8", lambda: Ar.n_grid(16, points=8, max_ratio=0.5).tolist()
         == list(range(1, 9)), "ok", ""),
        ("n_grid(16, max_ratio=0.01)", lambda: Ar.n_grid(16, points=1, max_ratio=0.01), ValueError,
         "max_ratio: expected max_ratio · d_k >= 1"),
        # statistics
        ("fit_slope with constant x", lambda: Stt.fit_slope([2, 2, 2], [1, 2, 3]), ValueError,
         "x: expected at least two distinct values"),
        ("fit_slope with NaN in y", lambda: Stt.fit_slope([1, 2, 3], [1, NAN, 3]), ValueError,
         "y: expected finite numbers"),
        ("fit_log_slope with mismatched lengths", lambda: Stt.fit_log_slope([1, 2, 3], [1, 2]), ValueError, "y:"),
        ("fit_log_slope with NaN in x", lambda: Stt.fit_log_slope([1, NAN, 3], [1, 2, 3]), ValueError,
         "x: expected finite numbers"),
        ("slope_through_origin with x = 0", lambda: Stt.slope_through_origin(torch.zeros(3), torch.ones(2, 3)),
         ValueError, "x: expected at least one non-zero value"),
        ("summarize of one sequence", lambda: Stt.summarize(torch.ones(1, 1)), ValueError,
         "x: expected at least 2 seeds or 2 sequences"),
        ("summarize of one seed, two sequences", lambda: Stt.summarize(torch.tensor([[1.0, 3.0]])).mean == 2.0,
         "ok", ""),
        # hebbian / unlearning
        ("outer_product_memory(repeats wrong shape)",
         lambda: Hb.outer_product_memory(keys, values, torch.ones(5)), ValueError,
         "repeats: expected a number or a tensor broadcasting to (n,) = (6,), got shape (5,)"),
        ("recall_cosine with float64 memory and float32 keys", lambda: Hb.recall_cosine(keys, values, S.double()),
         TypeError, "memory: expected dtype torch.float32"),
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
        # probes / designs
        ("predicted_effect('nope')", lambda: De.predicted_effect("nope"), ValueError, "design: expected one of"),
        ("predicted_effect(rule='linear')", lambda: De.predicted_effect("blocking", rule="linear"), ValueError,
         "rule: expected one of"),
        ("predicted_effect(lr=nan)", lambda: De.predicted_effect("blocking", lr=math.nan), ValueError, "lr: expected"),
        ("predicted_effect: Hebbian overshadowing is m·lr·(1 − 1/√2) with unit compounds",
         lambda: abs(De.predicted_effect("overshadowing", rule="hebbian", m=2, lr=0.5) - (1 - 2 ** -0.5)) < 1e-12,
         "ok", ""),
        ("readout_norm(model=None)", lambda: Pr.readout_norm(None, torch.zeros(1, 2, 3)), TypeError,
         "model: expected a pavlovlab.models.TinyTransformer"),
        ("recall_against_load(model='m')", lambda: Hm.recall_against_load("m", [8]), TypeError, "model: expected"),
        ("write_norms(model='m')", lambda: Hm.write_norms("m", n_pairs=2), TypeError, "model: expected"),
        ("compound_key_cosine(model=None)", lambda: Pr.compound_key_cosine(None, 16), TypeError, "model: expected"),
        ("nearer_law(tuple)", lambda: Cp.nearer_law((0.5, 0.01)), TypeError, "scaling: expected a CapacityScaling"),
        ("fidelity_gap(one trial)", lambda: Ar.fidelity_gap([1, 2], torch.ones(1, 2), 8), ValueError,
         "fidelity: expected (trials >= 2"),
        ("edit_reach(n_cues=0)", lambda: U.edit_reach(n_cues=0), ValueError, "n_cues"),
        ("half_life_se(one trial)", lambda: Dc.half_life_se(torch.ones(1, 5)), ValueError,
         "curves: expected at least 2"),
        ("age_group_margin(edges not increasing)",
         lambda: Dc.age_group_margin(torch.ones(3, 4), torch.ones(3, 4), (2, 1)),
         ValueError, "edges: expected"),
        ("relative_effects without acquisition", lambda: Pr.relative_effects({"blocking": torch.ones(2, 3)},
                                                                             "blocking"), ValueError,
         "results: expected effects for 'acquisition'"),
        ("relative_effects(list)", lambda: Pr.relative_effects([], "blocking"), TypeError, "results: expected"),
        ("relative_effects: per-seed ratios 0.5 and 0.25 average 0.375",
         lambda: abs(Pr.relative_effects({"acquisition": torch.tensor([[2.0, 2.0], [4.0, 4.0]]),
                                          "blocking": torch.ones(2, 2)}, "blocking").mean - 0.375) < 1e-12, "ok", ""),
        ("size_loss(1-D)", lambda: Pr.size_loss(torch.zeros(4)), ValueError, "log_ratios: expected"),
        ("size_loss of equal sizes is 0", lambda: abs(Pr.size_loss(torch.zeros(2, 3)).mean) < 1e-12, "ok", ""),
        ("separation_verdicts(responses=[])", lambda: Pr.separation_verdicts([], {}), TypeError,
         "responses: expected a mapping"),
        ("separation_verdicts(threshold=0)", lambda: Pr.separation_verdicts({}, {}, threshold=0), ValueError,
         "threshold: expected"),
        ("rw_effect('blocking', lr=1.5, compound='sum')", lambda: De.rw_effect("blocking", lr=1.5, compound="sum"),
         ValueError, "lr: expected a number <= 1 for 'blocking'"),
        ("rw_effect('blocking', lr=1.0, compound='sum') at the bound",
         lambda: math.isfinite(De.rw_effect("blocking", lr=1.0, compound="sum")), "ok", ""),
        ("rw_effect('blocking', lr=2.5) (unit compounds)", lambda: De.rw_effect("blocking", lr=2.5), ValueError,
         "lr: expected a number <= 2 for 'blocking'"),
        ("rw_effect('blocking', lr=1.5) is stable for unit compounds",
         lambda: abs(De.rw_effect("blocking", lr=1.5)) < 1.0, "ok", ""),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


# ------------------------------------------------------------------ tests that catch plausible bugs
def test_outer_product_memory_with_non_unit_keys_matches_the_sum():
    """Keys of norm 0.5 to 3: S = Σ v_i k_iᵀ exactly (a memory that normalised its keys fails)."""
    g = torch.Generator().manual_seed(0)
    keys = torch.randn(5, 6, generator=g, dtype=torch.float64) * torch.tensor([0.5, 1.0, 2.0, 3.0, 1.5])[:, None]
    values = torch.randn(5, 3, generator=g, dtype=torch.float64)
    expected = sum(torch.outer(values[i], keys[i]) for i in range(5))
    assert torch.allclose(Hb.outer_product_memory(keys, values), expected, atol=1e-12)
    r = torch.tensor([1.0, 2.0, 0.0, 1.0, 3.0], dtype=torch.float64)
    expected_r = sum(r[i] * torch.outer(values[i], keys[i]) for i in range(5))
    assert torch.allclose(Hb.outer_product_memory(keys, values, r), expected_r, atol=1e-12)


@pytest.mark.parametrize("threshold", [0.8, 0.85])
def test_capacity_from_fidelity_counts_a_value_equal_to_the_threshold(threshold):
    """"Stays ≥ threshold": a curve point exactly at the threshold counts (``>`` would drop it)."""
    f = torch.tensor([0.95, 0.9, threshold, threshold - 0.01], dtype=torch.float64)
    assert Ar.capacity_from_fidelity([1, 2, 3, 4], f, threshold=threshold) == 3
    assert Ar.capacity_from_fidelity([1, 2, 3, 4], f + 0.01, threshold=threshold) == 4


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


def test_circuit_effects_pairs_design_and_control_on_the_same_keys():
    """The blocking design and its control differ only in the trials; with the same keys in both arms the
    effect of each sequence is what the delta memory gives with those keys, computed here arm by arm by hand."""
    n, seed = 8, 3
    got = Pr.circuit_effects("blocking", rule="delta", n=n, seed=seed)
    batch = De.make_probes("blocking", n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    gk = torch.Generator().manual_seed(seed + 1)
    state = gk.get_state()
    arms = []
    for w in (batch.design, batch.control):
        gk.set_state(state)
        arms.append(Pr.memory_response(w, batch.outcome, batch.n_keys, rule="delta", lr=0.5, d_key=64, generator=gk))
    expected = (arms[0] - arms[1]) if batch.design_higher else (arms[1] - arms[0])
    assert torch.allclose(got, expected, atol=1e-9)
    unpaired = Pr.memory_response(batch.control, batch.outcome, batch.n_keys, rule="delta", lr=0.5, d_key=64,
                                  generator=torch.Generator().manual_seed(seed + 2))
    assert not torch.allclose(arms[1], unpaired)                     # the keys matter: pairing is testable


# ------------------------------------------------------------------ property-based: generated bad input
hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 50), st.text(max_size=2), st.none())


@FAST
@given(n=hyper, d_k=hyper)
def test_property_capacity_theories_name_the_argument(n, d_k):
    for call, names in [(lambda: Ar.fidelity_theory(n, d_k), {"n", "d_k"}),
                        (lambda: Cp.worst_case_bound(d_k), {"d_k"}),
                        (lambda: Ar.average_capacity_theory(d_k), {"d_k"})]:
        try:
            out = call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in names, str(e)
            continue
        assert bool(torch.isfinite(out).all())


@FAST
@given(x=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
       y=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4))
def test_property_statistics_names_the_argument(x, y):
    for call in (lambda: Stt.fit_slope(x, y), lambda: Stt.fit_log_slope(x, y)):
        try:
            out = call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in {"x", "y", "x, y"}, str(e)
            continue
        assert all(math.isfinite(o) for o in (out if isinstance(out, tuple) else (out,))), (x, y, out)


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
