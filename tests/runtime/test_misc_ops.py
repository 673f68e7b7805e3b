"""The operators of runtime/ops/sort.py and runtime/ops/index.py, and nd.eye/nd.linspace,
against MXNet's documented examples and NumPy references.  (Requests, gradients, failures
and zero-size inputs of every op are checked by test_all_ops.py from op_samples_sort.py
and op_samples_index.py.)"""

import numpy as np
import pytest

import scipy.sparse
import scipy.sparse.linalg
import scipy.stats

import runtime as rt
from runtime import autograd, nd
from runtime import random as rt_random
from runtime.errors import MXNetError, StorageFallbackError
from runtime.nd import sparse
from runtime.ops.elemwise import ZERO_PRESERVING
from tests.runtime.conftest import assert_same, free_failing_tests
from tests.runtime.op_samples import SAMPLES
from tests.runtime.test_autograd_ops import check_tape_second_order

DOC_X = np.array([[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]], np.float32)


def _a(x, dtype=None):
    x = np.asarray(x)
    return nd.array(x, dtype=dtype or x.dtype)


# -- topk, sort, argsort ------------------------------------------------------------------

def test_topk_documented_examples():
    x = _a(DOC_X)
    assert_same(nd.topk(x), np.array([[2.0], [1.0]], np.float32))
    assert_same(nd.topk(x, ret_typ="value", k=2), np.array([[0.4, 0.3], [0.3, 0.2]],
                                                            np.float32))
    assert_same(nd.topk(x, ret_typ="value", k=2, is_ascend=1),
                np.array([[0.2, 0.3], [0.1, 0.2]], np.float32))
    assert_same(nd.topk(x, axis=0, ret_typ="value", k=2),
                np.array([[0.3, 0.3, 0.4], [0.1, 0.2, 0.2]], np.float32))
    v, i = nd.topk(x, ret_typ="both", k=2)
    assert_same(v, np.array([[0.4, 0.3], [0.3, 0.2]], np.float32))
    assert_same(i, np.array([[2.0, 0.0], [1.0, 2.0]], np.float32))
    assert_same(nd.topk(x, ret_typ="mask", k=2), np.array([[1, 0, 1], [0, 1, 1]], np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "int8"])
@pytest.mark.parametrize("ascend", [False, True])
def test_topk_and_sort_against_numpy(dtype, ascend):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, (4, 7)).astype(dtype)        # many ties: stability shows
    key = x.astype(np.float64) if ascend else -x.astype(np.float64)
    order = np.argsort(key, axis=1, kind="stable")
    got = nd.topk(_a(x), k=3, ret_typ="both", is_ascend=ascend, dtype="int64")
    assert_same(got[0], np.take_along_axis(x, order[:, :3], axis=1))
    assert_same(got[1], order[:, :3])
    assert_same(nd.sort(_a(x), is_ascend=ascend), np.take_along_axis(x, order, axis=1))
    assert_same(nd.argsort(_a(x), is_ascend=ascend), order.astype(np.float32))
    flat = np.argsort(key.reshape(-1), kind="stable")
    assert_same(nd.sort(_a(x), axis=None, is_ascend=ascend), x.reshape(-1)[flat])
    assert_same(nd.topk(_a(x), axis=None, k=4, is_ascend=ascend, dtype="int32"),
                flat[:4].astype(np.int32))


def test_sort_extreme_integers_descending():
    x = np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max, -1], np.int64)
    assert_same(nd.sort(_a(x), is_ascend=False), np.sort(x)[::-1])
    u = np.array([0, 255, 7], np.uint8)
    assert_same(nd.sort(_a(u), is_ascend=False), np.array([255, 7, 0], np.uint8))


def test_topk_k_below_one_sorts_the_axis():
    x = np.random.default_rng(1).uniform(size=(3, 5))
    assert_same(nd.topk(_a(x), k=0, ret_typ="value"), -np.sort(-x, axis=1))


def test_topk_and_sort_backward_through_the_tape():
    x = np.random.default_rng(2).uniform(size=(3, 5))
    w = np.random.default_rng(3).uniform(size=(3, 2))
    a = _a(x)
    a.attach_grad()
    with autograd.record():
        y = (nd.topk(a, k=2, ret_typ="value") * _a(w)).sum()
    y.backward()
    want = np.zeros_like(x)
    idx = np.argsort(-x, axis=1)[:, :2]
    np.put_along_axis(want, idx, w, axis=1)
    np.testing.assert_allclose(a.grad.asnumpy(), want)
    with autograd.record():
        y = (nd.sort(a, axis=0) * _a(x)).sum()
    y.backward()
    want = np.zeros_like(x)
    np.put_along_axis(want, np.argsort(x, axis=0), x, axis=0)
    np.testing.assert_allclose(a.grad.asnumpy(), want)


def test_argmax_channel_documented_example():
    assert_same(nd.argmax_channel(_a(np.arange(6.0, dtype=np.float32).reshape(2, 3))),
                np.array([2.0, 2.0], np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_nansum_nanprod_against_numpy(axis):
    x = np.random.default_rng(4).uniform(0.5, 1.5, (3, 4))
    x[0, 1] = x[2, 2] = np.nan
    for f, ref in ((nd.nansum, np.nansum), (nd.nanprod, np.nanprod)):
        got = f(_a(x), axis=axis)
        want = np.asarray(ref(x, axis=axis)).reshape(got.shape)
        np.testing.assert_allclose(got.asnumpy(), want)
        got = f(_a(x), axis=axis, keepdims=True)
        np.testing.assert_allclose(got.asnumpy(), ref(x, axis=axis, keepdims=True))


# -- gather_nd, scatter_nd, batch_take ------------------------------------------------------

def test_gather_nd_documented_examples():
    i = np.array([[1, 1, 0], [0, 1, 0]])
    assert_same(nd.gather_nd(_a([[0.0, 1], [2, 3]], "float32"), _a(i, "float32")),
                np.array([2, 3, 0], np.float32))
    data = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    assert_same(nd.gather_nd(_a(data), _a([[0, 1], [1, 0]], "int64")),
                np.array([[3, 4], [5, 6]], np.float32))


def test_scatter_nd_documented_examples():
    assert_same(nd.scatter_nd(_a([2.0, 3, 0], "float32"), _a([[1, 1, 0], [0, 1, 0]], "int64"),
                              shape=(2, 2)),
                np.array([[0, 0], [2, 3]], np.float32))
    data = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    want = np.zeros((2, 2, 2, 2), np.float32)
    want[0, 1], want[1, 1] = data[0], data[1]
    assert_same(nd.scatter_nd(_a(data), _a([[0, 1], [1, 1]], "int64"), shape=(2, 2, 2, 2)),
                want)


def test_gather_nd_negative_and_bad_indices():
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([[-1, 0], [2, -4]])
    assert_same(nd.gather_nd(_a(x), _a(i)), x[(i[0], i[1])])
    with pytest.raises(IndexError, match=r"^gather_nd: index 4 at position 0 is out of range "
                                         r"for axis 1 of size 4"):
        nd.gather_nd(_a(x), _a([[0], [4]]))


def test_gather_nd_gradient_adds_repeated_positions():
    x = _a(np.arange(6.0).reshape(3, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.gather_nd(x, _a([[0, 2, 0]], "int64")).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 2], [0, 0], [1, 1]])


def test_batch_take_documented_example_and_clipping():
    x = _a(np.array([[1.0, 2], [3, 4], [5, 6]], np.float32))
    assert_same(nd.batch_take(x, _a([0, 1, 0], "int64")), np.array([1, 4, 5], np.float32))
    assert_same(nd.batch_take(x, _a([-3, 7, 1], "int64")), np.array([1, 4, 6], np.float32))
    # more dimensions: each row flattened (MXNet's M = a.size / a.shape[0])
    a = np.arange(12.0).reshape(2, 3, 2)
    assert_same(nd.batch_take(_a(a), _a([[4], [5]], "int64")), np.array([[4.0], [11.0]]))


# -- slice_like, broadcast_axis, swapaxes, moveaxis -------------------------------------------

def test_slice_like_documented_examples():
    x = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4)
    y = _a(np.zeros((2, 3), np.float32))
    assert_same(nd.slice_like(_a(x), y), x[:2, :3])
    assert_same(nd.slice_like(_a(x), y, axes=(0, 1)), x[:2, :3])
    assert_same(nd.slice_like(_a(x), y, axes=(0,)), x[:2])
    assert_same(nd.slice_like(_a(x), y, axes=(-1,)), x[:, :3])


def test_broadcast_axis_documented_examples():
    x = np.array([[[1.0], [2.0]]], np.float32)
    assert_same(nd.broadcast_axis(_a(x), axis=2, size=3), np.broadcast_to(x, (1, 2, 3)))
    assert_same(nd.broadcast_axes(_a(x), axis=(0, 2), size=(2, 3)),
                np.broadcast_to(x, (2, 2, 3)))


def test_swapaxes_and_moveaxis_against_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert_same(nd.swapaxes(_a(x), dim1=0, dim2=2), np.swapaxes(x, 0, 2))
    assert_same(nd.SwapAxis(_a(x), dim1=1, dim2=-1), np.swapaxes(x, 1, -1))
    for src, dst in ((0, -1), ((0, 1), (2, 0)), ((2, 0), (0, 1))):
        assert_same(nd.moveaxis(_a(x), source=src, destination=dst), np.moveaxis(x, src, dst))


# -- pad -------------------------------------------------------------------------------------

_PAD_X = np.array([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]],
                   [[[11, 12, 13], [14, 15, 16]], [[17, 18, 19], [20, 21, 22]]]], np.float32)


def test_pad_documented_examples():
    pw = (0, 0, 0, 0, 1, 1, 1, 1)
    edge = nd.pad(_a(_PAD_X), mode="edge", pad_width=pw)
    np.testing.assert_array_equal(edge.asnumpy()[0, 0], [[1, 1, 2, 3, 3], [1, 1, 2, 3, 3],
                                                          [4, 4, 5, 6, 6], [4, 4, 5, 6, 6]])
    assert_same(edge, np.pad(_PAD_X, [(0, 0), (0, 0), (1, 1), (1, 1)], mode="edge"))
    const = nd.pad(_a(_PAD_X), mode="constant", constant_value=0, pad_width=pw)
    np.testing.assert_array_equal(const.asnumpy()[1, 1], [[0, 0, 0, 0, 0], [0, 17, 18, 19, 0],
                                                          [0, 20, 21, 22, 0], [0, 0, 0, 0, 0]])
    assert_same(nd.Pad(_a(_PAD_X), mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
                np.pad(_PAD_X, [(0, 0), (0, 0), (1, 1), (2, 2)], mode="reflect"))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_5d_and_its_adjoint(mode):
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(1, 2, 3, 4, 3))
    pairs = [(0, 0), (0, 0), (2, 1), (0, 3), (1, 2)]
    pw = tuple(v for p in pairs for v in p)
    y = nd.pad(_a(x), mode=mode, pad_width=pw, constant_value=0.0)
    assert_same(y, np.pad(x, pairs, mode=mode))
    # <pad(x), g> == <x, pad_grad(g)>: the gradient is pad's adjoint
    g = rng.uniform(size=y.shape)
    back = nd._pad_grad(_a(g), mode=mode, pad_width=pw).asnumpy()
    np.testing.assert_allclose(np.sum(y.asnumpy() * g), np.sum(x * back))


def test_pad_integer_constant_is_cast():
    x = np.arange(4, dtype=np.int32).reshape(1, 1, 2, 2)
    y = nd.pad(_a(x), pad_width=(0, 0, 0, 0, 1, 0, 0, 1), constant_value=-2.7)
    assert_same(y, np.pad(x, [(0, 0), (0, 0), (1, 0), (0, 1)], constant_values=-2))


# -- split_v2, diag, shape_array, size_array, logical ops ---------------------------------------

def test_split_v2_documented_examples_and_numpy():
    x = np.array([[[1], [2]], [[3], [4]], [[5], [6]]], np.float32)
    y = nd.split_v2(_a(x), axis=1, indices_or_sections=2)
    for got, want in zip(y, np.split(x, 2, axis=1)):
        assert_same(got, want)
    z = nd.split_v2(_a(x), axis=0, indices_or_sections=3, squeeze_axis=1)
    assert [p.shape for p in z] == [(2, 1)] * 3
    for got, want in zip(z, np.split(x, 3, axis=0)):
        assert_same(got, want[0])
    x = np.arange(20.0).reshape(4, 5)
    parts = nd.split_v2(_a(x), indices_or_sections=(1, 1, 4), axis=1)
    for got, want in zip(parts, np.split(x, [1, 1, 4], axis=1)):
        assert_same(got, want)


def test_diag_documented_examples():
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    assert_same(nd.diag(_a(m)), np.array([1, 5], np.float32))
    assert_same(nd.diag(_a(m), k=1), np.array([2, 6], np.float32))
    assert_same(nd.diag(_a(m), k=-1), np.array([4], np.float32))
    v = np.array([1, 2, 3], np.float32)
    assert_same(nd.diag(_a(v)), np.diag(v))
    assert_same(nd.diag(_a(v), k=1), np.diag(v, 1))
    assert_same(nd.diag(_a(v), k=-1), np.diag(v, -1))
    t = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    assert_same(nd.diag(_a(t)), np.array([[1, 7], [2, 8]], np.float32))
    assert_same(nd.diag(_a(t), k=1), np.array([[3], [4]], np.float32))
    assert_same(nd.diag(_a(t), axis1=-2, axis2=-1), np.array([[1, 4], [5, 8]], np.float32))


def test_shape_and_size_array():
    x = _a(np.zeros((2, 4), np.float32))
    assert_same(nd.shape_array(x), np.array([2, 4], np.int64))
    assert_same(nd.size_array(x), np.array([8], np.int64))


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_logical_ops_against_numpy(dtype):
    rng = np.random.default_rng(6)
    a = rng.integers(0, 3, (3, 4)).astype(dtype)
    b = rng.integers(0, 3, (1, 4)).astype(dtype)
    for name in ("and", "or", "xor"):
        f = getattr(np, f"logical_{name}")
        assert_same(getattr(nd, f"logical_{name}")(_a(a), _a(b)), f(a, b).astype(dtype))
        assert_same(getattr(nd, f"broadcast_logical_{name}")(_a(a), _a(b)),
                    f(a, b).astype(dtype))
    assert_same(nd.logical_not(_a(a)), np.logical_not(a).astype(dtype))
    # MXNet's documented example
    assert_same(nd.logical_not(_a([-2.0, 0, 1], "float32")), np.array([0, 1, 0], np.float32))


# -- eye, linspace ------------------------------------------------------------------------------

def test_eye_and_linspace_against_numpy():
    assert_same(nd.eye(3), np.eye(3, dtype=np.float32))
    assert_same(nd.eye(2, 4, 1, dtype="int32"), np.eye(2, 4, 1, dtype=np.int32))
    assert_same(nd.eye(3, k=-2, dtype="float64"), np.eye(3, k=-2))
    assert_same(nd.linspace(0, 1, 5), np.linspace(0, 1, 5).astype(np.float32))
    assert_same(nd.linspace(2, -3, 4, endpoint=False, dtype="float64"),
                np.linspace(2, -3, 4, endpoint=False))
    assert_same(nd.linspace(0, 1, 0), np.zeros(0, np.float32))


def test_eye_and_linspace_refuse_bad_arguments():
    with pytest.raises(ValueError, match=r"^eye: N must be >= 0 \(got -1\)"):
        nd.eye(-1)
    with pytest.raises(TypeError, match=r"^eye: M must be an integer \(got 2.5\)"):
        nd.eye(2, 2.5)
    with pytest.raises(ValueError, match=r"^linspace: num must be >= 0 \(got -2\)"):
        nd.linspace(0, 1, -2)
    with pytest.raises(ValueError, match=r"^linspace: stop must be finite \(got inf\)"):
        nd.linspace(0, float("inf"), 3)


# -- nd.linalg -------------------------------------------------------------------------------------

def _f64(x):
    return nd.array(np.asarray(x, np.float64), dtype="float64")


def test_linalg_documented_examples():
    la = nd.linalg
    one = np.ones((2, 2))
    np.testing.assert_allclose(la.gemm(_f64(one), _f64(np.ones((3, 2))), _f64(np.ones((2, 3))),
                                       transpose_b=True, alpha=2.0, beta=10.0).asnumpy(),
                               np.full((2, 3), 14.0))
    np.testing.assert_allclose(la.gemm2(_f64(one), _f64(np.ones((3, 2))), transpose_b=True,
                                        alpha=2.0).asnumpy(), np.full((2, 3), 4.0))
    np.testing.assert_allclose(la.potrf(_f64([[4.0, 1.0], [1.0, 4.25]])).asnumpy(),
                               [[2.0, 0.0], [0.5, 2.0]])
    np.testing.assert_allclose(la.potri(_f64([[2.0, 0.0], [0.5, 2.0]])).asnumpy(),
                               [[0.265625, -0.0625], [-0.0625, 0.25]])
    tri = _f64([[1.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(la.trsm(tri, _f64([[1.0] * 3, [2.0] * 3]), alpha=0.5).asnumpy(),
                               np.full((2, 3), 0.5))
    np.testing.assert_allclose(la.trmm(tri, _f64(np.ones((2, 3))), alpha=2.0).asnumpy(),
                               [[2.0] * 3, [4.0] * 3])
    np.testing.assert_allclose(la.syrk(_f64(np.eye(2)), alpha=2.0).asnumpy(), 2 * np.eye(2))
    np.testing.assert_allclose(la.sumlogdiag(_f64([[1.0, 1.0], [1.0, 7.0]])).asnumpy(),
                               [np.log(7.0)])
    a = _f64([[1.0, 4.0], [2.0, 3.0]])
    np.testing.assert_allclose(la.inverse(a).asnumpy(), [[-0.6, 0.8], [0.4, -0.2]])
    np.testing.assert_allclose(la.det(a).asnumpy(), [-5.0])
    sign, logabs = la.slogdet(_f64([[2.0, 3.0], [1.0, 4.0]]))
    np.testing.assert_allclose(sign.asnumpy(), [1.0])
    np.testing.assert_allclose(logabs.asnumpy(), [np.log(5.0)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linalg_batched_against_numpy(dtype):
    rng = np.random.default_rng(7)
    a = rng.normal(size=(2, 3, 4, 4)).astype(dtype)
    b = rng.normal(size=(2, 3, 4, 5)).astype(dtype)
    spd = (a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10}
    la = nd.linalg
    L = la.potrf(_a(spd))
    assert L.dtype == np.dtype(dtype)
    np.testing.assert_allclose(L.asnumpy(), np.linalg.cholesky(spd), **tol)
    np.testing.assert_allclose(la.potri(L).asnumpy(), np.linalg.inv(spd), **tol)
    low = np.tril(a) + 4 * np.eye(4, dtype=dtype)
    np.testing.assert_allclose(la.trsm(_a(a + 4 * np.eye(4, dtype=dtype)), _a(b)).asnumpy(),
                               np.linalg.solve(low, b), **tol)
    up = np.triu(a) + 4 * np.eye(4, dtype=dtype)
    np.testing.assert_allclose(
        la.trmm(_a(a + 4 * np.eye(4, dtype=dtype)), _a(np.swapaxes(b, -1, -2)),
                rightside=True, lower=False, transpose=True).asnumpy(),
        np.swapaxes(b, -1, -2) @ np.swapaxes(up, -1, -2), **tol)
    np.testing.assert_allclose(la.syrk(_a(b), transpose=True).asnumpy(),
                               np.swapaxes(b, -1, -2) @ b, **tol)
    np.testing.assert_allclose(la.inverse(_a(spd)).asnumpy(), np.linalg.inv(spd), **tol)
    np.testing.assert_allclose(la.det(_a(a)).asnumpy(), np.linalg.det(a), **tol)
    sign, logabs = la.slogdet(_a(a))
    np.testing.assert_allclose(sign.asnumpy(), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(logabs.asnumpy(), np.linalg.slogdet(a)[1], **tol)
    np.testing.assert_allclose(la.sumlogdiag(_a(spd)).asnumpy(),
                               np.log(np.diagonal(spd, axis1=-2, axis2=-1)).sum(-1), **tol)
    # rows on axis 1: swapaxes, gemm2, swapaxes (MXNet's definition)
    x, y = rng.normal(size=(3, 2, 4, 6)).astype(dtype), rng.normal(size=(5, 2, 4, 6))
    y = y.astype(dtype)
    got = la.gemm2(_a(x), _a(y), transpose_b=True, axis=0).asnumpy()
    want = np.swapaxes(np.swapaxes(x, 0, 2) @ np.swapaxes(np.swapaxes(y, 0, 2), -1, -2), 0, 2)
    np.testing.assert_allclose(got, want, **tol)


def test_linalg_refuses_other_dtypes():
    with pytest.raises(TypeError, match=r"^_linalg_inverse: inputs must be float32 or float64, "
                                        r"as MXNet's linalg operators \(got float16\)"):
        nd.linalg.inverse(nd.ones((2, 2), dtype="float16"))


@pytest.mark.parametrize("name", ["_linalg_potrf", "_linalg_potri", "_linalg_trsm",
                                  "_linalg_inverse", "_linalg_det", "_linalg_slogdet",
                                  "_linalg_sumlogdiag", "_linalg_syrk", "_linalg_gemm2",
                                  "nanprod"])
def test_second_order_through_the_tape(name):
    # as prod's, nanprod's rule is exact at zeros to first order only
    samples = [s for s in SAMPLES[name] if s.grad and s.dense
               and not (name == "nanprod" and any(np.any(a == 0) for a in s.arrays))]
    assert samples
    for sample in samples:
        check_tape_second_order(name, sample)


# -- nd.random: the distributions beside uniform and normal --------------------------------------

_N = 20000


def _ks(sample, cdf):
    """Kolmogorov-Smirnov p-value of ``sample`` against ``cdf`` (continuous)."""
    return scipy.stats.kstest(sample, cdf).pvalue


def test_random_continuous_distributions_against_scipy():
    rt_random.seed(11)
    x = nd.random.exponential(2.5, shape=(_N,), dtype="float64").asnumpy()
    assert _ks(x, scipy.stats.expon(scale=2.5).cdf) > 1e-3
    x = nd.random.gamma(1.7, 0.6, shape=(_N,), dtype="float64").asnumpy()
    assert _ks(x, scipy.stats.gamma(1.7, scale=0.6).cdf) > 1e-3
    x = nd.random.randn(_N, loc=1.0, scale=2.0, dtype="float64").asnumpy()
    assert _ks(x, scipy.stats.norm(1.0, 2.0).cdf) > 1e-3
    assert nd.random.randn(2, 3).shape == (2, 3) and nd.random.randn().shape == (1,)
    assert nd.random.exponential().dtype == np.float32


def test_random_discrete_distributions_against_scipy():
    rt_random.seed(12)
    for draw, dist in ((nd.random.poisson(3.5, shape=(_N,)), scipy.stats.poisson(3.5)),
                       (nd.random.negative_binomial(3, 0.4, shape=(_N,), dtype="int32"),
                        scipy.stats.nbinom(3, 0.4))):
        x = draw.asnumpy().astype(np.int64)
        values, counts = np.unique(x, return_counts=True)
        keep = dist.pmf(values) * _N > 20                 # cells with enough mass
        chi2 = np.sum((counts[keep] - _N * dist.pmf(values[keep])) ** 2
                      / (_N * dist.pmf(values[keep])))
        assert scipy.stats.chi2(keep.sum()).sf(chi2) > 1e-3, (draw.dtype, chi2)
    assert nd.random.poisson(2.0).dtype == np.float32


def test_random_ndarray_parameters_and_seeding():
    scale = nd.array([1.0, 100.0])
    x = nd.random.exponential(scale, shape=(4000,))
    assert x.shape == (2, 4000) and x.dtype == np.float32
    means = x.asnumpy().mean(axis=1)
    np.testing.assert_allclose(means, [1.0, 100.0], rtol=0.1)
    assert nd.random.gamma(nd.array([1.0, 2.0]), nd.array([3.0, 4.0])).shape == (2,)
    rt_random.seed(5)
    a = nd.random.poisson(4.0, shape=(5,)).asnumpy()
    rt_random.seed(5)
    np.testing.assert_array_equal(nd.random.poisson(4.0, shape=(5,)).asnumpy(), a)
    out = nd.zeros((3,))
    assert nd.random.gamma(2.0, out=out) is out and bool((out.asnumpy() > 0).all())


@pytest.mark.parametrize("call,exc,match", [
    (lambda: nd.random.exponential(-1.0), ValueError,
     r"^exponential: scale must be > 0 \(got -1.0\)"),
    (lambda: nd.random.gamma(1.0, nd.array([1.0])), TypeError,
     r"^gamma: parameters must be all numbers or all NDArrays"),
    (lambda: nd.random.gamma(nd.array([1.0]), nd.array([1.0, 2.0])), ValueError,
     r"^gamma: NDArray parameters must have one shape"),
    (lambda: nd.random.negative_binomial(2, 1.5), ValueError,
     r"^negative_binomial: p must be in \(0, 1\] \(got 1.5\)"),
    (lambda: nd.random.poisson(nd.array([1.0, -2.0])), ValueError,
     r"^poisson: lam must be >= 0 \(got -2.0\)"),
    (lambda: nd.random.exponential(1.0, dtype="int32"), TypeError,
     r"^exponential: dtype must be one of"),
    (lambda: nd.random.multinomial(nd.array([0.5, 0.6])), ValueError,
     r"^multinomial: each distribution in data must sum to 1"),
    (lambda: nd.random.multinomial(nd.array([1.5, -0.5])), ValueError,
     r"^multinomial: data must hold probabilities >= 0 \(got -0.5\)"),
    (lambda: nd.random.multinomial(nd.array([1.0]), dtype="int8"), TypeError,
     r"^multinomial: dtype must be one of"),
    (lambda: nd.random.multinomial(nd.zeros(2 ** 8 + 1), dtype="uint8"), ValueError,
     r"^multinomial: dtype uint8 cannot hold the category indices up to 256"),
    (lambda: nd.random.shuffle(nd.array(np.float32(1.0)).reshape(())), ValueError,
     r"^shuffle: data must have at least one dimension"),
])
def test_random_bad_input(call, exc, match):
    # MXNet's samplers are operators: their refusals are MXNetErrors (1.x programs catch
    # mx.MXNetError), and of the built-in class too
    with pytest.raises(exc, match=match) as info:
        call()
    assert isinstance(info.value, MXNetError)


def test_multinomial_frequencies_shapes_and_log_prob_gradient():
    rt_random.seed(13)
    p = np.array([[0.2, 0.5, 0.3], [0.7, 0.0, 0.3]])
    draws = nd.random.multinomial(nd.array(p), shape=_N)
    assert draws.shape == (2, _N) and draws.dtype == np.int32
    for row, probs in zip(draws.asnumpy(), p):
        freq = np.bincount(row, minlength=3) / _N
        np.testing.assert_allclose(freq, probs, atol=0.015)
    assert nd.random.multinomial(nd.array(p)).shape == (2,)
    data = nd.array(p, dtype="float64")
    data.attach_grad()
    with autograd.record():
        s, logp = nd.random.multinomial(data, shape=(4,), get_prob=True)
    logp.backward()
    idx = s.asnumpy()
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.take_along_axis(p, idx, axis=1)))
    want = np.zeros_like(p)
    for r in range(2):
        np.add.at(want[r], idx[r], 1.0 / p[r, idx[r]])
    np.testing.assert_allclose(data.grad.asnumpy(), want)


def test_shuffle_permutes_rows():
    rt_random.seed(14)
    x = np.arange(40.0).reshape(10, 4)
    y = nd.random.shuffle(nd.array(x)).asnumpy()
    assert not np.array_equal(x, y)
    np.testing.assert_array_equal(y[np.argsort(y[:, 0])], x)


# -- nd.sparse: MXNet's namespace, against SciPy ---------------------------------------------------

pytestmark = pytest.mark.filterwarnings("ignore::runtime.errors.StorageFallbackWarning")


def _sp(seed, shape=(5, 4), lo=-0.9, hi=0.9):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    a[rng.random(shape) < 0.5] = 0.0
    a[1] = 0.0
    return a


def _csr(a):
    return sparse.csr_matrix(a)


def _rsp(a):
    return sparse.row_sparse_array(a)


def _dense(x):
    return x.tostype("default").asnumpy()


_SCIPY_METHODS = {"arcsin", "arcsinh", "arctan", "arctanh", "ceil", "expm1", "floor",
                  "log1p", "rint", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"}


@pytest.mark.parametrize("name", sorted(ZERO_PRESERVING))
def test_sparse_unary_keeps_storage(name):
    a = np.abs(_sp(1))              # in every op's domain (sqrt too)
    ref = scipy.sparse.csr_matrix(a)
    want = getattr(ref, name)().toarray() if name in _SCIPY_METHODS else \
        getattr(nd, name)(nd.array(a, dtype="float64")).asnumpy()
    for make, stype in ((_csr, "csr"), (_rsp, "row_sparse")):
        got = getattr(sparse, name)(make(a))
        assert got.stype == stype, (name, got.stype)
        np.testing.assert_allclose(_dense(got), want, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("make,stype", [(_csr, "csr"), (_rsp, "row_sparse")])
def test_sparse_arithmetic_against_scipy(make, stype):
    a, b = _sp(2), _sp(3)
    sa, sb = scipy.sparse.csr_matrix(a), scipy.sparse.csr_matrix(b)
    for fn, ew, want in ((sparse.add, sparse.elemwise_add, sa + sb),
                         (sparse.subtract, sparse.elemwise_sub, sa - sb),
                         (sparse.multiply, sparse.elemwise_mul, sa.multiply(sb))):
        for f in (fn, ew):
            got = f(make(a), make(b))
            assert got.stype == stype
            np.testing.assert_allclose(_dense(got), want.toarray())
    d = np.random.default_rng(9).uniform(-1, 1, a.shape)
    for got in (sparse.multiply(make(a), nd.array(d, dtype="float64")),
                sparse.elemwise_mul(nd.array(d, dtype="float64"), make(a))):
        assert got.stype == stype                   # MXNet: csr * dense = csr, rsp too
        np.testing.assert_allclose(_dense(got), sa.multiply(d).toarray())
    for fn, want in ((sparse.multiply, sa * 2.5), (sparse.divide, sa / 2.5)):
        got = fn(make(a), 2.5)
        assert got.stype == stype
        np.testing.assert_allclose(_dense(got), want.toarray())
    got = sparse.add_n(make(a), make(b), make(a)) if stype == "row_sparse" else None
    if got is not None:
        assert got.stype == stype
        np.testing.assert_allclose(_dense(got), (sa + sb + sa).toarray())


def test_sparse_elemwise_needs_one_shape():
    with pytest.raises(ValueError, match=r"^elemwise_add: lhs and rhs must have one shape "
                                         r"\(got \(5, 4\) and \(1, 4\)\)"):
        sparse.elemwise_add(_csr(_sp(1)), nd.ones((1, 4), dtype="float64"))
    with pytest.raises(TypeError, match=r"^elemwise_mul: rhs must be an NDArray"):
        sparse.elemwise_mul(_csr(_sp(1)), 2)


def test_sparse_reductions_against_scipy():
    a = _sp(4)
    s = scipy.sparse.csr_matrix(a)
    np.testing.assert_allclose(sparse.sum(_csr(a), axis=0).asnumpy(), np.asarray(s.sum(0))[0])
    np.testing.assert_allclose(sparse.mean(_csr(a), axis=1).asnumpy(),
                               np.asarray(s.mean(1))[:, 0])
    for make in (_csr, _rsp):
        n = sparse.norm(make(a))
        assert n.stype == "default" and n.shape == (1,)
        np.testing.assert_allclose(n.asnumpy(), [scipy.sparse.linalg.norm(s)])
        n1 = sparse.norm(make(a), ord=1, keepdims=True)
        assert n1.shape == (1, 1)
        np.testing.assert_allclose(n1.asnumpy(), [[np.abs(s.data).sum()]])


def test_sparse_zeros_like_where_and_embedding():
    a = _sp(5)
    z = sparse.zeros_like(_csr(a))
    assert z.stype == "csr" and z.asscipy().nnz == 0 and z.shape == a.shape
    assert sparse.zeros_like(_rsp(a)).stype == "row_sparse"
    x, y = nd.array(_sp(6), dtype="float64"), nd.array(_sp(7), dtype="float64")
    old = rt.set_storage_fallback("error")           # a fallback would raise
    try:
        w = sparse.where(_csr(a), x, y)              # a kernel of its own
        with pytest.raises(StorageFallbackError, match="broadcasting"):
            sparse.where(_csr(a), x, nd.array(_sp(8)[:1], dtype="float64"))
    finally:
        rt.set_storage_fallback(old)
    assert w.stype == "default"
    np.testing.assert_array_equal(w.asnumpy(), np.where(a != 0, x.asnumpy(), y.asnumpy()))
    w = sparse.where(_csr(a), x, nd.array(_sp(8)[:1], dtype="float64"))   # the dense kernel
    np.testing.assert_array_equal(w.asnumpy(), np.where(a != 0, x.asnumpy(), _sp(8)[:1]))
    weight = nd.array(np.arange(12.0).reshape(4, 3))
    weight.attach_grad(stype="row_sparse")
    with autograd.record():
        e = sparse.Embedding(nd.array([[3, 1]]), weight, input_dim=4, output_dim=3,
                             sparse_grad=True)
    e.backward()
    assert weight.grad.stype == "row_sparse"
    np.testing.assert_array_equal(weight.grad.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(_dense(weight.grad), [[0] * 3, [1] * 3, [0] * 3, [1] * 3])



def test_contrib_sparse_embedding_is_embedding_with_a_sparse_gradient():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(6, 2)).astype(np.float32)
    idx = np.array([[4, 0], [4, 2]])
    weight = nd.array(w)
    weight.attach_grad(stype="row_sparse")
    head = rng.normal(size=(2, 2, 2)).astype(np.float32)
    with autograd.record():
        e = nd.contrib.SparseEmbedding(nd.array(idx), weight, input_dim=6, output_dim=2)
    np.testing.assert_array_equal(e.asnumpy(), w[idx])
    e.backward(nd.array(head))
    want = np.zeros_like(w)
    np.add.at(want, idx.ravel(), head.reshape(-1, 2))
    assert weight.grad.stype == "row_sparse"
    np.testing.assert_array_equal(weight.grad.indices.asnumpy(), [0, 2, 4])
    np.testing.assert_allclose(_dense(weight.grad), want, rtol=1e-6)
    data, wsym = rt.sym.Variable("data"), rt.sym.Variable("w", stype="row_sparse")
    sym = rt.sym.contrib.SparseEmbedding(data=data, weight=wsym, input_dim=6, output_dim=2)
    exe = sym.simple_bind(rt.cpu(), grad_req={"data": "null", "w": "write"}, data=(2, 2))
    assert exe.grad_dict["w"].stype == "row_sparse"

free_failing_tests(globals())
