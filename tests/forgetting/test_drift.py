"""Concept drift: Hebbian memory cannot forget, the delta and Oja-type rules stay bounded, the delta rule
re-learns after each drift, and the delta rule is Rescorla–Wagner (blocking, extinction)."""

import math

import numpy as np
import pytest
import torch
from badinput import FAST, check, parametrize
from conftest import TOL, needs_cuda, rel_rms
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab import AssociativeMemory, delta_rule_attention, linear_attention
from pavlovlab.forgetting import drift

PERIOD, STEPS, N_KEYS = 400, 2400, 8
RECOVERY = 30
"""Stated in the notebook: after each drift the delta rule (β = 0.5, 8 orthonormal keys) is back above a
tracking cosine of 0.95 within 30 steps (each key has then been seen at least 3 times)."""


def make(gen, device="cpu", dtype=torch.float32, **kw):
    args = dict(n_keys=N_KEYS, d_k=16, d_v=16, steps=STEPS, period=PERIOD, batch_shape=(4,), generator=gen,
                device=device, dtype=dtype)
    args.update(kw)
    return drift.redraw_stream(**args)


@pytest.fixture(scope="module")
def tracked():
    stream = make(torch.Generator().manual_seed(1))
    return stream, drift.track(stream, ("hebbian", "delta", "oja_subspace", "oja_clamped"), lr=0.5)


def test_redraw_stream_shapes_and_meaning(gen, device, dtype):
    s = make(gen, device, dtype, batch_shape=(2, 3), steps=250, period=100)
    assert s.keys.shape == (2, 3, 250, 16) and s.values.shape == (2, 3, 250, 16)
    assert s.targets.shape == (2, 3, 250, 8, 16) and s.probes.shape == (2, 3, 8, 16)
    assert s.keys.device.type == device.type and s.keys.dtype == dtype and s.steps == 250
    assert s.drift_times.tolist() == [100, 200]
    eye = torch.eye(8, dtype=dtype, device=device)
    assert torch.allclose(s.probes @ s.probes.mT, eye.expand(2, 3, 8, 8), atol=1e-5)   # orthonormal keys
    # every presented value is the current target of the presented key
    idx = (s.keys @ s.probes.mT).argmax(-1)
    chosen = torch.gather(s.targets, -2, idx[..., None, None].expand(2, 3, 250, 1, 16))[..., 0, :]
    assert torch.equal(chosen, s.values)
    # each block of n_keys steps shows every key once; values change exactly at the drift times
    assert bool((idx[..., :8].sort(-1).values == torch.arange(8, device=device)).all())
    change = (s.targets[..., 1:, :, :] != s.targets[..., :-1, :, :]).any(-1).any(-1)   # (2, 3, 249)
    assert torch.nonzero(change[0, 0]).flatten().add(1).tolist() == [100, 200]


@needs_cuda
def test_streams_same_numbers_on_cuda():
    # the reference is the CPU run (test_redraw_stream_shapes_and_meaning checks its values)
    a = make(torch.Generator().manual_seed(3), steps=100)
    b = make(torch.Generator().manual_seed(3), torch.device("cuda"), steps=100)
    assert torch.equal(a.values, b.values.cpu()) and torch.equal(a.keys, b.keys.cpu())


def test_rotation_stream_turns_steadily(gen):
    s = drift.rotation_stream(4, 8, 6, steps=300, turn_period=100, batch_shape=(2,), generator=gen, dtype=torch.float64)
    assert torch.allclose(s.targets.norm(dim=-1), torch.ones(2, 300, 4, dtype=torch.float64))
    step_cos = (s.targets[:, 1:] * s.targets[:, :-1]).sum(-1)
    assert torch.allclose(step_cos, torch.full_like(step_cos, math.cos(2 * math.pi / 100)))
    assert torch.allclose(s.targets[:, 100], s.targets[:, 0]) and s.drift_times.numel() == 0


def test_arrival_stream_presents_only_arrived_keys(gen):
    s = drift.arrival_stream(6, 8, 4, steps=600, every=100, start=2, batch_shape=(3,), generator=gen)
    assert s.active[0, :, :].sum(-1)[[0, 99, 100, 450, 599]].tolist() == [2, 2, 3, 6, 6]
    assert s.drift_times.tolist() == [100, 200, 300, 400]
    idx = (s.keys @ s.probes.mT).argmax(-1)                         # (3, 600)
    assert bool(torch.gather(s.active, -1, idx[..., None]).all())
    assert int(idx[:, :100].max()) <= 1 and int(idx.max()) == 5


@pytest.mark.parametrize("rule", ["hebbian", "delta", "oja_subspace", "oja_clamped"])
def test_tracker_equals_the_associative_memory(gen, device, dtype, rule):
    s = make(gen, device, dtype, steps=120, period=50, batch_shape=(3,))
    others = [r for r in ("hebbian", "delta", "oja_subspace", "oja_clamped") if r != rule]
    out = drift.track(s, (*others[:1], rule, *others[1:]), lr=[0.5, 0.3, 0.9, 0.4])
    mem = AssociativeMemory(16, 16, rule=rule, lr=0.3, batch_shape=(3,), device=device, dtype=dtype)
    mem.write(s.keys, s.values)
    assert rel_rms(out[rule]["S"], mem.S) < 100 * TOL[dtype]
    # the recorded norm and error are those of that memory
    assert abs(out[rule]["norm"][..., -1] - torch.linalg.matrix_norm(mem.S)).max() < 1e-3
    reads = s.probes @ mem.S.mT
    err = ((reads - s.targets[..., -1, :, :]) ** 2).sum(-1).mean(-1)
    assert torch.allclose(out[rule]["error"][..., -1], err, rtol=1e-3, atol=1e-5)
    now = s.targets[..., -1, :, :]
    gain = ((reads * now).sum(-1) / (now * now).sum(-1)).mean(-1)                  # vᵢ·S kᵢ / ‖vᵢ‖²
    assert torch.allclose(out[rule]["gain"][..., -1], gain, rtol=1e-3, atol=1e-5)


@pytest.mark.slow
def test_hebbian_norm_grows_without_bound_while_delta_and_oja_stay_bounded(tracked):
    _, out = tracked
    heb, dlt, oja, clamped = (out[r]["norm"] for r in ("hebbian", "delta", "oja_subspace", "oja_clamped"))
    assert bool((heb[:, -1] > 2.5 * heb[:, STEPS // 8]).all())                      # ~√t growth, still going
    assert bool((heb[:, -1] > 20 * dlt[:, -1]).all())
    for bounded in (dlt, oja, clamped):
        late, early = bounded[:, STEPS // 2:].max(-1).values, bounded[:, STEPS // 8: STEPS // 2].max(-1).values
        assert bool((late < 1.3 * early).all()) and bool((bounded.max() < 12).all())
    assert bool(dlt.max() <= math.sqrt(N_KEYS) + 1e-3)                           # ‖S‖ ≤ ‖V‖_F with unit values


@pytest.mark.slow
def test_delta_recovers_after_each_drift_and_hebbian_does_not(tracked):
    stream, out = tracked
    rec_delta = drift.recovery_steps(out["delta"]["cosine"], stream.drift_times)
    rec_hebb = drift.recovery_steps(out["hebbian"]["cosine"], stream.drift_times)
    assert rec_delta.shape == (4, STEPS // PERIOD - 1)
    assert bool((rec_delta <= RECOVERY).all())
    assert bool(torch.isinf(rec_hebb).all())
    after = stream.drift_times + RECOVERY
    assert bool((out["hebbian"]["cosine"][:, after] < 0.6).all())
    assert bool((out["delta"]["cosine"][:, after] > 0.95).all())


def test_recovery_steps_counts_and_reports_never():
    cos = torch.tensor([[1.0, 0.2, 0.5, 0.96, 0.1, 0.3, 0.2, 0.94]])
    rec = drift.recovery_steps(cos, torch.tensor([1, 4]), threshold=0.95)
    assert rec[0, 0].item() == 2 and math.isinf(rec[0, 1].item())


def test_delta_rule_attention_forms_agree_with_the_memory(gen, dtype):
    s = make(gen, dtype=dtype, steps=203, period=70, batch_shape=(2, 3))
    q = torch.roll(s.keys, 1, dims=-2)
    mem = AssociativeMemory(16, 16, rule="delta", lr=0.7, batch_shape=(2, 3), dtype=dtype)
    ref = mem.run(s.keys, s.values, q)
    for mode in ("recurrent", "chunk"):
        o, S = delta_rule_attention(q, s.keys, s.values, 0.7, mode=mode, chunk_size=32, return_state=True)
        assert rel_rms(o, ref) < 100 * TOL[dtype] and rel_rms(S, mem.S) < 100 * TOL[dtype]


def _conditioning(rule, phases, lr=0.2):
    """Run a memory over phases of (cs presence vector, US, trials); returns V = S (n_cs,) after each phase."""
    mem = AssociativeMemory(3, 1, rule=rule, lr=lr, dtype=torch.float64)
    out = []
    for cs, us, trials in phases:
        k = torch.tensor(cs, dtype=torch.float64).expand(trials, 3)
        mem.write(k, torch.full((trials, 1), float(us), dtype=torch.float64))
        out.append(mem.S[0].clone())
    return out


def test_blocking_emerges_in_a_delta_memory_not_in_a_hebbian_one():
    A, AB, CD = [1, 0, 0], [1, 1, 0], [0, 1, 1]   # slot 0: light A, 1: tone B, 2: control C (compound CD)
    blocked = _conditioning("delta", [(A, 1, 60), (AB, 1, 30)])[-1]
    control = _conditioning("delta", [(CD, 1, 30)])[-1]
    assert blocked[0] > 0.95 and blocked[1] < 0.05 and control[1] > 0.4
    hebb = _conditioning("hebbian", [(A, 1, 60), (AB, 1, 30)], lr=0.02)[-1]
    assert hebb[1] > 0.5                                                            # B learns anyway


def test_extinction_in_a_delta_memory_not_in_a_hebbian_one():
    A = [1, 0, 0]
    acq, ext = _conditioning("delta", [(A, 1, 40), (A, 0, 40)])
    assert acq[0] > 0.95 and abs(ext[0]) < 0.05
    hacq, hext = _conditioning("hebbian", [(A, 1, 40), (A, 0, 40)], lr=0.02)
    assert hext[0] == hacq[0] > 0.5                                                 # writing "no food" adds nothing


def test_key_reuse_sum_rule_fails_delta_rule_recalls_latest(gen):
    k, v, q, latest = drift.key_reuse_task(16, 32, 32, rewrites=4, batch_shape=(5,), generator=gen)
    assert k.shape == (5, 64, 32) and q.shape == (5, 16, 32) and latest.shape == (5, 16, 32)
    _, S_sum = linear_attention(k, k, v, return_state=True)
    _, S_delta = delta_rule_attention(k, k, v, 1.0, return_state=True)
    cos = lambda S: torch.nn.functional.cosine_similarity(q @ S.mT, latest, dim=-1)  # noqa: E731
    assert bool((cos(S_delta) > 0.999).all())
    assert float(cos(S_sum).mean()) < 0.7


def test_bad_inputs_name_the_argument(gen):
    with pytest.raises(ValueError, match="n_keys"):
        drift.redraw_stream(n_keys=20, d_k=8, generator=gen)
    with pytest.raises(TypeError, match="period"):
        drift.redraw_stream(period=2.5)
    with pytest.raises(ValueError, match="d_v"):
        drift.rotation_stream(d_v=1)
    with pytest.raises(ValueError, match="start"):
        drift.arrival_stream(n_keys=3, start=5)
    s = make(gen, steps=20, period=10)
    with pytest.raises(ValueError, match="rules"):
        drift.track(s, ("hebbian", "sum"))
    with pytest.raises(ValueError, match="lr"):
        drift.track(s, ("hebbian", "delta"), lr=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="lr"):
        drift.track(s, ("delta",), lr=-1.0)
    with pytest.raises(TypeError, match="stream"):
        drift.track(s.keys)
    with pytest.raises(TypeError, match="rules"):
        drift.track(s, "delta")


def test_scale_values_scales_values_and_targets(gen):
    s = make(gen, steps=50, period=20, batch_shape=(2,))
    scales = torch.logspace(0, -1.3, 16)
    t = drift.scale_values(s, scales)
    assert torch.allclose(t.values, s.values * scales) and torch.allclose(t.targets, s.targets * scales)
    assert torch.equal(t.keys, s.keys)
    with pytest.raises(ValueError, match="scales: expected shape \\(16,\\)"):
        drift.scale_values(s, torch.ones(3))


@pytest.mark.slow
def test_oja_type_rules_on_a_stationary_stream_reach_their_closed_forms():
    """No drift (one period longer than the stream): each rule's memory against its fixed point computed
    from the value table alone: delta V Kᵀ; oja_subspace V (VᵀV)⁻¹ Kᵀ (the dual basis of the values, so
    vᵢ·S kᵢ = 1 and the cosine is 1/(‖vᵢ‖ ‖(VᵀV)⁻¹ row‖)); oja_clamped diag(1/Σⱼ vⱼ∘vⱼ) V Kᵀ (small lr:
    its writes do not vanish one by one, only on average)."""
    g = torch.Generator().manual_seed(5)
    s = drift.redraw_stream(6, 12, 10, steps=6000, period=6000, batch_shape=(3,), generator=g, dtype=torch.float64)
    s = drift.scale_values(s, torch.logspace(0, -0.6, 10, dtype=torch.float64))          # components 1 … 0.25
    V, K = s.targets[:, -1].mT, s.probes.mT                                              # (3, d_v, n), (3, d_k, n)
    out = drift.track(s, ("delta", "oja_subspace", "oja_clamped"), lr=[0.5, 1.0, 0.2])
    closed = {"delta": V @ K.mT,
              "oja_subspace": torch.linalg.solve(V.mT @ V, V.mT).mT @ K.mT,
              "oja_clamped": (V / V.square().sum(-1, keepdim=True)) @ K.mT}
    assert rel_rms(out["delta"]["S"], closed["delta"]) < 1e-8
    assert rel_rms(out["oja_subspace"]["S"], closed["oja_subspace"]) < 1e-8
    assert rel_rms(out["oja_clamped"]["S"], closed["oja_clamped"]) < 0.1     # O(η) bias: 0.049 at η = 0.2
    # the dual basis reads vᵢ·S kᵢ = 1, i.e. gain 1/‖vᵢ‖² averaged over keys
    gain = (1 / V.square().sum(-2)).mean(-1)
    assert torch.allclose(out["oja_subspace"]["gain"][:, -1], gain, rtol=1e-6)
    # the recall cost: both Oja-type memories are biased where the delta memory is exact
    assert bool((out["delta"]["cosine"][:, -1] > 0.999).all())
    assert bool((out["oja_subspace"]["cosine"][:, -1] < 0.95).all())


def _writes_needed(beta, threshold=0.95):
    """m*(β): writes of one key until cos(v_new + c (v_old − v_new), v_new) ≥ threshold, c = (1 − β)^m, for
    orthogonal unit v_old, v_new (a literal search, independent of the package)."""
    m = 1
    while True:
        c = (1 - beta) ** m
        if (1 - c) / math.sqrt((1 - c) ** 2 + c ** 2) >= threshold:
            return m
        m += 1


@pytest.mark.slow
def test_delta_recovery_follows_the_writes_per_key_count():
    """The notebook's claim: after a drift the delta rule needs within one write per key of m*(β)."""
    betas = [0.1, 0.2, 0.5, 1.0, 1.6]
    s = drift.redraw_stream(8, 16, 16, steps=2000, period=400, batch_shape=(4,),
                            generator=torch.Generator().manual_seed(9))
    out = drift.track(s, ["delta"] * len(betas), lr=betas)
    for i, beta in enumerate(betas):
        per_key = (drift.recovery_steps(out.cosine[i], s.drift_times) + 1).mean().item() / 8
        assert abs(per_key - _writes_needed(beta)) <= 1, (beta, per_key, _writes_needed(beta))
    assert [_writes_needed(b) for b in (0.2, 0.5, 1.0)] == [7, 3, 1]       # worked by hand in the exercise's band


# ---------------------------------------------------------------------------------------------------- bad input


hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.none(), st.text(max_size=2))


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.forgetting.drift``: one row ``(case, call, expect, fragment)`` a case."""
    long_stream = drift.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=1000, period=500,
                                      generator=torch.Generator().manual_seed(0))
    stream = drift.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=600, period=300,
                                 generator=torch.Generator().manual_seed(0))
    wrong_dv = drift.DriftStream(stream.keys, stream.values[..., :5], stream.probes, stream.targets, stream.active,
                                 stream.drift_times)
    cos = torch.linspace(0, 1, 100)
    short_stream = drift.redraw_stream(n_keys=2, d_k=4, d_v=4, steps=8, period=4)
    return [
        ("track lr = 3 is past the delta rule's bound", lambda: drift.track(long_stream, ("delta",), lr=3.0),
         ValueError, "lr: expected a number <= 2 for the delta rule"),
        ("key_reuse_task rewrites = 0", lambda: drift.key_reuse_task(rewrites=0), ValueError,
         "rewrites: expected an integer >= 1"),
        ("track rule typo", lambda: drift.track(long_stream, ("hebb",)), ValueError, "rules: expected one of"),
        ("track(stream, ['delta'], lr=3.0)", lambda: drift.track(stream, ["delta"], lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("track(lr=np.float32(0.5)) (accepted by contract)",
         lambda: torch.equal(drift.track(stream, ["delta"], lr=np.float32(0.5)).cosine,
                             drift.track(stream, ["delta"], lr=0.5).cosine), "ok", ""),
        ("track(lr=None)", lambda: drift.track(stream, ["delta"], lr=None), TypeError,
         "lr: expected a number or one number per rule"),
        ("track(lr=[0.5, nan])", lambda: drift.track(stream, ["delta", "hebbian"], lr=[0.5, math.nan]), ValueError,
         "lr[1]: expected a finite number"),
        ("track(DriftStream with values of the wrong d_v)", lambda: drift.track(wrong_dv, ["delta"]), ValueError,
         "stream.values: expected"),
        ("track(<not a stream>)", lambda: drift.track((stream.keys, stream.values)), TypeError,
         "stream: expected a DriftStream"),
        ("recovery_steps with a list", lambda: drift.recovery_steps(cos, [50]).tolist() == [45.0], "ok", ""),
        ("recovery_steps unsorted times", lambda: drift.recovery_steps(cos, torch.tensor([60, 20])), ValueError,
         "drift_times: expected increasing times"),
        ("recovery_steps times beyond T", lambda: drift.recovery_steps(cos, torch.tensor([20, 150])), ValueError,
         "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps drift at t = T (the boundary)", lambda: drift.recovery_steps(cos, torch.tensor([100])),
         ValueError, "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps drift at t = T − 1 (the last step)",
         lambda: drift.recovery_steps(cos, torch.tensor([99])).tolist() == [0.0], "ok", ""),
        ("recovery_steps drift at t = −10", lambda: drift.recovery_steps(cos, torch.tensor([-10])), ValueError,
         "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps float times", lambda: drift.recovery_steps(cos, torch.tensor([20.5])), TypeError,
         "drift_times: expected whole numbers"),
        ("redraw_stream(batch_shape=(-1,))", lambda: drift.redraw_stream(batch_shape=(-1,)), ValueError,
         "batch_shape[0]: expected an integer >= 1"),
        ("redraw_stream(device='nope')", lambda: drift.redraw_stream(steps=10, device="nope"), ValueError,
         "device: expected a device name"),
        ("arrival_stream(every=0)", lambda: drift.arrival_stream(every=0), ValueError,
         "every: expected an integer >= 1"),
        ("rotation_stream(turn_period=0)", lambda: drift.rotation_stream(turn_period=0), ValueError,
         "turn_period: expected an integer >= 1"),
        ("scale_values(scales of the wrong length)", lambda: drift.scale_values(short_stream, [1.0, 2.0]), ValueError,
         "scales: expected shape (4,)"),
        # what only the draws checked, now checked by the streams (the same messages)
        ("redraw_stream(generator='seed')", lambda: drift.redraw_stream(generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("rotation_stream(generator='seed')", lambda: drift.rotation_stream(generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("arrival_stream(generator='seed')", lambda: drift.arrival_stream(generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("key_reuse_task(generator='seed')", lambda: drift.key_reuse_task(generator="seed"), TypeError,
         "generator: expected a torch.Generator"),
        ("redraw_stream: 1e13 probe entries",
         lambda: drift.redraw_stream(n_keys=10**6, d_k=10**7, orthogonal=False), ValueError,
         "shape: (*shape, d) = 1e+13 float64 entries"),
        ("key_reuse_task: 4e13 value entries", lambda: drift.key_reuse_task(n_keys=10**6, d_v=10**7), ValueError,
         "shape: (*shape, d) = 4e+13 float64 entries"),
        *((f"{f.__name__}(dtype='foo')", lambda f=f: f(dtype="foo"), TypeError,
           "dtype: expected a floating-point dtype such as torch.float32, got the string 'foo'")
          for f in (drift.redraw_stream, drift.rotation_stream, drift.arrival_stream, drift.key_reuse_task)),
        ("redraw_stream(dtype=torch.int64)", lambda: drift.redraw_stream(dtype=torch.int64), TypeError,
         "dtype: expected a floating-point dtype"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(times=st.lists(st.integers(-5, 120), max_size=3), threshold=hyper)
def test_property_recovery_steps_names_the_argument(times, threshold):
    try:
        out = drift.recovery_steps(torch.linspace(0, 1, 100), torch.tensor(times, dtype=torch.long),
                                   threshold=threshold)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0] in {"drift_times", "threshold"}, str(e)
        return
    assert out.shape == (len(times),) and bool((out >= 0).all())
