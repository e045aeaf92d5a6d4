"""The tiny Transformer: shapes, causality, seeding, and that it learns associative recall."""

import pytest
import torch

from pavlovlab.models import (
    ATTENTIONS,
    TinyTransformer,
    count_parameters,
    depth_width_configs,
    evaluate,
    steps_to_threshold,
    train_configs,
    train_models,
    train_recall,
    train_recall_batched,
)
from pavlovlab.tasks import associative_recall, pointer_chasing, vocab_size

TASK = dict(n_pairs=4, n_queries=4, n_keys=16, n_values=16)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_forward_shape_and_causality(attention, device):
    model = TinyTransformer(vocab_size(), d_model=16, n_layers=2, n_heads=3, d_head=5, attention=attention,
                            seed=0).to(device)
    b = associative_recall(3, **TASK, generator=torch.Generator().manual_seed(0), device=device)
    logits = model(b.tokens)
    assert logits.shape == (3, b.tokens.shape[1], vocab_size())
    changed = b.tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 16                 # change only the last token
    assert torch.allclose(model(changed)[:, :-1], logits[:, :-1], atol=1e-5)
    assert not torch.allclose(model(changed)[:, -1], logits[:, -1])


def test_seeded_init_and_parameter_count():
    a = TinyTransformer(32, d_model=16, n_layers=1, n_heads=2, d_head=8, seed=3)
    b = TinyTransformer(32, d_model=16, n_layers=1, n_heads=2, d_head=8, seed=3)
    c = TinyTransformer(32, d_model=16, n_layers=1, n_heads=2, d_head=8, seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters(), strict=True))
    assert count_parameters(a) == sum(p.numel() for p in a.parameters())
    deeper = TinyTransformer(32, d_model=16, n_layers=2, n_heads=2, d_head=8, seed=3)
    assert count_parameters(deeper) > count_parameters(a)


def test_evaluate_counts_only_answers():
    class Oracle(torch.nn.Module):  # puts all the mass on the target token where there is one
        def __init__(self, b):
            super().__init__()
            self.b = b
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(self, tokens):
            logits = torch.zeros(*tokens.shape, 32)
            t = self.b.targets.clamp(min=0)
            return logits.scatter(-1, t[..., None], 1.0)

    b = associative_recall(50, **TASK, generator=torch.Generator().manual_seed(0))
    assert evaluate(Oracle(b), b) == 1.0
    wrong = b._replace(targets=torch.where(b.answer_mask, (b.targets - 16 + 1) % 16 + 16, b.targets))
    assert evaluate(Oracle(b), wrong) == 0.0


@pytest.mark.slow
def test_small_linear_model_learns_recall():
    torch.set_num_threads(min(torch.get_num_threads(), 2))
    model = TinyTransformer(vocab_size(), d_model=32, n_layers=1, n_heads=2, d_head=16, attention="linear", seed=0)
    hist = train_recall(model, task_kwargs=TASK, steps=400, batch_size=64, lr=3e-3, target_accuracy=0.97,
                        eval_every=25, progress=False, seed=0)
    assert len(hist["step"]) == len(hist["loss"]) == len(hist["accuracy"]) >= 1
    assert hist["reached"] and hist["steps_run"] < 400
    held_out = associative_recall(1000, **TASK, generator=torch.Generator().manual_seed(123))
    assert evaluate(model, held_out) >= 0.95
    assert hist["loss"][-1] < hist["loss"][0]


def test_bad_input():
    with pytest.raises(ValueError, match="attention"):
        TinyTransformer(32, attention="hopfield")
    with pytest.raises(TypeError, match="n_heads"):
        TinyTransformer(32, n_heads=2.0)
    model = TinyTransformer(32, d_model=8, n_heads=1, d_head=4)
    with pytest.raises(TypeError, match="tokens"):
        model(torch.zeros(2, 5))
    with pytest.raises(ValueError, match="lr"):
        train_recall(model, task_kwargs=TASK, steps=1, lr=0.0)


@pytest.mark.slow
def test_depth_width_configs_have_equal_budgets():
    cfg = depth_width_configs(4, d_model=16, d_head=4)
    wide = TinyTransformer(32, seed=0, **cfg["wide-shallow"])
    deep = TinyTransformer(32, seed=0, **cfg["narrow-deep"])
    assert cfg["wide-shallow"]["n_layers"] * cfg["wide-shallow"]["n_heads"] == 4 == cfg["narrow-deep"]["n_layers"]
    assert abs(count_parameters(wide) - count_parameters(deep)) / count_parameters(deep) < 0.05
    runs = train_configs(cfg, vocab_size=32, seeds=(0, 1), task_kwargs=TASK, steps=3, eval_every=2,
                         eval_size=16, progress=False)
    assert set(runs) == {"wide-shallow", "narrow-deep"} and all(len(v) == 2 for v in runs.values())
    assert runs["narrow-deep"][0]["parameters"] == count_parameters(deep)
    assert runs["wide-shallow"][0]["step"] == [2, 3]


def test_width_control_config_and_steps_to_threshold():
    cfg = depth_width_configs(4, d_model=16, d_head=4, width_control=True)
    assert set(cfg) == {"wide-shallow", "narrow-deep", "one-big-head"}
    big = cfg["one-big-head"]
    assert (big["n_layers"], big["n_heads"], big["d_head"]) == (1, 1, 16)
    counts = [count_parameters(TinyTransformer(20, seed=0, **c)) for c in cfg.values()]
    assert max(counts) / min(counts) < 1.05, counts
    deep = depth_width_configs(4, d_model=16, d_head=4, deep_layers=2)["narrow-deep"]
    assert (deep["n_layers"], deep["n_heads"], deep["mlp_ratio"]) == (2, 2, 4)
    with pytest.raises(ValueError, match="deep_layers"):
        depth_width_configs(4, deep_layers=3)
    hist = {"step": [10, 20, 30, 40], "accuracy": [0.2, 0.85, 0.7, 0.95]}
    assert steps_to_threshold(hist, 0.8) == 20 and steps_to_threshold(hist, 0.9) == 40
    assert steps_to_threshold(hist, 0.99) is None


def test_train_on_another_task():
    model = TinyTransformer(9, d_model=16, n_layers=2, n_heads=1, d_head=8, seed=0)
    kw = dict(n_pairs=4, hops=2, n_queries=2, n_items=8)
    hist = train_recall(model, task=pointer_chasing, task_kwargs=kw, steps=4, eval_every=2, eval_size=16,
                        progress=False)
    assert hist["step"] == [2, 4] and 0.0 <= hist["final_accuracy"] <= 1.0
    with pytest.raises(TypeError, match="task"):
        train_recall(model, task="pointer", task_kwargs=kw, steps=1)


def test_delta_block_uses_the_unchecked_chunk_form_with_the_same_numbers(monkeypatch):
    """models.Block calls the delta rule through attention_kernels.delta_chunk_kernel: the same numbers as the
    checked delta_rule_attention (and as its recurrent form), but no input check runs in the forward pass
    (a check reads a tensor back to the host: a device sync on a GPU, a graph break under torch.compile)."""
    import torch.nn.functional as F

    import pavlovlab._checks as checks
    from pavlovlab.attention import delta_rule_attention
    from pavlovlab.attention_kernels import delta_chunk_kernel

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 70, 8, generator=g, dtype=torch.float64) for _ in range(3))
    k = F.normalize(k, dim=-1)
    beta = torch.rand(2, 3, 70, generator=g, dtype=torch.float64)
    empty = torch.zeros(2, 3, 8, 8, dtype=torch.float64)
    fast, _ = delta_chunk_kernel(q, k, v, beta, empty, chunk_size=16)
    torch.testing.assert_close(fast, delta_rule_attention(q, k, v, beta, mode="recurrent"), rtol=1e-10, atol=1e-12)
    none = delta_chunk_kernel(q[..., :0, :], k[..., :0, :], v[..., :0, :], beta[..., :0], empty)[0]
    assert none.shape == (2, 3, 0, 8)

    def refuse(*args, **kwargs):
        raise AssertionError("an input check ran inside the model's forward pass")

    model = TinyTransformer(vocab_size(8, 8), d_model=16, n_layers=1, n_heads=2, d_head=8, attention="delta", seed=0)
    tokens = associative_recall(4, n_pairs=3, n_keys=8, n_values=8, generator=torch.Generator().manual_seed(1)).tokens
    expected = model(tokens)
    for name in ("check_real_tensor", "check_finite", "check_tensor", "warn_nonfinite"):
        if hasattr(checks, name):
            monkeypatch.setattr(checks, name, refuse)
            import pavlovlab.attention as attention
            if hasattr(attention, name):
                monkeypatch.setattr(attention, name, refuse)
    torch.testing.assert_close(model(tokens), expected)


def _per_head_block(block, x):
    """Block.forward written out literally: one head at a time, one token at a time (float64 reference)."""
    import torch.nn.functional as F

    N, T, D = x.shape
    H, d = block.n_heads, block.d_head
    h = F.layer_norm(x, (D,), block.ln1.weight, block.ln1.bias)
    h2 = torch.cat([h, torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)], dim=-1)   # [x_t, x_{t-1}]
    outputs = []
    for j in range(H):
        q, k, v = (h2 @ block.qkv.weight[(part * H + j) * d:(part * H + j + 1) * d].T for part in range(3))
        if block.attention == "softmax":
            scores = (q @ k.mT) / d ** 0.5
            scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            outputs.append(scores.softmax(-1) @ v)
            continue
        q, k = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
        S, o = torch.zeros(N, d, d, dtype=x.dtype), []
        for t in range(T):
            vt, kt = v[:, t, :, None], k[:, t, None, :]
            if block.attention == "linear":
                S = S + vt * kt                                                   # Hebb: S += v kᵀ
            else:
                beta = torch.sigmoid(h2[:, t] @ block.beta.weight[j] + block.beta.bias[j])[:, None, None]
                S = S + beta * (vt - S @ kt.mT) * kt                              # RW: S += β (v − S k) kᵀ
            o.append((S @ q[:, t, :, None])[..., 0])
        outputs.append(F.layer_norm(torch.stack(o, dim=1), (d,), block.out_norm.weight, block.out_norm.bias))
    x = x + torch.cat(outputs, dim=-1) @ block.out.weight.T
    return x + block.mlp(x)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_block_matches_a_per_head_per_token_computation(attention):
    """Outputs and gradients of the model equal a head-by-head, token-by-token computation (float64)."""
    import torch.nn.functional as F

    model = TinyTransformer(vocab_size(6, 6), d_model=12, n_layers=2, n_heads=3, d_head=4, attention=attention,
                            seed=0).double()
    tokens = associative_recall(3, n_pairs=4, n_queries=3, n_keys=6, n_values=6,
                                generator=torch.Generator().manual_seed(2)).tokens
    weights = torch.randn(*tokens.shape, vocab_size(6, 6), generator=torch.Generator().manual_seed(3),
                          dtype=torch.float64)
    fast = model(tokens)
    fast_grads = torch.autograd.grad((fast * weights).sum(), list(model.parameters()))
    x = model.embed(tokens)
    for block in model.blocks:
        x = _per_head_block(block, x)
    slow = model.readout(F.layer_norm(x, (12,), model.ln_f.weight, model.ln_f.bias))
    slow_grads = torch.autograd.grad((slow * weights).sum(), list(model.parameters()))
    torch.testing.assert_close(fast, slow, rtol=1e-10, atol=1e-12)
    for (name, _), a, b in zip(model.named_parameters(), fast_grads, slow_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11, msg=lambda m, name=name: f"{name}: {m}")


@pytest.fixture
def one_thread():
    """Tiny models train fastest on one thread (and a loaded machine slows a second one down badly)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


BATCHED_TASK = dict(n_pairs=3, n_keys=8, n_values=8)
BATCHED_TRAIN = dict(task_kwargs=BATCHED_TASK, steps=40, eval_every=10, eval_size=64, batch_size=32, lr=1e-2,
                     weight_decay=0.01, progress=False)


@pytest.mark.parametrize("attention, target, model_kwargs", [
    ("linear", 0.3, dict(n_layers=2)),
    ("delta", 0.3, dict(n_layers=2)),
    ("softmax", 0.33, dict(n_layers=2)),
    ("linear", None, dict(n_layers=1, mlp=False, feature_map="elu1")),
])
def test_batched_training_equals_separate_runs(attention, target, model_kwargs, one_thread):
    """Three seeds trained together give the histories and weights of three train_recall runs (float64), with
    a target that one seed reaches before another (early stopping per model) or none (no target)."""
    kw = dict(vocab_size=vocab_size(8, 8), d_model=16, n_heads=2, d_head=8, attention=attention, **model_kwargs)
    seeds = (0, 1, 2)
    alone = [TinyTransformer(**kw, seed=s).double() for s in seeds]
    expected = [train_recall(m, seed=s, target_accuracy=target, **BATCHED_TRAIN)
                for m, s in zip(alone, seeds, strict=True)]
    together = [TinyTransformer(**kw, seed=s).double() for s in seeds]
    got = train_recall_batched(together, seeds=seeds, target_accuracy=target, **BATCHED_TRAIN)
    if target is not None:                                     # the case under test: seeds stop at different steps
        assert len({h["steps_run"] for h in expected}) > 1, [h["steps_run"] for h in expected]
    for want, have in zip(expected, got, strict=True):
        assert set(have) == set(want)
        for key in ("step", "accuracy", "final_accuracy", "steps_run", "reached", "parameters"):
            assert have[key] == want[key], key
        torch.testing.assert_close(have["loss"], want["loss"], rtol=1e-10, atol=0.0)
    for a, b in zip(alone, together, strict=True):
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(q, p, rtol=1e-9, atol=1e-11, msg=lambda m, name=name: f"{name}: {m}")


def test_train_models_returns_each_seed_trained(one_thread):
    runs = train_models(("softmax", "delta"), seeds=(3, 4), steps=4, target_accuracy=None, eval_every=2,
                        eval_size=16, progress=False)
    assert set(runs) == {"softmax", "delta"}
    for attention, rs in runs.items():
        assert len(rs) == 2 and all(r["history"]["step"] == [2, 4] for r in rs)
        for r, s in zip(rs, (3, 4), strict=True):
            start = TinyTransformer(vocab_size(16, 16), d_model=32, n_heads=2, d_head=16, attention=attention, seed=s)
            moved = [not torch.equal(p, q) for p, q in zip(r["model"].parameters(), start.parameters(), strict=True)]
            assert all(moved) and not r["model"].training
    assert train_models(("linear",), seeds=(), steps=1, progress=False) == {"linear": []}
