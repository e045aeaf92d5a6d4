"""Tests of pavlovlab.capacity: key distributions, the store-and-recall experiment, theory and capacity estimators."""

import math

import pytest
import torch

from pavlovlab import AssociativeMemory
from pavlovlab import capacity as C


# ------------------------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("kind", C.KINDS)
def test_random_keys_shapes_norms_and_devices(kind, device, dtype):
    K = C.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), device=device, dtype=dtype)
    assert K.shape == (3, 40, 16) and K.dtype == dtype and K.device.type == device.type
    ref = C.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), dtype=dtype)
    torch.testing.assert_close(K.cpu(), ref)  # drawn on the CPU generator, then moved
    norms2 = K.pow(2).sum(-1)
    if kind == "gaussian":
        assert abs(norms2.mean().item() - 1) < 0.1
    else:
        torch.testing.assert_close(norms2, torch.ones_like(norms2), rtol=1e-5, atol=1e-5)
    if kind == "binary":
        torch.testing.assert_close(K.abs(), torch.full_like(K, 0.25))


def test_orthogonal_keys_form_orthonormal_frames(gen):
    K = C.random_keys(2, 20, d=8, kind="orthogonal", generator=gen, dtype=torch.float64)
    G = K @ K.mT
    for a in range(0, 16, 8):  # the two full frames: exactly orthonormal
        torch.testing.assert_close(G[:, a:a + 8, a:a + 8], torch.eye(8, dtype=torch.float64).expand(2, 8, 8))
    assert G[:, :8, 8:16].abs().max() > 0.1  # independent frames are not orthogonal to each other


def test_random_values_and_single_shapes(gen):
    assert C.random_values(5, d=7, generator=gen).shape == (5, 7)
    assert C.random_keys(d=4, kind="orthogonal", generator=gen).shape == (4,)
    assert C.random_keys((2, 3), d=4, generator=gen).shape == (2, 3, 4)


@pytest.mark.parametrize("kwargs, err, words", [
    (dict(d=0), ValueError, "d: expected an integer >= 1"),
    (dict(d=4, kind="uniform"), ValueError, "kind: expected one of"),
    (dict(d=4, dtype=torch.int64), TypeError, "dtype"),
    (dict(d=4.0), TypeError, "d: expected an integer"),
    (dict(d=4, generator=0), TypeError, "generator"),
])
def test_random_keys_rejects_bad_input(kwargs, err, words):
    with pytest.raises(err, match=words):
        C.random_keys(3, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        C.random_keys(-1, d=3)


# ----------------------------------------------------------------------------------------- experiment
def test_store_and_recall_matches_the_memory_and_the_gram_shortcut(gen):
    K = C.random_keys(4, 30, d=12, generator=gen, dtype=torch.float64)
    V = C.random_values(4, 30, d=9, generator=gen, dtype=torch.float64)
    m = C.store_and_recall(K, V)
    mem = AssociativeMemory(12, 9, batch_shape=(4,), dtype=torch.float64)
    mem.write(K, V)
    read = mem.read(K)
    torch.testing.assert_close(m.cosine, torch.nn.functional.cosine_similarity(read, V, dim=-1))
    torch.testing.assert_close(m.sq_error, (read - V).pow(2).sum(-1))
    scores = read @ V.mT
    torch.testing.assert_close(m.correct, scores.argmax(-1) == torch.arange(30))
    # one-hot values: the Gram shortcut gives the same numbers for every prefix n
    ns = [1, 7, 18, 30]
    fast = C.recall_from_keys(K, ns)
    for b, n in enumerate(ns):
        slow = C.store_and_recall(K[:, :n], torch.eye(n, dtype=torch.float64).expand(4, n, n))
        torch.testing.assert_close(fast.cosine[:, b, :n], slow.cosine)
        torch.testing.assert_close(fast.sq_error[:, b, :n], slow.sq_error)
        torch.testing.assert_close(fast.crosstalk[:, b, :n], slow.crosstalk)
        assert torch.equal(fast.correct[:, b, :n], slow.correct)
        assert fast.cosine[:, b, n:].isnan().all() and not fast.correct[:, b, n:].any()


def test_recall_sweep_same_numbers_on_every_device(device):
    a = C.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3), device=device)
    b = C.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3))
    assert a.cosine.shape == (5, 4, 20) and a.cosine.device.type == device.type
    torch.testing.assert_close(a.cosine.cpu(), b.cosine, equal_nan=True, rtol=1e-5, atol=1e-5)
    assert torch.equal(a.correct.cpu(), b.correct)


@pytest.mark.parametrize("d_k, ratio, trials", [(32, 4.0, 60), (128, 4.0, 16), (512, 2.0, 6)])
def test_mean_cosine_matches_theory_within_2_percent(d_k, ratio, trials):
    ns = C.n_grid(d_k, points=12, max_ratio=ratio)
    m = C.recall_sweep(d_k, ns, trials=trials, generator=torch.Generator().manual_seed(d_k))
    measured = m.cosine.double().nanmean(-1).mean(0)
    theory = C.fidelity_theory(ns, d_k)
    assert ((measured - theory).abs() / theory).max() < 0.02


def test_orthogonal_keys_recall_perfectly_up_to_d_k_and_not_beyond(gen):
    d = 24
    ns = torch.arange(1, 2 * d + 1)
    m = C.recall_sweep(d, ns, trials=20, kind="orthogonal", generator=gen, dtype=torch.float64)
    worst = m.cosine.nan_to_num(nan=1.0).amin(dim=(0, 2))  # the worst item over trials, for each n
    assert (worst[:d] > 1 - 1e-9).all() and (worst[d:] < 0.99).all()
    per_n = (m.correct | m.cosine.isnan()).all(-1).all(0)
    assert per_n[:d].all()
    assert C.capacity_from_fidelity(ns, m.cosine, threshold=0.999) == d


def test_average_capacity_grows_linearly_with_d_k():
    d_ks = [16, 32, 64, 128, 256]
    caps = []
    for d in d_ks:
        ns = C.n_grid(d, points=40, max_ratio=1.2)
        m = C.recall_sweep(d, ns, trials=20, generator=torch.Generator().manual_seed(d))
        caps.append(C.capacity_from_fidelity(ns, m.cosine, threshold=0.8))
    slope = C.fit_slope(d_ks, caps)
    assert 0.85 <= slope <= 1.15, (caps, slope)
    theory = C.average_capacity_theory(torch.tensor(d_ks), 0.8)
    assert ((torch.tensor(caps) / theory - 1).abs() < 0.2).all(), (caps, theory)


def test_worst_case_capacity_grows_as_sqrt_d_k():
    d_ks = [16, 32, 64, 128, 256, 512]
    caps = []
    for d in d_ks:
        ns = torch.arange(1, int(3 * math.sqrt(d)) + 2)
        m = C.recall_sweep(d, ns, trials=100, generator=torch.Generator().manual_seed(d))
        caps.append(C.capacity_from_crosstalk(ns, m.crosstalk, fraction=0.5))
    slope = C.fit_slope(d_ks, caps)
    assert 0.35 <= slope <= 0.65, (caps, slope)
    bound = C.worst_case_bound(torch.tensor(d_ks))
    assert ((torch.tensor(caps) / bound - 0.75).abs() < 0.3).all(), (caps, bound)


def test_crosstalk_below_one_means_every_item_is_decoded(gen):
    m = C.recall_sweep(32, C.n_grid(32), trials=30, generator=gen)
    safe = m.crosstalk < 1
    assert safe.any() and m.correct[safe].all()


def test_capacity_sweep_shapes_and_summaries(gen):
    sw = C.capacity_sweep([8, 16], points=10, trials=7, generator=gen)
    assert sw.d_ks == [8, 16] and [len(n) for n in sw.ns] == [10, 10]
    assert sw.fidelity[1].shape == (7, 10) and sw.all_correct[1].dtype == torch.bool
    torch.testing.assert_close(sw.first_cosine[0][:, 0], torch.ones(7))  # alone in the bucket: perfect
    caps = C.sweep_capacities(sw)
    assert set(caps) == {"average", "all_correct", "crosstalk"}
    assert all(isinstance(c, int) for v in caps.values() for c in v)


# -------------------------------------------------------------------------------- theory and estimators
def test_theory_curves():
    torch.testing.assert_close(C.fidelity_theory(torch.tensor([1, 33]), 32), torch.tensor([1.0, 2 ** -0.5],
                                                                                         dtype=torch.float64))
    assert C.average_capacity_theory(100, 0.8).item() == pytest.approx(1 + 100 * (1 / 0.64 - 1))
    assert C.worst_case_bound(2 / math.pi).item() == pytest.approx(1.0)
    assert C.fit_slope([1, 2, 4, 8], [3, 6, 12, 24]) == pytest.approx(1.0)
    assert C.fit_slope([4, 16, 64], [2, 4, 8]) == pytest.approx(0.5)


def test_estimators_on_hand_made_curves():
    ns = [1, 2, 4, 8, 16]
    assert C.capacity_from_fidelity(ns, torch.tensor([1.0, 0.9, 0.85, 0.7, 0.9]), 0.8) == 4  # first crossing
    assert C.capacity_from_fidelity(ns, torch.tensor([0.5, 0.4, 0.3, 0.2, 0.1]), 0.8) == 0
    correct = torch.tensor([[True, True, True, False, False]] * 9 + [[True, True, False, False, False]])
    assert C.capacity_all_correct(ns, correct, fraction=0.9) == 4
    assert C.capacity_all_correct(ns, correct, fraction=1.0) == 2
    worst = torch.tensor([[0.0, 0.5, 0.9, 1.2, 2.0], [0.0, 0.6, 1.1, 1.5, 2.2]])
    assert C.capacity_from_crosstalk(ns, worst, fraction=0.5) == 4
    assert C.capacity_from_crosstalk(ns, worst, fraction=1.0) == 2


@pytest.mark.parametrize("call, err, words", [
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [1, 3, 3]), ValueError, "strictly increasing"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [1.0, 2.0]), ValueError, "ns: expected"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [0, 2]), ValueError, "pairs >= 1"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [2, 9]), ValueError, "at least max"),
    (lambda: C.recall_from_keys([[1.0]], [1]), TypeError, "keys: expected a torch.Tensor"),
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(6, 3)), ValueError, "number of pairs"),
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(5, 3, dtype=torch.float64)), TypeError, "dtype"),
    (lambda: C.recall_sweep(0, [1]), ValueError, "d_k"),
    (lambda: C.recall_sweep(4, [1], trials=0), ValueError, "trials"),
    (lambda: C.recall_sweep(4, [1], kind="cube"), ValueError, "kind"),
    (lambda: C.fidelity_theory(0, 4), ValueError, "n: expected"),
    (lambda: C.fidelity_theory(3, 0), ValueError, "d_k"),
    (lambda: C.worst_case_bound(-1), ValueError, "d_k"),
    (lambda: C.average_capacity_theory(8, 1.5), ValueError, "threshold"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(3)), ValueError, "len\\(ns\\)"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(2), threshold=0), ValueError, "threshold"),
    (lambda: C.capacity_all_correct([1, 2], torch.ones(2)), TypeError, "boolean"),
    (lambda: C.capacity_from_crosstalk([1, 2], torch.ones(2), fraction=2.0), ValueError, "fraction"),
    (lambda: C.fit_slope([1, 2], [1, -2]), ValueError, "positive"),
    (lambda: C.fit_slope([1, 2], [1, 2, 3]), ValueError, "same length"),
    (lambda: C.capacity_sweep(16), ValueError, "d_ks"),
    (lambda: C.n_grid(16, points=0), ValueError, "points"),
])
def test_bad_inputs_are_rejected_clearly(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_n_grid():
    for d in [1, 16, 256]:
        ns = C.n_grid(d, points=24, max_ratio=4.0)
        assert len(ns) == 24 and ns[0] == 1 and ns[-1] == max(24, 4 * d)
        assert (ns[1:] > ns[:-1]).all()
