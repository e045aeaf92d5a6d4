"""Bad input, table-driven, per public module: every call gives a ValueError/TypeError whose
message names the argument, a documented warning, or the right result; never a deep traceback from
torch, never a silent wrong number.

Each row is ``(module, case, call, expect, fragment)``:

- ``expect`` an exception type: the call raises it and its message contains ``fragment`` (the argument
  named, usually ``"name: expected ..."``);
- ``expect == "warn"``: the call returns and warns once with a :class:`NonFiniteWarning` whose message
  contains ``fragment`` (data-dependent divergence: the non-finite policy of ``pavlovlab._checks``);
- ``expect == "ok"``: the call returns True (the right result, checked against an independent value).

The cases are the concrete ones of the issue (hostile-input run) plus one row per public module at least.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from badinput import check


def _t(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _unit(*shape, seed=0):
    return F.normalize(_t(*shape, seed=seed), dim=-1)


def _nan(x, where=(0, 0)):
    x = x.clone()
    x[where] = float("nan")
    return x


def _qkv(T=6, d_k=4, d_v=2):
    return _t(T, d_k, seed=1), _t(T, d_k, seed=2), _t(T, d_v, seed=3)


# ------------------------------------------------------------------------------------------- the calls
def _attention():
    from pavlovlab.attention import forms as A

    q, k, v = _qkv()
    e = _t(0, 4)
    rows = [
        ("T = 0 recurrent", lambda: A.linear_attention(e, e, _t(0, 2), mode="recurrent").shape == (0, 2), "ok", ""),
        ("T = 0 chunk", lambda: A.linear_attention(e, e, _t(0, 2), mode="chunk").shape == (0, 2), "ok", ""),
        ("T = 0 delta recurrent", lambda: A.delta_rule_attention(e, e, _t(0, 2), 0.5, mode="recurrent").shape == (0, 2),
         "ok", ""),
        ("T = 0 delta chunk", lambda: A.delta_rule_attention(e, e, _t(0, 2), 0.5).shape == (0, 2), "ok", ""),
        ("chunk_size ≫ T", lambda: torch.allclose(A.linear_attention(q, k, v, chunk_size=10**7),
                                                    A.linear_attention(q, k, v, mode="recurrent"), atol=1e-5),
         "ok", ""),
        ("delta chunk float16", lambda: A.delta_rule_attention(*(x.half() for x in (q, _unit(6, 4), v)), 0.5).dtype
         == torch.float16, "ok", ""),
        ("delta chunk bfloat16", lambda: A.delta_rule_attention(*(x.bfloat16() for x in (q, _unit(6, 4), v)), 0.5).dtype
         == torch.bfloat16, "ok", ""),
        ("normalize with identity map", lambda: A.linear_attention(q, k, v, normalize=True), ValueError,
         "feature_map: normalize=True needs a non-negative feature map"),
        ("beta 2.5", lambda: A.delta_rule_attention(q, _unit(6, 4), v, 2.5), ValueError,
         "beta: expected a number <= 2"),
        ("unnormalised keys diverge", lambda: A.delta_rule_attention(*_qkv(200, 8, 8)[:1], 3 * _t(200, 8, seed=5),
                                                                      _t(200, 8), 1.0), "warn", "delta_rule_attention"),
        ("NaN q linear", lambda: A.linear_attention(_nan(q), k, v), ValueError, "q: expected finite values"),
        ("inf v softmax", lambda: A.softmax_attention(q, k, v.index_fill(0, torch.tensor([1]), math.inf)), ValueError,
         "v: expected finite values"),
        ("NaN k delta", lambda: A.delta_rule_attention(q, _nan(k), v, 0.5), ValueError, "k: expected finite values"),
        ("initial_state extra dims", lambda: A.linear_attention(q, k, v, initial_state=torch.zeros(3, 2, 4)),
         ValueError, "initial_state: expected leading dims"),
        ("feature map returns list", lambda: A.linear_attention(q, k, v, feature_map=lambda x: [x]), TypeError,
         "feature_map: expected the callable to return a torch.Tensor"),
        ("feature map returns None", lambda: A.linear_attention(q, k, v, feature_map=lambda x: None), TypeError,
         "feature_map: expected the callable to return a torch.Tensor"),
        ("feature map changes dtype", lambda: A.linear_attention(q, k, v, feature_map=lambda x: x.double()),
         TypeError, "feature_map: expected the callable to return dtype"),
        ("feature_map not a name", lambda: A.linear_attention(q, k, v, feature_map=3), TypeError, "feature_map:"),
        ("mode typo", lambda: A.linear_attention(q, k, v, mode="chunked"), ValueError, "mode: expected one of"),
        ("integer q", lambda: A.softmax_attention(q.long(), k, v), TypeError, "q: expected a floating-point tensor"),
        ("chunk_size 0", lambda: A.delta_rule_attention(q, k, v, 0.5, chunk_size=0), ValueError, "chunk_size:"),
    ]
    return rows


def _hebbian():
    from pavlovlab.memory import hebbian as Hb

    keys, values = _unit(8, 16), _unit(8, 16, seed=1)
    return [
        ("NaN keys", lambda: Hb.recall_cosine(_nan(keys), values), ValueError, "keys: expected finite values"),
        ("mismatched n", lambda: Hb.outer_product_memory(keys, values[:5]), ValueError, "values:"),
        ("list keys", lambda: Hb.crosstalk(keys.tolist(), values), TypeError, "keys: expected a torch.Tensor"),
    ]


def _memory():
    from pavlovlab.memory import associative as M

    def wrong_shape_rule(S, k, v):
        return torch.zeros(3, *S.shape)

    def float64_rule(S, k, v):
        return (v[..., :, None] * k[..., None, :]).double()

    def run_rule(rule):
        mem = M.AssociativeMemory(4, 4, rule=rule)
        mem.write(_t(4), _t(4, seed=1))
        return mem.S

    def long_delta_run():
        mem = M.AssociativeMemory(16, 16, rule="delta")  # N(0, 1) keys: ‖k‖² ≈ 16, 1 − ‖k‖² ≪ −1
        mem.write(_t(300, 16), _t(300, 16, seed=1))
        return mem.S

    def empty_run():
        mem = M.AssociativeMemory(4, 2)
        return mem.run(_t(0, 4), _t(0, 2), _t(0, 4)).shape == (0, 2)

    return [
        ("rule returns (3, d, d)", lambda: run_rule(wrong_shape_rule), ValueError,
         "rule: expected the callable to return shape (4, 4)"),
        ("rule returns float64", lambda: run_rule(float64_rule), TypeError,
         "rule: expected the callable to return dtype torch.float32"),
        ("hebbian_update k of d+1", lambda: M.hebbian_update(torch.zeros(4, 4), _t(5), _t(4)), ValueError,
         "k: expected key dimension d_k"),
        ("delta memory diverges", long_delta_run, "warn", "AssociativeMemory(rule='delta')"),
        ("dtype as a string", lambda: M.AssociativeMemory(4, 2, dtype="float64").S.dtype == torch.float64, "ok", ""),
        ("dtype long", lambda: M.AssociativeMemory(4, 2, dtype=torch.long), TypeError, "dtype: expected a floating"),
        ("T = 0 run", empty_run, "ok", ""),
        ("NaN key write", lambda: M.AssociativeMemory(4, 2).write(_nan(_t(3, 4)), _t(3, 2)), ValueError,
         "k: expected finite values"),
    ]


def _conditioning():
    from pavlovlab.conditioning import learning as C
    from pavlovlab.conditioning import trials as Tt

    cs, us = torch.ones(30, 1), torch.ones(30)

    def grad_flows():
        alpha = torch.tensor([0.3], requires_grad=True)
        C.rescorla_wagner(cs, us, alpha=alpha)[-1].sum().backward()
        return alpha.grad is not None and float(alpha.grad.abs().sum()) > 0

    return [
        ("alpha 2.5", lambda: C.rescorla_wagner(cs, us, alpha=2.5), ValueError, "alpha: expected α·β <= 2"),
        ("alpha·beta > 2", lambda: C.rescorla_wagner(cs, us, alpha=1.5, beta=1.5), ValueError, "alpha: expected α·β"),
        ("alpha keeps its gradient", grad_flows, "ok", ""),
        ("NaN cs", lambda: C.rescorla_wagner(_nan(cs), us), ValueError, "cs: expected finite"),
        ("design typo", lambda: C.simulate("blockin"), ValueError, "design"),
        ("design dtype as a string", lambda: Tt.acquisition(3, dtype="float64").cs.dtype == torch.float64, "ok", ""),
        ("design dtype 'int64'", lambda: Tt.extinction(3, dtype="int64"), TypeError,
         "dtype: expected a floating-point"),
    ]


def _capacity():
    from pavlovlab import sampling as Sa
    from pavlovlab.capacity import average as Ar

    return [
        ("average capacity d_k < 0", lambda: Ar.average_capacity_theory(-16), ValueError, "d_k: expected numbers > 0"),
        ("fidelity n = 0", lambda: Ar.fidelity_theory(0, 16), ValueError, "n: expected"),
        ("random_keys dtype string", lambda: Sa.random_keys(2, d=3, dtype="float64").dtype == torch.float64, "ok", ""),
        ("random_keys dtype long", lambda: Sa.random_keys(2, d=3, dtype=torch.long), TypeError, "dtype:"),
        ("random_keys kind typo", lambda: Sa.random_keys(2, d=3, kind="normal"), ValueError, "kind: expected one of"),
    ]


def _stacking():
    from pavlovlab.depth import theory as Th

    return [
        ("crosstalk_variance n = 0", lambda: Th.crosstalk_variance(0, 16), ValueError, "n: expected numbers >= 1"),
        ("crosstalk_variance d_k = 0", lambda: Th.crosstalk_variance(4, 0), ValueError, "d_k: expected numbers >= 1"),
        ("paper_bound n = 0", lambda: Th.paper_bound(1, 1, 0, 16), ValueError, "n: expected numbers >= 1"),
        ("paper_bound L = −1", lambda: Th.paper_bound(-1, 1, 8, 16), ValueError, "L: expected numbers >= 0"),
        ("stack_error_theory L = −2", lambda: Th.stack_error_theory(-2, 1, 8, 16), ValueError, "L: expected numbers"),
        ("stack_error_theory p_head = 2", lambda: Th.stack_error_theory(2, 1, 8, 16, rule="all_fail", p_head=2),
         ValueError, "p_head: expected numbers <= 1"),
        ("paper_bound NaN", lambda: Th.paper_bound(1, 1, float("nan"), 16), ValueError, "n: expected finite"),
        ("crosstalk_variance value", lambda: Th.crosstalk_variance(9, 4, 2) == 1.0, "ok", ""),
    ]


def _tasks_models():
    from pavlovlab.models import tasks as Ta
    from pavlovlab.models import transformer as Mo

    model = Mo.TinyTransformer(Ta.vocab_size(4, 4), d_model=16, n_heads=2, d_head=8, seed=0)
    return [
        ("sequence_length(−5)", lambda: Ta.sequence_length(-5), ValueError, "n_pairs: expected an integer >= 1"),
        ("sequence_length value", lambda: Ta.sequence_length(5, 2) == 12, "ok", ""),
        ("feature_map bogus", lambda: Mo.TinyTransformer(8, feature_map="bogus"), ValueError,
         "feature_map: expected one of"),
        ("tokens ≥ vocab", lambda: model(torch.tensor([[0, 1, 8]])), ValueError,
         "tokens: expected ids in [0, vocab_size"),
        ("negative token", lambda: model(torch.tensor([[0, -1]])), ValueError, "tokens: expected ids"),
        ("T = 0 forward", lambda: model(torch.zeros(2, 0, dtype=torch.long)).shape == (2, 0, 8), "ok", ""),
        ("float tokens", lambda: model(torch.zeros(1, 3)), TypeError, "tokens: expected a (N, T) long tensor"),
    ]


def _drift_oja():
    from pavlovlab.forgetting import drift as Dr
    from pavlovlab.forgetting import oja as O

    x = O.data_cloud(200, 3, generator=torch.Generator().manual_seed(0))
    stream = Dr.redraw_stream(n_keys=4, d_k=8, d_v=8, steps=1000, period=500,
                              generator=torch.Generator().manual_seed(0))
    return [
        ("oja_subspace k > d", lambda: O.oja_subspace(x, k=5), ValueError, "k: expected at most d = 3"),
        ("oja_pca lr = 5 diverges", lambda: O.oja_pca(x, lr=5.0), "warn", "oja_pca"),
        ("track lr = 3 is past the delta rule's bound", lambda: Dr.track(stream, ("delta",), lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("key_reuse_task rewrites = 0", lambda: Dr.key_reuse_task(rewrites=0), ValueError,
         "rewrites: expected an integer >= 1"),
        ("track rule typo", lambda: Dr.track(stream, ("hebb",)), ValueError, "rules: expected one of"),
        ("NaN x", lambda: O.oja_pca(_nan(x)), ValueError, "x: expected finite values"),
    ]


def _decay_unlearning():
    from pavlovlab.attention import forms as A
    from pavlovlab.forgetting import decay as D
    from pavlovlab.forgetting import unlearning as U

    q, k, v = _qkv()
    S = torch.eye(4)
    return [
        ("retnet_decays(24) float32", lambda: D.retnet_decays(24), ValueError,
         "n_heads: in torch.float32 only the first"),
        ("retnet_decays(24) float64", lambda: bool((D.retnet_decays(24, dtype=torch.float64) < 1).all()), "ok", ""),
        ("gated T = 0", lambda: A.scalar_gated_linear_attention(_t(0, 4), _t(0, 4), _t(0, 2), torch.ones(0),
                                                         mode="recurrent").shape == (0, 2), "ok", ""),
        ("gate > 1", lambda: A.scalar_gated_linear_attention(q, k, v, torch.full((6,), 1.5)), ValueError,
         "g: expected"),
        ("unlearn_delta NaN k", lambda: U.unlearn_delta(S, _nan(torch.ones(4), 0)), ValueError, "k: expected finite"),
        ("unlearning_experiment n = 10, d_k = 4", lambda: U.unlearning_experiment(n=10, d_k=4, n_trials=2), ValueError,
         "n: the 'delta_protected' method protects the other n − 1 keys"),
        ("random_associations dtype string",
         lambda: U.random_associations(3, 4, 4, dtype="float64")[0].dtype == torch.float64, "ok", ""),
    ]


def _device_plotting_widgets():
    from matplotlib.figure import Figure

    from pavlovlab import device as Dv
    from pavlovlab.teach import plotting as P
    from pavlovlab.teach import widgets as W

    ax = Figure().add_subplot()
    return [
        ("seed 2**70", lambda: Dv.seed_everything(2**70), ValueError, "seed: expected an integer in [0, 2**64)"),
        ("seed float", lambda: Dv.seed_everything(1.5), TypeError, "seed: expected a non-negative integer"),
        ("seed numpy int", lambda: isinstance(Dv.seed_everything(np.int64(3)), torch.Generator), "ok", ""),
        ("band samples wrong width", lambda: P.band(ax, [1, 2, 3], np.ones((5, 4))), ValueError,
         "samples: expected shape"),
        ("band samples 1-D", lambda: P.band(ax, [1, 2, 3], np.ones(3)), ValueError, "samples: expected 2 dimension"),
        ("theory y wrong length", lambda: P.theory(ax, [1, 2, 3], [1, 2]), ValueError, "y: expected len(x) = 3"),
        ("heatmap 1-D", lambda: P.heatmap(ax, np.ones(4), title="t", xlabel="x", ylabel="y"), ValueError,
         "matrix: expected 2 dimension"),
        ("mark_times strings", lambda: P.mark_times(ax, ["a"]), TypeError, "times: expected numbers"),
        ("not an Axes", lambda: P.labels(None, "t", "x", "y"), TypeError, "ax: expected a matplotlib Axes"),
        ("slider min > max", lambda: W.control("n", (10, 1, 1, 5)), ValueError, "n: expected (min, max, step, value)"),
        ("slider 3-tuple", lambda: W.control("n", (1, 10, 1)), TypeError, "n: expected (min, max, step, value)"),
        ("draw not callable", lambda: W.interactive_plot(None, n=(1, 4, 1, 2)), TypeError, "draw: expected a function"),
    ]


def _exercises_core():
    import contextlib
    import io

    from pavlovlab.teach.exercises import checking

    def quiet(fn):
        def run():
            with contextlib.redirect_stdout(io.StringIO()) as out:
                ok = fn()
            return ok, out.getvalue()
        return run

    def nan_is_wrong():
        ok, text = quiet(lambda: checking.check_value(float("nan"), 1.0, name="x"))()
        return ok is False and "❌" in text

    def array_vs_letter():
        ok, text = quiet(lambda: checking.check_value(np.array([1, 2]), "A", name="x"))()
        return ok is False and "❌" in text and "Traceback" not in text

    return [
        ("check_value(nan, 1.0) is ❌", nan_is_wrong, "ok", ""),
        ("check_value(np.array([1, 2]), 'A') is ❌, no traceback", array_vs_letter, "ok", ""),
    ]


MODULES = {
    "attention": _attention, "hebbian": _hebbian, "memory": _memory, "conditioning": _conditioning,
    "capacity": _capacity, "stacking": _stacking, "tasks+models": _tasks_models, "drift+oja": _drift_oja,
    "decay+unlearning": _decay_unlearning, "device+plotting+widgets": _device_plotting_widgets,
    "exercises": _exercises_core,
}


def all_cases():
    """Every row as ``(id, call, expect, fragment)``; the calls are built lazily (cheap to list)."""
    rows = []
    for module, build in MODULES.items():
        for case, call, expect, fragment in build():
            rows.append((f"{module}: {case}", call, expect, fragment))
    return rows


CASES = all_cases()


@pytest.mark.parametrize("call, expect, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


def test_the_table_covers_every_public_module():
    import pavlovlab

    covered = {name.split(":")[0] for name, *_ in CASES}
    for module in ("attention", "hebbian", "memory", "conditioning", "capacity", "stacking", "tasks", "models",
                   "drift", "oja", "decay", "unlearning", "device", "plotting", "widgets", "exercises"):
        assert any(module in c for c in covered), module
    assert pavlovlab.linear_attention  # the package imports


# ------------------------------------------------------------ the fast finiteness test is exact
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_all_finite_sees_one_bad_entry_anywhere(dtype, bad):
    """``all_finite`` decides by the sum first: one NaN/inf at any position (first, middle, last, strided)
    must still be found."""
    from pavlovlab._checks import all_finite

    x = _t(3, 5, 7).to(dtype)
    assert all_finite(x) and all_finite(x.mT)
    for index in [(0, 0, 0), (1, 2, 3), (2, 4, 6)]:
        y = x.clone()
        y[index] = bad
        assert not all_finite(y) and not all_finite(y.mT)


def test_all_finite_with_both_infinities_and_with_a_sum_that_overflows():
    from pavlovlab._checks import all_finite

    both = torch.tensor([1.0, math.inf, -math.inf])               # inf + (−inf) = NaN in the sum: still caught
    assert not all_finite(both)
    big = torch.full((4,), 3.0e38)                                 # finite entries whose float32 sum overflows
    assert not math.isfinite(float(big.sum())) and all_finite(big)
    half = torch.full((10,), 60000.0, dtype=torch.float16)        # likewise in float16 (max 65504)
    assert all_finite(half)
    assert all_finite(torch.empty(0)) and all_finite(torch.empty(3, 3, device="meta"))
