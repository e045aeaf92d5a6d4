"""The checkers of notebook 03 (and the warm-up of 00): right answers pass, wrong ones fail, stubs are
greeted kindly, and nothing raises."""

import pytest
import torch

import pavlovlab as pl
from pavlovlab.exercises import attention as ex


def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise IndexError("index 3 is out of bounds")


# --- correct answers, written the way a learner would ------------------------------------------

def dot_ok(bell, test):
    return torch.dot(bell, test)


def recurrent_ok(q, k, v):
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    outs = []
    for t in range(q.shape[0]):
        S = S + torch.outer(v[t], k[t])
        outs.append(S @ q[t])
    return torch.stack(outs)


def inter_ok(q_c, k_c, v_c, S):
    return q_c @ S.T, S + v_c.T @ k_c


# --- typical mistakes ----------------------------------------------------------------------------

def dot_wrong(bell, test):
    return (bell * test).mean()


def recurrent_read_before_write(q, k, v):  # reads S_{t-1} q_t: misses the current pair
    S = torch.zeros(v.shape[-1], k.shape[-1], dtype=q.dtype)
    outs = []
    for t in range(q.shape[0]):
        outs.append(S @ q[t])
        S = S + torch.outer(v[t], k[t])
    return torch.stack(outs)


def recurrent_overwrites(q, k, v):  # S = v_t k_tᵀ: forgets every earlier pair
    outs = [torch.outer(v[t], k[t]) @ q[t] for t in range(q.shape[0])]
    return torch.stack(outs)


def inter_forgets_state(q_c, k_c, v_c, S):
    return q_c @ S.T, v_c.T @ k_c


def inter_single(q_c, k_c, v_c, S):
    return q_c @ S.T


CASES = [
    (ex.check_dot_product, dot_ok, [dot_wrong]),
    (ex.check_recurrent, recurrent_ok, [recurrent_read_before_write, recurrent_overwrites]),
    (ex.check_inter_chunk, inter_ok, [inter_forgets_state, inter_single]),
]


@pytest.mark.parametrize("check, right, wrongs", CASES, ids=["dot", "recurrent", "inter_chunk"])
def test_correct_passes(check, right, wrongs, capsys):
    assert check(right) is True
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("check, right, wrongs", CASES, ids=["dot", "recurrent", "inter_chunk"])
def test_wrong_fails_with_hint(check, right, wrongs, capsys):
    for wrong in wrongs:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert "❌" in out and "Hint:" in out


@pytest.mark.parametrize("check, right, wrongs", CASES, ids=["dot", "recurrent", "inter_chunk"])
def test_stub_and_crash_never_raise(check, right, wrongs, capsys):
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    assert check(crash) is False
    out = capsys.readouterr().out
    assert "IndexError" in out and "Traceback" not in out
    assert check(None) is False  # not even a function
    assert "expected a function" in capsys.readouterr().out


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
        inter, S_new = ex.inter_chunk_reference(qc, kc, vc, S)
        outs.append((qc @ kc.T).tril() @ vc + inter)
        S = S_new
    torch.testing.assert_close(torch.cat(outs), pl.linear_attention(q, k, v, mode="recurrent"))


def test_recurrent_reference_matches_circuit(gen):
    q, k, v = (torch.randn(7, d, generator=gen, dtype=torch.float64) for d in (5, 5, 2))
    mem = pl.AssociativeMemory(5, 2, dtype=torch.float64)
    torch.testing.assert_close(ex.recurrent_reference(q, k, v), mem.run(k, v, q))
    torch.testing.assert_close(ex.dot_product_reference(q[0], k[0]), torch.dot(q[0], k[0]))
