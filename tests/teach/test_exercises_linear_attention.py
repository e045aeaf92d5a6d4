"""The checkers of notebook 03: right answers pass (float32 and float64), typical mistakes fail with a hint
that gives nothing away, stubs are greeted kindly, nothing raises; the operation counter agrees with
PyTorch's own FlopCounterMode and with the closed-form counts."""

import math

import pytest
import torch

import pavlovlab as pl
from pavlovlab.teach.exercises import linear_attention as attention

ex = attention
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""




def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise IndexError("index 3 is out of bounds")


# --- correct answers, written the way a learner would ------------------------------------------

def recurrent_ok(q, k, v):
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    outs = []
    for t in range(q.shape[0]):
        S = S + torch.outer(v[t], k[t])
        outs.append(S @ q[t])
    return torch.stack(outs)


def recurrent_float32_memory(q, k, v):  # S in float32 whatever the inputs: promoted on the first write
    S = torch.zeros(v.shape[-1], k.shape[-1])
    outs = []
    for t in range(q.shape[0]):
        S = S + torch.outer(v[t], k[t])
        outs.append(S @ q[t])
    return torch.stack(outs)


def recurrent_in_float32(q, k, v):  # computes everything in float32: less precise than float64 inputs ask for
    return recurrent_ok(q.float(), k.float(), v.float())


def inter_ok(q_c, k_c, v_c, S):
    return q_c @ S.T, S + v_c.T @ k_c


# --- typical mistakes ----------------------------------------------------------------------------

def recurrent_read_before_write(q, k, v):  # reads S_{t-1} q_t: misses the current pair
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    outs = []
    for t in range(q.shape[0]):
        outs.append(S @ q[t])
        S = S + torch.outer(v[t], k[t])
    return torch.stack(outs)


def recurrent_read_before_write_float32(q, k, v):  # the case: float32 S read before any write
    S = torch.zeros(v.shape[-1], k.shape[-1])
    outs = []
    for t in range(q.shape[0]):
        outs.append(S @ q[t])
        S = S + torch.outer(v[t], k[t])
    return torch.stack(outs)


def recurrent_overwrites(q, k, v):  # S = v_t k_tᵀ: forgets every earlier pair
    return torch.stack([torch.outer(v[t], k[t]) @ q[t] for t in range(q.shape[0])])


def inter_forgets_state(q_c, k_c, v_c, S):
    return q_c @ S.T, v_c.T @ k_c


def inter_single(q_c, k_c, v_c, S):
    return q_c @ S.T


CASES = [
    (ex.check_recurrent, [recurrent_ok, recurrent_float32_memory],
     [recurrent_read_before_write, recurrent_overwrites, recurrent_read_before_write_float32,
      recurrent_in_float32]),  # float32 answers to float64 inputs lose the precision the task asks for
    (ex.check_inter_chunk, [inter_ok], [inter_forgets_state, inter_single]),
]


@pytest.mark.parametrize("check, rights, wrongs", CASES, ids=["recurrent", "inter_chunk"])
def test_correct_passes(check, rights, wrongs, capsys):
    for right in rights:
        assert check(right) is True, capsys.readouterr().out
        assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("check, rights, wrongs", CASES, ids=["recurrent", "inter_chunk"])
def test_wrong_fails_with_hint(check, rights, wrongs, capsys):
    for wrong in wrongs:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert "❌" in out and "Hint:" in out and "ex.hint(" in out


def test_float32_memory_read_before_write_is_explained(capsys):
    """The issue's misleading case: the first failing case is float32, so the learner sees wrong values
    (not a dtype error); on float64 cases a dtype clash is explained in words."""
    ex.check_recurrent(recurrent_read_before_write_float32)
    out = capsys.readouterr().out
    assert "float32 inputs" in out and "addmv" not in out

    def clash(q, k, v):
        return torch.zeros(v.shape[-1], k.shape[-1], dtype=torch.float16) @ q[0]

    ex.check_recurrent(clash)
    assert "different dtypes" in capsys.readouterr().out


@pytest.mark.parametrize("check, rights, wrongs", CASES, ids=["recurrent", "inter_chunk"])
def test_stub_and_crash_never_raise(check, rights, wrongs, capsys):
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    assert check(crash) is False
    out = capsys.readouterr().out
    assert "IndexError" in out and "Traceback" not in out
    assert check(None) is False
    assert "expected a function" in capsys.readouterr().out


def test_expected_numbers_only_after_a_first_attempt(capsys):
    ex.check_recurrent(recurrent_overwrites)
    first = capsys.readouterr().out
    ex.check_recurrent(recurrent_overwrites)
    again = capsys.readouterr().out
    ex.check_recurrent(lambda q, k, v: 2 * recurrent_overwrites(q, k, v))
    second = capsys.readouterr().out
    assert "expected [" not in first and "expected [" not in again and "expected [" not in second


def test_inter_chunk_reference_is_the_carry(gen):
    """The reference (built from the package) equals Q Sᵀ and S + Vᵀ K, and stitching chunks with it
    reproduces linear attention over the whole sequence."""
    q, k, v = (torch.randn(10, d, generator=gen, dtype=torch.float64) for d in (4, 4, 3))
    S = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    inter, S_next = ex.inter_chunk_reference(q, k, v, S)
    torch.testing.assert_close(inter, q @ S.T)
    torch.testing.assert_close(S_next, S + v.T @ k)
    C, S, outs = 4, torch.zeros(3, 4, dtype=torch.float64), []
    for c in range(0, 10, C):
        qc, kc, vc = q[c:c + C], k[c:c + C], v[c:c + C]
        inter, S = ex.inter_chunk_reference(qc, kc, vc, S)
        outs.append((qc @ kc.T).tril() @ vc + inter)
    torch.testing.assert_close(torch.cat(outs), pl.linear_attention(q, k, v, mode="recurrent"))


def test_recurrent_reference_matches_circuit(gen):
    q, k, v = (torch.randn(7, d, generator=gen, dtype=torch.float64) for d in (5, 5, 2))
    mem = pl.AssociativeMemory(5, 2, dtype=torch.float64)
    torch.testing.assert_close(ex.recurrent_reference(q, k, v), mem.run(k, v, q))


# --- Exercise 3: the operation counts ------------------------------------------------------------

def test_flop_counter_agrees_with_torch_flop_counter_mode():
    """An independent count: PyTorch's FlopCounterMode on the same calls (real tensors)."""
    from torch.utils.flop_counter import FlopCounterMode

    for T in (5, 100, 130):
        q = torch.randn(2, T, 12)
        v = torch.randn(2, T, 7)
        for fn, kw in ((pl.softmax_attention, {}), (pl.linear_attention, {"mode": "parallel"}),
                       (pl.linear_attention, {"mode": "chunk", "chunk_size": 16})):
            with FlopCounterMode(display=False) as ref:
                fn(q, q, v, **kw)
            assert ex.count_flops(fn, q, q, v, **kw) == ref.get_total_flops()


def test_flop_sweep_matches_closed_form_counts():
    """Chunkwise: 2 T (C (d_k + d_v) + 2 d_k d_v) when C divides T; softmax: 2 T² (d_k + d_v)."""
    Ts = [128, 256, 1024]
    got = ex.flop_sweep(Ts, forms=("softmax", "chunk"), d_k=32, d_v=16, chunk_size=64)
    assert got["chunk"] == [2 * T * (64 * 48 + 2 * 32 * 16) for T in Ts]
    assert got["softmax"] == [2 * T * T * 48 for T in Ts]
    assert ex.loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0)


def test_cost_checker_judges_the_result(capsys):
    Ts = [128, 256, 512, 1024]
    good = ex.flop_sweep(Ts, forms=("parallel", "chunk"))
    assert ex.check_cost_scaling(Ts, good) is True
    capsys.readouterr()
    small = [8, 16, 32, 64]                       # one chunk: the chunkwise count is constant
    assert ex.check_cost_scaling(small, ex.flop_sweep(small, forms=("parallel", "chunk"))) is False
    out = capsys.readouterr().out
    assert "❌" in out and "chunk" in out
    swapped = {"parallel": good["chunk"], "chunk": good["parallel"]}
    assert ex.check_cost_scaling(Ts, swapped) is False
    for bad in (None, {"parallel": [1, 2]}, {"parallel": [math.nan] * 4, "chunk": [1] * 4}):
        assert ex.check_cost_scaling(Ts, bad) is False
    assert "Traceback" not in capsys.readouterr().out


def test_counts_from_the_formulas_are_refused_and_a_batch_of_sequences_is_fine(capsys):
    """The closed-form costs are off from the code's counts (the parallel form's code also does work that grows
    like T), so formula values returned as counts are caught; counts of several sequences per call are the
    code's counts times one whole factor, and pass."""
    Ts = [128, 256, 512, 1024, 2048]
    formulas = {"parallel": [2 * T**2 * 64 for T in Ts], "chunk": [2 * T * (64 * 64 + 2 * 32 * 32) for T in Ts]}
    attention.session()
    assert not attention.check_cost_scaling(Ts, formulas)
    assert "counted on the calls themselves" in capsys.readouterr().out
    code = attention.flop_sweep(Ts, forms=("parallel", "chunk"))
    attention.session()
    assert attention.check_cost_scaling(Ts, {m: [3 * c for c in counts] for m, counts in code.items()})
    assert "(3 sequences per call)" in capsys.readouterr().out
    assert isinstance(attention._judge_cost((Ts, code)), attention.Verdict)
