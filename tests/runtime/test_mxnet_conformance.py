"""Differences from MXNet 1.x found by exercising ``runtime.nd`` as MXNet's documentation
and unit tests (tests/python/unittest/test_ndarray.py, test_autograd.py,
test_sparse_ndarray.py, ...) do; each test holds MXNet's documented result."""

import numpy as np

from runtime import autograd, nd


def test_autograd_grad_returns_a_list_also_for_one_variable():
    # MXNet 1.x autograd.grad: `variables` NDArray -> [variables]; the result is always a
    # list, so test_higher_order_grad.py's grad(heads=y, variables=x, ...)[0] is dx
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
        dx = autograd.grad(heads=y, variables=x, create_graph=True, retain_graph=True)[0]
    assert dx.shape == (3,)
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 12.0, 27.0])
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 12.0, 18.0])
