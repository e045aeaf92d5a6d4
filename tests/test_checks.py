"""``pavlovlab._checks``: the types accepted by contract (the list in its docstring) are each converted as documented
and give exactly the result of the canonical type, the near misses are refused by name; the fast finiteness test
(``all_finite``) is exact."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from badinput import randn

from pavlovlab._checks import check_device, check_float_dtype, check_int, check_real, check_shape
from pavlovlab.attention import forms as A
from pavlovlab.conditioning import learning as C
from pavlovlab.conditioning import trials as Tt


def _qkv(T=9, d=4):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(T, d, generator=g), torch.randn(T, d, generator=g), torch.randn(T, 3, generator=g))


def test_numpy_integers_are_integers():
    q, k, v = _qkv()
    assert torch.equal(A.linear_attention(q, k, v, chunk_size=np.int64(4)), A.linear_attention(q, k, v, chunk_size=4))
    assert check_int("n", np.int32(3)) == 3 and type(check_int("n", np.int64(3))) is int
    for bad in (4.0, True, "4", np.float64(4)):
        with pytest.raises(TypeError, match="chunk_size: expected an integer"):
            A.linear_attention(q, k, v, chunk_size=bad)


def test_one_element_tensors_and_numpy_floats_are_numbers():
    q, k, v = _qkv()
    assert torch.equal(A.softmax_attention(q, k, v, scale=torch.tensor(2.0)), A.softmax_attention(q, k, v, scale=2.0))
    cs, us, _ = Tt.acquisition(10)
    assert torch.equal(C.rescorla_wagner(cs, us, alpha=np.float32(0.25)), C.rescorla_wagner(cs, us, alpha=0.25))
    assert check_real("x", np.float32(0.5)) == 0.5 and type(check_real("x", torch.tensor([0.5]))) is float
    with pytest.raises(TypeError, match="that requires grad"):
        check_real("scale", torch.tensor(2.0, requires_grad=True))
    with pytest.raises(TypeError, match=r"got a tensor of shape \(2,\)"):
        A.softmax_attention(q, k, v, scale=torch.tensor([2.0, 3.0]))


def test_dtype_names():
    assert check_float_dtype("dtype", "float32") is torch.float32
    assert check_float_dtype("dtype", "torch.float64") is torch.float64
    assert Tt.acquisition(3, dtype="float64").cs.dtype == torch.float64
    assert check_float_dtype("dtype", "double") is torch.float64   # torch's own aliases are its names too
    for bad in ("int64", "f32", "float31", torch.long, 32):
        with pytest.raises(TypeError, match="dtype: expected a floating-point dtype"):
            check_float_dtype("dtype", bad, allow_none=False)


def test_device_names():
    assert check_device("device", "cpu") == torch.device("cpu") and check_device("device", None) is None
    assert check_device("device", torch.device("cpu")) == torch.device("cpu")
    for bad in ("gpu0", "tpu", "nope", ""):
        with pytest.raises(ValueError, match="device: expected a device name"):
            check_device("device", bad)
    with pytest.raises(TypeError, match=r"device: expected a torch\.device"):
        check_device("device", 0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            check_device("device", "cuda")


def test_shapes():
    assert check_shape("batch_shape", [2, np.int64(3)]) == (2, 3) == check_shape("batch_shape", torch.Size([2, 3]))
    assert check_shape("batch_shape", ()) == ()
    with pytest.raises(TypeError, match="batch_shape: expected a tuple of sizes"):
        check_shape("batch_shape", 3)
    with pytest.raises(ValueError, match=r"batch_shape\[0\]: expected an integer >= 1, got -2"):
        check_shape("batch_shape", (-2,))


# ----------------------------------------------------------------------------- the fast finiteness test is exact
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_all_finite_sees_one_bad_entry_anywhere(dtype, bad):
    """``all_finite`` decides by the sum first: one NaN/inf at any position (first, middle, last, strided)
    must still be found."""
    from pavlovlab._checks import all_finite

    x = randn(3, 5, 7).to(dtype)
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
