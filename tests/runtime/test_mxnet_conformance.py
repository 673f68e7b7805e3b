"""Differences from MXNet 1.x found by exercising ``runtime.nd`` as MXNet's documentation
and unit tests (tests/python/unittest/test_ndarray.py, test_autograd.py,
test_sparse_ndarray.py, ...) do; each test holds MXNet's documented result."""

import warnings

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.errors import StorageFallbackWarning


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


@pytest.mark.parametrize("rhs_shape", [(3, 1), (1, 4), (4,)])
def test_broadcast_div_of_csr_by_a_dense_vector_keeps_csr(rhs_shape):
    # MXNet: broadcast_div(csr, dense(1D)) = csr (sparse.divide's documented examples)
    v = np.array([[0, 1, 0, 6], [2, 0, 3, 0], [0, 0, 0, 0]], dtype=np.float32)
    d = np.arange(1, 1 + int(np.prod(rhs_shape)), dtype=np.float32).reshape(rhs_shape)
    x = nd.array(v).tostype("csr")
    with warnings.catch_warnings():
        warnings.simplefilter("error", StorageFallbackWarning)    # a kernel, no fallback
        outs = [nd.broadcast_div(x, nd.array(d)), x / nd.array(d),
                nd.sparse.divide(x, nd.array(d))]
    for out in outs:
        assert out.stype == "csr"
        np.testing.assert_allclose(out.asnumpy(), v / d)
        assert out.indices.asnumpy().tolist() == [1, 3, 0, 2]    # x's structure
    assert x.asnumpy().tolist() == v.tolist()


def test_unary_math_ops_missing_before_give_mxnets_documented_values():
    pi = np.pi
    np.testing.assert_allclose(
        nd.degrees(nd.array([0, pi / 2, pi, 3 * pi / 2, 2 * pi])).asnumpy(),
        [0, 90, 180, 270, 360], rtol=1e-6)
    np.testing.assert_allclose(nd.array([0, 90, 180, 270, 360]).radians().asnumpy(),
                               [0, pi / 2, pi, 3 * pi / 2, 2 * pi], rtol=1e-6)
    np.testing.assert_allclose(nd.rcbrt(nd.array([1, 8, -125])).asnumpy(), [1.0, 0.5, -0.2],
                               rtol=1e-6)
    np.testing.assert_allclose(nd.erfinv(nd.array([0, 0.5, -1.0])).asnumpy(),
                               [0.0, 0.4769363, -np.inf], rtol=1e-6)
    v = np.array([-3.0, -0.5, 0.0, 1.5, 4.0], dtype=np.float32)
    np.testing.assert_allclose(nd.arccosh(nd.array([1.0, 2.0, 10.0])).asnumpy(),
                               np.arccosh([1.0, 2.0, 10.0]), rtol=1e-6)
    np.testing.assert_allclose(nd.softsign(nd.array(v)).asnumpy(), v / (1 + np.abs(v)),
                               rtol=1e-6)
    np.testing.assert_allclose(nd.log_sigmoid(nd.array(v)).asnumpy(),
                               np.log(1 / (1 + np.exp(-v.astype(np.float64)))), rtol=1e-6)
    np.testing.assert_allclose(nd.mish(nd.array(v)).asnumpy(),
                               v * np.tanh(np.log1p(np.exp(v.astype(np.float64)))),
                               rtol=1e-6, atol=1e-7)
    # degrees and radians are zero-preserving in MXNet: sparse in, same storage out
    x = nd.array([[0, pi], [0, 0]]).tostype("csr")
    assert nd.degrees(x).stype == "csr"
    np.testing.assert_allclose(nd.degrees(x).asnumpy(), [[0, 180], [0, 0]], rtol=1e-6)
    assert nd.radians(x.tostype("default").tostype("row_sparse")).stype == "row_sparse"


@pytest.mark.parametrize("fmt", ["ndrt", "mxnet"])
def test_load_frombuffer_reads_what_save_wrote(tmp_path, fmt):
    # MXNet's test_ndarray.py test_buffer_load: the file's bytes give the same arrays, and
    # a truncated buffer raises
    rng = np.random.default_rng(0)
    data = [nd.array(rng.uniform(size=(2, 3))),
            nd.array(rng.integers(0, 5, (4,)), dtype="int32"),
            nd.array(np.array([[0, 1.5], [0, 0]])).tostype("csr")]
    fname = tmp_path / "list.params"
    nd.save(str(fname), data, format=fmt)
    buf = fname.read_bytes()
    back = nd.load_frombuffer(buf)
    assert len(back) == len(data)
    for x, y in zip(data, back):
        assert (x.stype, x.dtype) == (y.stype, y.dtype)
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    named = tmp_path / "dict.params"
    nd.save(str(named), {"w": data[0], "b": data[1]}, format=fmt)
    back = nd.load_frombuffer(bytearray(named.read_bytes()))
    assert sorted(back) == ["b", "w"]
    np.testing.assert_array_equal(back["w"].asnumpy(), data[0].asnumpy())
    with pytest.raises(ValueError, match="<buffer>"):
        nd.load_frombuffer(buf[:-10])
    with pytest.raises(TypeError, match="load_frombuffer: buf must be bytes-like"):
        nd.load_frombuffer(str(fname))


def test_softmin_is_softmax_of_the_negated_input():
    # MXNet's softmin: softmin(x) = exp(-x) / sum(exp(-x)) along axis, with temperature
    v = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    x = nd.array(v)

    def ref(a, axis=-1, t=1.0):
        e = np.exp(-a / t - np.max(-a / t, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(nd.softmin(x).asnumpy(), ref(v), rtol=1e-6)
    np.testing.assert_allclose(x.softmin(axis=0, temperature=2.0).asnumpy(),
                               ref(v, 0, 2.0), rtol=1e-6)
    x.attach_grad()
    h = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, 1.0]])
    with autograd.record():
        y = nd.softmin(x)
    y.backward(nd.array(h))
    s = ref(v)
    np.testing.assert_allclose(x.grad.asnumpy(),
                               -(s * h - s * (s * h).sum(-1, keepdims=True)), rtol=1e-5)
