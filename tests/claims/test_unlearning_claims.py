"""Notebook 07's claims about what an unlearning edit removes, against literal NumPy computations."""

import numpy as np
import pytest
import torch

from pavlovlab.forgetting import unlearning


def _edits(K: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    """The three edits of association 0 written out in NumPy: K (n, d_k), V (n, d_v) rows; S = Σ v kᵀ."""
    S = V.T @ K
    k0, v0 = K[0], V[0]
    others = K[1:].T                                                           # (d_k, n − 1)
    coef, *_ = np.linalg.lstsq(others, k0, rcond=None)
    u = k0 - others @ coef                                                     # k0 minus its projection
    return {"before": S, "hebbian": S - np.outer(v0, k0), "delta": S - np.outer(S @ k0, k0) / (k0 @ k0),
            "delta_protected": S - np.outer(S @ k0, u) / (u @ k0)}


def test_the_package_measures_what_the_literal_edits_give():
    out = unlearning.generalisation_after_unlearning(12, 32, 24, overlap=0.7, n_trials=5, dtype=torch.float64,
                                                     generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(0)                                       # the same draws, in the same order
    keys, values = unlearning.random_associations(12, 32, 24, batch_shape=(5,), overlap=0.7, dtype=torch.float64,
                                                  generator=g)
    cues = unlearning.probe_cues(keys, overlap=0.7, generator=g)
    for b in range(5):
        K, V, Q = keys[b].numpy(), values[b].numpy(), cues[b].numpy()
        for name, S in _edits(K, V).items():
            literal = np.array([V[0] @ S @ q for q in Q]) / (V[0] @ V[0])
            assert np.abs(out[name][b].numpy() - literal).max() < 1e-10, name


def test_the_cues_are_what_they_say():
    g = torch.Generator().manual_seed(1)
    keys, _ = unlearning.random_associations(4, 16, 8, batch_shape=(3,), overlap=0.7, dtype=torch.float64, generator=g)
    cues = unlearning.probe_cues(keys, overlap=0.7, generator=g)
    cos = (cues @ keys[..., 0, :, None])[..., 0]                               # each cue's cosine with bell 0
    assert torch.allclose(cues.norm(dim=-1), torch.ones(3, 5, dtype=torch.float64))
    assert torch.allclose(cos[:, [0, 1, 3]], torch.tensor([1.0, 0.7, 0.7], dtype=torch.float64).expand(3, 3))
    assert torch.allclose(cos[:, 2], torch.full((3,), 1.7 / 3.4 ** 0.5, dtype=torch.float64))   # (1 + 0.7)/‖k0 + k1‖
    assert float((cues[:, 3] - keys[:, 1]).norm(dim=-1).min()) > 0.1           # the unseen look-alike is not bell 1


def test_the_protected_edit_silences_the_cue_not_the_association():
    """Protecting bell 1 (cosine 0.7 with bell 0) keeps food 0 at bell 1 exactly (0.7 plus crosstalk) and at the
    blend at 0.7/‖k₀ + k₁‖ of it; the plain delta edit takes food 0 to 0 at both (0.7 − 0.7·1 = 0)."""
    out = unlearning.generalisation_after_unlearning(16, 64, 64, overlap=0.7, n_trials=256, dtype=torch.float64,
                                                     generator=torch.Generator().manual_seed(1))
    before, protected, plain = out["before"], out["delta_protected"], out["delta"]
    assert float(protected[:, 0].abs().max()) < 1e-10 and float(plain[:, 0].abs().max()) < 1e-10   # bell 0 silenced
    assert torch.allclose(protected[:, 1], before[:, 1], atol=1e-10)           # bell 1 untouched, food 0 included
    blend_norm = 3.4 ** 0.5                                                    # ‖k0 + k1‖ with cosine 0.7
    assert torch.allclose(protected[:, 2], before[:, 1] / blend_norm, atol=1e-10)
    se = lambda x: float(x.std() / len(x) ** 0.5)  # noqa: E731
    assert abs(float(protected[:, 1].mean()) - 0.7) < 4 * se(protected[:, 1])   # crosstalk has mean 0
    assert abs(float(plain[:, 1].mean())) < 4 * se(plain[:, 1]) and abs(float(plain[:, 2].mean())) < 4 * se(plain[:, 2])
    # an unseen look-alike is silenced by both edits (its k0 part is edited, its fresh part was never taught food 0)
    for m in (protected, plain):
        assert abs(float(m[:, 3].mean())) < 4 * se(m[:, 3])


def test_edit_reach_measures_what_the_literal_edits_give():
    # the same draws as the package, in the same order: memories, the probe cues, then the unseen cues
    out = unlearning.edit_reach(12, 32, 24, overlap=0.7, n_trials=4, n_cues=50, dtype=torch.float64,
                                generator=torch.Generator().manual_seed(3))
    g = torch.Generator().manual_seed(3)
    keys, values = unlearning.random_associations(12, 32, 24, batch_shape=(4,), overlap=0.7, dtype=torch.float64,
                                                  generator=g)
    look_alike = unlearning.probe_cues(keys, overlap=0.7, generator=g)[:, 3]
    unseen = unlearning.random_keys(4, 50, d=32, kind="sphere", generator=g, dtype=torch.float64)
    for b in range(4):
        K, V, q, Q = keys[b].numpy(), values[b].numpy(), look_alike[b].numpy(), unseen[b].numpy()
        edits = _edits(K, V)
        for name, S in edits.items():
            dS = S - edits["before"]
            rms = np.sqrt(np.mean([np.sum((dS @ c) ** 2) for c in Q]))
            assert abs(float(out[name].step[b]) - np.linalg.norm(dS)) < 1e-10, name
            assert abs(float(out[name].unseen_change[b]) - rms) < 1e-10, name
            assert abs(float(out[name].look_alike_food1[b]) - V[1] @ S @ q / (V[1] @ V[1])) < 1e-10, name


@pytest.mark.slow
def test_protection_costs_cues_outside_the_protected_set():
    """The protected edit must remove bell 0's response along the part of k₀ orthogonal to the protected keys, a
    shorter vector, so its step is larger; a uniform unseen cue sees E‖ΔS q‖² = ‖ΔS‖²_F / d_k; the unseen
    look-alike (0.7 k₀ + …) evokes food 1 at about 0.7² before, and nothing after either delta edit."""
    out = unlearning.edit_reach(16, 64, 64, overlap=0.7, n_trials=256, dtype=torch.float64,
                                generator=torch.Generator().manual_seed(5))
    se = lambda x: float(x.std() / len(x) ** 0.5)  # noqa: E731
    assert bool((out["delta_protected"].step > out["delta"].step).all())
    for name in ("hebbian", "delta", "delta_protected"):
        r = out[name]
        ratio = r.unseen_change / (r.step / 64 ** 0.5)
        assert abs(float(ratio.mean()) - 1) < 4 * se(ratio) + 0.02, name   # sampling of 64 cues: a small bias
    before = out["before"].look_alike_food1
    assert abs(float(before.mean()) - 0.49) < 4 * se(before)
    for name in ("delta", "delta_protected"):
        after = out[name].look_alike_food1
        assert abs(float(after.mean())) < 4 * se(after), name


def test_after_the_exact_trace_no_food_0_is_left_only_what_bell_1_legitimately_evokes():
    """Case B of notebook 07 (bell 0 paired once, bell 1 at cosine 0.7): after subtracting the exact trace,
    v₀·S k₀ = Σ_{i≠0}(k_i·k₀)(v_i·v₀), which has mean 0, while the whole read-out S k₀ keeps 0.7 v₁."""
    res = unlearning.unlearning_experiment(16, 64, 64, overlap=0.7, n_trials=64, dtype=torch.float64,
                                           generator=torch.Generator().manual_seed(4))["hebbian"]
    keys, values = unlearning.random_associations(16, 64, 64, batch_shape=(64,), overlap=0.7, dtype=torch.float64,
                                                  generator=torch.Generator().manual_seed(4))
    K, V = keys.numpy(), values.numpy()
    literal = [sum((K[b, i] @ K[b, 0]) * (V[b, i] @ V[b, 0]) for i in range(1, 16)) for b in range(64)]
    torch.testing.assert_close(res.strength_after[:, 0], torch.tensor(literal, dtype=torch.float64))
    left = res.strength_after[:, 0] / res.strength_before[:, 0]
    assert abs(float(left.mean())) < 4 * float(left.std() / 8)
    assert float(res.residual.mean()) > 0.5                          # the read-out is not silent: it is food 1


def test_bad_inputs_name_the_argument():
    keys, values = unlearning.random_associations(3, 8, 4, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="keys"):
        unlearning.probe_cues(keys[:1])
    with pytest.raises(ValueError, match="overlap"):
        unlearning.probe_cues(keys, overlap=1.5)
    S = values.T @ keys
    with pytest.raises(ValueError, match="cues"):
        unlearning.cue_response(S, torch.zeros(2, 5), values[0])
    with pytest.raises(ValueError, match="value"):
        unlearning.cue_response(S, keys, torch.zeros(5))
    with pytest.raises(ValueError, match="n"):
        unlearning.generalisation_after_unlearning(9, 8, 4)
