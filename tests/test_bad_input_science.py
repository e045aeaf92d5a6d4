"""Bad input for the experiment and theory helpers behind the notebooks' science: ``pavlovlab.capacity.average``'s
sweeps and ``pavlovlab.capacity``'s slopes, ``pavlovlab.forgetting.decay.recall_by_age``,
``pavlovlab.forgetting.oja.memory_fixed_point``, the one-hop helpers of ``pavlovlab.depth.chain``,
``pavlovlab.depth.theory`` and ``pavlovlab.depth.contest``, and ``pavlovlab.forgetting.unlearning``'s cue probes. Each
"ok" row checks a value worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import torch
from badinput import check, parametrize

from pavlovlab.capacity import average as Ar
from pavlovlab.capacity import criteria as Cp
from pavlovlab.depth import chain as St
from pavlovlab.depth import contest as Dw
from pavlovlab.depth import theory as Th
from pavlovlab.forgetting import decay as D
from pavlovlab.forgetting import oja as O
from pavlovlab.forgetting import unlearning as U
from pavlovlab.models import tasks as Ta

NAN = math.nan


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _scaling(d_ks, mean, sem):
    mean, sem = torch.tensor(mean, dtype=torch.float64), torch.tensor(sem, dtype=torch.float64)
    return Cp.CapacityScaling(d_ks, mean, sem, torch.zeros(len(mean)), 1.0, 0.0, [])


def _local_slopes_by_hand():
    """d_k 4 -> 16, mean 2 -> 8: slope ln 4 / ln 4 = 1; se = √(0.1² + 0.05²) / ln 4 (relative errors 0.2/2, 0.4/8)."""
    b, se = Cp.local_slopes(_scaling([4, 16], [2.0, 8.0], [0.2, 0.4]))
    return math.isclose(float(b[0]), 1.0, abs_tol=1e-12) and \
        math.isclose(float(se[0]), math.sqrt(0.1 ** 2 + 0.05 ** 2) / math.log(4), rel_tol=1e-12)


def _store_and_recall_by_hand():
    """Keys (1, 0) and (0.6, 0.8), one-hot values: S k_j = e_j + 0.6 e_other, cosine 1/√1.36, both decoded."""
    keys = torch.tensor([[1.0, 0.0], [0.6, 0.8]], dtype=torch.float64)
    m = Ar.store_and_recall(keys, torch.eye(2, dtype=torch.float64))
    return bool(torch.allclose(m.cosine, torch.full((2,), 1 / math.sqrt(1.36), dtype=torch.float64))
                and m.correct.all())


def _fixed_point_by_hand():
    """V = (e1, e2) in R³ (orthonormal, so P keeps rows 0, 1), K = (e1, e2) in R⁴, S = ones: rows 0, 1 become Kᵀ
    and row 2, outside the span of the values, keeps its ones."""
    S = torch.ones(3, 4, dtype=torch.float64)
    got = O.memory_fixed_point(S, torch.eye(4, dtype=torch.float64)[:2], torch.eye(3, dtype=torch.float64)[:2])
    expected = torch.tensor([[1.0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.float64)
    return bool(torch.allclose(got, expected, atol=1e-12))


def _one_hop_two_items():
    """With n = 2 unit pairs the read-out is r = v_j + c v_m (c = k_x·k_y, |c| ≤ 1): m wins iff
    (c − 1)(1 − t) > 0, impossible, so no hop fails; both chains see the same |c| and the same t = v_1·v_2."""
    h = St.one_hop(np.int64(2), 16, trials=20, generator=_gen(3), dtype="float64")
    return bool(not h.failed.any() and torch.allclose(h.crosstalk_norm[:, 0], h.crosstalk_norm[:, 1])
                and torch.allclose(h.t_max[:, 0], h.t_max[:, 1]) and (h.crosstalk_norm <= 1 + 1e-12).all())


def _shape_difference_by_hand():
    """a = (1, 3), b = (0, 2): diff 1, s²/n = 1 each, se = √2, df = 4 / (1 + 1) = 2; the t quantile at 0.975
    with 2 degrees of freedom is (2p − 1)/√(2p(1 − p)) = 4.30265 (the package tabulates 4.303: within 1e-4)."""
    r = Dw.shape_difference([1.0, 3.0], np.array([0.0, 2.0]))
    p = 0.975
    half = (2 * p - 1) / math.sqrt(2 * p * (1 - p)) * math.sqrt(2)
    return r.diff == 1.0 and math.isclose(r.df, 2.0) and math.isclose(r.lo, 1 - half, rel_tol=1e-4) \
        and math.isclose(r.hi, 1 + half, rel_tol=1e-4)


def _cue_response_by_hand():
    """S = v kᵀ with v = (2, 0, 0), k = e1: cues e1, e2, e1/2 evoke 1, 0, 1/2 of the learned response."""
    k, v = torch.eye(4)[0], torch.tensor([2.0, 0.0, 0.0])
    cues = torch.stack([k, torch.eye(4)[1], 0.5 * k])
    return bool(torch.allclose(U.cue_response(torch.outer(v, k), cues, v), torch.tensor([1.0, 0.0, 0.5])))


def _probe_cues_by_hand():
    """Keys e1, e2, e3: cues e1, e2, (e1 + e2)/√2, a look-alike at cosine 0.7 with e1, all of unit norm."""
    keys = torch.eye(4, dtype=torch.float64)[:3]
    c = U.probe_cues(keys, overlap=0.7, generator=_gen(1))
    return bool(torch.allclose(c[:2], keys[:2]) and torch.allclose(c[2], (keys[0] + keys[1]) / math.sqrt(2))
                and math.isclose(float(c[3] @ keys[0]), 0.7, abs_tol=1e-12)
                and torch.allclose(c.norm(dim=-1), torch.ones(5, dtype=torch.float64)))


def _generalisation_by_hand():
    """The delta edits set S k₀ = 0, so bell 0 evokes nothing after them; the protected edit leaves S k₁ as it
    was, so bell 1's response is the one before the edit."""
    out = U.generalisation_after_unlearning(4, 8, 8, n_trials=5, generator=_gen(2), dtype="float64")
    zero = torch.zeros(5, dtype=torch.float64)
    return bool(torch.allclose(out["delta"][:, 0], zero, atol=1e-10)
                and torch.allclose(out["delta_protected"][:, 0], zero, atol=1e-10)
                and torch.allclose(out["delta_protected"][:, 1], out["before"][:, 1], atol=1e-10))


def _recall_by_age_one_pair():
    """One unit pair: S = v kᵀ in every memory (γ⁰ = 1; the delta rule's first write with β = 1), so S k = v."""
    out = D.recall_by_age(1, d_k=4, d_v=3, gammas=[0.9], betas=np.array([1.0]), n_trials=3, dtype="float64")
    return set(out) == {"hebbian", "decay 0.9", "delta 1"} and \
        all(torch.allclose(c, torch.ones(3, 1, dtype=torch.float64)) for c in out.values())


def rows():
    keys = torch.eye(4)[:3]
    S = torch.zeros(3, 4)
    return [
        # average_recall.capacity_sweep
        ("capacity_sweep(8)", lambda: Ar.capacity_sweep(8), TypeError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep('ab')", lambda: Ar.capacity_sweep("ab"), TypeError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep([])", lambda: Ar.capacity_sweep([]), ValueError, "d_ks: expected a non-empty sequence"),
        ("capacity_sweep([8.0])", lambda: Ar.capacity_sweep([8.0]), TypeError, "d_ks[0]: expected an integer"),
        ("capacity_sweep([0])", lambda: Ar.capacity_sweep([0]), ValueError, "d_ks[0]: expected an integer >= 1"),
        ("capacity_sweep(max_ratio=nan)", lambda: Ar.capacity_sweep([8], max_ratio=NAN), ValueError,
         "max_ratio: expected a finite number"),
        ("capacity_sweep(dtype='int64')", lambda: Ar.capacity_sweep([8], dtype="int64"), TypeError,
         "dtype: expected a floating-point dtype"),
        ("capacity_sweep(np.array([8])) (NumPy integers accepted by contract): n = 1 recalls with cosine 1",
         lambda: (lambda out: out.d_ks == [8] and type(out.d_ks[0]) is int
                  and bool(torch.allclose(out.fidelity[0][:, 0], torch.ones(2))))(
             Ar.capacity_sweep(np.array([8]), points=3, trials=2, generator=_gen())), "ok", ""),
        # average_recall.recall_sweep
        ("recall_sweep(ns='abc')", lambda: Ar.recall_sweep(8, "abc"), TypeError, "ns: expected a non-empty 1-D"),
        ("recall_sweep(ns=[1.5])", lambda: Ar.recall_sweep(8, [1.5]), ValueError, "ns: expected a non-empty 1-D"),
        ("recall_sweep(ns=[2, 1])", lambda: Ar.recall_sweep(8, [2, 1]), ValueError, "ns: expected strictly increasing"),
        ("recall_sweep(ns=[0])", lambda: Ar.recall_sweep(8, [0]), ValueError, "ns: expected numbers of pairs >= 1"),
        ("recall_sweep(d_k=0)", lambda: Ar.recall_sweep(0, [1]), ValueError, "d_k: expected an integer >= 1"),
        ("recall_sweep(device='gpu0')", lambda: Ar.recall_sweep(8, [1], device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_sweep(dtype='float32') (accepted by contract): one stored item reads back exactly",
         lambda: (lambda m: m.cosine.dtype == torch.float32 and bool(torch.allclose(m.cosine[:, 0, 0], torch.ones(3)))
                  and bool(m.correct[:, 0, 0].all()) and bool(m.cosine[:, 0, 1].isnan().all()))(
             Ar.recall_sweep(4, [1, 2], trials=3, generator=_gen(), dtype="float32")), "ok", ""),
        # average_recall.store_and_recall
        ("store_and_recall(list keys)", lambda: Ar.store_and_recall([[1.0]], torch.zeros(1, 1)), TypeError,
         "keys: expected a torch.Tensor"),
        ("store_and_recall(3 keys, 2 values)", lambda: Ar.store_and_recall(keys, torch.ones(2, 4)), ValueError,
         "values: expected number of pairs n (dim -2 of keys) = 3, got 2"),
        ("store_and_recall(float64 values)", lambda: Ar.store_and_recall(keys, torch.ones(3, 2).double()), TypeError,
         "values: expected dtype torch.float32"),
        ("store_and_recall(NaN value)", lambda: Ar.store_and_recall(keys, torch.tensor([[1.0], [NAN], [1.0]])),
         ValueError, "values: expected finite values"),
        ("store_and_recall of keys at cosine 0.6: cosine 1/√1.36", _store_and_recall_by_hand, "ok", ""),
        # capacity.local_slopes
        ("local_slopes(None)", lambda: Cp.local_slopes(None), TypeError, "scaling: expected a CapacityScaling"),
        ("local_slopes(NaN mean)", lambda: Cp.local_slopes(_scaling([4, 8], [1.0, NAN], [0.0, 0.0])), ValueError,
         "scaling.mean: expected finite values"),
        ("local_slopes(3 d_ks, 2 means)", lambda: Cp.local_slopes(_scaling([4, 8, 16], [1.0, 2.0], [0.0, 0.0])),
         ValueError, "scaling.mean: expected the length of scaling.d_ks, 3, got 2"),
        ("local_slopes(repeated d_k)", lambda: Cp.local_slopes(_scaling([4, 4], [1.0, 2.0], [0.0, 0.0])), ValueError,
         "scaling.d_ks: expected distinct key dimensions"),
        ("local_slopes(negative sem)", lambda: Cp.local_slopes(_scaling([4, 8], [1.0, 2.0], [0.1, -0.1])),
         ValueError, "scaling.sem: expected standard errors >= 0"),
        ("local_slopes(zero mean)", lambda: Cp.local_slopes(_scaling([4, 8], [0.0, 2.0], [0.0, 0.0])), ValueError,
         "scaling: expected positive mean capacities"),
        ("local_slopes of mean ∝ d_k: slope 1, delta-method se", _local_slopes_by_hand, "ok", ""),
        # decay.recall_by_age
        ("recall_by_age(0)", lambda: D.recall_by_age(0), ValueError, "n_pairs: expected an integer >= 1"),
        ("recall_by_age(gammas=0.9)", lambda: D.recall_by_age(3, gammas=0.9), TypeError,
         "gammas: expected a sequence of numbers"),
        ("recall_by_age(betas='ab')", lambda: D.recall_by_age(3, betas="ab"), TypeError,
         "betas: expected a sequence of numbers"),
        ("recall_by_age(gammas=[nan])", lambda: D.recall_by_age(3, gammas=[NAN]), ValueError,
         "gammas: expected a finite number"),
        ("recall_by_age(betas=[3.0]) (the delta rule's bound)", lambda: D.recall_by_age(3, betas=[3.0]), ValueError,
         "betas: expected a number <= 2.0"),
        ("recall_by_age(device='gpu0')", lambda: D.recall_by_age(3, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("recall_by_age(dtype=torch.int64)", lambda: D.recall_by_age(3, dtype=torch.int64), TypeError,
         "dtype: expected a floating-point dtype"),
        ("recall_by_age of one pair reads it back exactly (dtype name accepted)", _recall_by_age_one_pair, "ok", ""),
        # oja.memory_fixed_point
        ("memory_fixed_point(rank-1 values)",
         lambda: O.memory_fixed_point(S, torch.eye(4)[:2], torch.ones(2, 3)), ValueError,
         "values: expected 2 linearly independent values (full rank), got rank 1"),
        ("memory_fixed_point(4 values in d_v = 3)",
         lambda: O.memory_fixed_point(S, torch.eye(4), torch.eye(4)[:, :3]), ValueError,
         "values: expected at most d_v = 3 values"),
        ("memory_fixed_point(S of the wrong shape)",
         lambda: O.memory_fixed_point(torch.zeros(4, 4), torch.eye(4)[:2], torch.eye(3)[:2]), ValueError,
         "S: expected shape (..., d_v, d_k) = (..., 3, 4)"),
        ("memory_fixed_point(NaN in S)",
         lambda: O.memory_fixed_point(S.index_fill(0, torch.tensor([0]), NAN), torch.eye(4)[:2], torch.eye(3)[:2]),
         ValueError, "S: expected finite values"),
        ("memory_fixed_point(float64 keys)",
         lambda: O.memory_fixed_point(S, torch.eye(4, dtype=torch.float64)[:2], torch.eye(3)[:2]), TypeError,
         "keys: expected dtype torch.float32"),
        ("memory_fixed_point keeps the part of S outside the values' span", _fixed_point_by_hand, "ok", ""),
        # stacking_theory.hop_failure_bound, loss_threshold; stacking.one_hop; depth_width.shape_difference
        ("hop_failure_bound(nan, 8)", lambda: Th.hop_failure_bound(NAN, 8), ValueError, "n: expected finite numbers"),
        ("hop_failure_bound(3, 'a')", lambda: Th.hop_failure_bound(3, "a"), TypeError, "d_k: expected a number"),
        ("hop_failure_bound(3, 0)", lambda: Th.hop_failure_bound(3, 0), ValueError, "d_k: expected numbers >= 1"),
        ("hop_failure_bound(t_max=1.5)", lambda: Th.hop_failure_bound(3, 8, t_max=1.5), ValueError,
         "t_max: expected numbers <= 1"),
        ("hop_failure_bound(H=0)", lambda: Th.hop_failure_bound(3, 8, H=0), ValueError, "H: expected numbers >= 1"),
        ("hop_failure_bound(3, 64, t_max=0) = 2·2/64; vacuous (capped at 1) once n − 1 ≥ d_k",
         lambda: Th.hop_failure_bound(3, 64, t_max=0.0) == 4 / 64 and Th.hop_failure_bound(40, 8) == 1.0, "ok", ""),
        ("loss_threshold(1.5)", lambda: Th.loss_threshold(1.5), ValueError, "t: expected numbers <= 1"),
        ("loss_threshold(-1.5)", lambda: Th.loss_threshold(-1.5), ValueError, "t: expected numbers >= -1"),
        ("loss_threshold(nan)", lambda: Th.loss_threshold(NAN), ValueError, "t: expected finite numbers"),
        ("loss_threshold('a')", lambda: Th.loss_threshold("a"), TypeError, "t: expected a number"),
        ("loss_threshold at t = 0, −1, 1: √(1/2), 1, 0",
         lambda: math.isclose(Th.loss_threshold(0), math.sqrt(0.5)) and Th.loss_threshold(-1) == 1.0
         and Th.loss_threshold(1) == 0.0, "ok", ""),
        ("cached_shape_runs(4)", lambda: Dw.cached_shape_runs(4), ValueError, "hops, steps: expected a cached run"),
        ("cached_shape_runs(1, steps=7)", lambda: Dw.cached_shape_runs(1, steps=7), ValueError,
         "hops, steps: expected a cached run"),
        ("cached_shape_runs(1, steps=0)", lambda: Dw.cached_shape_runs(1, steps=0), ValueError,
         "steps: expected an integer >= 1"),
        ("cached_shape_runs('1')", lambda: Dw.cached_shape_runs("1"), TypeError, "hops: expected an integer"),
        ("cached_shape_runs(1): one record per shape, accuracies in [0, 1]",
         lambda: all(0 <= a <= 1 for r in Dw.cached_shape_runs(1)["runs"] for row in r["accuracy"] for a in row)
         and len({r["shape"] for r in Dw.cached_shape_runs(1)["runs"]}) == len(Dw.cached_shape_runs(1)["runs"]),
         "ok", ""),
        ("one_hop(n=1)", lambda: St.one_hop(1, 8), ValueError, "n: expected at least 2 stored associations"),
        ("one_hop(n=3.0)", lambda: St.one_hop(3.0, 8), TypeError, "n: expected an integer"),
        ("one_hop(d_k=0)", lambda: St.one_hop(3, 0), ValueError, "d_k: expected an integer >= 1"),
        ("one_hop(device='gpu0')", lambda: St.one_hop(3, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("one_hop(dtype=torch.int32)", lambda: St.one_hop(3, 8, dtype=torch.int32), TypeError,
         "dtype: expected a floating-point dtype"),
        ("one_hop with n = 2 never fails (|k·k'| ≤ 1)", _one_hop_two_items, "ok", ""),
        ("shape_difference(NaN seed)", lambda: Dw.shape_difference([1, 2], [1, NAN]), ValueError,
         "b: expected finite numbers"),
        ("shape_difference('ab', ...)", lambda: Dw.shape_difference("ab", [1, 2]), TypeError,
         "a: expected a number or an array"),
        ("shape_difference(one seed)", lambda: Dw.shape_difference([1], [1, 2]), ValueError,
         "a, b: expected at least 2 seeds each, got 1 and 2"),
        ("shape_difference of (1, 3) and (0, 2): Welch with df = 2", _shape_difference_by_hand, "ok", ""),
        ("shape_difference(answers=0)", lambda: Dw.shape_difference([1, 2], [1, 2], answers=0), ValueError,
         "answers: expected an integer >= 1"),
        # stacking.heads_hop; stacking_theory.all_heads_fail_bound, averaged_heads_bound; tasks.backward_steps
        ("heads_hop(H=0)", lambda: St.heads_hop(3, 8, 0), ValueError, "H: expected an integer >= 1"),
        ("heads_hop(n=1)", lambda: St.heads_hop(1, 8, 2), ValueError, "n: expected at least 2 stored associations"),
        ("heads_hop(dtype=torch.int32)", lambda: St.heads_hop(3, 8, 2, dtype=torch.int32), TypeError,
         "dtype: expected a floating-point dtype"),
        ("all_heads_fail_bound(t_max scalar)", lambda: Th.all_heads_fail_bound(3, 8, 0.1), ValueError,
         "t_max: expected one cosine per head"),
        ("all_heads_fail_bound(t_max=1.5)", lambda: Th.all_heads_fail_bound(3, 8, [1.5]), ValueError,
         "t_max: expected numbers <= 1"),
        ("averaged_heads_bound(H=0)", lambda: Th.averaged_heads_bound(3, 8, 0.1, 0, 1.0), ValueError,
         "H: expected numbers >= 1"),
        ("averaged_heads_bound(moment_ratio=nan)", lambda: Th.averaged_heads_bound(3, 8, 0.1, 2, NAN), ValueError,
         "moment_ratio: expected finite numbers"),
        ("bounds_against_heads(heads=3)", lambda: St.bounds_against_heads(3, 8, 3), TypeError,
         "heads: expected a non-empty sequence"),
        ("bounds_against_heads(heads=[0])", lambda: St.bounds_against_heads(3, 8, [0]), ValueError,
         "heads: expected an integer >= 1"),
        ("shape_contests([])", lambda: Dw.shape_contests([]), TypeError, "record: expected a cached record"),
        ("backward_steps(tokens)", lambda: Ta.backward_steps(torch.zeros(2, 8), n_pairs=2, hops=2), TypeError,
         "batch: expected the RecallBatch of pointer_chasing"),
        ("backward_steps(n_pairs=1)", lambda: Ta.backward_steps(Ta.pointer_chasing(2, n_pairs=3), n_pairs=1, hops=2),
         ValueError, "n_pairs: expected an integer >= 2"),
        # unlearning.probe_cues, cue_response, generalisation_after_unlearning
        ("probe_cues(overlap=2)", lambda: U.probe_cues(keys, overlap=2), ValueError, "overlap: expected a number <= 1"),
        ("probe_cues(overlap=nan)", lambda: U.probe_cues(keys, overlap=NAN), ValueError,
         "overlap: expected a finite number"),
        ("probe_cues(one key)", lambda: U.probe_cues(keys[:1]), ValueError, "keys: expected at least 2 keys"),
        ("probe_cues(keys of norm 2)", lambda: U.probe_cues(2 * keys), ValueError, "keys: expected unit keys"),
        ("probe_cues(integer keys)", lambda: U.probe_cues(keys.long()), TypeError,
         "keys: expected a floating-point tensor"),
        ("probe_cues of e1, e2, e3 by hand", _probe_cues_by_hand, "ok", ""),
        ("cue_response(cues of d_k 5)", lambda: U.cue_response(S, torch.zeros(2, 5), torch.ones(3)), ValueError,
         "cues: expected key dimension d_k (last dim of S) = 4, got 5"),
        ("cue_response(value of d_v 2)", lambda: U.cue_response(S, torch.zeros(2, 4), torch.ones(2)), ValueError,
         "value: expected value dimension d_v (dim -2 of S) = 3, got 2"),
        ("cue_response(zero value)", lambda: U.cue_response(S, torch.zeros(2, 4), torch.zeros(3)), ValueError,
         "value: expected a non-zero value vector"),
        ("cue_response(float64 cues)", lambda: U.cue_response(S, torch.zeros(2, 4).double(), torch.ones(3)),
         TypeError, "cues: expected dtype torch.float32"),
        ("cue_response(inf in S)", lambda: U.cue_response(S.index_fill(0, torch.tensor([1]), math.inf),
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
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)
