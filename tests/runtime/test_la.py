"""``nd.linalg``: MXNet's documented examples, NumPy references, batching, gradients
(the generic suites of test_all_ops.py and test_autograd_ops.py check requests, failures
and first-order gradients from tests/runtime/op_samples_la.py)."""

import numpy as np
import pytest

from runtime import autograd, nd
from tests.runtime.op_samples import uniform


def spd(n, batch=(), seed=0):
    """Symmetric positive definite matrices, well conditioned."""
    a = uniform(batch + (n, n), seed=seed)
    return np.matmul(a, np.swapaxes(a, -1, -2)) + n * np.eye(n)


def factor(n, batch=(), seed=0):
    """A triangular factor's values with a diagonal in [1, 2] (the other triangle is noise
    the ops must not read)."""
    a = uniform(batch + (n, n), seed=seed)
    idx = np.arange(n)
    a[..., idx, idx] = 1.0 + np.abs(a[..., idx, idx]) / 2
    return a


def invertible(n, batch=(), seed=0):
    return uniform(batch + (n, n), seed=seed) + 3 * np.eye(n)

L = nd.linalg


def arr(x):
    return nd.array(np.asarray(x, dtype=np.float64), dtype="float64")


def close(x, want):
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6, atol=1e-8)


def test_mxnet_documented_examples():
    a = arr([[1.0, 1.0], [1.0, 1.0]])
    b = arr([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    c = arr([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    close(L.gemm(a, b, c, transpose_b=True, alpha=2.0, beta=10.0), [[14.0] * 3] * 2)
    close(L.gemm2(a, b, transpose_b=True, alpha=2.0), [[4.0] * 3] * 2)
    close(L.potrf(arr([[4.0, 2.0], [2.0, 3.0]])), [[2.0, 0], [1.0, 1.41421356]])
    close(L.potri(arr([[2.0, 0], [0.5, 2.0]])), [[0.265625, -0.0625], [-0.0625, 0.25]])
    close(L.trmm(arr([[1.0, 0], [1.0, 1.0]]), arr([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
                 alpha=2.0), [[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]])
    close(L.trsm(arr([[1.0, 0], [1.0, 1.0]]), arr([[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]]),
                 alpha=0.5), [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    close(L.sumlogdiag(arr([[1.0, 1.0], [1.0, 7.0]])), [1.9459101])
    close(L.syrk(arr([[1.0, 2.0], [3.0, 4.0]]), alpha=2.0), [[10.0, 22.0], [22.0, 50.0]])
    close(L.det(arr([[1.0, 4.0], [2.0, 3.0]])), [-5.0])
    sign, logdet = L.slogdet(arr([[[2.0, 3.0], [1.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]],
                                  [[1.0, 2.0], [4.0, 3.0]]]))
    close(sign, [1.0, 0.0, -1.0])
    np.testing.assert_allclose(logdet.asnumpy(), [1.609438, -np.inf, 1.609438], rtol=1e-6)
    close(L.inverse(arr([[1.0, 4.0], [2.0, 3.0]])), [[-0.6, 0.8], [0.4, -0.2]])


@pytest.mark.parametrize("lower", [True, False])
def test_batched_factorisations_against_numpy(lower):
    a = spd(4, (2, 3), seed=3)
    f = L.potrf(arr(a), lower=lower).asnumpy()
    want = np.linalg.cholesky(a)
    np.testing.assert_allclose(f, want if lower else np.swapaxes(want, -1, -2), rtol=1e-10)
    np.testing.assert_allclose(L.potri(arr(f), lower=lower).asnumpy(), np.linalg.inv(a),
                               rtol=1e-8)
    # 2 * sumlogdiag(L) is log det A
    np.testing.assert_allclose(2 * L.sumlogdiag(arr(f)).asnumpy(), np.linalg.slogdet(a)[1],
                               rtol=1e-10)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("rightside", [False, True])
@pytest.mark.parametrize("lower", [False, True])
def test_triangular_ops_read_one_triangle(transpose, rightside, lower):
    a = factor(3, (2,), seed=7)
    b = np.random.default_rng(1).standard_normal((2, 3, 3))
    m = np.tril(a) if lower else np.triu(a)
    m = np.swapaxes(m, -1, -2) if transpose else m
    kw = dict(transpose=transpose, rightside=rightside, lower=lower, alpha=0.5)
    prod = L.trmm(arr(a), arr(b), **kw).asnumpy()
    np.testing.assert_allclose(prod, 0.5 * (b @ m if rightside else m @ b), rtol=1e-10)
    x = L.trsm(arr(a), arr(b), **kw).asnumpy()
    np.testing.assert_allclose(x @ m if rightside else m @ x, 0.5 * b, rtol=1e-8, atol=1e-10)


def test_potrf_gradient_matches_mxnet_along_symmetric_directions():
    """MXNet's potrf gradient is symmetric; ours is the gradient of the lower-triangle
    read.  Their symmetric parts agree, so every symmetric perturbation sees the same
    derivative; checked against central differences in float64."""
    a = spd(3, seed=2)
    head = np.random.default_rng(0).standard_normal((3, 3))
    x = arr(a)
    x.attach_grad()
    with autograd.record():
        y = L.potrf(x)
    y.backward(arr(head))
    g = x.grad.asnumpy()
    np.testing.assert_array_equal(np.triu(g, 1), 0)
    for seed in range(3):
        e = np.random.default_rng(seed + 10).standard_normal((3, 3))
        e = e + e.T
        eps = 1e-6
        fd = np.sum((np.linalg.cholesky(a + eps * e) - np.linalg.cholesky(a - eps * e))
                    * head) / (2 * eps)
        sym = (g + g.T) / 2
        assert np.isclose(np.sum(sym * e), fd, rtol=1e-6)


def test_second_order_through_gemm2_and_inverse():
    a = invertible(3, seed=4)
    x = arr(a)
    x.attach_grad()
    with autograd.record():
        (g,) = autograd.grad(L.inverse(x).sum(), [x], create_graph=True)
        z = (g * g).sum()
    z.backward()
    # reference: central differences of the first-order gradient, f(A) = sum(inv(A))
    def first(m):
        inv = np.linalg.inv(m)
        return -inv.T @ np.ones((3, 3)) @ inv.T
    def second(m):
        return np.sum(first(m) ** 2)
    eps = 1e-6
    v = np.random.default_rng(5).standard_normal((3, 3))
    fd = (second(a + eps * v) - second(a - eps * v)) / (2 * eps)
    assert np.isclose(np.sum(x.grad.asnumpy() * v), fd, rtol=1e-5)


def test_float32_and_bad_inputs():
    a = nd.array(spd(3), dtype="float32")
    assert L.potrf(a).dtype == np.float32
    with pytest.raises(TypeError, match="float32 or float64"):
        L.det(nd.array(np.eye(2), dtype="int32"))
    with pytest.raises(ValueError, match="positive definite"):
        L.potrf(arr(-spd(3)))


def test_names_and_aliases():
    for name in ("gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "sumlogdiag",
                 "inverse", "det", "slogdet"):
        assert callable(getattr(L, name))
        assert callable(getattr(nd, "linalg_" + name))
        assert callable(getattr(nd, "_linalg_" + name))
