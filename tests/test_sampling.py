"""Tests of pavlovlab.sampling: the key and value distributions, drawn on the CPU and then moved."""

import math

import pytest
import torch
from badinput import FAST, check, parametrize
from hypothesis import given
from hypothesis import strategies as st

from pavlovlab import sampling as S


@pytest.mark.parametrize("kind", S.KINDS)
def test_random_keys_shapes_norms_and_devices(kind, device, dtype):
    K = S.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), device=device, dtype=dtype)
    assert K.shape == (3, 40, 16) and K.dtype == dtype and K.device.type == device.type
    ref = S.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), dtype=dtype)
    torch.testing.assert_close(K.cpu(), ref)  # drawn on the CPU generator, then moved
    norms2 = K.pow(2).sum(-1)
    if kind == "gaussian":
        assert abs(norms2.mean().item() - 1) < 0.1
    else:
        torch.testing.assert_close(norms2, torch.ones_like(norms2), rtol=1e-5, atol=1e-5)
    if kind == "binary":
        torch.testing.assert_close(K.abs(), torch.full_like(K, 0.25))


def test_orthogonal_keys_form_orthonormal_frames(gen):
    K = S.random_keys(2, 20, d=8, kind="orthogonal", generator=gen, dtype=torch.float64)
    G = K @ K.mT
    for a in range(0, 16, 8):  # the two full frames: exactly orthonormal
        torch.testing.assert_close(G[:, a:a + 8, a:a + 8], torch.eye(8, dtype=torch.float64).expand(2, 8, 8))
    assert G[:, :8, 8:16].abs().max() > 0.1  # independent frames are not orthogonal to each other


def test_random_values_and_single_shapes(gen):
    assert S.random_values(5, d=7, generator=gen).shape == (5, 7)
    assert S.random_keys(d=4, kind="orthogonal", generator=gen).shape == (4,)
    assert S.random_keys((2, 3), d=4, generator=gen).shape == (2, 3, 4)


@pytest.mark.parametrize("kwargs, err, words", [
    (dict(d=0), ValueError, "d: expected an integer >= 1"),
    (dict(d=4, kind="uniform"), ValueError, "kind: expected one of"),
    (dict(d=4, dtype=torch.int64), TypeError, "dtype"),
    (dict(d=4.0), TypeError, "d: expected an integer"),
    (dict(d=4, generator=0), TypeError, "generator"),
])
def test_random_keys_rejects_bad_input(kwargs, err, words):
    with pytest.raises(err, match=words):
        S.random_keys(3, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        S.random_keys(-1, d=3)


@pytest.mark.slow
def test_unit_sphere_overlap_has_variance_exactly_one_over_d_k():
    # E[(k_i·k_j)^2] = k_jᵀ E[k_i k_iᵀ] k_j = 1/d_k for unit keys (isotropy); checked to 4 standard errors
    for d in (4, 16, 64):
        K = S.random_keys(200_000, 2, d=d, kind="sphere", generator=torch.Generator().manual_seed(d),
                          dtype=torch.float64)
        sq = (K[:, 0] * K[:, 1]).sum(-1).square()
        assert abs(sq.mean().item() - 1 / d) < 4 * sq.std().item() / math.sqrt(len(sq))


# ------------------------------------------------------------------------------- the key samplers
DT = torch.float64
N_PAIRS = 400_000


@pytest.mark.parametrize("kind", ["gaussian", "sphere", "binary"])
def test_overlap_second_moment_is_one_over_d(kind):
    """E[(k_i·k_j)²] = 1/d exactly for independent keys of every kind (E‖k‖² = 1, isotropic). With
    400k pairs the standard error is under 0.4 %, so a variance of 1/(d+1) (11 % lower at d = 8) fails."""
    d = 8
    K = S.random_keys(N_PAIRS, 2, d=d, kind=kind, generator=torch.Generator().manual_seed(7), dtype=DT)
    m2 = ((K[:, 0] * K[:, 1]).sum(-1) ** 2).mean().item()
    assert abs(m2 * d - 1) < 0.02, f"{kind}: E[(k_i·k_j)²]·d = {m2 * d:.4f}"
    assert abs(m2 * (d + 1) - 1) > 0.05


def test_sphere_keys_have_unit_norm_and_binary_keys_exact_entries():
    K = S.random_keys(1000, d=13, kind="sphere", generator=torch.Generator().manual_seed(0), dtype=DT)
    torch.testing.assert_close(K.norm(dim=-1), torch.ones(1000, dtype=DT), rtol=0, atol=1e-12)
    B = S.random_keys(1000, d=13, kind="binary", generator=torch.Generator().manual_seed(0), dtype=DT)
    torch.testing.assert_close(B.abs(), torch.full_like(B, 1 / math.sqrt(13)), rtol=0, atol=1e-12)
    assert 0.45 < (B > 0).double().mean().item() < 0.55


def test_orthogonal_keys_are_orthonormal_frames():
    K = S.random_keys(5, 12, d=6, kind="orthogonal", generator=torch.Generator().manual_seed(0), dtype=DT)
    for frame in (K[:, :6], K[:, 6:]):
        torch.testing.assert_close(frame @ frame.mT, torch.eye(6, dtype=DT).expand(5, 6, 6), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------------- bad input


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.sampling``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("random_keys dtype string", lambda: S.random_keys(2, d=3, dtype="float64").dtype == torch.float64, "ok", ""),
        ("random_keys dtype long", lambda: S.random_keys(2, d=3, dtype=torch.long), TypeError, "dtype:"),
        ("random_keys kind typo", lambda: S.random_keys(2, d=3, kind="normal"), ValueError, "kind: expected one of"),
        ("random_keys(3, d=4, device='tpu')", lambda: S.random_keys(3, d=4, device="tpu"), ValueError,
         "device: expected a device name"),
        ("random_keys(2**40, d=2**20)", lambda: S.random_keys(2**40, d=2**20), ValueError,
         "shape: (*shape, d) = 1.153e+18 float32 entries"),
        ("random_keys(-1, d=4)", lambda: S.random_keys(-1, d=4), ValueError, "shape[0]: expected an integer >= 0"),
        ("random_keys(3, d=4, dtype='float64') (accepted by contract)",
         lambda: S.random_keys(3, d=4, dtype="float64").dtype == torch.float64, "ok", ""),
        ("random_values(3, d=0)", lambda: S.random_values(3, d=0), ValueError, "d: expected an integer >= 1"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


@FAST
@given(shape=st.lists(st.integers(-2, 3), max_size=2), d=st.integers(-1, 3),
       device=st.sampled_from([None, "cpu", "gpu", "tpu"]), kind=st.sampled_from(["sphere", "normal"]))
def test_property_sampling_names_the_argument(shape, d, device, kind):
    try:
        x = S.random_keys(*shape, d=d, kind=kind, device=device)
    except (ValueError, TypeError) as e:
        assert str(e).split(":")[0].split("[")[0] in {"shape", "d", "kind", "device"}, str(e)
        return
    assert x.shape == (*shape, d)
