"""Tests of pavlovlab.capacity.average: the store-and-recall experiment, the fidelity theory and the average-case
capacity."""

import math

import numpy as np
import pytest
import torch
from badinput import FAST, LONG, NAN, check, parametrize
from conftest import needs_cuda
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab import AssociativeMemory
from pavlovlab.capacity import average as ar
from pavlovlab.capacity import criteria as Cp
from pavlovlab.sampling import random_keys, random_values
from pavlovlab.statistics import fit_slope


def test_store_and_recall_matches_the_memory_and_the_gram_shortcut(gen):
    K = random_keys(4, 30, d=12, generator=gen, dtype=torch.float64)
    V = random_values(4, 30, d=9, generator=gen, dtype=torch.float64)
    m = ar._store_and_recall(K, V)
    mem = AssociativeMemory(12, 9, batch_shape=(4,), dtype=torch.float64)
    mem.write(K, V)
    read = mem.read(K)
    torch.testing.assert_close(m.cosine, torch.nn.functional.cosine_similarity(read, V, dim=-1))
    scores = read @ V.mT
    torch.testing.assert_close(m.correct, scores.argmax(-1) == torch.arange(30))


def test_recall_sweep_gram_shortcut_matches_store_and_recall_for_every_prefix():
    # recall_sweep draws its keys from the generator exactly as random_keys does: redraw them, then store
    # the first n with one-hot values through the memory itself and compare every prefix n
    ns = [1, 7, 18, 30]
    fast = ar.recall_sweep(12, ns, trials=4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    K = random_keys(4, 30, d=12, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    for b, n in enumerate(ns):
        slow = ar._store_and_recall(K[:, :n], torch.eye(n, dtype=torch.float64).expand(4, n, n))
        torch.testing.assert_close(fast.cosine[:, b, :n], slow.cosine)
        assert torch.equal(fast.correct[:, b, :n], slow.correct)
        assert fast.cosine[:, b, n:].isnan().all() and not fast.correct[:, b, n:].any()


@needs_cuda
def test_recall_sweep_same_numbers_on_cuda():
    # the reference is the CPU run (its cosines are checked against store_and_recall above and the theory below)
    a = ar.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3), device="cuda")
    b = ar.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3))
    assert a.cosine.shape == (5, 4, 20) and a.cosine.device.type == "cuda"
    torch.testing.assert_close(a.cosine.cpu(), b.cosine, equal_nan=True, rtol=1e-5, atol=1e-5)
    assert torch.equal(a.correct.cpu(), b.correct)


@pytest.mark.parametrize("d_k, ratio, trials", [(32, 4.0, 60), (128, 4.0, 16), (512, 2.0, 6)])
def test_mean_cosine_matches_theory_within_2_percent(d_k, ratio, trials):
    ns = ar.n_grid(d_k, points=12, max_ratio=ratio)
    m = ar.recall_sweep(d_k, ns, trials=trials, generator=torch.Generator().manual_seed(d_k))
    measured = m.cosine.double().nanmean(-1).mean(0)
    theory = ar.fidelity_theory(ns, d_k)
    assert ((measured - theory).abs() / theory).max() < 0.02


def test_gaussian_keys_carry_crosstalk_one_over_d_k_minus_2_and_unit_keys_sit_above_the_formula():
    """With one-hot values the read-out of item j has cos = 1/√(1 + x_j), x_j = Σ_{i≠j}(k_i·k_j)²/‖k_j‖⁴. Closed forms:
    E x_j = (n − 1)/d_k for unit keys and (n − 1)/(d_k − 2) for Gaussian keys (E[1/χ²_d] = 1/(d − 2)); and for unit
    keys E cos ≥ 1/√(1 + E x) (Jensen: 1/√(1 + x) is convex), so the measured mean sits above the formula."""
    d_k, n, trials = 16, 16, 400
    ns = torch.tensor([n])
    for kind, expected in (("sphere", (n - 1) / d_k), ("gaussian", (n - 1) / (d_k - 2))):
        cos = ar.recall_sweep(d_k, ns, trials=trials, kind=kind,
                              generator=torch.Generator().manual_seed(21)).cosine.double()[:, 0, :n]
        x = cos.pow(-2) - 1                                            # (trials, n): each item's normalised crosstalk
        per_trial = x.mean(-1)
        assert abs(float(per_trial.mean()) - expected) < 4 * float(per_trial.std()) / trials**0.5, kind
        gap, se = ar.fidelity_gap(ns, cos.mean(-1, keepdim=True), d_k)
        assert (float(gap) > 4 * float(se)) if kind == "sphere" else (float(gap) < -4 * float(se)), (kind, gap, se)


def test_fidelity_gap_is_the_relative_gap_and_its_standard_error():
    ns = torch.tensor([1, 5, 9])
    fid = torch.tensor([[1.0, 0.9, 0.8], [1.0, 0.7, 0.6], [1.0, 0.8, 0.7]], dtype=torch.float64)
    gap, se = ar.fidelity_gap(ns, fid, 8)
    for i, n in enumerate([1, 5, 9]):
        f = 1 / math.sqrt(1 + (n - 1) / 8)
        col = fid[:, i].tolist()
        mean = sum(col) / 3
        sd = math.sqrt(sum((c - mean) ** 2 for c in col) / 2)
        assert abs(float(gap[i]) - (mean - f) / f) < 1e-12 and abs(float(se[i]) - sd / math.sqrt(3) / f) < 1e-12
    with pytest.raises(ValueError, match="fidelity"):
        ar.fidelity_gap(ns, fid[:1], 8)


@pytest.mark.slow
def test_unit_key_average_capacity_is_the_formula_within_one_pair_for_other_seeds():
    """Notebook 04 §4 with other draws: capacity at mean cosine ≥ 0.8, read at every n, 100 trials."""
    for seed in (101, 102, 103, 104, 105):
        for d in (16, 32, 64, 128):
            ns = torch.arange(1, int(1.3 * ar.average_capacity_theory(d, 0.8)) + 2)
            caps = {kind: ar.capacity_from_fidelity(ns, ar.recall_sweep(d, ns, trials=100, kind=kind, generator=
                    torch.Generator().manual_seed(seed)).cosine, 0.8) for kind in ("sphere", "gaussian")}
            assert abs(caps["sphere"] - math.floor(1 + d * (1 / 0.8**2 - 1))) <= 1, (seed, d, caps)
            assert caps["gaussian"] <= caps["sphere"], (seed, d, caps)


def test_orthogonal_keys_recall_perfectly_up_to_d_k_and_not_beyond(gen):
    d = 24
    ns = torch.arange(1, 2 * d + 1)
    m = ar.recall_sweep(d, ns, trials=20, kind="orthogonal", generator=gen, dtype=torch.float64)
    worst = m.cosine.nan_to_num(nan=1.0).amin(dim=(0, 2))  # the worst item over trials, for each n
    assert (worst[:d] > 1 - 1e-9).all() and (worst[d:] < 0.99).all()
    per_n = (m.correct | m.cosine.isnan()).all(-1).all(0)
    assert per_n[:d].all()
    assert ar.capacity_from_fidelity(ns, m.cosine, threshold=0.999) == d


def test_average_capacity_grows_linearly_with_d_k():
    d_ks = [16, 32, 64, 128, 256]
    caps = []
    for d in d_ks:
        ns = ar.n_grid(d, points=40, max_ratio=1.2)
        m = ar.recall_sweep(d, ns, trials=20, generator=torch.Generator().manual_seed(d))
        caps.append(ar.capacity_from_fidelity(ns, m.cosine, threshold=0.8))
    slope = fit_slope(d_ks, caps)
    assert 0.85 <= slope <= 1.15, (caps, slope)
    theory = ar.average_capacity_theory(torch.tensor(d_ks), 0.8)
    assert ((torch.tensor(caps) / theory - 1).abs() < 0.2).all(), (caps, theory)


def test_capacity_sweep_shapes_and_summaries(gen):
    sw = ar.capacity_sweep([8, 16], points=10, trials=7, generator=gen)
    assert sw.d_ks == [8, 16] and [len(n) for n in sw.ns] == [10, 10]
    assert sw.fidelity[1].shape == (7, 10)
    torch.testing.assert_close(sw.fidelity[0][:, 0], torch.ones(7))  # alone in the bucket: perfect
    assert [ar.capacity_from_fidelity(n, f) for n, f in zip(sw.ns, sw.fidelity, strict=True)] == [
        ar.capacity_from_fidelity(n, f.mean(0)) for n, f in zip(sw.ns, sw.fidelity, strict=True)]


def test_theory_curves():
    torch.testing.assert_close(ar.fidelity_theory(torch.tensor([1, 33]), 32), torch.tensor([1.0, 2 ** -0.5],
                                                                                         dtype=torch.float64))
    assert ar.average_capacity_theory(100, 0.8).item() == pytest.approx(1 + 100 * (1 / 0.64 - 1))


def test_estimators_on_hand_made_curves():
    ns = [1, 2, 4, 8, 16]
    assert ar.capacity_from_fidelity(ns, torch.tensor([1.0, 0.9, 0.85, 0.7, 0.9]), 0.8) == 4  # first crossing
    assert ar.capacity_from_fidelity(ns, torch.tensor([0.5, 0.4, 0.3, 0.2, 0.1]), 0.8) == 0
    # a fidelity exactly at the threshold still counts ("stays >= threshold"), in every input shape
    assert ar.capacity_from_fidelity(ns, torch.tensor([1.0, 0.75, 0.75, 0.5, 0.9]), 0.75) == 4
    per_trial = torch.tensor([[1.0, 0.875, 0.5, 0.5, 0.5], [1.0, 0.625, 1.0, 0.5, 0.5]])  # means 1, .75, .75, .5, .5
    assert ar.capacity_from_fidelity(ns, per_trial, 0.75) == 4
    assert ar.capacity_from_fidelity(ns, per_trial[..., None], 0.75) == 4
    assert ar.capacity_from_fidelity(ns, per_trial, 0.75 + 2 ** -40) == 1  # just above the tie: it fails there


@pytest.mark.parametrize("call, err, words", [
    (lambda: ar.recall_sweep(4, [1, 3, 3]), ValueError, "strictly increasing"),
    (lambda: ar.recall_sweep(4, [1.0, 2.0]), ValueError, "ns: expected"),
    (lambda: ar.recall_sweep(4, [0, 2]), ValueError, "pairs >= 1"),
    (lambda: ar.recall_sweep(0, [1]), ValueError, "d_k"),
    (lambda: ar.recall_sweep(4, [1], trials=0), ValueError, "trials"),
    (lambda: ar.recall_sweep(4, [1], kind="cube"), ValueError, "kind"),
    (lambda: ar.fidelity_theory(0, 4), ValueError, "n: expected"),
    (lambda: ar.fidelity_theory(3, 0), ValueError, "d_k"),
    (lambda: ar.average_capacity_theory(8, 1.5), ValueError, "threshold"),
    (lambda: ar.capacity_from_fidelity([1, 2], torch.ones(3)), ValueError, "len\\(ns\\)"),
    (lambda: ar.capacity_from_fidelity([1, 2], torch.ones(2), threshold=0), ValueError, "threshold"),
    (lambda: ar.capacity_sweep(16), TypeError, "d_ks"),
    (lambda: ar.n_grid(16, points=0), ValueError, "points"),
])
def test_bad_inputs_are_rejected_clearly(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_capacity_sweep_checks_every_key_dimension_before_the_first_draw():
    """A grid that the last key dimension cannot have (max_ratio · d_k < 1) or a bad generator stops the sweep before
    it draws anything."""
    g = torch.Generator().manual_seed(0)
    before = g.get_state()
    with pytest.raises(ValueError, match="max_ratio: expected max_ratio · d_k >= 1"):
        ar.capacity_sweep([8, 1], points=3, max_ratio=0.2, trials=2, generator=g)
    assert torch.equal(g.get_state(), before)
    with pytest.raises(TypeError, match=r"generator: expected a torch\.Generator or None, got int"):
        ar.recall_sweep(8, [1, 2], generator=0)


def test_n_grid():
    for d in [1, 16, 256]:
        ns = ar.n_grid(d, points=24, max_ratio=4.0)
        assert len(ns) == min(24, 4 * d) and ns[0] == 1 and ns[-1] == 4 * d   # never past max_ratio · d_k
        assert (ns[1:] > ns[:-1]).all()


def test_exact_ties_count_as_recall_failures():
    """Binary keys can coincide exactly: two identical keys give two identical read-outs, which tie; a
    recall that cannot tell the two values apart is a failure, not a success."""
    k = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64) / math.sqrt(2)
    v = torch.eye(2, dtype=torch.float64)
    m = ar._store_and_recall(k, v)
    assert not m.correct.any()
    k3 = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=torch.float64) / math.sqrt(2)   # orthogonal: both recalled
    assert ar._store_and_recall(k3, v).correct.all()


# ---------------------------------------------------------------------------------------------------- bad input
def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _store_and_recall_by_hand():
    """Keys (1, 0) and (0.6, 0.8), one-hot values: S k_j = e_j + 0.6 e_other, cosine 1/√1.36, both decoded."""
    keys = torch.tensor([[1.0, 0.0], [0.6, 0.8]], dtype=torch.float64)
    m = ar._store_and_recall(keys, torch.eye(2, dtype=torch.float64))
    return bool(torch.allclose(m.cosine, torch.full((2,), 1 / math.sqrt(1.36), dtype=torch.float64))
                and m.correct.all())


hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 50), st.text(max_size=2), st.none())


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.capacity.average``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("average capacity d_k < 0", lambda: ar.average_capacity_theory(-16), ValueError, "d_k: expected numbers > 0"),
        ("fidelity n = 0", lambda: ar.fidelity_theory(0, 16), ValueError, "n: expected"),
        ("fidelity_theory(nan, 8)", lambda: ar.fidelity_theory(NAN, 8), ValueError, "n: expected finite numbers"),
        ("fidelity_theory('3', 8)", lambda: ar.fidelity_theory("3", 8), TypeError, "n: expected a number"),
        ("fidelity_theory(3, 0)", lambda: ar.fidelity_theory(3, 0), ValueError, "d_k: expected numbers > 0"),
        ("fidelity_theory keeps a float32 tensor's dtype",
         lambda: ar.fidelity_theory(torch.tensor([3.0]), 8).dtype == torch.float32, "ok", ""),
        ("capacity_from_fidelity all-NaN curve", lambda: ar.capacity_from_fidelity([1, 2, 3], torch.full((3,), NAN)),
         ValueError, "fidelity: expected finite mean cosines"),
        ("capacity_from_fidelity NaN inside the curve",
         lambda: ar.capacity_from_fidelity([1, 2, 3], torch.tensor([0.9, NAN, 0.9])), ValueError,
         "fidelity: expected finite mean cosines"),
        ("capacity_from_fidelity per-item NaN for items not stored is fine",
         lambda: ar.capacity_from_fidelity([1, 2], torch.tensor([[[0.9, NAN], [0.85, 0.85]]])) == 2, "ok", ""),
        ("n_grid(16, points=100, max_ratio=0.5) is 1..8 (documented: never past max_ratio · d_k)",
         lambda: ar.n_grid(16, points=100, max_ratio=0.5).tolist() == list(range(1, 9)), "ok", ""),
        ("n_grid(64, points=20) stays within 1..256, distinct",
         lambda: (lambda g: int(g[0]) == 1 and int(g[-1]) == 256 and bool((g.diff() > 0).all()) and len(g) == 20)(
             ar.n_grid(64, points=20)), "ok", ""),
        ("n_grid(16, points=8, max_ratio=0.5) stays <= 8", lambda: ar.n_grid(16, points=8, max_ratio=0.5).tolist()
         == list(range(1, 9)), "ok", ""),
        ("n_grid(16, max_ratio=0.01)", lambda: ar.n_grid(16, points=1, max_ratio=0.01), ValueError,
         "max_ratio: expected max_ratio · d_k >= 1"),
        ("fidelity_gap(one trial)", lambda: ar.fidelity_gap([1, 2], torch.ones(1, 2), 8), ValueError,
         "fidelity: expected (trials >= 2"),
        ("recall_sweep(ns up to 300,000)", lambda: ar.recall_sweep(8, [10, LONG], trials=1), ValueError,
         "ns: one trial's Gram matrix, n × n for the largest n = 9e+10"),
        ("capacity_sweep(8)", lambda: ar.capacity_sweep(8), TypeError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep('ab')", lambda: ar.capacity_sweep("ab"), TypeError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep([])", lambda: ar.capacity_sweep([]), ValueError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep([8.0])", lambda: ar.capacity_sweep([8.0]), TypeError, "d_ks[0]: expected an integer"),
        ("capacity_sweep([0])", lambda: ar.capacity_sweep([0]), ValueError, "d_ks[0]: expected an integer >= 1"),
        ("capacity_sweep(max_ratio=nan)", lambda: ar.capacity_sweep([8], max_ratio=NAN), ValueError,
         "max_ratio: expected a finite number"),
        ("capacity_sweep(dtype='int64')", lambda: ar.capacity_sweep([8], dtype="int64"), TypeError,
         "dtype: expected a floating-point dtype"),
        ("capacity_sweep(np.array([8])) (NumPy integers accepted by contract): n = 1 recalls with cosine 1",
         lambda: (lambda out: out.d_ks == [8] and type(out.d_ks[0]) is int
                  and bool(torch.allclose(out.fidelity[0][:, 0], torch.ones(2))))(
             ar.capacity_sweep(np.array([8]), points=3, trials=2, generator=_gen())), "ok", ""),
        ("recall_sweep(ns='abc')", lambda: ar.recall_sweep(8, "abc"), TypeError, "ns: expected a non-empty 1-D"),
        ("recall_sweep(ns=[1.5])", lambda: ar.recall_sweep(8, [1.5]), ValueError, "ns: expected a non-empty 1-D"),
        ("recall_sweep(ns=[2, 1])", lambda: ar.recall_sweep(8, [2, 1]), ValueError, "ns: expected strictly increasing"),
        ("recall_sweep(ns=[0])", lambda: ar.recall_sweep(8, [0]), ValueError, "ns: expected numbers of pairs >= 1"),
        ("recall_sweep(d_k=0)", lambda: ar.recall_sweep(0, [1]), ValueError, "d_k: expected an integer >= 1"),
        ("recall_sweep(device='gpu0')", lambda: ar.recall_sweep(8, [1], device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_sweep(dtype='float32') (accepted by contract): one stored item reads back exactly",
         lambda: (lambda m: m.cosine.dtype == torch.float32 and bool(torch.allclose(m.cosine[:, 0, 0], torch.ones(3)))
                  and bool(m.correct[:, 0, 0].all()) and bool(m.cosine[:, 0, 1].isnan().all()))(
             ar.recall_sweep(4, [1, 2], trials=3, generator=_gen(), dtype="float32")), "ok", ""),
        ("store_and_recall of keys at cosine 0.6: cosine 1/√1.36", _store_and_recall_by_hand, "ok", ""),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@pytest.mark.parametrize("threshold", [0.8, 0.85])
def test_capacity_from_fidelity_counts_a_value_equal_to_the_threshold(threshold):
    """"Stays ≥ threshold": a curve point exactly at the threshold counts (``>`` would drop it)."""
    f = torch.tensor([0.95, 0.9, threshold, threshold - 0.01], dtype=torch.float64)
    assert ar.capacity_from_fidelity([1, 2, 3, 4], f, threshold=threshold) == 3
    assert ar.capacity_from_fidelity([1, 2, 3, 4], f + 0.01, threshold=threshold) == 4


@FAST
@given(n=hyper, d_k=hyper)
def test_property_capacity_theories_name_the_argument(n, d_k):
    for call, names in [(lambda: ar.fidelity_theory(n, d_k), {"n", "d_k"}),
                        (lambda: Cp.worst_case_bound(d_k), {"d_k"}),
                        (lambda: ar.average_capacity_theory(d_k), {"d_k"})]:
        try:
            out = call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in names, str(e)
            continue
        assert bool(torch.isfinite(out).all())
