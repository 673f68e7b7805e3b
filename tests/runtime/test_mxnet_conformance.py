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


def _seq_x():
    # MXNet's SequenceMask/SequenceLast/SequenceReverse docs: x of shape (3, 2, 3)
    return nd.array(np.arange(1, 19, dtype=np.float32).reshape(3, 2, 3))


def test_sequence_mask_last_reverse_give_mxnets_documented_examples():
    x = _seq_x()
    np.testing.assert_array_equal(nd.SequenceMask(x).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(
        nd.SequenceMask(x, sequence_length=nd.array([1, 1]), use_sequence_length=True)
        .asnumpy(),
        [[[1, 2, 3], [4, 5, 6]], [[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]])
    np.testing.assert_array_equal(
        nd.SequenceMask(x, nd.array([2, 3]), use_sequence_length=True, value=1).asnumpy(),
        [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[1, 1, 1], [16, 17, 18]]])
    np.testing.assert_array_equal(nd.SequenceLast(x).asnumpy(),
                                  [[13, 14, 15], [16, 17, 18]])
    np.testing.assert_array_equal(
        nd.SequenceLast(x, nd.array([1, 1]), use_sequence_length=True).asnumpy(),
        [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(
        nd.SequenceLast(x, nd.array([1, 2]), use_sequence_length=True).asnumpy(),
        [[1, 2, 3], [10, 11, 12]])
    np.testing.assert_array_equal(
        nd.SequenceReverse(x).asnumpy(),
        [[[13, 14, 15], [16, 17, 18]], [[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]]])
    np.testing.assert_array_equal(
        nd.SequenceReverse(x, nd.array([2, 2]), use_sequence_length=True).asnumpy(),
        [[[7, 8, 9], [10, 11, 12]], [[1, 2, 3], [4, 5, 6]], [[13, 14, 15], [16, 17, 18]]])
    np.testing.assert_array_equal(
        nd.SequenceReverse(x, nd.array([2, 3]), use_sequence_length=True).asnumpy(),
        [[[7, 8, 9], [16, 17, 18]], [[1, 2, 3], [10, 11, 12]], [[13, 14, 15], [4, 5, 6]]])
    # batch-major (axis=1): (batch, time, ...)
    xb = nd.array(np.arange(1, 19, dtype=np.float32).reshape(2, 3, 3))
    np.testing.assert_array_equal(
        nd.SequenceLast(xb, nd.array([1, 3]), use_sequence_length=True, axis=1).asnumpy(),
        [[1, 2, 3], [16, 17, 18]])
    np.testing.assert_array_equal(
        nd.SequenceMask(xb, nd.array([1, 2]), use_sequence_length=True, axis=1)
        .asnumpy()[:, :, 0], [[1, 0, 0], [10, 13, 0]])


def test_sequence_ops_gradients_route_the_head_gradient():
    x = _seq_x()
    x.attach_grad()
    lens = nd.array([1, 2])
    with autograd.record():
        y = nd.SequenceLast(x, lens, use_sequence_length=True)
    y.backward(nd.array([[1, 2, 3], [4, 5, 6]]))
    want = np.zeros((3, 2, 3))
    want[0, 0], want[1, 1] = [1, 2, 3], [4, 5, 6]
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    with autograd.record():
        y = nd.SequenceMask(x, lens, use_sequence_length=True)
    y.backward(nd.ones((3, 2, 3)))
    np.testing.assert_array_equal(x.grad.asnumpy()[:, :, 0], [[1, 1], [0, 1], [0, 0]])


def test_legacy_ndarray_functions_of_test_ndarray():
    # test_ndarray.py: test_ndarray_choose, test_ndarray_fill, test_ndarray_onehot,
    # test_ndarray_concatenate
    rng = np.random.default_rng(3)
    npy = np.arange(40, dtype=np.float32).reshape(8, 5)
    arr = nd.array(npy)
    idx = rng.integers(0, 5, 8)
    np.testing.assert_array_equal(
        nd.choose_element_0index(arr, nd.array(idx)).asnumpy(), npy[np.arange(8), idx])
    val = rng.integers(0, 5, 8).astype(np.float32)
    want = npy.copy()
    want[np.arange(8), idx] = val
    np.testing.assert_array_equal(
        nd.fill_element_0index(arr, nd.array(val), nd.array(idx)).asnumpy(), want)
    np.testing.assert_array_equal(arr.asnumpy(), npy)               # lhs unchanged
    out = nd.array(npy)
    nd.onehot_encode(nd.array(idx), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.eye(5, dtype=np.float32)[idx])
    a, b = rng.uniform(size=(2, 3)), rng.uniform(size=(4, 3))
    np.testing.assert_allclose(nd.concatenate([nd.array(a), nd.array(b)]).asnumpy(),
                               np.concatenate([a, b]), rtol=1e-6)
    np.testing.assert_allclose(
        nd.concatenate([nd.array(a.T), nd.array(b.T)], axis=1).asnumpy(),
        np.concatenate([a.T, b.T], axis=1), rtol=1e-6)
    one = nd.array(a)
    assert nd.concatenate([one], always_copy=False) is one


def test_hard_sigmoid_as_mxnet():
    # MXNet: hard_sigmoid(x) = max(0, min(1, alpha * x + beta)), alpha 0.2, beta 0.5
    v = np.array([-5.0, -1.0, 0.0, 1.0, 2.6, 5.0], dtype=np.float32)
    x = nd.array(v)
    np.testing.assert_allclose(nd.hard_sigmoid(x).asnumpy(), np.clip(0.2 * v + 0.5, 0, 1),
                               rtol=1e-6)
    np.testing.assert_allclose(x.hard_sigmoid(alpha=0.5, beta=0.1).asnumpy(),
                               np.clip(0.5 * v + 0.1, 0, 1), rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        y = nd.hard_sigmoid(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0, 0.2, 0.2, 0.2, 0, 0], rtol=1e-6)


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_clip_of_sparse_keeps_the_storage_type_when_zero_is_inside(stype):
    # MXNet: clip(csr or row_sparse, a_min <= 0, a_max >= 0) = same stype; otherwise
    # default
    v = np.array([[0, -3, 2], [5, 0, 0], [0, 0, 0]], dtype=np.float32)
    x = nd.array(v).tostype(stype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StorageFallbackWarning)
        y = nd.clip(x, -1, 3)
        z = x.clip(0, 1)
    assert (y.stype, z.stype) == (stype, stype)
    np.testing.assert_array_equal(y.asnumpy(), np.clip(v, -1, 3))
    np.testing.assert_array_equal(z.asnumpy(), np.clip(v, 0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        w = nd.clip(x, 1, 3)
    assert w.stype == "default"
    np.testing.assert_array_equal(w.asnumpy(), np.clip(v, 1, 3))


def test_generalized_negative_binomial_moments():
    # MXNet: mean mu, variance mu + alpha * mu**2; alpha = 0 is Poisson(mu)
    from runtime import random as rt_random
    rt_random.seed(11)
    x = nd.random.generalized_negative_binomial(mu=3.0, alpha=0.5, shape=(200000,))
    assert x.dtype == np.float32 and x.shape == (200000,)
    v = x.asnumpy()
    assert np.all(v == np.round(v)) and v.min() >= 0
    assert abs(v.mean() - 3.0) < 0.05 and abs(v.var() - 7.5) < 0.25
    p = nd.random.generalized_negative_binomial(mu=2.0, alpha=0.0, shape=(200000,)).asnumpy()
    assert abs(p.mean() - 2.0) < 0.03 and abs(p.var() - 2.0) < 0.06
    y = nd.random.generalized_negative_binomial(nd.array([1.0, 10.0]), nd.array([0.2, 0.1]),
                                                shape=(4,), dtype="int32")
    assert y.shape == (2, 4) and y.dtype == np.int32
    with pytest.raises(ValueError, match=r"generalized_negative_binomial: alpha must be >= 0"):
        nd.random.generalized_negative_binomial(mu=1.0, alpha=-1.0, shape=(2,))


def test_depth_to_space_and_space_to_depth_give_mxnets_documented_examples():
    x = nd.array(np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3))
    want = [[[[0, 6, 1, 7, 2, 8], [12, 18, 13, 19, 14, 20],
              [3, 9, 4, 10, 5, 11], [15, 21, 16, 22, 17, 23]]]]
    y = nd.depth_to_space(x, 2)
    np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_array_equal(nd.space_to_depth(y, block_size=2).asnumpy(), x.asnumpy())
    x.attach_grad()
    h = np.random.default_rng(4).uniform(size=(1, 1, 4, 6)).astype(np.float32)
    with autograd.record():
        y = x.depth_to_space(block_size=2)
    y.backward(nd.array(h))
    # the gradient of a permutation is the inverse permutation of the head gradient
    np.testing.assert_array_equal(x.grad.asnumpy().ravel()[np.array(want).ravel()],
                                  h.ravel())


def test_moments_mean_and_biased_variance():
    v = np.random.default_rng(5).uniform(-1, 1, (2, 3, 4))
    x = nd.array(v, dtype="float64")
    mean, var = nd.moments(x, axes=(0, 2))
    np.testing.assert_allclose(mean.asnumpy(), v.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.asnumpy(), v.var((0, 2)), rtol=1e-12)
    mean, var = nd.moments(x, axes=(1,), keepdims=True)
    assert mean.shape == var.shape == (2, 1, 4)
    x.attach_grad()
    with autograd.record():
        mean, var = nd.moments(x, axes=(2,))
        loss = (mean * 3.0 + var).sum()
    loss.backward()
    want = 3.0 / 4 + 2.0 * (v - v.mean(2, keepdims=True)) / 4
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)


def test_ravel_multi_index_and_unravel_index_give_mxnets_documented_examples():
    a = nd.array([[3, 6, 6], [4, 5, 1]])
    np.testing.assert_array_equal(nd.ravel_multi_index(a, shape=(7, 6)).asnumpy(),
                                  [22, 41, 37])
    b = nd.array([22, 41, 37])
    np.testing.assert_array_equal(nd.unravel_index(b, shape=(7, 6)).asnumpy(),
                                  [[3, 6, 6], [4, 5, 1]])
    assert nd.unravel_index(b, (7, 6)).dtype == np.float32


def test_histogram_as_numpy_with_a_bin_count_or_edges():
    # test_ndarray.py test_ndarray_histogram: counts and edges as np.histogram
    v = np.random.default_rng(6).uniform(-3, 3, 200).astype(np.float32)
    x = nd.array(v)
    counts, edges = nd.histogram(x, bins=5, range=(-2, 2))
    want_c, want_e = np.histogram(v, bins=5, range=(-2, 2))
    np.testing.assert_array_equal(counts.asnumpy(), want_c)
    np.testing.assert_allclose(edges.asnumpy(), want_e, rtol=1e-6)
    e = np.array([-3.0, -1.0, 0.0, 0.5, 3.0], dtype=np.float32)
    counts, edges = nd.histogram(x, bins=nd.array(e))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(v, bins=e)[0])
    np.testing.assert_array_equal(edges.asnumpy(), e)
    with pytest.raises(ValueError, match=r"^histogram: bins must be an int >= 1"):
        nd.histogram(x, bins=0)


def test_lrn_normalises_across_a_window_of_channels():
    # MXNet's LRN: x / (knorm + alpha / nsize * sum of x**2 over nsize channels) ** beta
    v = np.random.default_rng(7).uniform(-2, 2, (2, 6, 3, 3))
    x = nd.array(v, dtype="float64")
    sq = v ** 2
    s = np.stack([sq[:, max(0, c - 2):c + 3].sum(1) for c in range(6)], axis=1)
    np.testing.assert_allclose(nd.LRN(x, nsize=5).asnumpy(),
                               v / (2.0 + 0.0001 / 5 * s) ** 0.75, rtol=1e-12)
    np.testing.assert_allclose(
        nd.LRN(x, alpha=0.3, beta=0.5, knorm=1.0, nsize=5).asnumpy(),
        v / (1.0 + 0.3 / 5 * s) ** 0.5, rtol=1e-12)


def test_internal_and_op_namespaces_hold_every_operator():
    # MXNet tests call hidden operators through mx.nd._internal (test_sparse_operator.py:
    # _square_sum) and generated ones through mx.nd.op
    v = np.array([[1, 2], [0, 0], [3, 4]], dtype=np.float32)
    r = nd.array(v).tostype("row_sparse")
    np.testing.assert_array_equal(nd._internal._square_sum(r, axis=1).asnumpy(),
                                  (v ** 2).sum(1))
    np.testing.assert_array_equal(
        nd._internal._plus_scalar(nd.array(v), scalar=2.0).asnumpy(), v + 2)
    np.testing.assert_array_equal(
        nd.op.FullyConnected(nd.array(v), nd.ones((4, 2)), num_hidden=4,
                             no_bias=True).asnumpy(), v @ np.ones((2, 4)))


def test_legacy_flat_random_names():
    # mx.nd.random_uniform/random_normal/... (numbers) and mx.nd.sample_* (NDArrays of
    # parameters, shape appended), with MXNet's parameter names
    x = nd.random_uniform(2.0, 3.0, shape=(1000,))
    assert x.dtype == np.float32 and x.shape == (1000,)
    assert 2.0 <= x.asnumpy().min() and x.asnumpy().max() < 3.0
    np.testing.assert_array_equal(nd.random_normal(loc=5.0, scale=0.0, shape=(2,)).asnumpy(),
                                  [5.0, 5.0])
    assert abs(nd.random_exponential(lam=4.0, shape=(200000,)).asnumpy().mean() - 0.25) < 0.01
    assert nd.random_randint(0, 5, shape=(3,)).dtype == np.int32
    s = nd.sample_normal(mu=nd.array([0.0, 10.0]), sigma=nd.array([0.0, 0.0]), shape=3)
    np.testing.assert_array_equal(s.asnumpy(), [[0, 0, 0], [10, 10, 10]])
    e = nd.sample_exponential(nd.array([1.0, 4.0]), shape=(100000,)).asnumpy().mean(1)
    np.testing.assert_allclose(e, [1.0, 0.25], rtol=0.03)
    assert nd.sample_uniform(nd.array([0.0, 10.0]), nd.array([1.0, 11.0])).shape == (2,)
    with pytest.raises(TypeError, match="random_normal: unexpected argument 'mu'"):
        nd.random_normal(0.0, mu=1.0)
    with pytest.raises(TypeError, match="random_normal: parameter 'loc' given twice"):
        nd.random_normal(0.0, loc=1.0)


def test_slice_of_csr_over_rows_and_columns_keeps_csr():
    # test_sparse_ndarray.py test_sparse_nd_slice: slice(csr, begin=(r0, c0),
    # end=(r1, c1)) equals the dense slice; MXNet's result is csr
    rng = np.random.default_rng(8)
    v = rng.uniform(size=(7, 6)).astype(np.float32)
    v[v < 0.6] = 0
    a = nd.array(v).tostype("csr")
    with warnings.catch_warnings():
        warnings.simplefilter("error", StorageFallbackWarning)
        for begin, end in [((1, 2), (5, 4)), ((0, 0), (7, 6)), ((-3, 1), (None, -1)),
                           ((2, 5), (4, 6)), ((6, 0), (7, 1))]:
            out = nd.slice(a, begin=begin, end=end)
            assert out.stype == "csr"
            rows, cols = slice(begin[0], end[0]), slice(begin[1], end[1])
            np.testing.assert_array_equal(out.asnumpy(), v[rows, cols])
            out.check_format()
    z = nd.sparse.zeros("csr", (4, 5))
    assert nd.slice(z, begin=(1, 1), end=(3, 4)).asnumpy().tolist() == [[0] * 3] * 2
    with warnings.catch_warnings():                 # a step: the dense fallback, as MXNet
        warnings.simplefilter("ignore", StorageFallbackWarning)
        stepped = nd.sparse.slice(a, begin=(1,), end=(6,), step=(2,))
    np.testing.assert_array_equal(stepped.asnumpy(), v[1:6:2])
