"""GridGenerator against a per-pixel NumPy reference of MXNet's documented grids, and its
gradient against float64 central differences."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.test_utils import check_numeric_gradient


def _affine_reference(theta, h, w):
    out = np.empty((len(theta), 2, h, w))
    for n, t in enumerate(theta.reshape(-1, 2, 3)):
        for i in range(h):
            for j in range(w):
                x, y = -1 + 2 * j / (w - 1), -1 + 2 * i / (h - 1)
                out[n, :, i, j] = t @ [x, y, 1.0]
    return out


def test_affine_grid_applies_each_matrix_to_the_normalised_pixels():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2, 6))
    got = nd.GridGenerator(nd.array(theta, dtype="float64"), transform_type="affine",
                           target_shape=(3, 5))
    assert got.shape == (2, 2, 3, 5)
    np.testing.assert_allclose(got.asnumpy(), _affine_reference(theta, 3, 5), rtol=1e-12)
    identity = nd.GridGenerator(nd.array([[1, 0, 0, 0, 1, 0]]), transform_type="affine",
                                target_shape=(2, 3))
    np.testing.assert_allclose(identity.asnumpy()[0, 0], [[-1, 0, 1], [-1, 0, 1]])
    np.testing.assert_allclose(identity.asnumpy()[0, 1], [[-1, -1, -1], [1, 1, 1]])


def test_warp_grid_adds_the_flow_in_pixels():
    rng = np.random.default_rng(1)
    flow = rng.normal(size=(2, 2, 4, 3))
    got = nd.GridGenerator(nd.array(flow, dtype="float64"), transform_type="warp").asnumpy()
    cols, rows = np.meshgrid(np.arange(3), np.arange(4))
    np.testing.assert_allclose(got[:, 0], (flow[:, 0] + cols) / 1.0 - 1, rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], (flow[:, 1] + rows) / 1.5 - 1, rtol=1e-12)


@pytest.mark.parametrize("kind", ["affine", "warp"])
def test_grid_generator_gradient(kind):
    rng = np.random.default_rng(2)
    data = rng.normal(size=(2, 6) if kind == "affine" else (2, 2, 3, 4))
    check_numeric_gradient(lambda d: nd.GridGenerator(d, transform_type=kind,
                                                      target_shape=(3, 4)), [data])
    sym = mx.sym.GridGenerator(mx.sym.Variable("d"), transform_type=kind, target_shape=(3, 4))
    check_numeric_gradient(sym, [data])
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = nd.GridGenerator(x, transform_type=kind, target_shape=(3, 4))
    y.backward(nd.ones_like(y))
    assert x.grad.shape == x.shape


def test_grid_generator_refuses_bad_shapes():
    with pytest.raises(ValueError, match=r"affine data must be \(N, 6\) \(got \(2, 5\)\)"):
        nd.GridGenerator(nd.ones((2, 5)), transform_type="affine", target_shape=(3, 3))
    with pytest.raises(ValueError, match="target_shape must have a height and width of at "
                                         r"least 2 \(got \(1, 4\)\)"):
        nd.GridGenerator(nd.ones((1, 6)), transform_type="affine", target_shape=(1, 4))
    with pytest.raises(ValueError, match=r"flow field \(N, 2, H, W\)"):
        nd.GridGenerator(nd.ones((1, 3, 4, 4)), transform_type="warp")
    with pytest.raises(ValueError, match="transform_type"):
        nd.GridGenerator(nd.ones((1, 6)), transform_type="perspective", target_shape=(3, 3))
