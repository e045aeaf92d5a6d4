"""The tiny Transformer: shapes, causality, seeding, parameter budgets, and the blocks' numbers."""

import pytest
import torch
from badinput import check, parametrize

from pavlovlab.models import tasks as Ta
from pavlovlab.models import transformer as Mo
from pavlovlab.models.tasks import associative_recall, vocab_size
from pavlovlab.models.transformer import ATTENTIONS, TinyTransformer, count_parameters, depth_width_configs

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


def test_bad_input():
    with pytest.raises(ValueError, match="attention"):
        TinyTransformer(32, attention="hopfield")
    with pytest.raises(TypeError, match="n_heads"):
        TinyTransformer(32, n_heads=2.0)
    model = TinyTransformer(32, d_model=8, n_heads=1, d_head=4)
    with pytest.raises(TypeError, match="tokens"):
        model(torch.zeros(2, 5))


def test_width_control_config():
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


def test_delta_block_uses_the_unchecked_chunk_form_with_the_same_numbers(monkeypatch):
    """models.Block calls the delta rule through attention_kernels.delta_chunk_kernel: the same numbers as the
    checked delta_rule_attention (and as its recurrent form), but no input check runs in the forward pass
    (a check reads a tensor back to the host: a device sync on a GPU, a graph break under torch.compile)."""
    import torch.nn.functional as F

    import pavlovlab._checks as checks
    from pavlovlab.attention.forms import delta_rule_attention
    from pavlovlab.attention.kernels import delta_chunk_kernel

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
            import pavlovlab.attention.forms as attention
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


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.models.transformer``: one row ``(case, call, expect, fragment)`` a case."""
    model = Mo.TinyTransformer(Ta.vocab_size(4, 4), d_model=16, n_heads=2, d_head=8, seed=0)
    return [
        ("feature_map bogus", lambda: Mo.TinyTransformer(8, feature_map="bogus"), ValueError,
         "feature_map: expected one of"),
        ("tokens ≥ vocab", lambda: model(torch.tensor([[0, 1, 8]])), ValueError,
         "tokens: expected ids in [0, vocab_size"),
        ("negative token", lambda: model(torch.tensor([[0, -1]])), ValueError, "tokens: expected ids"),
        ("T = 0 forward", lambda: model(torch.zeros(2, 0, dtype=torch.long)).shape == (2, 0, 8), "ok", ""),
        ("float tokens", lambda: model(torch.zeros(1, 3)), TypeError, "tokens: expected a (N, T) long tensor"),
        ("Block(attention='nope')", lambda: Mo.Block(8, 1, 4, "nope", True, 2, "identity"), ValueError,
         "attention: expected one of"),
        ("Block(n_heads=0)", lambda: Mo.Block(8, 0, 4, "linear", True, 2, "identity"), ValueError,
         "n_heads: expected an integer >= 1"),
        ("count_parameters('model')", lambda: Mo.count_parameters("model"), TypeError,
         "model: expected a torch.nn.Module"),
        ("depth_width_configs(4, deep_layers=3)", lambda: Mo.depth_width_configs(4, deep_layers=3), ValueError,
         "deep_layers: expected a divisor of budget = 4"),
        ("depth_width_configs(0)", lambda: Mo.depth_width_configs(0), ValueError,
         "budget: expected an integer >= 1, got 0"),
        ("depth_width_configs(d_head=2.0)", lambda: Mo.depth_width_configs(4, d_head=2.0), TypeError,
         "d_head: expected an integer, got float"),
        ("depth_width_configs(deep_layers=0)", lambda: Mo.depth_width_configs(4, deep_layers=0), ValueError,
         "deep_layers: expected an integer >= 1, got 0"),
        ("TinyTransformer(n_layers=0)", lambda: Mo.TinyTransformer(8, n_layers=0), ValueError,
         "n_layers: expected an integer >= 1, got 0"),
        ("TinyTransformer(attention='nope')", lambda: Mo.TinyTransformer(8, attention="nope"), ValueError,
         "attention: expected one of"),
        ("TinyTransformer(seed=-1)", lambda: Mo.TinyTransformer(8, seed=-1), ValueError,
         "seed: expected an integer >= 0, got -1"),
        ("feature map of the wrong shape", lambda: Mo.TinyTransformer(8, d_model=8, n_heads=1, d_head=4,
                                                                      feature_map=lambda x: x[..., :2])(
            torch.zeros(1, 3, dtype=torch.long)), ValueError, "feature_map: expected the callable to return shape"),
        ("ids unchecked when asked", lambda: model(torch.tensor([[0, 1, 7]]), check_ids=False).shape == (1, 3, 8),
         "ok", ""),
        ("tokens a list", lambda: model([[0, 1]]), TypeError, "tokens: expected a (N, T) long tensor, got list"),
        ("tokens (T,)", lambda: model(torch.zeros(3, dtype=torch.long)), TypeError,
         "tokens: expected a (N, T) long tensor, got torch.int64 of shape (3,)"),
        ("Block(feature_map='nope')", lambda: Mo.Block(8, 1, 4, "linear", True, 2, "nope"), ValueError,
         "feature_map: expected one of"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
