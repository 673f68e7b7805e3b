"""The mixed-precision operators (amp_cast, amp_multicast, all_finite, multi_all_finite)
against NumPy casts and np.isfinite, imperatively and in a bound graph."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd


def test_amp_cast_casts_floats_only_and_rounds_as_numpy():
    values = np.array([1.0 + 2 ** -11, 65504.0, 7e4, -1e-8, np.nan], np.float32)
    got = nd.amp_cast(nd.array(values), dtype="float16")
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got.asnumpy(), want)
    assert np.isinf(got.asnumpy()[2])
    ints = nd.array([3, -4], dtype="int32")
    kept = nd.amp_cast(ints, dtype="float16")          # not a float: left as it is
    assert kept.dtype == np.int32 and kept.asnumpy().tolist() == [3, -4]


def test_amp_cast_gradient_returns_to_the_input_dtype():
    x = nd.array([0.5, -2.0, 3.0], dtype="float16")
    x.attach_grad()
    with autograd.record():
        y = nd.amp_cast(x, dtype="float32") * nd.array([1.0, 2.0, 3.0])
    y.backward()
    assert x.grad.dtype == np.float16
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 2, 3])


def test_amp_multicast_widens_or_narrows_the_floats():
    h = nd.array([1.5, 2.0], dtype="float16")
    f = nd.array([0.25, 4.0], dtype="float32")
    i = nd.array([7, 8], dtype="int32")
    wide = nd.amp_multicast(h, f, i, num_outputs=3)
    assert [o.dtype for o in wide] == [np.float32, np.float32, np.int32]
    np.testing.assert_array_equal(wide[0].asnumpy(), h.asnumpy().astype(np.float32))
    narrow = nd.amp_multicast(h, f, num_outputs=2, cast_narrow=True)
    assert [o.dtype for o in narrow] == [np.float16, np.float16]
    np.testing.assert_array_equal(narrow[1].asnumpy(), f.asnumpy().astype(np.float16))
    with pytest.raises(ValueError, match="num_outputs must equal the number of inputs 2"):
        nd.amp_multicast(h, f, num_outputs=3)
    a, b = mx.sym.Variable("a", dtype="float16"), mx.sym.Variable("b", dtype="float64")
    types = mx.sym.amp_multicast(a, b, num_outputs=2).infer_type()[1]
    assert types == [np.float64, np.float64]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_all_finite_flags_nan_and_infinities(dtype):
    for bad in (np.nan, np.inf, -np.inf):
        x = np.arange(6.0).reshape(2, 3)
        assert nd.all_finite(nd.array(x, dtype=dtype)).asnumpy().tolist() == [1.0]
        x[1, 2] = bad
        flag = nd.all_finite(nd.array(x, dtype=dtype))
        assert flag.dtype == np.float32 and flag.shape == (1,)
        assert flag.asnumpy().tolist() == [float(np.isfinite(x).all())] == [0.0]
    ok, bad = nd.ones((2, 2)), nd.array([1.0, np.inf])
    assert nd.multi_all_finite(ok, ok, num_arrays=2).asnumpy().tolist() == [1.0]
    assert nd.multi_all_finite(ok, bad, num_arrays=2).asnumpy().tolist() == [0.0]


def test_finiteness_checks_refuse_what_they_cannot_honour():
    x = nd.ones(3)
    with pytest.raises(ValueError, match="all_finite: init_output must be True"):
        nd.all_finite(x, init_output=False)
    with pytest.raises(ValueError, match="num_arrays must equal the number of arrays 2"):
        nd.multi_all_finite(x, x)
    with pytest.raises(ValueError, match="multi_all_finite: init_output must be True"):
        nd.multi_all_finite(x, init_output=False)


def test_all_finite_in_a_bound_graph():
    data = mx.sym.Variable("data")
    exe = mx.sym.all_finite(data).bind(mx.cpu(), {"data": nd.array([[np.nan, 0.0]])})
    assert exe.forward()[0].asnumpy().tolist() == [0.0]
