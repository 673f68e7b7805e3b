"""runtime.test_utils (mxnet.test_utils): gradient checks of imperative functions (a
right gradient passes, a wrong one fails naming the input), and the smaller helpers
against their MXNet definitions."""

import os

import numpy as np
import pytest

import runtime as mx
from runtime import nd
from runtime import test_utils as tu


def test_check_numeric_gradient_passes_right_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4)), rng.random((3, 4))
    tu.check_numeric_gradient(lambda x, y: [nd.tanh(x) * y, nd.dot(x, y.T)], [a, b])
    tu.check_numeric_gradient(
        lambda data, weight: nd.FullyConnected(data, weight, num_hidden=2, no_bias=True),
        {"data": a, "weight": rng.random((2, 4))}, grad_nodes=["weight"])
    tu.check_numeric_gradient(nd.sigmoid, [nd.array(a)], dtype=np.float32)


def test_check_numeric_gradient_fails_wrong_gradients():
    # BlockGrad hides one of the two paths: the backward gradient is half the true one
    with pytest.raises(AssertionError, match="NUMERICAL_x and BACKWARD_x differ"):
        tu.check_numeric_gradient(lambda x: nd.BlockGrad(x) * x,
                                  {"x": np.array([0.5, 1.0, 2.0])})
    # only the input checked counts
    tu.check_numeric_gradient(lambda x, y: nd.BlockGrad(x) * y, [np.ones(2), np.ones(2)],
                              grad_nodes=[1])
    with pytest.raises(ValueError, match="grad_nodes must name inputs"):
        tu.check_numeric_gradient(nd.exp, [np.ones(2)], grad_nodes=["z"])
    with pytest.raises(TypeError, match="sym must be a callable"):
        tu.check_numeric_gradient("sym", [np.ones(2)])


def test_numeric_grad_is_the_projected_derivative():
    x = np.array([0.3, -1.2, 2.0])
    heads = [np.array([1.0, 2.0, 3.0])]
    g = tu.numeric_grad(lambda a: a * a * a, [x], heads, eps=1e-5)[0]
    np.testing.assert_allclose(g, 3 * x ** 2 * heads[0], rtol=1e-8)


def test_small_helpers():
    a = np.array([1.0, np.nan, 3.0])
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 5.0, np.nan]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(a, np.array([2.0, np.nan, 3.0]))
    x = nd.ones(3)
    assert tu.same_array(x, x[:]) and not tu.same_array(x, x.copy())
    assert x.asnumpy().tolist() == [1, 1, 1]                # restored
    arrs = tu.random_arrays((2, 3), (4,))
    assert [r.shape for r in arrs] == [(2, 3), (4,)] and arrs[0].dtype == np.float32
    assert sorted(tu.random_sample(list(range(5)), 5)) == list(range(5))
    assert len(set(tu.random_sample(list(range(10)), 4))) == 4
    d = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(d, (0, 2), True, np.sum),
                                  d.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(tu.np_reduce(d, -1, False, np.max), d.max(axis=-1))
    arr, (data, indices, indptr) = tu.rand_sparse_ndarray((5, 4), "csr", density=0.5)
    np.testing.assert_array_equal(arr.data.asnumpy(), data)
    assert arr.stype == "csr" and indptr[-1] == data.size
    rsp, (values, rows) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=0.5)
    np.testing.assert_array_equal(rsp.asnumpy()[rows], values)
    assert tu.list_gpus() == list(range(mx.num_gpus()))
    prev = tu.set_env_var("NDRT_TEST_UTILS_VAR", 3, default_val="unset")
    assert prev == "unset" and os.environ.pop("NDRT_TEST_UTILS_VAR") == "3"


def test_retry_and_discard_stderr():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3
    flaky()
    assert len(calls) == 3

    @tu.retry(2)
    def always():
        raise AssertionError("no")
    with pytest.raises(AssertionError, match="no"):
        always()
    with tu.discard_stderr():
        os.write(2, b"this line goes to /dev/null\n")
