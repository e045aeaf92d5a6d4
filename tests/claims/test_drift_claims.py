"""Notebook 06's claims about the Oja subspace memory and the Hebbian memory on drifting streams, each
against an independent computation (NumPy linear algebra, literal loops), never the function under test."""

import math

import numpy as np
import pytest
import torch

import pavlovlab as pl
from pavlovlab.forgetting import drift, oja
from pavlovlab.memory.associative import oja_subspace_update


def _outside(V: np.ndarray) -> np.ndarray:
    """I − P for the span of the columns of V, from an SVD (not from the package's formula)."""
    U, s, _ = np.linalg.svd(V, full_matrices=False)
    U = U[:, s > 1e-12 * s[0]]
    return np.eye(V.shape[0]) - U @ U.T


def test_the_subspace_update_has_no_component_outside_the_value_written():
    """P⊥ ΔS = 0 for random states S, keys and (non-unit) values: the rule cannot remove anything a memory
    holds outside the span of the values it is writing."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        d_v, d_k = rng.integers(2, 12, size=2)
        S, k, v = rng.normal(size=(d_v, d_k)), rng.normal(size=d_k), 3 * rng.normal(size=d_v)
        dS = oja_subspace_update(torch.from_numpy(S), torch.from_numpy(k), torch.from_numpy(v)).numpy()
        assert np.abs(dS - np.outer(v, k - S.T @ v)).max() < 1e-12             # the rule as written
        assert np.linalg.norm(_outside(v[:, None]) @ dS) < 1e-12 * max(1.0, np.linalg.norm(dS))
        assert np.linalg.norm(dS) > 1e-3                                      # and the update is not trivially 0


def _literal_subspace_memory(S0: np.ndarray, K: np.ndarray, V: np.ndarray, lr: float, rounds: int) -> np.ndarray:
    """A literal loop: write every pair (k_i, v_i) once per round, S ← S + lr v (k − Sᵀv)ᵀ."""
    S = S0.copy()
    for _ in range(rounds):
        for i in range(K.shape[1]):
            k, v = K[:, i], V[:, i]
            S = S + lr * np.outer(v, k - S.T @ v)
    return S


def test_from_a_random_state_the_in_span_part_reaches_the_dual_basis_and_the_rest_stays():
    """Fixed points are the affine set {VᵀS = Kᵀ}; from S₀ the rule reaches P⊥S₀ + pinv(Vᵀ) Kᵀ: the dual basis
    only where P⊥S₀ = 0 (e.g. S₀ = 0), which is the minimum-norm member of the set."""
    rng = np.random.default_rng(1)
    d_k, d_v, n = 10, 12, 5
    K = np.linalg.qr(rng.normal(size=(d_k, n)))[0]                            # orthonormal keys (columns)
    V = rng.normal(size=(d_v, n)) / math.sqrt(d_v)                            # values, not orthonormal
    S0 = rng.normal(size=(d_v, d_k))
    S = _literal_subspace_memory(S0, K, V, lr=0.5, rounds=3000)
    dual = np.linalg.pinv(V.T) @ K.T                                          # minimum-norm solution of VᵀS = Kᵀ
    out = _outside(V)
    assert np.abs(V.T @ S - K.T).max() < 1e-9                                 # on the affine set
    assert np.abs((np.eye(d_v) - out) @ S - dual).max() < 1e-9                # in-span part = the dual basis
    assert np.abs(out @ S - out @ S0).max() < 1e-9                            # the rest never moved
    assert np.linalg.norm(S) > np.linalg.norm(dual) + 0.5                     # so S is not the dual basis
    # the package's closed form and its memory agree with the literal loop
    Kt, Vt, S0t = (torch.from_numpy(x) for x in (K.T.copy(), V.T.copy(), S0))
    assert np.abs(oja.memory_fixed_point(S0t, Kt, Vt).numpy() - S).max() < 1e-9
    memory = pl.AssociativeMemory(d_k, d_v, rule="oja_subspace", lr=0.5, dtype=torch.float64)
    memory.S = S0t.clone()
    memory.write(Kt.repeat(200, 1), Vt.repeat(200, 1))
    assert np.abs(memory.S.numpy() - _literal_subspace_memory(S0, K, V, lr=0.5, rounds=200)).max() < 1e-9


def _mean_cosine(R: np.ndarray, V: np.ndarray) -> float:
    """Mean over columns of cos(R[:, i], V[:, i])."""
    return float(np.mean((R * V).sum(0) / np.linalg.norm(R, axis=0) / np.linalg.norm(V, axis=0)))


@pytest.mark.slow
def test_on_the_drift_stream_the_cosine_is_set_by_the_residue_not_by_slowness():
    """Unit foods, 8 keys in 16 dims: at the end of each late period the in-span part has converged, and the
    tracking cosine equals that of P⊥S_drift + dual basis (NumPy, from the memory at the drift), well below the
    dual basis's own cosine; in period 1 (from S = 0) it is the dual basis's."""
    s = drift.redraw_stream(8, 16, 16, steps=2000, period=500, batch_shape=(3,), dtype=torch.float64,
                            generator=torch.Generator().manual_seed(3))
    full = drift.track(s, ("oja_subspace",), lr=0.5)
    for stop in (500, 2000):                                                  # the end of period 1 and of period 4
        start = stop - 500
        S_drift = (drift.track(s.first(start), ("oja_subspace",), lr=0.5).S[0].numpy() if start
                   else np.zeros((3, 16, 16)))
        end = drift.track(s.first(stop), ("oja_subspace",), lr=0.5)
        for b in range(3):
            V, K = s.targets[b, stop - 1].numpy().T, s.probes[b].numpy().T          # (16, 8) each
            dual = np.linalg.pinv(V.T) @ K.T
            predicted = _outside(V) @ S_drift[b] + dual
            measured = end.cosine[0, b, -1].item()
            assert abs(measured - _mean_cosine(predicted @ K, V)) < 0.02, (stop, b)
            if stop == 500:
                assert abs(measured - _mean_cosine(dual @ K, V)) < 0.02
            else:
                assert _mean_cosine(dual @ K, V) - measured > 0.1              # the residue costs ≥ 0.1 of cosine
    assert torch.allclose(full.cosine[0, :, :2000], end.cosine[0], atol=1e-12)


@pytest.mark.slow
def test_with_small_components_the_oja_rules_have_not_reached_their_fixed_points_at_the_end_of_a_period():
    """Notebook 06 §2b with other seeds: foods shrunk from 1 to 0.05, 500 steps per food table. The clamped rule's
    fixed point is S k_i = v_i / Σ_j v_j² per unit (NumPy), the subspace rule's P⊥S_drift + dual basis; at the end
    of the period both memories are still well short of those norms, while with unit foods they are within 10 %."""
    s = drift.redraw_stream(8, 16, 16, steps=1000, period=500, batch_shape=(3,), dtype=torch.float64,
                            generator=torch.Generator().manual_seed(12))
    for scales, reached in ((torch.ones(16), True), (torch.logspace(0, -1.3, 16), False)):
        sv = drift.scale_values(s, scales.double())
        end = drift.track(sv, ("oja_subspace", "oja_clamped"), lr=0.5)
        S_drift = drift.track(sv.first(500), ("oja_subspace",), lr=0.5).S[0].numpy()
        for b in range(3):
            V, K = sv.targets[b, -1].numpy().T, sv.probes[b].numpy().T          # (16, 8): foods, keys as columns
            fixed = {"oja_subspace": _outside(V) @ S_drift[b] + np.linalg.pinv(V.T) @ K.T,
                     "oja_clamped": (V / (V**2).sum(1, keepdims=True)) @ K.T}
            for i, r in enumerate(("oja_subspace", "oja_clamped")):
                ratio = end.norm[i, b, -1].item() / np.linalg.norm(fixed[r])
                assert (abs(ratio - 1) < 0.1) if reached else (ratio < 0.8), (r, b, ratio)


@pytest.mark.slow
def test_the_hebbian_norm_under_steady_rotation_grows_only_through_the_order_of_the_keys():
    """A rotation turns each value by 2π/P per step, so a key's Hebbian sum nearly cancels over each turn; what is
    left grows like a random walk (√t) from the random order in which the keys come: ×2 from 1,000 to 4,000 steps
    at P = 50 (neither bounded, ×1, nor linear, ×4), while a redraw stream grows far faster and neither tracks."""
    s = drift.rotation_stream(8, 16, 16, steps=4000, turn_period=50, batch_shape=(4,),
                              generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    out = drift.track(s, ("hebbian",), lr=0.5)
    norm = out.norm[0].mean(0)
    assert 1.4 < float(norm[3999] / norm[999]) < 2.8                          # √4 = 2 for a random walk
    assert float(norm[999]) < 8                                               # small after 1,000 steps (the widget)
    assert float(out.cosine[0, :, -1000:].mean().abs()) < 0.2                 # but it does not track
    redraw = drift.redraw_stream(8, 16, 16, steps=1000, period=300, batch_shape=(4,),
                                 generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    assert float(drift.track(redraw, ("hebbian",), lr=0.5).norm[0, :, 999].mean()) > 5 * float(norm[999])


@pytest.mark.parametrize("kind", ["redraw", "rotation", "arrival"])
def test_every_stream_kind_tracks_with_every_rule(kind):
    make = {"redraw": drift.redraw_stream, "rotation": drift.rotation_stream, "arrival": drift.arrival_stream}[kind]
    s = make(8, 16, 16, 300, 50, generator=torch.Generator().manual_seed(1))
    out = drift.track(s, ("hebbian", "delta", "oja_subspace", "oja_clamped"), lr=0.5)
    assert out.cosine.shape == (4, 300) and bool(torch.isfinite(out.norm).all())


def test_bad_inputs_name_the_argument():
    S, keys, values = torch.zeros(4, 3), torch.eye(3)[:2], torch.eye(4)[:2]
    with pytest.raises(ValueError, match="values"):
        oja.memory_fixed_point(S, keys, torch.eye(4)[:3])
    with pytest.raises(ValueError, match="S"):
        oja.memory_fixed_point(torch.zeros(3, 4), keys, values)
    with pytest.raises(TypeError, match="values"):
        oja.memory_fixed_point(S, keys, values.long())
    s = drift.redraw_stream(4, 8, 8, steps=20, period=10)
    with pytest.raises(ValueError, match="steps"):
        s.first(21)
    with pytest.raises(TypeError, match="steps"):
        s.first(2.5)
    assert s.first(15).steps == 15 and s.first(15).drift_times.tolist() == [10]
