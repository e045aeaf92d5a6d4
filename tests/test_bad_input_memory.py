"""Bad input for ``pavlovlab.memory``, ``pavlovlab.forgetting.drift`` and ``pavlovlab.sampling``: the exact calls of the
hostile-input run (construction, shapes, bounds, divergences), a property-based test per module."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from badinput import check, parametrize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pavlovlab import sampling as Sa  # noqa: E402
from pavlovlab.forgetting import drift as Dr  # noqa: E402
from pavlovlab.memory import associative as M  # noqa: E402

FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None)


def _t(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _memory_rows():
    unit = F.normalize(_t(12, 4), dim=-1)

    def nan_rule(S, k, v):
        return torch.full_like(S, math.nan)

    def written(mem, k, v, **kw):
        mem.write(k, v, **kw)
        return mem.S

    def long_delta(lr):
        mem = M.AssociativeMemory(16, 16, rule="delta", lr=lr)
        mem.write(_t(20000, 16), _t(20000, 16, seed=1))                 # N(0, 1) keys: ‖k‖² ≈ 16
        return mem.S

    return [
        ("AssociativeMemory(batch_shape=(-2,))", lambda: M.AssociativeMemory(4, 4, batch_shape=(-2,)), ValueError,
         "batch_shape[0]: expected an integer >= 1, got -2"),
        ("AssociativeMemory(batch_shape=3)", lambda: M.AssociativeMemory(4, 4, batch_shape=3), TypeError,
         "batch_shape: expected a tuple of sizes such as (3,)"),
        ("AssociativeMemory(device='gpu0')", lambda: M.AssociativeMemory(4, 4, device="gpu0"), ValueError,
         "device: expected a device name such as 'cpu'"),
        ("AssociativeMemory(d_key=10**6, d_value=10**6)", lambda: M.AssociativeMemory(10**6, 10**6), ValueError,
         "S: batch × d_value × d_key = 1e+12 float32 entries (4 TB) do not fit"),
        ("AssociativeMemory(dtype='float32') (accepted by contract)",
         lambda: M.AssociativeMemory(4, 4, dtype="float32").S.dtype == torch.float32, "ok", ""),
        ("AssociativeMemory delta lr = 3 (> 2)", lambda: M.AssociativeMemory(4, 4, rule="delta", lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("AssociativeMemory delta lr = 2 (the bound) on unit keys stays bounded",
         lambda: bool(written(M.AssociativeMemory(4, 4, rule="delta", lr=2.0), unit, unit).norm() < 10), "ok", ""),
        ("write(lr=3) on a delta memory", lambda: written(M.AssociativeMemory(4, 4, rule="delta"), unit, unit, lr=3.0),
         ValueError, "lr: expected a number <= 2 for the delta rule"),
        ("write(lr=<tensor of the wrong length>)",
         lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.ones(5)), ValueError,
         "lr: expected a tensor broadcasting to (*batch_shape, T) = (12,), got shape (5,)"),
        ("write(lr=<tensor (T, 1)>)", lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.ones(12, 1)),
         ValueError, "lr: expected a tensor broadcasting to (*batch_shape, T) = (12,), got shape (12, 1)"),
        ("write(lr=<tensor with a NaN>)",
         lambda: written(M.AssociativeMemory(4, 4), unit, unit, lr=torch.tensor([math.nan] * 12)), ValueError,
         "lr: expected finite values"),
        ("custom rule returning NaN: warns", lambda: written(M.AssociativeMemory(4, 4, rule=nan_rule), unit, unit),
         "warn", "AssociativeMemory(rule='nan_rule')"),
        ("20k delta steps at lr = 1 with N(0, 1) keys: warns", lambda: long_delta(1.0), "warn",
         "AssociativeMemory(rule='delta')"),
        ("delta_update(S, k) with the wrong d", lambda: M.delta_update(torch.zeros(3, 4), _t(5), _t(3)), ValueError,
         "k: expected key dimension d_k (last dim of S) = 4, got 5"),
        ("oja_subspace_update(S, k, v) with the wrong d_v",
         lambda: M.oja_subspace_update(torch.zeros(3, 4), _t(4), _t(2)), ValueError, "v: expected value dimension"),
        ("step(..., lr=nan)", lambda: M.step(torch.zeros(3, 4), _t(4), _t(3), "hebbian", lr=math.nan), ValueError,
         "lr: expected a finite number"),
        ("step(..., decay=1.5)", lambda: M.step(torch.zeros(3, 4), _t(4), _t(3), "hebbian", decay=1.5), ValueError,
         "decay: expected a number <= 1"),
        ("step(S, k, v, 0.5): lr given where the rule goes",
         lambda: M.step(torch.zeros(3, 4), _t(4), _t(3), 0.5), TypeError,
         "rule: expected a name of memory.RULES or a callable"),
        ("step with an unknown rule name", lambda: M.step(torch.zeros(3, 4), _t(4), _t(3), "hebb"), ValueError,
         "rule: expected one of"),
    ]


def _drift_rows():
    stream = Dr.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=600, period=300, generator=torch.Generator().manual_seed(0))
    wrong_dv = Dr.DriftStream(stream.keys, stream.values[..., :5], stream.probes, stream.targets, stream.active,
                              stream.drift_times)
    cos = torch.linspace(0, 1, 100)
    return [
        ("track(stream, ['delta'], lr=3.0)", lambda: Dr.track(stream, ["delta"], lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("track(lr=np.float32(0.5)) (accepted by contract)",
         lambda: torch.equal(Dr.track(stream, ["delta"], lr=np.float32(0.5)).cosine,
                             Dr.track(stream, ["delta"], lr=0.5).cosine), "ok", ""),
        ("track(lr=None)", lambda: Dr.track(stream, ["delta"], lr=None), TypeError,
         "lr: expected a number or one number per rule"),
        ("track(lr=[0.5, nan])", lambda: Dr.track(stream, ["delta", "hebbian"], lr=[0.5, math.nan]), ValueError,
         "lr[1]: expected a finite number"),
        ("track(DriftStream with values of the wrong d_v)", lambda: Dr.track(wrong_dv, ["delta"]), ValueError,
         "stream.values: expected"),
        ("track(<not a stream>)", lambda: Dr.track((stream.keys, stream.values)), TypeError,
         "stream: expected a DriftStream"),
        ("recovery_steps with a list", lambda: Dr.recovery_steps(cos, [50]).tolist() == [45.0], "ok", ""),
        ("recovery_steps unsorted times", lambda: Dr.recovery_steps(cos, torch.tensor([60, 20])), ValueError,
         "drift_times: expected increasing times"),
        ("recovery_steps times beyond T", lambda: Dr.recovery_steps(cos, torch.tensor([20, 150])), ValueError,
         "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps drift at t = T (the boundary)", lambda: Dr.recovery_steps(cos, torch.tensor([100])),
         ValueError, "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps drift at t = T − 1 (the last step)",
         lambda: Dr.recovery_steps(cos, torch.tensor([99])).tolist() == [0.0], "ok", ""),
        ("recovery_steps drift at t = −10", lambda: Dr.recovery_steps(cos, torch.tensor([-10])), ValueError,
         "drift_times: expected times in [0, T = 100)"),
        ("recovery_steps float times", lambda: Dr.recovery_steps(cos, torch.tensor([20.5])), TypeError,
         "drift_times: expected whole numbers"),
        ("redraw_stream(batch_shape=(-1,))", lambda: Dr.redraw_stream(batch_shape=(-1,)), ValueError,
         "batch_shape[0]: expected an integer >= 1"),
        ("redraw_stream(device='nope')", lambda: Dr.redraw_stream(steps=10, device="nope"), ValueError,
         "device: expected a device name"),
    ]


def _sampling_rows():
    return [
        ("random_keys(3, d=4, device='tpu')", lambda: Sa.random_keys(3, d=4, device="tpu"), ValueError,
         "device: expected a device name"),
        ("random_keys(2**40, d=2**20)", lambda: Sa.random_keys(2**40, d=2**20), ValueError,
         "shape: (*shape, d) = 1.153e+18 float32 entries"),
        ("random_keys(-1, d=4)", lambda: Sa.random_keys(-1, d=4), ValueError, "shape[0]: expected an integer >= 0"),
        ("random_keys(3, d=4, dtype='float64') (accepted by contract)",
         lambda: Sa.random_keys(3, d=4, dtype="float64").dtype == torch.float64, "ok", ""),
    ]


ROWS = _memory_rows() + _drift_rows() + _sampling_rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


# ------------------------------------------------------------------ property-based: generated bad input
hyper = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.none(), st.text(max_size=2))


@FAST
@given(lr=hyper, decay=hyper, d=st.integers(-1, 3), batch=st.one_of(st.integers(-1, 2),
                                                                     st.lists(st.integers(-1, 2), max_size=2)),
       rule=st.sampled_from(["hebbian", "delta", "oja_subspace", "hebb", 3]))
def test_property_memory_names_the_argument(lr, decay, d, batch, rule):
    try:
        mem = M.AssociativeMemory(d, 3, rule=rule, lr=lr, decay=decay, batch_shape=batch)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"d_key", "rule", "lr", "decay", "batch_shape"}, str(e)
        return
    k = F.normalize(_t(*mem.batch_shape, 5, mem.d_key), dim=-1)
    mem.write(k, F.normalize(_t(*mem.batch_shape, 5, 3, seed=1), dim=-1))
    assert bool(torch.isfinite(mem.S).all())


@FAST
@given(times=st.lists(st.integers(-5, 120), max_size=3), threshold=hyper)
def test_property_recovery_steps_names_the_argument(times, threshold):
    try:
        out = Dr.recovery_steps(torch.linspace(0, 1, 100), torch.tensor(times, dtype=torch.long), threshold=threshold)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0] in {"drift_times", "threshold"}, str(e)
        return
    assert out.shape == (len(times),) and bool((out >= 0).all())


@FAST
@given(shape=st.lists(st.integers(-2, 3), max_size=2), d=st.integers(-1, 3),
       device=st.sampled_from([None, "cpu", "gpu", "tpu"]), kind=st.sampled_from(["sphere", "normal"]))
def test_property_sampling_names_the_argument(shape, d, device, kind):
    try:
        x = Sa.random_keys(*shape, d=d, kind=kind, device=device)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"shape", "d", "kind", "device"}, str(e)
        return
    assert x.shape == (*shape, d)
